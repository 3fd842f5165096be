// Tests run from TypeScript sources through @swc/jest (CommonJS); `tsc -b` type-checks separately.
// @kubernetes/client-node (an e2e test's client) and its openid-client/oauth4webapi are ESM-only too.
// parse5-html-rewriting-stream (the proxy's HTML link rewriting) and its parse5 and entities too.
const esmOnly = [
  'jose',
  '@marcbachmann/cel-js',
  '@kubernetes/client-node',
  'openid-client',
  'oauth4webapi',
  'parse5-html-rewriting-stream',
  'parse5-sax-parser',
  'parse5',
  'entities',
];
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/packages'],
  testMatch: ['**/src/**/*.test.ts'],
  transform: {
    '^.+\\.(t|j|mj)s$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript', decorators: true }, target: 'es2022' },
        module: { type: 'commonjs' },
      },
    ],
  },
  transformIgnorePatterns: [`/node_modules/(?!(\\.pnpm/[^/]+/node_modules/)?(${esmOnly.join('|')})/)`],
  moduleNameMapper: {
    '^@svc/([a-z-]+)$': '<rootDir>/packages/$1/src/index.ts',
    '^@svc/([a-z-]+)/([a-z/-]+)$': '<rootDir>/packages/$1/src/$2.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  // A hang detector, not a speed bound: on a loaded machine a test that waits on etcd's fsyncs
  // (1000 sequential creates, say) has taken over 60 s where it takes 11 s alone.
  testTimeout: 120000,
  // Jest's default on a 2-core machine is one worker. Most files wait on etcd, servers and child
  // processes rather than the CPU: two workers ran the whole suite in 1059 s instead of 1939 s.
  maxWorkers: 2,
};
