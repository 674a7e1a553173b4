/** The port a reference server script was told by the benchmark; exits with a message when missing. */
export function portFromEnv(script: string): number {
  const port = Number(process.env['PORT']);
  if (!Number.isInteger(port) || port <= 0) {
    process.stderr.write(`${script}: set PORT to a free port\n`);
    process.exit(2);
  }
  return port;
}
