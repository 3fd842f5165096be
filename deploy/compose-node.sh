#!/bin/sh
# A docker-compose.yml node (the image's /opt/svc/deploy/compose-node.sh): svc-runtime and the
# node agent in one container, the agent joined through `svcadm join` with the bootstrap token
# and CA pin that the init service left in /cluster. The node's name is the container's
# hostname; its address the container's.
set -eu
C=/cluster
NODE=${SVC_NODE_NAME:-$(hostname)}
ROOT=/var/lib/svclet
SOCK=/run/svc-runtime.sock
mkdir -p "$ROOT/manifests"
cat >"$ROOT/config.yaml" <<YAML
apiVersion: svclet.config.svc.io/v1beta1
kind: SvcletConfiguration
address: 0.0.0.0
port: 10250
healthzBindAddress: 127.0.0.1
healthzPort: 10248
staticPodPath: manifests
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $C/pki/ca.crt}
authorization: {mode: Webhook}
YAML

# Containers are processes of this container: their pod IP is the node's.
svc-runtime --socket "$SOCK" --root-dir /var/lib/svc-runtime --pod-ip "$(hostname -i | cut -d' ' -f1)" &
runtime=$!
svcadm join https://lb:6443 --token "$(cat "$C/bootstrap-token")" --discovery-token-ca-cert-hash "$(cat "$C/ca-cert-hash")" \
  --bootstrap-kubeconfig "$ROOT/bootstrap.svcconfig" --svclet-svcconfig "$ROOT/svclet.svcconfig" -- \
  --config "$ROOT/config.yaml" --hostname-override "$NODE" --cert-dir "$ROOT/pki" --root-dir "$ROOT" \
  --container-runtime-endpoint "unix://$SOCK" &
agent=$!
trap 'kill -TERM "$agent" 2>/dev/null || true' TERM INT
# The first wait returns early when a signal arrives; the second waits for the agent to end.
status=0
wait "$agent" || status=$?
wait "$agent" 2>/dev/null || true
kill -TERM "$runtime" 2>/dev/null || true
wait "$runtime" 2>/dev/null || true
exit "$status"
