import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { accepts, freePort } from './free-port.js';
import { selfSignedCertificate } from './self-signed.js';

const DEPLOY = fileURLToPath(new URL('../../../deploy/', import.meta.url));

export interface ProxyOptions {
  /** The broker ports the proxy spreads connections over. */
  readonly upstreams: readonly number[];
  /** The proxy's idle timeout for a WebSocket, in seconds (the shipped files say 75). */
  readonly idleTimeoutSec?: number;
  /** nginx only: the upgrade headers left out, as a misconfigured proxy does. */
  readonly withoutUpgradeHeaders?: boolean;
  /** HAProxy only: each server line gets `send-proxy-v2` (PROXY protocol to the broker). */
  readonly sendProxy?: boolean;
  /** nginx only: one static file served by the proxy itself (a page whose origin is the proxy's). */
  readonly page?: { readonly name: string; readonly html: string };
  /** nginx only: the X-Forwarded-Host line left out, as in the usual WebSocket proxy snippet. */
  readonly withoutForwardedHost?: boolean;
}

export interface RunningProxy {
  /** http://127.0.0.1:<port> (ws:// the same way). */
  readonly http: string;
  readonly ws: string;
  /** wss://127.0.0.1:<tls port>: TLS ends at the proxy. */
  readonly wss: string;
  /** What the proxy printed (its errors). */
  output(): string;
  stop(): Promise<void>;
}

/** Replaces `pattern` in the shipped file, failing loudly when it is not there (the file changed). */
function substitute(text: string, pattern: RegExp | string, replacement: string, file: string): string {
  const found = typeof pattern === 'string' ? text.includes(pattern) : pattern.test(text);
  if (!found) throw new Error(`${file} no longer holds ${String(pattern)}: update test/support/proxies.ts`);
  return text.replace(pattern, replacement);
}

/** Debian's nginx running deploy/nginx/nginx.conf on free ports. */
export async function startNginx(options: ProxyOptions): Promise<RunningProxy> {
  const file = 'deploy/nginx/nginx.conf';
  const dir = mkdtempSync(join(tmpdir(), 'broker-nginx-'));
  const { certFile, keyFile } = selfSignedCertificate();
  const [port, tlsPort] = [await freePort(), await freePort()];
  const timeout = `${options.idleTimeoutSec ?? 75}s`;
  let conf = readFileSync(join(DEPLOY, 'nginx/nginx.conf'), 'utf8');
  const servers = options.upstreams.map((p) => `    server 127.0.0.1:${p};`).join('\n');
  conf = substitute(
    conf,
    /(upstream broker \{\n {4}least_conn;\n)( {4}server [^\n]+\n)+/,
    `$1${servers}\n`,
    file,
  );
  conf = substitute(conf, 'listen 80;', `listen 127.0.0.1:${port};`, file);
  conf = substitute(conf, 'listen 443 ssl;', `listen 127.0.0.1:${tlsPort} ssl;`, file);
  conf = substitute(conf, '/etc/broker/tls/cert.pem', certFile, file);
  conf = substitute(conf, '/etc/broker/tls/key.pem', keyFile, file);
  conf = substitute(conf, 'proxy_read_timeout 75s;', `proxy_read_timeout ${timeout};`, file);
  conf = substitute(conf, 'proxy_send_timeout 75s;', `proxy_send_timeout ${timeout};`, file);
  if (options.page !== undefined) {
    // Read by nginx's worker, which is not root: the folder and the file must be readable by all.
    const pages = mkdtempSync(join(tmpdir(), 'broker-nginx-pages-'));
    chmodSync(pages, 0o755);
    writeFileSync(join(pages, options.page.name), options.page.html, { mode: 0o644 });
    conf = substitute(
      conf,
      '    location / {',
      `    location = /${options.page.name} {\n      root ${pages};\n    }\n\n    location / {`,
      file,
    );
  }
  if (options.withoutForwardedHost) {
    conf = substitute(conf, /\n\s*proxy_set_header X-Forwarded-Host \$http_host;/, '', file);
  }
  if (options.withoutUpgradeHeaders) {
    conf = substitute(conf, /\n\s*proxy_set_header Upgrade \$http_upgrade;/, '', file);
    conf = substitute(conf, /\n\s*proxy_set_header Connection \$connection_upgrade;/, '', file);
  }
  const path = join(dir, 'nginx.conf');
  writeFileSync(path, conf);
  const child = spawn('/usr/sbin/nginx', ['-p', dir, '-c', path, '-e', 'stderr', '-g', 'daemon off;'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return running(child, port, tlsPort, 'nginx');
}

/** Debian's HAProxy running deploy/haproxy/haproxy.cfg on free ports. */
export async function startHaproxy(options: ProxyOptions): Promise<RunningProxy> {
  const file = 'deploy/haproxy/haproxy.cfg';
  const dir = mkdtempSync(join(tmpdir(), 'broker-haproxy-'));
  const { certFile, keyFile } = selfSignedCertificate();
  const pem = join(dir, 'broker.pem');
  writeFileSync(pem, readFileSync(certFile, 'utf8') + readFileSync(keyFile, 'utf8'));
  const [port, tlsPort] = [await freePort(), await freePort()];
  const timeout = `${options.idleTimeoutSec ?? 75}s`;
  let cfg = readFileSync(join(DEPLOY, 'haproxy/haproxy.cfg'), 'utf8');
  const proxyHeader = options.sendProxy ? ' send-proxy-v2' : '';
  const servers = options.upstreams
    .map((p, i) => `  server node${i + 1} 127.0.0.1:${p}${proxyHeader}`)
    .join('\n');
  cfg = substitute(cfg, /( {2}balance leastconn\n)( {2}server [^\n]+\n?)+/, `$1${servers}\n`, file);
  cfg = substitute(cfg, '  bind :80\n', `  bind 127.0.0.1:${port}\n`, file);
  cfg = substitute(
    cfg,
    'bind :443 ssl crt /etc/broker/tls/broker.pem',
    `bind 127.0.0.1:${tlsPort} ssl crt ${pem}`,
    file,
  );
  cfg = substitute(cfg, 'timeout tunnel 75s', `timeout tunnel ${timeout}`, file);
  const path = join(dir, 'haproxy.cfg');
  writeFileSync(path, cfg);
  const child = spawn('/usr/sbin/haproxy', ['-f', path, '-db'], { stdio: ['ignore', 'pipe', 'pipe'] });
  return running(child, port, tlsPort, 'haproxy');
}

async function running(
  child: ChildProcess,
  port: number,
  tlsPort: number,
  name: string,
): Promise<RunningProxy> {
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 10_000;
  while (!(await accepts(port)) || !(await accepts(tlsPort))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${name} did not start:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    http: `http://127.0.0.1:${port}`,
    ws: `ws://127.0.0.1:${port}`,
    wss: `wss://127.0.0.1:${tlsPort}`,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
