# Shared by scripts/*.sh: install pnpm, etcd, redis, the Python client and ss when they are missing (fresh machine).
# Debian packages, as root or through sudo.
apt_install() { # package...
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}
ensure_pnpm() {
  if ! command -v pnpm >/dev/null 2>&1; then
    echo "== installing pnpm"
    npm install -g "pnpm@$(node -p 'require("./package.json").packageManager.split("@")[1]')" >/dev/null
  fi
}
ensure_etcd() {
  if ! command -v etcd >/dev/null 2>&1; then
    echo "== installing etcd (Debian etcd-server)"
    apt_install etcd-server
  fi
}
# Redis, for Events on Redis (--store-servers-overrides redis://...): tests and cluster.sh start it.
ensure_redis() {
  if ! command -v redis-server >/dev/null 2>&1; then
    echo "== installing redis (Debian redis-server)"
    apt_install redis-server
  fi
}
# The official Kubernetes Python client, for the test that drives svc with it unchanged.
ensure_python_client() {
  if ! /usr/bin/python3 -c 'import kubernetes' >/dev/null 2>&1; then
    echo "== installing the Kubernetes Python client (Debian python3-kubernetes)"
    apt_install python3-kubernetes
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
# The build: tsc, then the binaries' bundles (scripts/bundle.mjs: what bin entries and cluster.sh run).
BUILD_STAMP=node_modules/.svc-build-stamp
build_packages() {
  ./node_modules/.bin/tsc -b packages/*/tsconfig.json
  node scripts/bundle.mjs
  touch "$BUILD_STAMP"
}
# True when a source, tsconfig, package.json, the lockfile (the bundles carry their
# dependencies' code) or the build script changed since the last build, or a package's dist is
# missing: `tsc -b` alone costs ~0.3 s even when it has nothing to do.
build_needed() {
  local d
  [ -f "$BUILD_STAMP" ] || return 0
  for d in packages/*/; do [ -d "$d/dist" ] || return 0; done
  [ -n "$(find packages/*/src packages/*/tsconfig.json packages/*/package.json tsconfig*.json pnpm-lock.yaml scripts/bundle.mjs \
    -newer "$BUILD_STAMP" -print -quit 2>/dev/null)" ]
}
ensure_deps() {
  ensure_pnpm
  # Installed, and not older than the lockfile (a pull that adds a dependency installs it).
  if [ ! -d node_modules/.pnpm ] || [ pnpm-lock.yaml -nt node_modules/.modules.yaml ]; then pnpm_install; fi
  # Incremental: skipped when nothing changed, and a fresh pull never runs stale binaries.
  if build_needed; then build_packages; fi
}
# ss (iproute2): a test reads a listening socket's accept-queue length with it.
ensure_ss() {
  if ! command -v ss >/dev/null 2>&1; then
    echo "== installing ss (Debian iproute2)"
    apt_install iproute2
  fi
}
