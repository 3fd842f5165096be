#!/usr/bin/env bash
# The README's run command: a local cluster as processes under .cluster/:
# etcd, svc-apiserver, svc-controller-manager, svc-scheduler and N nodes (svc-runtime + svclet),
# each node's agent with a client certificate of its node from `svcadm init pki` (as kubeadm
# init's own node); `join` adds nodes with a bootstrap token through `svcadm join`. The
# controller manager and the scheduler run as their own users (svcadm's client certificates,
# as kubeadm), the controller manager with --use-service-account-credentials; the admin
# svcconfig is for people.
#   ./scripts/cluster.sh up [--nodes N] [--simulated-nodes N] [--ha] [--node-ip ADDR] [--events-store etcd|redis] | join | down | status | logs <component>
# join: one more node, joined with a fresh bootstrap token (as a user joins a machine).
# --simulated-nodes N: N more nodes without processes (sim-node-0001...), run by one
#   `svclet --simulate-nodes N` as the user system:node-simulator (group system:nodes, bound to the
#   system:node ClusterRole; component node-simulated; its extra flags,
#   e.g. --simulated-node-capacity, from SVC_SIMULATED_NODES_ARGS); --nodes 0 for simulated nodes only.
#   See docs/simulated-nodes.md.
# --ha: 3 etcd members, 2 API servers behind svc-lb (a TCP load balancer on SVC_APISERVER_PORT,
#   the address every client uses), 2 controller managers and 2 schedulers (leader-elected).
# Ports: SVC_ETCD_PORT (2379), SVC_ETCD_PEER_PORT (2380), SVC_APISERVER_PORT (6443),
#   SVC_CONTROLLER_MANAGER_PORT (10257), SVC_SCHEDULER_PORT (10259); node i uses
#   SVC_NODE_PORT_BASE+i (10250+i) and SVC_NODE_HEALTHZ_PORT_BASE+i (10248+100*i).
# --ha adds: etcd members 2 and 3 on SVC_ETCD_2_PORT/SVC_ETCD_2_PEER_PORT (22379/22380) and
#   SVC_ETCD_3_PORT/SVC_ETCD_3_PEER_PORT (32379/32380); the API servers on SVC_APISERVER_1_PORT
#   (6444) and SVC_APISERVER_2_PORT (6445) behind the LB on SVC_APISERVER_PORT; the second
#   controller manager on SVC_CONTROLLER_MANAGER_2_PORT (10267), the second scheduler on
#   SVC_SCHEDULER_2_PORT (10269).
# --node-ip ADDR (or SVC_NODE_IP): the nodes' address (default 127.0.0.1). Pods run as processes on
#   their node and share its address; Kubernetes' Endpoints validation refuses loopback addresses,
#   so Services get endpoints only with a non-loopback address of this machine, e.g.
#   --node-ip "$(hostname -I | cut -d' ' -f1)". The svclets then listen on that address.
# --events-store redis: Events (core and events/v1) live in a Redis (Debian's redis-server, on
#   SVC_REDIS_PORT, 6379; append-only file with appendfsync always under $SVC_CLUSTER_DIR/redis)
#   through --store-servers-overrides, off etcd's raft log. Default etcd.
# SVC_CLUSTER_DIR: where the cluster lives (default .cluster).
# SVC_APISERVER_ARGS, SVC_CONTROLLER_MANAGER_ARGS, SVC_SCHEDULER_ARGS, SVC_SVCLET_ARGS: extra flags (split on spaces);
# SVC_SVCLET_CONFIG: extra lines for every node's SvcletConfiguration file (e.g. 'syncFrequency: 5s').
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/ensure-tools.sh

DIR="${SVC_CLUSTER_DIR:-$PWD/.cluster}"
case "$DIR" in /*) ;; *) DIR="$PWD/$DIR" ;; esac
PKI="$DIR/pki"
ETCD_PORT="${SVC_ETCD_PORT:-2379}"
ETCD_PEER_PORT="${SVC_ETCD_PEER_PORT:-2380}"
API_PORT="${SVC_APISERVER_PORT:-6443}"
CM_PORT="${SVC_CONTROLLER_MANAGER_PORT:-10257}"
SCHED_PORT="${SVC_SCHEDULER_PORT:-10259}"
ETCD_2_PORT="${SVC_ETCD_2_PORT:-22379}"
ETCD_2_PEER_PORT="${SVC_ETCD_2_PEER_PORT:-22380}"
ETCD_3_PORT="${SVC_ETCD_3_PORT:-32379}"
ETCD_3_PEER_PORT="${SVC_ETCD_3_PEER_PORT:-32380}"
API_1_PORT="${SVC_APISERVER_1_PORT:-6444}"
API_2_PORT="${SVC_APISERVER_2_PORT:-6445}"
CM_2_PORT="${SVC_CONTROLLER_MANAGER_2_PORT:-10267}"
SCHED_2_PORT="${SVC_SCHEDULER_2_PORT:-10269}"
NODE_PORT_BASE="${SVC_NODE_PORT_BASE:-10250}"
NODE_HEALTHZ_PORT_BASE="${SVC_NODE_HEALTHZ_PORT_BASE:-10248}"
REDIS_PORT="${SVC_REDIS_PORT:-6379}"
# --store-servers-overrides of the API servers: empty (Events in etcd) unless --events-store redis.
EVENTS_OVERRIDES=
read -r -a EXTRA_API_ARGS <<<"${SVC_APISERVER_ARGS:-}"
read -r -a EXTRA_CM_ARGS <<<"${SVC_CONTROLLER_MANAGER_ARGS:-}"
read -r -a EXTRA_SCHED_ARGS <<<"${SVC_SCHEDULER_ARGS:-}"
read -r -a EXTRA_SVCLET_ARGS <<<"${SVC_SVCLET_ARGS:-}"
read -r -a EXTRA_SIM_ARGS <<<"${SVC_SIMULATED_NODES_ARGS:-}"
SVCCONFIG="$DIR/admin.svcconfig"
SVCADM=(node packages/svcadm/dist/bundle/svcadm.mjs)

alive() { [ -f "$DIR/$1.pid" ] && kill -0 "$(cat "$DIR/$1.pid")" 2>/dev/null; }

start_bg() { # name command...
  local name=$1; shift
  if alive "$name"; then echo "$name already running (pid $(cat "$DIR/$name.pid"))"; return; fi
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

fail_with_log() { # component message
  echo "$2; see $DIR/$1.log" >&2
  tail -n 20 "$DIR/$1.log" >&2 || true
  exit 1
}

naming_args() {
  local a
  for a in ${EXTRA_API_ARGS[@]+"${EXTRA_API_ARGS[@]}"}; do case "$a" in --naming=*) echo "$a" ;; esac; done
}

# A svcconfig for 127.0.0.1:$API_PORT: write_svcconfig <file> <user> <user lines (YAML, under user:)...>
write_svcconfig() {
  local file=$1 user=$2 line
  shift 2
  {
    printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: svc\n  cluster:\n'
    printf '    server: https://127.0.0.1:%s\n    certificate-authority-data: %s\n' "$API_PORT" "$(base64 -w0 <"$PKI/ca.crt")"
    printf 'users:\n- name: %s\n  user:\n' "$user"
    for line in "$@"; do printf '    %s\n' "$line"; done
    printf 'contexts:\n- name: %s@svc\n  context:\n    cluster: svc\n    user: %s\n    namespace: default\n' "$user" "$user"
    printf 'current-context: %s@svc\n' "$user"
  } >"$file"
  chmod 600 "$file"
}

write_admin_svcconfig() {
  write_svcconfig "$SVCCONFIG" admin "token: $(cut -d, -f1 "$DIR/tokens.csv" | head -n1)"
}

# The components' svcconfigs use their own client certificates from the PKI (kubeadm's
# controller-manager.conf, scheduler.conf): RBAC gives each its role and priority and fairness
# classifies its requests, where the admin credential (system:masters) is exempt from both.
write_svcconfigs() {
  write_admin_svcconfig
  local c
  for c in controller-manager scheduler node-simulator; do
    write_svcconfig "$DIR/$c.svcconfig" "$c" \
      "client-certificate-data: $(base64 -w0 <"$PKI/$c.crt")" "client-key-data: $(base64 -w0 <"$PKI/$c.key")"
  done
}

# The node simulator's user (svcadm's node-simulator certificate) gets the nodes' ClusterRole.
bind_node_simulator() {
  local group=rbac.authorization.svc.io
  case "$(naming_args)" in *kubernetes*) group=rbac.authorization.k8s.io ;; esac
  KUBECONFIG="$SVCCONFIG" kubectl apply -f - >/dev/null <<YAML
apiVersion: $group/v1
kind: ClusterRoleBinding
metadata:
  name: system:node-simulator
roleRef: {apiGroup: $group, kind: ClusterRole, name: "system:node"}
subjects:
- {apiGroup: $group, kind: User, name: "system:node-simulator"}
YAML
}

# The nodes' address: --node-ip of `up` (kept for `join`), else SVC_NODE_IP, else 127.0.0.1.
node_ip() { cat "$DIR/node-ip" 2>/dev/null || echo "${SVC_NODE_IP:-127.0.0.1}"; }

# A node's svc-runtime (needs nothing else: `up` starts it first, to load while the API server starts).
start_runtime() { # index
  local nd="$DIR/node-$1"
  alive "node-$1-runtime" && return 0
  mkdir -p "$nd"
  start_bg "node-$1-runtime" node packages/runtime/dist/bin/svc-runtime.js --socket "$nd/cri.sock" --root-dir "$nd/runtime" \
    --pod-ip "$(node_ip)"
}

# A node: svc-runtime and the node agent. `join` runs the agent through `svcadm join` (discovery
# of cluster-info with the token, TLS bootstrap: as a machine joins); `up` starts the agents of
# its own nodes with the node client certificates `svcadm init pki --node-names` made, as
# kubeadm init does for its own node's kubelet.conf: no token, and no certificate request
# waiting for the controller manager.
start_node() { # index naming [token hash]
  local i=$1 naming=${2:-} token=${3:-} hash=${4:-} name="node-$1" nd="$DIR/node-$1" suffix=svc.io
  [ "$naming" = --naming=kubernetes ] && suffix=k8s.io
  mkdir -p "$nd/manifests"
  start_runtime "$i"
  cat >"$nd/config.yaml" <<YAML
apiVersion: svclet.config.$suffix/v1beta1
kind: SvcletConfiguration
address: $(node_ip)
port: $((NODE_PORT_BASE + i))
healthzPort: $((NODE_HEALTHZ_PORT_BASE + 100 * i))
staticPodPath: manifests
podLogsDir: logs
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: Webhook}
YAML
  if [ -n "${SVC_SVCLET_CONFIG:-}" ]; then printf '%s\n' "$SVC_SVCLET_CONFIG" >>"$nd/config.yaml"; fi
  local args=(--config "$nd/config.yaml" --hostname-override "$name" --node-ip "$(node_ip)" --cert-dir "$nd/pki" --root-dir "$nd"
    --container-runtime-endpoint "unix://$nd/cri.sock" ${naming:+"$naming"} ${EXTRA_SVCLET_ARGS[@]+"${EXTRA_SVCLET_ARGS[@]}"})
  if [ -z "$token" ]; then
    local cert="$PKI/node-client-$name"
    write_svcconfig "$nd/svclet.svcconfig" "system:node:$name" \
      "client-certificate-data: $(base64 -w0 <"$cert.crt")" "client-key-data: $(base64 -w0 <"$cert.key")"
    start_bg "$name" node packages/svclet/dist/bundle/svclet.mjs --svcconfig "$nd/svclet.svcconfig" "${args[@]}"
  else
    start_bg "$name" "${SVCADM[@]}" join "127.0.0.1:$API_PORT" --token "$token" --discovery-token-ca-cert-hash "$hash" \
      --bootstrap-kubeconfig "$nd/bootstrap.svcconfig" --svclet-svcconfig "$nd/svclet.svcconfig" --svclet-path "$PWD/node_modules/.bin/svclet" -- \
      "${args[@]}"
  fi
}

start_etcd() { # name data-dir-name client-port peer-port initial-cluster
  start_bg "$1" etcd --name "$2" --data-dir "$DIR/$1" \
    --listen-client-urls "http://127.0.0.1:$3" --advertise-client-urls "http://127.0.0.1:$3" \
    --listen-peer-urls "http://127.0.0.1:$4" --initial-advertise-peer-urls "http://127.0.0.1:$4" \
    --initial-cluster "$5" --initial-cluster-state new
}

start_apiserver() { # name port store-servers
  start_bg "$1" node packages/apiserver/dist/bundle/svc-apiserver.cjs \
    --store-servers "$3" --bind-address 127.0.0.1 --secure-port "$2" \
    --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" --client-ca-file "$PKI/ca.crt" \
    --service-account-key-file "$PKI/sa.key" --service-account-signing-key-file "$PKI/sa.key" \
    --token-auth-file "$DIR/tokens.csv" --enable-bootstrap-token-auth --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction --allow-privileged=true \
    --svclet-client-certificate "$PKI/apiserver-svclet-client.crt" --svclet-client-key "$PKI/apiserver-svclet-client.key" \
    --svclet-preferred-address-types InternalIP,Hostname --store-servers-overrides "$EVENTS_OVERRIDES" ${EXTRA_API_ARGS[@]+"${EXTRA_API_ARGS[@]}"}
}

# Redis for Events (--events-store redis): persistence on (AOF, fsync per write, as etcd's commits).
start_redis() {
  mkdir -p "$DIR/redis"
  start_bg redis redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$DIR/redis" \
    --appendonly yes --appendfsync always --save '' --daemonize no
  local url="redis://127.0.0.1:$REDIS_PORT" group=events.svc.io
  case "$(naming_args)" in *kubernetes*) group=events.k8s.io ;; esac
  EVENTS_OVERRIDES="/events#$url,$group/events#$url"
}

start_controller_manager() { # name port naming
  local cfg="$DIR/controller-manager.svcconfig"
  start_bg "$1" node packages/controller-manager/dist/bundle/svc-controller-manager.mjs \
    --svcconfig "$cfg" --authentication-kubeconfig "$cfg" --authorization-kubeconfig "$cfg" --use-service-account-credentials \
    --bind-address 127.0.0.1 --secure-port "$2" --cert-dir "$DIR/$1" \
    --controllers='*,tokencleaner,bootstrapsigner' --root-ca-file "$PKI/ca.crt" \
    --cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
    --service-account-private-key-file "$PKI/sa.key" \
    ${3:+"$3"} ${EXTRA_CM_ARGS[@]+"${EXTRA_CM_ARGS[@]}"}
}

start_scheduler() { # name port naming
  local cfg="$DIR/scheduler.svcconfig"
  start_bg "$1" node packages/scheduler/dist/bundle/svc-scheduler.mjs \
    --svcconfig "$cfg" --authentication-kubeconfig "$cfg" --authorization-kubeconfig "$cfg" \
    --bind-address 127.0.0.1 --secure-port "$2" --cert-dir "$DIR/$1" \
    ${3:+"$3"} ${EXTRA_SCHED_ARGS[@]+"${EXTRA_SCHED_ARGS[@]}"}
}

# The control plane's components as "name port" (health port for the CM and scheduler).
control_plane() {
  if [ "$(cat "$DIR/mode" 2>/dev/null)" = ha ]; then
    printf '%s\n' "etcd-1 $ETCD_PORT" "etcd-2 $ETCD_2_PORT" "etcd-3 $ETCD_3_PORT" "apiserver-1 $API_1_PORT" "apiserver-2 $API_2_PORT" \
      "lb $API_PORT" "controller-manager-1 $CM_PORT" "controller-manager-2 $CM_2_PORT" "scheduler-1 $SCHED_PORT" "scheduler-2 $SCHED_2_PORT"
  else
    printf '%s\n' "etcd $ETCD_PORT" "apiserver $API_PORT" "controller-manager $CM_PORT" "scheduler $SCHED_PORT"
  fi
}

# A bootstrap token valid for an hour, and the CA pin, for `svcadm join` (JOIN_TOKEN, JOIN_HASH, JOIN_COMMAND).
new_join_token() { # [--naming=...]
  JOIN_COMMAND=$("${SVCADM[@]}" ${1:+"$1"} token create --svcconfig "$SVCCONFIG" --ttl 1h --print-join-command)
  JOIN_TOKEN=$(sed -n 's/.*--token \([^ ]*\).*/\1/p' <<<"$JOIN_COMMAND")
  JOIN_HASH=$(sed -n 's/.*--discovery-token-ca-cert-hash \([^ ]*\).*/\1/p' <<<"$JOIN_COMMAND")
}

# Waits until at least N nodes are Ready (60 s + 2 s per node: joining shares the machine).
# Reads the Nodes over HTTPS with the admin token every 100 ms (a kubectl per poll costs more
# CPU than the node agents starting beside it), every 500 ms beyond 50 nodes (megabytes of JSON).
wait_nodes_ready() { # N
  node -e '
    const https = require("https"); const fs = require("fs");
    const [want, port, ca, tokens] = process.argv.slice(1);
    const token = fs.readFileSync(tokens, "utf8").split(",")[0];
    // Joining shares the machine: allow more time for more nodes.
    const deadline = Date.now() + 60_000 + 2_000 * Number(want);
    let ready = 0;
    const poll = () => https.get({ host: "127.0.0.1", port, path: "/api/v1/nodes", ca: fs.readFileSync(ca),
        headers: { authorization: `Bearer ${token}`, accept: "application/json" } }, (r) => {
      const chunks = [];
      r.on("data", (c) => chunks.push(c)).on("end", () => {
        try {
          const nodes = JSON.parse(Buffer.concat(chunks).toString()).items || [];
          ready = nodes.filter((n) => ((n.status || {}).conditions || []).some((c) => c.type === "Ready" && c.status === "True")).length;
        } catch {}
        next();
      });
    }).on("error", next);
    function next() {
      if (ready >= Number(want)) process.exit(0);
      if (Date.now() > deadline) { console.error(`only ${ready} of ${want} nodes Ready`); process.exit(1); }
      setTimeout(poll, Number(want) > 50 ? 500 : 100);
    }
    poll();
  ' "$1" "$API_PORT" "$PKI/ca.crt" "$DIR/tokens.csv"
}

# One more node, joined with a fresh bootstrap token, as a user would join a machine.
join() {
  # A busy machine may take seconds to answer: allow 30 s before saying there is no cluster.
  [ -s "$SVCCONFIG" ] && wait_ready "https://127.0.0.1:$API_PORT/readyz" "$PKI/ca.crt" 30 || { echo "no cluster answers on 127.0.0.1:$API_PORT; run $0 up first" >&2; exit 1; }
  local i=1 naming deadline started
  while alive "node-$i"; do i=$((i + 1)); done
  naming=$(naming_args)
  new_join_token "$naming"
  echo "joining node-$i: $JOIN_COMMAND -- <svclet flags>"
  started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  start_node "$i" "$naming" "$JOIN_TOKEN" "$JOIN_HASH"
  # Ready as reported by this agent (a Node of that name may be left from an earlier run).
  deadline=$((SECONDS + 90))
  until [ "$(KUBECONFIG="$SVCCONFIG" kubectl get node "node-$i" -o jsonpath='{range .status.conditions[?(@.type=="Ready")]}{.status} {.lastHeartbeatTime}{end}' 2>/dev/null \
      | awk -v t="$started" '$1 == "True" && $2 >= t { print "yes" }')" = yes ]; do
    [ $SECONDS -lt $deadline ] || fail_with_log "node-$i" "node-$i did not become Ready"
    sleep 0.3
  done
  KUBECONFIG="$SVCCONFIG" kubectl get node "node-$i"
}

up() {
  local nodes=1 mode=single node_ip=${SVC_NODE_IP:-127.0.0.1} events_store=etcd simulated=0
  while [ $# -gt 0 ]; do
    case "$1" in
      --nodes) nodes=$2; shift 2 ;;
      --nodes=*) nodes=${1#--nodes=}; shift ;;
      --simulated-nodes) simulated=$2; shift 2 ;;
      --simulated-nodes=*) simulated=${1#--simulated-nodes=}; shift ;;
      --ha) mode=ha; shift ;;
      --node-ip) node_ip=$2; shift 2 ;;
      --node-ip=*) node_ip=${1#--node-ip=}; shift ;;
      --events-store) events_store=$2; shift 2 ;;
      --events-store=*) events_store=${1#--events-store=}; shift ;;
      *) echo "unknown flag $1" >&2; exit 2 ;;
    esac
  done
  case "$events_store" in etcd|redis) ;; *) echo "--events-store: must be etcd or redis, not \"$events_store\"" >&2; exit 2 ;; esac
  case "$simulated" in ''|*[!0-9]*) echo "--simulated-nodes: must be a whole number, not \"$simulated\"" >&2; exit 2 ;; esac
  local started=$SECONDS
  ensure_etcd
  [ "$events_store" = etcd ] || ensure_redis
  ensure_deps
  mkdir -p "$DIR"
  local prev c
  prev=$(cat "$DIR/mode" 2>/dev/null || echo single)
  if [ "$prev" != "$mode" ]; then
    for c in $(components); do
      if alive "$c"; then echo "a $prev cluster is running in $DIR; run $0 down first" >&2; exit 1; fi
    done
  fi
  echo "$mode" >"$DIR/mode"
  echo "$node_ip" >"$DIR/node-ip"
  if [ ! -f "$DIR/tokens.csv" ]; then
    (umask 077; echo "$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n'),admin,admin,\"system:masters\"" >"$DIR/tokens.csv")
  fi
  local naming i
  naming=$(naming_args)
  # What needs no certificate (the runtimes, Redis, etcd) starts before the PKI is made.
  for i in $(seq 1 "$nodes"); do start_runtime "$i"; done
  if [ "$events_store" = redis ]; then start_redis; fi
  local initial="svc-1=http://127.0.0.1:$ETCD_PEER_PORT,svc-2=http://127.0.0.1:$ETCD_2_PEER_PORT,svc-3=http://127.0.0.1:$ETCD_3_PEER_PORT"
  local store="http://127.0.0.1:$ETCD_PORT,http://127.0.0.1:$ETCD_2_PORT,http://127.0.0.1:$ETCD_3_PORT"
  if [ "$mode" = ha ]; then
    start_etcd etcd-1 svc-1 "$ETCD_PORT" "$ETCD_PEER_PORT" "$initial"
    start_etcd etcd-2 svc-2 "$ETCD_2_PORT" "$ETCD_2_PEER_PORT" "$initial"
    start_etcd etcd-3 svc-3 "$ETCD_3_PORT" "$ETCD_3_PEER_PORT" "$initial"
  else
    start_etcd etcd svc "$ETCD_PORT" "$ETCD_PEER_PORT" "svc=http://127.0.0.1:$ETCD_PEER_PORT"
  fi
  local node_names
  node_names=$(seq -s, -f 'node-%g' 1 "$nodes")
  "${SVCADM[@]}" init pki --cert-dir "$PKI" ${node_names:+--node-names "$node_names"} >/dev/null
  if [ "$mode" = ha ]; then
    start_apiserver apiserver-1 "$API_1_PORT" "$store"
    start_apiserver apiserver-2 "$API_2_PORT" "$store"
    wait_ready "https://127.0.0.1:$API_1_PORT/readyz" "$PKI/ca.crt" 90 || fail_with_log apiserver-1 "svc-apiserver 1 did not become ready"
    wait_ready "https://127.0.0.1:$API_2_PORT/readyz" "$PKI/ca.crt" 60 || fail_with_log apiserver-2 "svc-apiserver 2 did not become ready"
    start_bg lb node packages/svcadm/dist/bundle/svc-lb.mjs --listen "127.0.0.1:$API_PORT" \
      --backend "127.0.0.1:$API_1_PORT" --backend "127.0.0.1:$API_2_PORT" --health-ca-file "$PKI/ca.crt" --health-interval 1s
    wait_ready "https://127.0.0.1:$API_PORT/readyz" "$PKI/ca.crt" 30 || fail_with_log lb "svc-lb did not pass requests"
    write_svcconfigs
    start_controller_manager controller-manager-1 "$CM_PORT" "$naming"
    start_controller_manager controller-manager-2 "$CM_2_PORT" "$naming"
    start_scheduler scheduler-1 "$SCHED_PORT" "$naming"
    start_scheduler scheduler-2 "$SCHED_2_PORT" "$naming"
  else
    start_apiserver apiserver "$API_PORT" "http://127.0.0.1:$ETCD_PORT"
    wait_ready "https://127.0.0.1:$API_PORT/readyz" "$PKI/ca.crt" 60 || fail_with_log apiserver "svc-apiserver did not become ready"
    write_svcconfigs
    start_controller_manager controller-manager "$CM_PORT" "$naming"
    start_scheduler scheduler "$SCHED_PORT" "$naming"
  fi
  # The nodes need only the API server (their certificates are from the PKI): started with the
  # controller manager and the scheduler. cluster-info (with the bootstrap RBAC, for `join`)
  # is published meanwhile.
  local info_pid name port
  for i in $(seq 1 "$nodes"); do start_node "$i" "$naming"; done
  "${SVCADM[@]}" ${naming:+"$naming"} init cluster-info --svcconfig "$SVCCONFIG" >/dev/null &
  info_pid=$!
  if [ "$simulated" -gt 0 ]; then
    bind_node_simulator
    start_bg node-simulated node packages/svclet/dist/bundle/svclet.mjs --simulate-nodes "$simulated" --svcconfig "$DIR/node-simulator.svcconfig" \
      --healthz-port 0 ${naming:+"$naming"} ${EXTRA_SIM_ARGS[@]+"${EXTRA_SIM_ARGS[@]}"}
  fi
  while read -r name port; do
    case "$name" in controller-manager*|scheduler*)
      wait_ready "https://127.0.0.1:$port/healthz" "$DIR/$name/ca.crt" 30 || fail_with_log "$name" "svc-$name did not become healthy" ;;
    esac
  done < <(control_plane)
  wait "$info_pid" || { echo "svcadm init cluster-info failed" >&2; exit 1; }
  wait_nodes_ready $((nodes + simulated)) || fail_with_log "$([ "$nodes" -gt 0 ] && echo node-1 || echo node-simulated)" "the nodes did not become Ready"
  cat <<MSG
svc cluster$([ "$mode" = ha ] && echo " (HA: 3 etcd, 2 API servers behind svc-lb, 2 controller managers, 2 schedulers)") is up in $((SECONDS - started)) s: https://127.0.0.1:$API_PORT, $nodes node(s)$([ "$simulated" -gt 0 ] && echo " and $simulated simulated") (logs in $DIR)
  export KUBECONFIG=$SVCCONFIG
  kubectl get nodes
  kubectl create deployment hello --image=busybox --replicas=2 -- sh -c 'while true; do date; sleep 5; done'
  ./scripts/cluster.sh logs $([ "$mode" = ha ] && echo apiserver-1 || echo apiserver)
Join another node: ${SVCADM[*]} token create --svcconfig $SVCCONFIG --print-join-command
Stop it with ./scripts/cluster.sh down
MSG
}

components() { # stop order: nodes, then the control plane from the top
  local f
  for f in "$DIR"/node-*.pid; do [ -e "$f" ] && basename "$f" .pid; done | sort
  for f in scheduler controller-manager lb apiserver redis etcd; do
    [ -e "$DIR/$f.pid" ] && echo "$f"
    ls "$DIR" 2>/dev/null | sed -n "s/^\($f-[0-9]\)\.pid$/\1/p" | sort
  done
  return 0
}

any_alive() { local p; for p in "$@"; do kill -0 "$p" 2>/dev/null && return 0; done; return 1; }

stop_all() { # names...: SIGTERM to each at once, up to 10 s for all to exit, then SIGKILL
  local name pid pids=()
  for name in "$@"; do
    if alive "$name"; then
      pid=$(cat "$DIR/$name.pid")
      kill "$pid" 2>/dev/null || true
      pids+=("$pid")
      echo "stopped $name (pid $pid)"
    fi
    rm -f "$DIR/$name.pid"
  done
  [ ${#pids[@]} -gt 0 ] || return 0
  for _ in $(seq 1 100); do any_alive "${pids[@]}" || break; sleep 0.1; done
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
}

down() {
  local name tier=() prev=""
  # Nodes all at once, then the control plane from the top, tier by tier (etcd last).
  for name in $(components); do
    local t=${name%%-[0-9]*}
    case "$name" in node-*) t=node ;; etcd*) t=$name ;; esac
    if [ -n "$prev" ] && [ "$t" != "$prev" ]; then stop_all "${tier[@]}"; tier=(); fi
    tier+=("$name"); prev=$t
  done
  [ ${#tier[@]} -eq 0 ] || stop_all "${tier[@]}"
  # Node agents started by svcadm, container shims, and the containers themselves: they run
  # in process groups of their own (to outlive their runtime by design), and their command
  # lines do not name the cluster directory, so they are found by their working directory.
  pkill -f -- "--root-dir $DIR/node-" 2>/dev/null || true
  pkill -9 -f -- "$DIR/node-[0-9]*/runtime/containers" 2>/dev/null || true
  local f pid
  for f in "$DIR"/node-*/runtime/containers/*/started.json; do
    [ -f "$f" ] || continue
    pid=$(sed -n 's/.*"pid":\([0-9][0-9]*\).*/\1/p' "$f")
    [ -n "$pid" ] || continue
    case "$(readlink "/proc/$pid/cwd" 2>/dev/null)" in "$DIR"/*) kill -9 -- "-$pid" 2>/dev/null || true ;; esac
  done
}

status() {
  local name port
  echo "mode: $(cat "$DIR/mode" 2>/dev/null || echo single)"
  for name in $( (components; control_plane | cut -d' ' -f1) | sort -u); do
    if alive "$name"; then echo "$name: running (pid $(cat "$DIR/$name.pid"))"; else echo "$name: stopped"; fi
  done
  while read -r name port; do
    alive "$name" || continue
    case "$name" in
      etcd*) if curl -sf -m 2 "http://127.0.0.1:$port/health" >/dev/null; then echo "$name health: ok"; else echo "$name health: failing"; fi ;;
      apiserver*|lb) if wait_ready "https://127.0.0.1:$port/readyz" "$PKI/ca.crt" 2; then echo "$name readyz: ok"; else echo "$name readyz: failing"; fi ;;
      controller-manager*|scheduler*)
        if wait_ready "https://127.0.0.1:$port/healthz" "$DIR/$name/ca.crt" 2; then echo "$name healthz: ok"; else echo "$name healthz: failing"; fi ;;
    esac
  done < <(control_plane)
  if [ -s "$SVCCONFIG" ]; then KUBECONFIG="$SVCCONFIG" kubectl get nodes 2>/dev/null || true; fi
}

logs() {
  local name=${1:-}
  [ -n "$name" ] && [ -f "$DIR/$name.log" ] || { echo "usage: $0 logs <$(components | sort | tr '\n' '|' | sed 's/|$//')>" >&2; exit 2; }
  tail -n 100 -f "$DIR/$name.log"
}

case "${1:-}" in
  up) shift; up "$@" ;;
  join) join ;;
  down) down ;;
  status) status ;;
  logs) shift; logs "$@" ;;
  *) echo "usage: $0 up [--nodes N] [--simulated-nodes N] [--ha] | join | down | status | logs <component>" >&2; exit 2 ;;
esac
