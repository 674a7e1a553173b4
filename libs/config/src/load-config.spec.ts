import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from './load-config.js';

const SECRET = 'x'.repeat(40);

function defaults(): Record<string, unknown> {
  return { endpoints: [{ path: '/ws', subprotocols: ['chat.v1'] }] };
}

/** Asserts a ConfigError whose message matches every pattern; returns the message. */
function configError(run: () => unknown, ...patterns: RegExp[]): string {
  let message = '';
  assert.throws(run, (err: unknown) => {
    assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${String(err)}`);
    assert.equal(err.name, 'ConfigError');
    for (const pattern of patterns) assert.match(err.message, pattern);
    message = err.message;
    return true;
  });
  return message;
}

describe('loadConfig defaults', () => {
  it('fills every field from the schema defaults', () => {
    const config = loadConfig({ env: {}, defaults: defaults() });
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.port, 8080);
    assert.equal(config.tls, undefined);
    assert.equal(config.jwt, undefined);
    assert.deepEqual(config.http, {
      maxHeaderSize: 16 * 1024,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      trustedProxies: [],
      proxyProtocol: false,
      http2: false,
      inputBudget: false,
    });
    assert.deepEqual(config.limits, {
      maxConnections: 10_000,
      maxConnectionsPerAddress: 256,
      handshakesPerSecondPerAddress: 50,
      handshakeBurstPerAddress: 256,
      retryAfterSec: 5,
    });
    assert.deepEqual(config.shutdown, { drainTimeoutMs: 10_000 });
    assert.deepEqual(config.log, { level: 'info' });
    assert.equal(config.endpoints.length, 1);
    const [endpoint] = config.endpoints;
    assert.ok(endpoint);
    assert.equal(endpoint.path, '/ws');
    assert.deepEqual(endpoint.subprotocols, ['chat.v1']);
    assert.equal(endpoint.defaultModule, undefined);
    assert.deepEqual(endpoint.origins, []);
    assert.equal(endpoint.requireOrigin, false);
    assert.equal(endpoint.pingIntervalMs, 30_000);
    assert.equal(endpoint.outboundBufferCap, 4 * 1024 * 1024);
    assert.equal(endpoint.inputBudget, false);
    assert.equal(endpoint.maxConnections, undefined);
    assert.deepEqual(endpoint.auth, {
      mode: 'none',
      carriers: ['query', 'cookie', 'header', 'subprotocol', 'first-message'],
      queryParam: 'token',
      cookieName: 'token',
      subprotocolPrefix: 'bearer.',
      certificateSubject: 'cn',
      firstMessageTimeoutMs: 5000,
      guardTimeoutMs: 5000,
      firstMessageMaxBytes: 8192,
      firstMessageMaxQueued: 16,
    });
  });

  it('fills the defaults of a partly given nested section', () => {
    const config = loadConfig({
      env: {},
      defaults: {
        ...defaults(),
        http: { headersTimeoutMs: 2000 },
        jwt: { secret: SECRET },
        endpoints: [{ path: '/ws', subprotocols: ['a'], auth: { mode: 'required' } }],
      },
    });
    assert.deepEqual(config.http, {
      maxHeaderSize: 16 * 1024,
      headersTimeoutMs: 2000,
      requestTimeoutMs: 30_000,
      trustedProxies: [],
      proxyProtocol: false,
      http2: false,
      inputBudget: false,
    });
    assert.deepEqual(config.jwt, {
      secret: SECRET,
      clockToleranceSec: 5,
      maxLifetimeSec: 0,
      verifiedCacheSize: 4096,
    });
    assert.equal(config.endpoints[0]?.auth.mode, 'required');
    assert.equal(config.endpoints[0]?.auth.firstMessageTimeoutMs, 5000);
  });

  it('does not modify the defaults object it is given', () => {
    const given = defaults();
    const before = structuredClone(given);
    loadConfig({
      env: { PORT: '9000', HOST: 'localhost', LOG_LEVEL: 'warn', JWT_SECRET: SECRET },
      defaults: given,
    });
    assert.deepEqual(given, before);
  });

  it('refuses when there are no endpoints at all', () => {
    configError(() => loadConfig({ env: {} }), /endpoints/);
    configError(() => loadConfig({ env: {}, defaults: { endpoints: [] } }), /endpoints/);
  });

  it('refuses defaults that are not a mapping', () => {
    configError(() => loadConfig({ env: {}, defaults: [defaults()] }), /mapping/);
    configError(() => loadConfig({ env: {}, defaults: 'port: 1' }), /mapping/);
  });
});

describe('loadConfig environment overrides', () => {
  it('PORT, HOST, LOG_LEVEL and JWT_SECRET override the defaults', () => {
    const config = loadConfig({
      env: { PORT: '9001', HOST: '127.0.0.1', LOG_LEVEL: 'debug', JWT_SECRET: SECRET },
      defaults: {
        ...defaults(),
        port: 1234,
        host: 'example',
        log: { level: 'error' },
        jwt: { issuer: 'me' },
      },
    });
    assert.equal(config.port, 9001);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.log.level, 'debug');
    assert.deepEqual(config.jwt, {
      issuer: 'me',
      secret: SECRET,
      clockToleranceSec: 5,
      maxLifetimeSec: 0,
      verifiedCacheSize: 4096,
    });
  });

  it('DATABASE_URL selects PostgreSQL and ADMIN_TOKEN sets the admin token', () => {
    const token = 'admin-token-0123456789abcdef';
    const config = loadConfig({
      env: { DATABASE_URL: 'postgres://127.0.0.1:5432/test', ADMIN_TOKEN: token },
      defaults: { ...defaults(), store: { sqlitePath: '/tmp/x.db' } },
    });
    assert.equal(config.store.databaseUrl, 'postgres://127.0.0.1:5432/test');
    assert.equal(config.store.sqlitePath, '/tmp/x.db');
    assert.deepEqual(config.admin.tokens, [token]);
  });

  it('refuses a DATABASE_URL that is not PostgreSQL and a short ADMIN_TOKEN, naming the keys', () => {
    configError(
      () => loadConfig({ env: { DATABASE_URL: 'mysql://x' }, defaults: defaults() }),
      /store\.databaseUrl/,
    );
    const message = configError(
      () => loadConfig({ env: { ADMIN_TOKEN: 'short-admin' }, defaults: defaults() }),
      /admin\.tokens\.0/,
    );
    assert.ok(!message.includes('short-admin'), 'the message echoes the token');
  });

  it('leaves the configuration alone when none is set', () => {
    const config = loadConfig({
      env: { PATH: '/bin', UNRELATED: '1' },
      defaults: { ...defaults(), port: 1234 },
    });
    assert.equal(config.port, 1234);
    assert.equal(config.jwt, undefined);
  });

  it('refuses a PORT that is not an integer, naming PORT', () => {
    for (const port of ['abc', '80.5', '-1', '0x50', ' 80']) {
      configError(() => loadConfig({ env: { PORT: port }, defaults: defaults() }), /PORT/);
    }
  });

  it('refuses a PORT out of range, naming port', () => {
    configError(() => loadConfig({ env: { PORT: '65536' }, defaults: defaults() }), /^\s*port:/m);
  });

  it('refuses an unknown LOG_LEVEL, naming log.level', () => {
    configError(() => loadConfig({ env: { LOG_LEVEL: 'loud' }, defaults: defaults() }), /log\.level/);
  });

  it('refuses a short JWT_SECRET, naming jwt.secret without echoing it', () => {
    const short = 'short-secret-9f8e7d';
    const message = configError(
      () => loadConfig({ env: { JWT_SECRET: short }, defaults: defaults() }),
      /jwt\.secret/,
      /32/,
    );
    assert.ok(!message.includes(short), 'the message echoes the secret');
  });

  it('refuses a negative or fractional jwt.verifiedCacheSize, naming it', () => {
    for (const verifiedCacheSize of [-1, 1.5]) {
      configError(
        () =>
          loadConfig({
            env: { JWT_SECRET: SECRET },
            defaults: { ...defaults(), jwt: { verifiedCacheSize } },
          }),
        /jwt\.verifiedCacheSize/,
      );
    }
  });

  it('refuses JWT_SECRET next to a configured publicKeyFile', () => {
    configError(
      () =>
        loadConfig({
          env: { JWT_SECRET: SECRET },
          defaults: { ...defaults(), jwt: { publicKeyFile: '/keys/pub.pem' } },
        }),
      /jwt/,
      /only one/,
    );
  });
});

describe('loadConfig from a CONFIG file', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'load-config-'));
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  function file(name: string, text: string): string {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  }

  function fromFile(name: string, text: string, env: NodeJS.ProcessEnv = {}): ReturnType<typeof loadConfig> {
    return loadConfig({ env: { ...env, CONFIG: file(name, text) }, defaults: { ...defaults(), port: 1 } });
  }

  it('reads YAML over the defaults: mappings merged, the file winning, its endpoints first', () => {
    const config = fromFile(
      'broker.yaml',
      [
        'host: 127.0.0.1',
        'jwt:',
        `  secret: ${SECRET}`,
        '  issuer: https://issuer.example',
        'endpoints:',
        '  - path: /ocpp/:id',
        '    subprotocols: [ocpp2.0.1, ocpp1.6]',
        '    defaultModule: ocpp1.6',
        '    auth:',
        '      mode: required',
        '      carriers: [header]',
        '  - path: /chat',
        '    subprotocols: [chat.v1]',
        '',
      ].join('\n'),
    );
    assert.equal(config.port, 1, 'a default the file does not set stays');
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.jwt?.secret, SECRET);
    assert.equal(config.jwt?.issuer, 'https://issuer.example');
    assert.deepEqual(
      config.endpoints.map((e) => e.path),
      ['/ocpp/:id', '/chat', '/ws'],
      "the file's endpoints in its order, then the defaults it did not name",
    );
    assert.equal(config.endpoints[0]?.path, '/ocpp/:id');
    assert.deepEqual(config.endpoints[0]?.subprotocols, ['ocpp2.0.1', 'ocpp1.6']);
    assert.equal(config.endpoints[0]?.defaultModule, 'ocpp1.6');
    assert.deepEqual(config.endpoints[0]?.auth.carriers, ['header']);
    assert.equal(config.endpoints[0]?.auth.mode, 'required');
    assert.equal(config.endpoints[1]?.auth.mode, 'none');
  });

  it('a file naming a default endpoint by its path changes only what it sets; enabled: false drops it', () => {
    const layered = (text: string) =>
      loadConfig({
        env: { CONFIG: file('layered.yaml', text) },
        defaults: {
          endpoints: [
            { path: '/ws', subprotocols: ['chat.v1'] },
            { path: '/mqtt', subprotocols: ['mqtt', 'mqttv3.1'], defaultModule: 'mqtt' },
          ],
        },
      });
    const one = layered('limits: { maxConnections: 5 }\n');
    assert.equal(one.limits.maxConnections, 5);
    assert.deepEqual(
      one.endpoints.map((e) => e.path),
      ['/ws', '/mqtt'],
      'one key changed keeps every default endpoint',
    );
    const tuned = layered('endpoints: [{ path: /mqtt, auth: { mode: required } }]\n');
    const mqtt = tuned.endpoints.find((e) => e.path === '/mqtt');
    assert.equal(mqtt?.auth.mode, 'required');
    assert.deepEqual(mqtt?.subprotocols, ['mqtt', 'mqttv3.1'], 'the rest of the default endpoint stays');
    assert.equal(mqtt?.defaultModule, 'mqtt');
    const dropped = layered('endpoints: [{ path: /ws, enabled: false }]\n');
    assert.deepEqual(
      dropped.endpoints.map((e) => e.path),
      ['/mqtt'],
    );
    configError(
      () => layered('endpoints: [{ path: /ws, enabled: false }, { path: /mqtt, enabled: false }]\n'),
      /endpoints: at least one endpoint must be enabled/,
    );
    configError(() => layered('limits: { maxConections: 5 }\n'), /limits/, /maxConections/);
  });

  it('says which default endpoints a file with endpoints of its own leaves served', () => {
    const notices: string[] = [];
    const layered = (text: string) =>
      loadConfig({
        env: { CONFIG: file('noticed.yaml', text) },
        defaults: {
          endpoints: [
            { path: '/ws', subprotocols: ['chat.v1'] },
            { path: '/mqtt', subprotocols: ['mqtt'], defaultModule: 'mqtt' },
          ],
        },
        notice: (message) => notices.push(message),
      });
    layered('limits: { maxConnections: 5 }\n');
    assert.deepEqual(notices, [], 'a file without endpoints keeps the defaults as it expects');
    layered('endpoints: [{ path: /own, subprotocols: [chat.v1] }, { path: /ws, enabled: false }]\n');
    assert.equal(notices.length, 1);
    assert.match(notices[0] ?? '', /default endpoints \/mqtt are served too/);
    assert.doesNotMatch(notices[0] ?? '', /\/ws/, 'one turned off is not served');
    layered('endpoints: [{ path: /ws, enabled: false }, { path: /mqtt }]\n');
    assert.equal(notices.length, 1, 'every default named: nothing to say');
  });

  it('reads JSON', () => {
    const config = fromFile(
      'broker.json',
      JSON.stringify({
        port: 4000,
        limits: { maxConnections: 7 },
        endpoints: [{ path: '/x', subprotocols: ['x.v1'] }],
      }),
    );
    assert.equal(config.port, 4000);
    assert.deepEqual(config.limits, {
      maxConnections: 7,
      maxConnectionsPerAddress: 256,
      handshakesPerSecondPerAddress: 50,
      handshakeBurstPerAddress: 256,
      retryAfterSec: 5,
    });
    assert.equal(config.endpoints[0]?.path, '/x');
  });

  it('lets the environment override the file', () => {
    const config = fromFile(
      'env.yaml',
      'port: 4000\nlog: { level: warn }\nendpoints: [{ path: /a, subprotocols: [a] }]\n',
      {
        PORT: '5000',
        LOG_LEVEL: 'trace',
      },
    );
    assert.equal(config.port, 5000);
    assert.equal(config.log.level, 'trace');
  });

  it('refuses a file that cannot be read, naming CONFIG and the path', () => {
    const missing = join(dir, 'missing.yaml');
    configError(
      () => loadConfig({ env: { CONFIG: missing }, defaults: defaults() }),
      /CONFIG/,
      /cannot read/,
      /missing\.yaml/,
    );
    configError(() => loadConfig({ env: { CONFIG: dir }, defaults: defaults() }), /CONFIG/, /cannot read/);
  });

  it('refuses invalid YAML', () => {
    configError(() => fromFile('bad.yaml', 'endpoints: [\n  { path: /a\n'), /not valid YAML/, /bad\.yaml/);
    configError(() => fromFile('tabs.yaml', 'port: 1\n\tport: 2\n'), /not valid YAML/);
    configError(() => fromFile('dup.yaml', 'port: 1\nport: 2\n'), /not valid YAML/);
  });

  it('does not echo a YAML line that holds the secret when the syntax is wrong', () => {
    const secret = 'file-secret-0123456789-abcdefghijklmnop';
    for (const yaml of [
      `jwt:\n  secret: ${secret}: oops\nendpoints: [{ path: /a, subprotocols: [a] }]\n`,
      `jwt: { secret: ${secret} ]\nendpoints: [{ path: /a, subprotocols: [a] }]\n`,
    ]) {
      const message = configError(() => fromFile('leak.yaml', yaml), /not valid YAML/, /leak\.yaml/);
      assert.ok(!message.includes(secret), `the message echoes the secret: ${JSON.stringify(message)}`);
    }
  });

  it('refuses a file whose top level is not a mapping', () => {
    configError(() => fromFile('list.yaml', '- path: /a\n- path: /b\n'), /mapping/);
    configError(() => fromFile('scalar.yaml', 'just a string\n'), /mapping/);
    configError(() => fromFile('empty.yaml', ''), /mapping/);
    configError(() => fromFile('null.json', 'null'), /mapping/);
  });

  it('refuses unknown keys, naming where they are', () => {
    const endpoints = 'endpoints: [{ path: /a, subprotocols: [a] }]\n';
    configError(() => fromFile('unknown-top.yaml', `prot: 80\n${endpoints}`), /prot/);
    configError(
      () => fromFile('unknown-jwt.yaml', `jwt: { secrt: ${SECRET} }\n${endpoints}`),
      /jwt/,
      /secrt/,
    );
    configError(
      () => fromFile('unknown-ep.yaml', 'endpoints: [{ path: /a, subprotocols: [a], pingInterval: 5 }]\n'),
      /endpoints\.0/,
      /pingInterval\b/,
    );
    configError(
      () =>
        fromFile(
          'unknown-auth.yaml',
          'endpoints: [{ path: /a, subprotocols: [a] }, { path: /b, subprotocols: [b], auth: { modes: none } }]\n',
        ),
      /endpoints\.1\.auth/,
      /modes/,
    );
  });

  it('refuses bad types, naming the dotted key', () => {
    const cases: readonly (readonly [string, RegExp])[] = [
      ['endpoints: [{ path: 5, subprotocols: [a] }]', /endpoints\.0\.path/],
      ['endpoints: [{ path: ws, subprotocols: [a] }]', /endpoints\.0\.path: .*\//],
      ['endpoints: [{ path: /a, subprotocols: [] }]', /endpoints\.0\.subprotocols/],
      ['endpoints: [{ path: /a, subprotocols: a }]', /endpoints\.0\.subprotocols/],
      ['endpoints: [{ path: /a, subprotocols: [a], pingIntervalMs: -1 }]', /endpoints\.0\.pingIntervalMs/],
      // Past 2^31 - 1 ms, Node's timers fire after 1 ms: a deadline that long would be none at all.
      [
        'endpoints: [{ path: /a, subprotocols: [a], pingIntervalMs: 2147483648 }]',
        /endpoints\.0\.pingIntervalMs: .*2147483647/,
      ],
      ['endpoints: [{ path: /a, subprotocols: [a], auth: { mode: sometimes } }]', /endpoints\.0\.auth\.mode/],
      [
        'endpoints: [{ path: /a, subprotocols: [a], auth: { carriers: [smoke] } }]',
        /endpoints\.0\.auth\.carriers\.0/,
      ],
      [
        'endpoints: [{ path: /a, subprotocols: [a], auth: { subprotocolPrefix: "a b" } }]',
        /endpoints\.0\.auth\.subprotocolPrefix/,
      ],
      ['port: "8080"\nendpoints: [{ path: /a, subprotocols: [a] }]', /^\s*port:/m],
      [
        'limits: { maxConnections: 0 }\nendpoints: [{ path: /a, subprotocols: [a] }]',
        /limits\.maxConnections/,
      ],
      ['http: { maxHeaderSize: 100 }\nendpoints: [{ path: /a, subprotocols: [a] }]', /http\.maxHeaderSize/],
      ['tls: { certFile: a }\nendpoints: [{ path: /a, subprotocols: [a] }]', /tls\.keyFile/],
      ['endpoints: {}', /endpoints/],
    ];
    for (const [index, [yaml, key]] of cases.entries()) {
      configError(() => fromFile(`types-${index}.yaml`, `${yaml}\n`), /invalid configuration/, key);
    }
  });

  it('lists every problem, one per line', () => {
    const message = configError(
      () =>
        fromFile(
          'many.yaml',
          'port: -1\nlimits: { retryAfterSec: 0 }\nendpoints: [{ path: x, subprotocols: [a] }]\n',
        ),
      /^\s*port:/m,
      /^\s*limits\.retryAfterSec:/m,
      /^\s*endpoints\.0\.path:/m,
    );
    assert.equal(message.split('\n').length, 4);
  });

  it('refuses a jwt.secret in the file that is too short, without echoing it', () => {
    const short = 'file-secret-abc123';
    const message = configError(
      () =>
        fromFile('short.yaml', `jwt: { secret: ${short} }\nendpoints: [{ path: /a, subprotocols: [a] }]\n`),
      /jwt\.secret/,
    );
    assert.ok(!message.includes(short));
  });

  it('refuses a defaultModule that is not one of the subprotocols, naming it', () => {
    configError(
      () => fromFile('default.yaml', 'endpoints: [{ path: /a, subprotocols: [a, b], defaultModule: c }]\n'),
      /endpoints\.0\.defaultModule/,
    );
    configError(
      () =>
        fromFile(
          'default-1.yaml',
          'endpoints: [{ path: /a, subprotocols: [a], defaultModule: a }, { path: /b, subprotocols: [b], defaultModule: a }]\n',
        ),
      /endpoints\.1\.defaultModule/,
    );
  });

  it('refuses two of secret, publicKeyFile and jwksFile', () => {
    const endpoints = 'endpoints: [{ path: /a, subprotocols: [a] }]\n';
    for (const jwt of [
      `{ secret: ${SECRET}, publicKeyFile: /k.pem }`,
      `{ secret: ${SECRET}, jwksFile: /k.json }`,
      '{ publicKeyFile: /k.pem, jwksFile: /k.json }',
      `{ secret: ${SECRET}, publicKeyFile: /k.pem, jwksFile: /k.json }`,
    ]) {
      const message = configError(
        () => fromFile('two-keys.yaml', `jwt: ${jwt}\n${endpoints}`),
        /jwt/,
        /only one/,
      );
      assert.ok(!message.includes(SECRET));
    }
  });
});

describe('loadConfig cluster', () => {
  const pg = 'postgres://127.0.0.1/test';

  it('is off by default: no NATS, one process', () => {
    const config = loadConfig({ env: {}, defaults: defaults() });
    assert.equal(config.cluster.natsUrl, undefined);
    assert.equal(config.cluster.name, 'broker');
  });

  it('NATS_URL takes a comma-separated list of servers, NODE_ID names the node', () => {
    const config = loadConfig({
      env: { NATS_URL: 'nats://a:4222, nats://b:4222', NODE_ID: 'node-1', DATABASE_URL: pg },
      defaults: defaults(),
    });
    assert.deepEqual(config.cluster.natsUrl, ['nats://a:4222', 'nats://b:4222']);
    assert.equal(config.cluster.nodeId, 'node-1');
  });

  it('refuses NATS without PostgreSQL, saying why', () => {
    configError(
      () => loadConfig({ env: { NATS_URL: 'nats://127.0.0.1:4222' }, defaults: defaults() }),
      /cluster\.natsUrl: cluster mode \(NATS_URL\) needs PostgreSQL \(DATABASE_URL\)/,
    );
  });

  it('refuses a node id that cannot be a subject token, and a URL that is not nats://', () => {
    configError(
      () =>
        loadConfig({ env: { NATS_URL: 'nats://x', NODE_ID: 'a.b', DATABASE_URL: pg }, defaults: defaults() }),
      /cluster\.nodeId: must be 1 to 64 letters/,
    );
    configError(
      () => loadConfig({ env: { NATS_URL: 'http://x', DATABASE_URL: pg }, defaults: defaults() }),
      /cluster\.natsUrl\.0: must be a nats:\/\/ or tls:\/\/ URL/,
    );
  });

  it('refuses a node timeout that a live node could miss', () => {
    configError(
      () =>
        loadConfig({
          env: {},
          defaults: { ...defaults(), cluster: { heartbeatMs: 1000, nodeTimeoutMs: 1500 } },
        }),
      /cluster\.nodeTimeoutMs: must be more than twice heartbeatMs/,
    );
  });
});

describe('http.trustedProxies', () => {
  it('takes addresses, CIDRs and the named ranges; anything else is refused, naming the entry', () => {
    const ok = loadConfig({
      env: {},
      defaults: {
        ...defaults(),
        http: { trustedProxies: ['127.0.0.1', '10.0.0.0/8', 'fd00::/8', 'loopback'] },
      },
    });
    assert.equal(ok.http.trustedProxies.length, 4);
    assert.throws(
      () =>
        loadConfig({
          env: {},
          defaults: { ...defaults(), http: { trustedProxies: ['127.0.0.1', 'my-proxy.local'] } },
        }),
      /http\.trustedProxies\.1: expected an IP address, a CIDR/,
    );
  });
});

describe('http.proxyProtocol', () => {
  it('needs trusted proxies; on a TLS listener it is read before TLS', () => {
    assert.throws(
      () => loadConfig({ env: {}, defaults: { ...defaults(), http: { proxyProtocol: true } } }),
      /http\.proxyProtocol: the PROXY protocol needs http\.trustedProxies/,
    );
    const config = loadConfig({
      env: {},
      defaults: {
        ...defaults(),
        tls: { certFile: 'c.pem', keyFile: 'k.pem' },
        http: { proxyProtocol: true, trustedProxies: ['10.0.0.1'] },
      },
    });
    assert.equal(config.http.proxyProtocol, true);
  });
});
