#!/usr/bin/env bash
# Builds the two base images docker-compose.yml needs without any image registry, from a
# Debian rootfs (debootstrap, cached) and this machine's own Node.js and etcd binaries:
#   svc-local/node:20-bookworm-slim  Debian bookworm + node/npm/corepack in /usr/local (as the official image)
#   svc-local/etcd:local              Debian bookworm + etcd in /usr/local/bin
# The node image also carries this machine's CA bundle (NODE_EXTRA_CA_CERTS), so npm inside a
# build trusts what the host trusts. Then:
#   SVC_BASE_IMAGE=svc-local/node:20-bookworm-slim SVC_ETCD_IMAGE=svc-local/etcd:local docker-compose up
# Needs: root, debootstrap, docker; DOCKER_HOST as for docker. Cache: SVC_ROOTFS_CACHE (~/.cache/svc).
set -euo pipefail
NODE_IMAGE="${SVC_LOCAL_NODE_IMAGE:-svc-local/node:20-bookworm-slim}"
ETCD_IMAGE="${SVC_LOCAL_ETCD_IMAGE:-svc-local/etcd:local}"
CACHE="${SVC_ROOTFS_CACHE:-$HOME/.cache/svc}"
MIRROR="${SVC_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
tarball="$CACHE/rootfs-bookworm-minbase.tar"

if [ ! -s "$tarball" ]; then
  echo "== debootstrap a minimal Debian bookworm rootfs (once; cached in $tarball)"
  mkdir -p "$CACHE"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  debootstrap --variant=minbase bookworm "$work/rootfs" "$MIRROR" >"$work/debootstrap.log" 2>&1 \
    || { tail -n 20 "$work/debootstrap.log" >&2; exit 1; }
  rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/lib/apt/lists/"*
  tar -C "$work/rootfs" -cf "$tarball.part" . && mv "$tarball.part" "$tarball"
fi

BASE=svc-local/debian:bookworm-minbase
docker import -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' "$tarball" "$BASE" >/dev/null

# An image: the base with the tree `dir` copied over it, then `lines` of Dockerfile (the
# classic builder, which takes local images as they are).
build_image() { # tag dir lines
  printf 'FROM %s\nCOPY . /\n%s\n' "$BASE" "$3" >"$2/Dockerfile"
  DOCKER_BUILDKIT=0 docker build -q -t "$1" "$2" >/dev/null
  echo "built $1"
}

extra=$(mktemp -d)
trap 'rm -rf "$extra"' EXIT
# Node.js, npm, npx and corepack where the official image has them.
npm_dir=$(dirname "$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")")
mkdir -p "$extra/node/usr/local/bin" "$extra/node/usr/local/lib/node_modules" "$extra/node/etc/ssl/certs"
cp "$(readlink -f "$(command -v node)")" "$extra/node/usr/local/bin/node"
cp -a "$npm_dir/npm" "$npm_dir/corepack" "$extra/node/usr/local/lib/node_modules/"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$extra/node/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$extra/node/usr/local/bin/npx"
ln -s ../lib/node_modules/corepack/dist/corepack.js "$extra/node/usr/local/bin/corepack"
cp /etc/ssl/certs/ca-certificates.crt "$extra/node/etc/ssl/certs/"
build_image "$NODE_IMAGE" "$extra/node" 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
CMD ["node"]'
mkdir -p "$extra/etcd/usr/local/bin"
cp "$(readlink -f "$(command -v etcd)")" "$extra/etcd/usr/local/bin/etcd"
build_image "$ETCD_IMAGE" "$extra/etcd" 'CMD ["etcd"]'
