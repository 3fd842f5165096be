#!/usr/bin/env bash
# The README's test command: installs what is missing, type-checks, builds, lints, runs every test,
# and ends with the line "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/ensure-tools.sh
ensure_pnpm
ensure_etcd
ensure_redis
ensure_python_client
ensure_ss
pnpm_install
echo "== type-check and build"
build_packages
./node_modules/.bin/tsc -p tsconfig.tests.json
echo "== lint (ESLint with type information, Prettier)"
if ! ./node_modules/.bin/eslint --max-warnings 0 packages || ! ./node_modules/.bin/prettier --check --log-level warn .; then
  echo "lint failed (./node_modules/.bin/eslint packages; pnpm format fixes formatting)"
  echo "0 passed, 1 failed"
  exit 1
fi
echo "== tests"
mkdir -p .test-results
result=.test-results/jest.json
set +e
./node_modules/.bin/jest --ci --json --outputFile="$result" "$@"
status=$?
set -e
# The docker-compose cluster, for real, when this machine can start dockerd (root) and the
# whole suite runs (no jest arguments); SVC_COMPOSE_TEST=0 leaves it out.
compose=.test-results/compose.json
rm -f "$compose"
if [ $# -eq 0 ] && [ "${SVC_COMPOSE_TEST:-1}" != 0 ] && [ "$(id -u)" = 0 ]; then
  echo "== docker compose test"
  ./scripts/compose-test.sh "$compose" || { status=1; [ -s "$compose" ] || echo '{"passed": 0, "failed": 1}' >"$compose"; }
else
  echo "== docker compose test not run (it needs root for dockerd and the whole suite; SVC_COMPOSE_TEST=0 leaves it out)"
fi
node -e '
  const fs = require("fs");
  const r = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
  const c = fs.existsSync(process.argv[2]) ? JSON.parse(fs.readFileSync(process.argv[2], "utf8")) : { passed: 0, failed: 0 };
  // Each failure once more, a line each, next to the summary (a CI excerpt may show only the end).
  const first = (m) => String(m ?? "").replace(/\x1b\[[0-9;]*m/g, "").split("\n").map((l) => l.trim()).filter(Boolean).slice(0, 3).join(" | ").slice(0, 400);
  for (const f of r.testResults) {
    const file = require("path").relative(process.cwd(), f.name);
    if (f.testExecError || (f.status === "failed" && !f.assertionResults.some((a) => a.status === "failed")))
      console.log(`failed: ${file} (the file did not run): ${first(f.message || f.testExecError?.message)}`);
    for (const a of f.assertionResults.filter((a) => a.status === "failed"))
      console.log(`failed: ${file} › ${a.fullName}: ${first(a.failureMessages?.[0])}`);
  }
  console.log(`${r.numPassedTests + c.passed} passed, ${r.numFailedTests + r.numRuntimeErrorTestSuites + c.failed} failed`);
' "$result" "$compose" || { echo "0 passed, 1 failed"; exit 1; }
exit $status
