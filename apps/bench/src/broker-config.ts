/** The broker as benchmarked: origin and JWT checks on, limits out of the way, no heartbeats. */
export function brokerBenchConfig(port: number, secret: string, origin: string): object {
  return {
    host: '127.0.0.1',
    port,
    jwt: { secret },
    limits: { maxConnections: 100_000, maxConnectionsPerAddress: 100_000 },
    endpoints: [
      {
        path: '/chat',
        subprotocols: ['chat.v1'],
        origins: [origin],
        requireOrigin: true,
        auth: { mode: 'required', carriers: ['query', 'header'] },
        pingIntervalMs: 0,
      },
    ],
  };
}
