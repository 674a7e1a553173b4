import { connect } from 'node:net';
import { clientCloseFrame, prepareUpgrades, upgradeRequest, type ServerTarget } from './upgrade-request.js';
import { handshakeOnce } from './handshake-load.js';

const PREFLIGHT_TIMEOUT_MS = 5_000;

/** Before any timing: one correct handshake must succeed, else the numbers would mean nothing. */
export async function expectHandshake(name: string, target: ServerTarget, token: string): Promise<void> {
  const [upgrade] = prepareUpgrades(target, [token]);
  if (upgrade === undefined) throw new Error('no upgrade request prepared');
  const outcome = await handshakeOnce(
    target.port,
    upgrade,
    target.subprotocol,
    clientCloseFrame(),
    PREFLIGHT_TIMEOUT_MS,
  );
  if (outcome.latencyMs === null || outcome.error !== null) {
    throw new Error(`${name}: a valid handshake failed: ${outcome.error}`);
  }
}

/**
 * The broker must refuse what its checks are there to refuse: a run against a broker whose
 * origin or JWT check is off would compare the wrong thing.
 */
export async function expectBrokerChecks(target: ServerTarget, token: string): Promise<void> {
  const cases = [
    { what: 'no token', request: { ...target, token: null }, status: 401 },
    {
      what: 'a foreign Origin',
      request: { ...target, token, origin: 'https://evil.example.net' },
      status: 403,
    },
    { what: 'a token signed with another key', request: { ...target, token: forged(token) }, status: 401 },
  ];
  for (const { what, request, status } of cases) {
    const got = await statusOf(target.port, upgradeRequest(request, 'dGhlIHNhbXBsZSBub25jZQ=='));
    if (got !== status) throw new Error(`broker: a handshake with ${what} got ${got}, expected ${status}`);
  }
}

/** The same claims with the signature's bytes reversed: well-formed, but not signed by the broker's key. */
function forged(token: string): string {
  const [header, payload, signature = ''] = token.split('.');
  const other = Buffer.from(signature, 'base64url').reverse().toString('base64url');
  return `${header}.${payload}.${other}`;
}

function statusOf(port: number, request: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setTimeout(PREFLIGHT_TIMEOUT_MS, () => socket.destroy(new Error('preflight timed out')));
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      const statusLine = /^HTTP\/1\.1 (\d{3}) /.exec(received);
      if (statusLine === null) return;
      socket.destroy();
      resolve(Number(statusLine[1]));
    });
    socket.on('close', () => reject(new Error('closed before a status line')));
    socket.write(request);
  });
}
