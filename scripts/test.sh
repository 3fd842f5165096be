#!/usr/bin/env bash
# The README's test command: installs what is missing, type-checks, builds, runs every test,
# and ends with the line "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/ensure-tools.sh
ensure_pnpm
ensure_etcd
pnpm_install
echo "== type-check and build"
./node_modules/.bin/tsc -b packages/*/tsconfig.json
./node_modules/.bin/tsc -p tsconfig.tests.json
echo "== tests"
mkdir -p .test-results
result=.test-results/jest.json
set +e
./node_modules/.bin/jest --ci --json --outputFile="$result" "$@"
status=$?
set -e
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  console.log(`${r.numPassedTests} passed, ${r.numFailedTests + r.numRuntimeErrorTestSuites} failed`);
' "$result" || { echo "0 passed, 1 failed"; exit 1; }
exit $status
