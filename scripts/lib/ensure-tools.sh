# Shared by scripts/*.sh: install pnpm, etcd and redis when they are missing (fresh machine).
ensure_pnpm() {
  if ! command -v pnpm >/dev/null 2>&1; then
    echo "== installing pnpm"
    npm install -g "pnpm@$(node -p 'require("./package.json").packageManager.split("@")[1]')" >/dev/null
  fi
}
ensure_etcd() {
  if ! command -v etcd >/dev/null 2>&1; then
    echo "== installing etcd (Debian etcd-server)"
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq etcd-server >/dev/null
  fi
}
# Redis, for Events on Redis (--store-servers-overrides redis://...): tests and cluster.sh start it.
ensure_redis() {
  if ! command -v redis-server >/dev/null 2>&1; then
    echo "== installing redis (Debian redis-server)"
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq redis-server >/dev/null
  fi
}
# The official Kubernetes Python client, for the test that drives svc with it unchanged.
ensure_python_client() {
  if ! /usr/bin/python3 -c 'import kubernetes' >/dev/null 2>&1; then
    echo "== installing the Kubernetes Python client (Debian python3-kubernetes)"
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-kubernetes >/dev/null
  fi
}
# pnpm 12 sometimes fails looking itself up in the registry (ERR_PNPM_BAD_CONFIG_DEP); retry.
pnpm_install() {
  local i
  for i in 1 2 3; do
    pnpm install --frozen-lockfile && return 0
    echo "pnpm install failed (attempt $i); retrying" >&2
  done
  return 1
}
ensure_deps() {
  ensure_pnpm
  [ -d node_modules/.pnpm ] || pnpm_install
  # Incremental: quick when nothing changed, and a fresh pull never runs stale binaries.
  ./node_modules/.bin/tsc -b packages/*/tsconfig.json
}
