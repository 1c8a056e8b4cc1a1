#!/bin/sh
# Renews the agent's heartbeat Lease once, with curl: holderIdentity = this pod, renewTime = now, and the
# verdict (Healthy | Stalled | Crashed | Ambiguous) with an optional detail. From inside a Respawn pod:
#   respawn-heartbeat.sh Healthy "step 3 of 7"
# Needs curl and GNU date (for microseconds). Overrides for tests: RESPAWN_API_URL, RESPAWN_TOKEN,
# RESPAWN_NAMESPACE. Exit code 0 when the API server took it; otherwise curl's error and the server's message.
set -eu
SA=/var/run/secrets/kubernetes.io/serviceaccount
API=${RESPAWN_API_URL:-https://${KUBERNETES_SERVICE_HOST:?not in a pod: set RESPAWN_API_URL}:${KUBERNETES_SERVICE_PORT:-443}}
TOKEN=${RESPAWN_TOKEN:-$(cat "$SA/token")}
NS=${RESPAWN_NAMESPACE:-$(cat "$SA/namespace")}
LEASE=${RESPAWN_LEASE_NAME:?RESPAWN_LEASE_NAME is not set: is this a Respawn pod?}
POD=${RESPAWN_POD_NAME:-${POD_NAME:-${HOSTNAME:?set RESPAWN_POD_NAME (the operator does) or POD_NAME to the name of this pod}}}
VERDICT=${1:-Healthy}
DETAIL=${2:-}
case "$VERDICT" in Healthy|Stalled|Crashed|Ambiguous) ;; *) echo "verdict must be Healthy, Stalled, Crashed or Ambiguous, not $VERDICT" >&2; exit 2 ;; esac
NOW=$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)
# JSON-escape the detail (backslashes and quotes; newlines become spaces)
DETAIL_JSON=$(printf '%s' "$DETAIL" | tr '\n' ' ' | sed 's/\\/\\\\/g; s/"/\\"/g')
CA=""
[ -f "$SA/ca.crt" ] && CA="--cacert $SA/ca.crt"
# shellcheck disable=SC2086
curl -sS --fail-with-body $CA -X PATCH -H "Authorization: Bearer $TOKEN" \
  -H "Content-Type: application/merge-patch+json" \
  "$API/apis/coordination.k8s.io/v1/namespaces/$NS/leases/$LEASE" \
  -d "{\"spec\":{\"holderIdentity\":\"$POD\",\"renewTime\":\"$NOW\"},\"metadata\":{\"annotations\":{\"respawn.dev/health\":\"$VERDICT\",\"respawn.dev/detail\":\"$DETAIL_JSON\"}}}" \
  -o /dev/null
