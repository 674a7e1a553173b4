/**
 * The import rules of DESIGN.md, checked on the compiled tree (dist/, where type-only imports are gone
 * and `#broker/<lib>` resolves through package.json's imports): no cycles, the sans-IO handshake imports
 * nothing of ours, libraries never import the applications or the tests, and a protocol library never
 * imports another (protocols meet on the bus).
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
      from: { path: '^dist/libs/handshake/' },
      to: { path: '^dist/(libs/(?!handshake/)|src/|apps/)' },
    },
    {
      name: 'libs-do-not-import-apps-or-tests',
      severity: 'error',
      from: { path: '^dist/libs/' },
      to: { path: '^dist/(src|apps|test)/' },
    },
    {
      name: 'protocols-meet-on-the-bus',
      severity: 'error',
      from: { path: '^dist/libs/protocols/([^/]+)/' },
      to: { path: '^dist/libs/protocols/([^/]+)/', pathNot: '^dist/libs/protocols/$1/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.(spec|e2e)\\.js$|spec-support|\\.d\\.ts$' },
    moduleSystems: ['es6'],
    enhancedResolveOptions: { conditionNames: ['import', 'default', 'node'] },
  },
};
