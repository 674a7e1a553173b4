/**
 * The import rules of the README's Layout, checked on the sources by `npm run lint`: no cycles; each
 * lib imports only the libs MAY_IMPORT lists for it (so the sans-IO handshake imports nothing of
 * ours, and a protocol never imports another: protocols meet on the bus); libs never import the
 * applications or the tests. Type-only imports count (tsPreCompilationDeps: true): the compiler erases
 * them, but a cycle of types is still two files that cannot be read apart; `#broker/<lib>` resolves
 * through tsconfig.json's paths to the lib's index.
 */

/** Which libs each lib may import besides itself; `protocols/*` is each protocol on its own. */
const MAY_IMPORT = {
  kit: [],
  handshake: [],
  config: [],
  bus: [],
  auth: ['bus', 'config', 'handshake'],
  gateway: ['auth', 'config', 'handshake', 'kit'],
  store: ['auth', 'config', 'gateway', 'handshake'],
  cluster: ['bus', 'config', 'gateway', 'store'],
  admin: ['auth', 'bus', 'cluster', 'config', 'gateway', 'handshake', 'store'],
  dashboard: ['admin', 'cluster', 'gateway'],
  'protocols/*': ['admin', 'auth', 'bus', 'cluster', 'config', 'gateway', 'handshake', 'kit', 'store'],
  terminus: ['gateway'],
  broker: ['admin', 'auth', 'bus', 'cluster', 'config', 'dashboard', 'gateway', 'handshake', 'kit', 'store'],
  testing: ['broker', 'bus', 'config', 'gateway', 'handshake'],
};

const layers = Object.entries(MAY_IMPORT).map(([lib, allowed]) => {
  const protocol = lib === 'protocols/*';
  return {
    name: `${protocol ? 'a-protocol' : lib}-imports-only-${allowed.join('-') || 'itself'}`,
    severity: 'error',
    from: { path: `^libs/${protocol ? 'protocols/([^/]+)' : lib}/` },
    to: { path: '^libs/', pathNot: `^libs/(?:${[protocol ? 'protocols/$1' : lib, ...allowed].join('|')})/` },
  };
});

module.exports = {
  forbidden: [
    ...layers,
    {
      name: 'another-lib-only-through-its-index',
      severity: 'error',
      comment:
        "A lib's files other than its index are its own: another lib imports it through `#broker/<lib>` (its src/index.ts), never a path into it. The dashboard's page, a browser build, takes the admin API's response types from their files with no imports, not through an index that loads Nest.",
      from: { path: '^libs/(protocols/[^/]+|[^/]+)/', pathNot: '^libs/dashboard/web/' },
      to: { path: '^libs/', pathNot: ['^libs/$1/', '^libs/(?:protocols/[^/]+|[^/]+)/src/index\\.ts$'] },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle means two modules are one idea in two files, or a handler imports its dispatcher.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'mqtt-core-does-not-reach-the-cluster',
      severity: 'error',
      comment:
        "MQTT's cluster part (src/cluster/) sits behind the core's ports (MessageQueues, SessionDirectory): only the server that composes them imports it, or NATS; the admin routes (src/admin/) ask every node, as the admin lib's do.",
      from: {
        path: '^libs/protocols/mqtt/src/',
        pathNot: '^libs/protocols/mqtt/src/(cluster/|admin/|mqtt-server\\.ts$)',
      },
      to: { path: '^libs/(protocols/mqtt/src/cluster/|cluster/)' },
    },
    {
      name: 'kit-imports-no-package',
      severity: 'error',
      comment: 'The protocol kit loads with no Nest and no ws: a protocol core imports it alone.',
      from: { path: '^libs/kit/' },
      to: { dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'libs-do-not-import-apps-or-tests',
      severity: 'error',
      from: { path: '^libs/' },
      to: { path: '^(src|apps|test)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.(spec|e2e)\\.ts$|spec-support|\\.d\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { conditionNames: ['import', 'default', 'node'] },
  },
};
