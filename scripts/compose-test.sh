#!/usr/bin/env bash
# Brings docker-compose.yml up for real on this machine and checks the cluster, then tears it
# all down. It installs Debian's docker.io, docker-compose and debootstrap when missing, starts
# its own dockerd (own socket and data root, in a temp dir), builds the base
# images without a registry (deploy/local-images.sh), `up --build`s the compose file with them
# under its own project name and a free host port, and checks: both nodes Ready, a Deployment's
# pods Running, `kubectl logs` through the API server, one leader per leader-elected component,
# every scrape target of deploy/prometheus.yml. Then `down -v`, and dockerd stops.
# Its traffic stays between this script and the containers it started (the image build fetches
# the npm packages of the lockfile, as ./scripts/test.sh does).
#   ./scripts/compose-test.sh [result.json]   (the file gets {"passed": N, "failed": N})
# Needs root (dockerd). ./scripts/test.sh runs it last when the machine allows.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/ensure-tools.sh
RESULT=${1:-}
passed=0 failed=0
started=$SECONDS

report() {
  echo "compose checks: $passed passed, $failed failed ($((SECONDS - started)) s)"
  [ -z "$RESULT" ] || echo "{\"passed\": $passed, \"failed\": $failed}" >"$RESULT"
}

check() { # description command...
  local what=$1; shift
  if "$@"; then passed=$((passed + 1)); echo "ok: $what"; else failed=$((failed + 1)); echo "FAILED: $what"; fi
}

ensure_docker_tools() {
  local missing=()
  command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
  command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
  command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "== installing ${missing[*]} (Debian)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

ensure_pnpm
ensure_etcd
ensure_deps
ensure_docker_tools

WORK=$(mktemp -d /tmp/svc-compose-test.XXXXXX)
export DOCKER_HOST="unix://$WORK/docker.sock"
PROJECT="svccomposetest$$"
API_PORT=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
export SVC_APISERVER_PORT=$API_PORT SVC_COMPOSE_OUT="$WORK/out" SVC_IMAGE="$PROJECT/svc:test"
export SVC_BASE_IMAGE=svc-local/node:20-bookworm-slim SVC_ETCD_IMAGE=svc-local/etcd:local
export KUBECONFIG="$WORK/out/admin.svcconfig"
COMPOSE=(docker-compose -p "$PROJECT" -f docker-compose.yml)

had_docker0=yes
cleanup() {
  local status=$?
  set +e
  if [ -S "$WORK/docker.sock" ]; then
    [ "$failed" -eq 0 ] || "${COMPOSE[@]}" ps
    [ "$failed" -eq 0 ] || "${COMPOSE[@]}" logs --tail 30
    "${COMPOSE[@]}" down -v --remove-orphans >/dev/null 2>&1
  fi
  if [ -f "$WORK/docker.pid" ]; then
    local pid
    pid=$(cat "$WORK/docker.pid")
    kill "$pid" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
  fi
  # The default bridge dockerd made, unless it was there before.
  [ -n "$had_docker0" ] || ip link delete docker0 2>/dev/null
  grep -o " $WORK/[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null
  rm -rf "$WORK"
  # A step outside the checks (install, images, up) that failed counts as one failed check.
  [ "$status" -eq 0 ] || [ "$failed" -gt 0 ] || failed=1
  report
  exit "$status"
}
trap cleanup EXIT

had_docker0=$(ip -o link show docker0 2>/dev/null || true)
echo "== dockerd (socket $WORK/docker.sock)"
dockerd --data-root "$WORK/data" --exec-root "$WORK/exec" --pidfile "$WORK/docker.pid" -H "$DOCKER_HOST" \
  >"$WORK/dockerd.log" 2>&1 &
for _ in $(seq 1 100); do docker info >/dev/null 2>&1 && break; sleep 0.1; done
docker info >/dev/null || { tail -n 20 "$WORK/dockerd.log"; exit 1; }

echo "== base images without a registry"
./deploy/local-images.sh

echo "== docker-compose up --build (project $PROJECT, API on 127.0.0.1:$API_PORT)"
up_started=$SECONDS
"${COMPOSE[@]}" build
build_s=$((SECONDS - up_started))
"${COMPOSE[@]}" up -d
up_s=$((SECONDS - up_started - build_s))

# Polls `cmd` until it succeeds or `secs` pass.
until_ok() { # secs command...
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do [ $SECONDS -lt $deadline ] || return 1; sleep 1; done
}
ready_nodes() { kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c '=True$'; }
two_ready() { [ "$(ready_nodes)" = 2 ]; }
running_pods() { kubectl get pods -l app=hello --field-selector=status.phase=Running -o name | wc -l; }
two_running() { [ "$(running_pods)" = 2 ]; }
logs_say_hello() { kubectl logs deploy/hello | grep -q 'hello from svc'; }
one_leader() { # lease name
  local holder
  holder=$(kubectl get lease -A --field-selector "metadata.name=$1" -o jsonpath='{.items[*].spec.holderIdentity}')
  [ -n "$holder" ] && [ "$(wc -w <<<"$holder")" = 1 ] && echo "$1 leader: $holder"
}
leader_of() { kubectl get lease -A --field-selector "metadata.name=$1" -o jsonpath='{.items[*].spec.holderIdentity}' | cut -d_ -f1; }
new_leader() { local now; now=$(leader_of "$1"); [ -n "$now" ] && [ "$now" != "$2" ]; }
three_running() { [ "$(running_pods)" = 3 ]; }
# Stops the scheduler that leads; the other takes the Lease and schedules a third replica.
scheduler_failover() {
  local leader
  leader=$(leader_of svc-scheduler)
  case "$leader" in scheduler-1|scheduler-2) ;; *) echo "unexpected scheduler leader '$leader'"; return 1 ;; esac
  "${COMPOSE[@]}" stop "$leader" >/dev/null 2>&1
  until_ok 60 new_leader svc-scheduler "$leader" || return 1
  kubectl scale deployment hello --replicas=3 >/dev/null
  until_ok 60 three_running && echo "scheduler leader moved from $leader to $(leader_of svc-scheduler)"
}
# With one API server stopped, clients keep going through the load balancer.
apiserver_down() {
  "${COMPOSE[@]}" stop apiserver-1 >/dev/null 2>&1
  local i
  for i in 1 2 3 4 5 6; do kubectl get nodes >/dev/null || return 1; done
  kubectl create configmap after-apiserver-1-stopped --from-literal=k=v >/dev/null
}
# A Service over the Deployment: its Endpoints and EndpointSlice list both pods' addresses.
endpoint_ips() { kubectl get endpoints hello -o jsonpath='{.subsets[*].addresses[*].ip}' | wc -w; }
slice_ready() { kubectl get endpointslices -o jsonpath='{range .items[?(@.metadata.ownerReferences[0].name=="hello")]}{range .endpoints[?(@.conditions.ready==true)]}{.addresses[0]}{"\n"}{end}{end}' | grep -c .; }
two_endpoints() { [ "$(endpoint_ips)" = 2 ] && [ "$(slice_ready)" = 2 ] && kubectl get endpoints hello; }
exposed() { kubectl expose deployment hello --port 80 >/dev/null && until_ok 60 two_endpoints; }
scrape() { "${COMPOSE[@]}" run --rm --no-deps -T init node deploy/scrape-check.mjs deploy/prometheus.yml; }

check "admin svcconfig written to the mounted folder" until_ok 120 test -s "$KUBECONFIG"
check "2 nodes Ready" until_ok 180 two_ready
ready_s=$((SECONDS - up_started - build_s))
kubectl get nodes -o wide || true
kubectl create deployment hello --image=busybox --replicas=2 -- sh -c 'while true; do echo hello from svc; sleep 2; done' >/dev/null
check "a Deployment's 2 pods Running" until_ok 120 two_running
kubectl get pods -o wide || true
check "kubectl logs through the API server and the node agent" until_ok 30 logs_say_hello
check "kubectl expose: the Service's Endpoints and EndpointSlice list both pods" exposed
check "one controller-manager leader" one_leader svc-controller-manager
check "one scheduler leader" one_leader svc-scheduler
check "every target of deploy/prometheus.yml scraped" scrape
check "the scheduler leader stopped: the other leads and schedules" scheduler_failover
check "an API server stopped: kubectl keeps working through the load balancer" apiserver_down
echo "timings: image build ${build_s} s; up → 2 nodes Ready ${ready_s} s (up itself ${up_s} s)"
[ "$failed" -eq 0 ]
