#!/usr/bin/env bash
# The README's run command: a local cluster (etcd, svc-apiserver, svc-controller-manager) under .cluster/.
#   ./scripts/cluster.sh up | down | status
# Ports: SVC_ETCD_PORT (2379), SVC_ETCD_PEER_PORT (2380), SVC_APISERVER_PORT (6443),
#   SVC_CONTROLLER_MANAGER_PORT (10257).
# SVC_APISERVER_ARGS, SVC_CONTROLLER_MANAGER_ARGS: extra flags (split on spaces), e.g. --naming=kubernetes.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/ensure-tools.sh

DIR="$PWD/.cluster"
ETCD_PORT="${SVC_ETCD_PORT:-2379}"
ETCD_PEER_PORT="${SVC_ETCD_PEER_PORT:-2380}"
API_PORT="${SVC_APISERVER_PORT:-6443}"
CM_PORT="${SVC_CONTROLLER_MANAGER_PORT:-10257}"
read -r -a EXTRA_API_ARGS <<<"${SVC_APISERVER_ARGS:-}"
read -r -a EXTRA_CM_ARGS <<<"${SVC_CONTROLLER_MANAGER_ARGS:-}"
SVCCONFIG="$DIR/admin.svcconfig"

alive() { [ -f "$DIR/$1.pid" ] && kill -0 "$(cat "$DIR/$1.pid")" 2>/dev/null; }

start_bg() { # name logfile command...
  local name=$1; shift
  nohup "$@" >"$DIR/$name.log" 2>&1 &
  echo $! >"$DIR/$name.pid"
}

wait_ready() { # url cafile seconds
  node -e '
    const https = require("https"); const fs = require("fs");
    const [url, ca, secs] = process.argv.slice(1);
    const deadline = Date.now() + Number(secs) * 1000;
    const probe = () => https.get(url, { ca: fs.readFileSync(ca) }, (r) => {
      r.resume();
      if (r.statusCode === 200) process.exit(0);
      retry();
    }).on("error", retry);
    const retry = () => Date.now() > deadline ? process.exit(1) : setTimeout(probe, 100);
    const waitCa = () => fs.existsSync(ca) ? probe() : retry2();
    const retry2 = () => Date.now() > deadline ? process.exit(1) : setTimeout(waitCa, 100);
    waitCa();
  ' "$1" "$2" "$3"
}

up() {
  ensure_etcd
  ensure_deps
  mkdir -p "$DIR/pki"
  if [ ! -f "$DIR/tokens.csv" ]; then
    token=$(node -e 'console.log(require("crypto").randomBytes(16).toString("hex"))')
    umask 077
    echo "$token,admin,admin,\"system:masters\"" >"$DIR/tokens.csv"
  fi
  if alive etcd; then echo "etcd already running (pid $(cat "$DIR/etcd.pid"))"; else
    start_bg etcd etcd --name svc --data-dir "$DIR/etcd" \
      --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
      --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
      --initial-cluster "svc=http://127.0.0.1:$ETCD_PEER_PORT"
  fi
  if alive apiserver; then echo "svc-apiserver already running (pid $(cat "$DIR/apiserver.pid"))"; else
    start_bg apiserver node packages/apiserver/dist/bin/svc-apiserver.js \
      --store-servers "http://127.0.0.1:$ETCD_PORT" --bind-address 127.0.0.1 --secure-port "$API_PORT" \
      --cert-dir "$DIR/pki" --token-auth-file "$DIR/tokens.csv" ${EXTRA_API_ARGS[@]+"${EXTRA_API_ARGS[@]}"}
  fi
  if ! wait_ready "https://127.0.0.1:$API_PORT/readyz" "$DIR/pki/ca.crt" 60; then
    echo "svc-apiserver did not become ready; see $DIR/apiserver.log and $DIR/etcd.log" >&2
    tail -n 20 "$DIR/apiserver.log" >&2 || true
    exit 1
  fi
  token=$(cut -d, -f1 "$DIR/tokens.csv" | head -n1)
  ca=$(base64 -w0 <"$DIR/pki/ca.crt")
  cat >"$SVCCONFIG" <<YAML
apiVersion: v1
kind: Config
clusters:
- name: svc
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority-data: $ca
users:
- name: admin
  user:
    token: $token
contexts:
- name: admin@svc
  context:
    cluster: svc
    user: admin
    namespace: default
current-context: admin@svc
YAML
  chmod 600 "$SVCCONFIG"
  naming=()
  for a in ${EXTRA_API_ARGS[@]+"${EXTRA_API_ARGS[@]}"}; do case "$a" in --naming=*) naming=("$a") ;; esac; done
  if alive controller-manager; then echo "svc-controller-manager already running (pid $(cat "$DIR/controller-manager.pid"))"; else
    start_bg controller-manager node packages/controller-manager/dist/bin/svc-controller-manager.js \
      --svcconfig "$SVCCONFIG" --authentication-kubeconfig "$SVCCONFIG" --authorization-kubeconfig "$SVCCONFIG" \
      --bind-address 127.0.0.1 --secure-port "$CM_PORT" --cert-dir "$DIR/controller-manager" \
      --controllers='*,tokencleaner,bootstrapsigner' ${naming[@]+"${naming[@]}"} ${EXTRA_CM_ARGS[@]+"${EXTRA_CM_ARGS[@]}"}
  fi
  if ! wait_ready "https://127.0.0.1:$CM_PORT/healthz" "$DIR/controller-manager/ca.crt" 30; then
    echo "svc-controller-manager did not become healthy; see $DIR/controller-manager.log" >&2
    tail -n 20 "$DIR/controller-manager.log" >&2 || true
    exit 1
  fi
  cat <<MSG
svc cluster is up: https://127.0.0.1:$API_PORT (logs in $DIR)
  export KUBECONFIG=$SVCCONFIG
  kubectl get namespaces
  kubectl get --raw '/readyz?verbose'
Stop it with ./scripts/cluster.sh down
MSG
}

down() {
  for name in controller-manager apiserver etcd; do
    if alive "$name"; then
      pid=$(cat "$DIR/$name.pid")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
      echo "stopped $name (pid $pid)"
    fi
    rm -f "$DIR/$name.pid"
  done
}

status() {
  for name in etcd apiserver controller-manager; do
    if alive "$name"; then echo "$name: running (pid $(cat "$DIR/$name.pid"))"; else echo "$name: stopped"; fi
  done
  if alive apiserver && wait_ready "https://127.0.0.1:$API_PORT/readyz" "$DIR/pki/ca.crt" 2; then echo "apiserver readyz: ok"; fi
  if alive controller-manager && wait_ready "https://127.0.0.1:$CM_PORT/healthz" "$DIR/controller-manager/ca.crt" 2; then echo "controller-manager healthz: ok"; fi
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  *) echo "usage: $0 up|down|status" >&2; exit 2 ;;
esac
