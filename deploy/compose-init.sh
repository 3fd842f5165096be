#!/bin/sh
# docker-compose.yml's one-shot services (the image's /opt/svc/deploy/compose-init.sh):
#   pki        before anything else: the CA, serving certs (names of every API server and the
#              load balancer), service-account key, admin client cert, the static tokens
#              (admin; prometheus in group system:monitoring), a bootstrap token and the CA's
#              pin into /cluster; svcconfigs for the components (https://lb:6443) and, in
#              /out, admin.svcconfig for the host (https://127.0.0.1:$SVC_APISERVER_PORT).
#   bootstrap  once the API answers: cluster-info, the bootstrap token, read access for
#              Prometheus to the nodes' /metrics.
# Idempotent: what exists is kept, so `docker compose up` again finds the same cluster.
set -eu
C=/cluster
PKI=$C/pki

svcconfig() { # file server user-lines...
  file=$1 server=$2; shift 2
  umask 077
  {
    echo "apiVersion: v1"
    echo "kind: Config"
    echo "clusters:"
    echo "- name: svc"
    echo "  cluster:"
    echo "    server: $server"
    echo "    certificate-authority-data: $(base64 -w0 <"$PKI/ca.crt")"
    echo "users:"
    echo "- name: admin"
    echo "  user:"
    for line in "$@"; do echo "    $line"; done
    echo "contexts:"
    echo "- name: admin@svc"
    echo "  context: {cluster: svc, user: admin, namespace: default}"
    echo "current-context: admin@svc"
  } >"$file.tmp"
  mv "$file.tmp" "$file"
}

random() { # n lowercase alphanumerics
  node -e 'const a = "abcdefghijklmnopqrstuvwxyz0123456789"; const b = require("crypto").randomBytes(+process.argv[1]); console.log([...b].map((x) => a[x % 36]).join(""))' "$1"
}

pki() {
  svcadm init pki --cert-dir "$PKI" --apiserver-cert-extra-sans lb,apiserver-1,apiserver-2,localhost,127.0.0.1 >/dev/null
  if [ ! -s "$C/tokens.csv" ]; then
    umask 077
    printf '%s,admin,admin,"system:masters"\n%s,prometheus,prometheus,"system:monitoring"\n' "$(random 32)" "$(random 32)" >"$C/tokens.csv.tmp"
    mv "$C/tokens.csv.tmp" "$C/tokens.csv"
  fi
  sed -n 2p "$C/tokens.csv" | cut -d, -f1 >"$C/prometheus.token"
  [ -s "$C/bootstrap-token" ] || echo "$(random 6).$(random 16)" >"$C/bootstrap-token"
  svcadm token ca-cert-hash --ca-file "$PKI/ca.crt" | head -n1 >"$C/ca-cert-hash"
  admin_token=$(head -n1 "$C/tokens.csv" | cut -d, -f1)
  svcconfig "$C/admin.svcconfig" https://lb:6443 "token: $admin_token"
  # The controller manager and the scheduler as their own users (svcadm's certificates), as
  # kubeadm does: RBAC gives each its role and priority and fairness classifies its requests.
  for c in controller-manager scheduler; do
    svcconfig "$C/$c.svcconfig" https://lb:6443 \
      "client-certificate-data: $(base64 -w0 <"$PKI/$c.crt")" "client-key-data: $(base64 -w0 <"$PKI/$c.key")"
  done
  if [ -d /out ]; then
    svcconfig /out/admin.svcconfig "https://127.0.0.1:${SVC_APISERVER_PORT:-6443}" "token: $admin_token"
    # Readable by whoever owns the mounted folder.
    chown "$(stat -c %u:%g /out)" /out/admin.svcconfig
  fi
  echo "pki, tokens and svcconfigs are in $C"
}

bootstrap() {
  export KUBECONFIG=$C/admin.svcconfig
  svcadm init cluster-info --svcconfig "$KUBECONFIG" >/dev/null
  token=$(cat "$C/bootstrap-token")
  svcadm token delete --svcconfig "$KUBECONFIG" "${token%%.*}" >/dev/null 2>&1 || true
  svcadm token create --svcconfig "$KUBECONFIG" --ttl 24h --description "docker-compose nodes" "$token" >/dev/null
  node /opt/svc/deploy/monitoring-rbac.mjs "$KUBECONFIG"
  echo "cluster-info published, bootstrap token ${token%%.*} created"
}

case "${1:-}" in
  pki) pki ;;
  bootstrap) bootstrap ;;
  *) echo "usage: $0 pki|bootstrap" >&2; exit 2 ;;
esac
