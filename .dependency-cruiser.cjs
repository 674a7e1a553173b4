/**
 * The import rules of the README's Layout, checked on the sources by `npm run lint`: no cycles, the
 * sans-IO handshake imports nothing of ours, libraries never import the applications or the tests,
 * and a protocol library never imports another (protocols meet on the bus). Type-only imports are
 * left out (tsPreCompilationDeps: false), as the compiler erases them; `#broker/<lib>` resolves
 * through tsconfig.json's paths to the lib's index.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle means two modules are one idea in two files, or a handler imports its dispatcher.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'handshake-imports-nothing-of-ours',
      severity: 'error',
      from: { path: '^libs/handshake/' },
      to: { path: '^(libs/(?!handshake/)|src/|apps/)' },
    },
    {
      name: 'libs-do-not-import-apps-or-tests',
      severity: 'error',
      from: { path: '^libs/' },
      to: { path: '^(src|apps|test)/' },
    },
    {
      name: 'protocols-meet-on-the-bus',
      severity: 'error',
      from: { path: '^libs/protocols/([^/]+)/' },
      to: { path: '^libs/protocols/([^/]+)/', pathNot: '^libs/protocols/$1/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.(spec|e2e)\\.ts$|spec-support|\\.d\\.ts$' },
    tsPreCompilationDeps: false,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { conditionNames: ['import', 'default', 'node'] },
  },
};
