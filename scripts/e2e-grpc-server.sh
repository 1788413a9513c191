#!/usr/bin/env bash
# The server e2e/console-grpc.spec.ts runs against: `meshdeck serve` on a fresh copy of examples/grpc-canary
# with plaintext ADS on loopback (--xds-insecure: @grpc/grpc-js-xds cannot present a client certificate),
# so its demo apps run: two real gRPC echo backends and a real grpc-js-xds client calling xds:///echo.
# Console token e2e-token; state and copy in a temp dir removed when the server stops (SIGTERM).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
port="${E2E_GRPC_PORT:-3103}"
xds="${E2E_GRPC_XDS_PORT:-18102}"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/md-e2e-grpc-XXXXXX")"
cp -R examples/grpc-canary "$tmp/mesh"
export MESHDECK_STATE_DIR="$tmp/state"
export NEXT_TELEMETRY_DISABLED=1
node bin/meshdeck.mjs serve "$tmp/mesh" --port "$port" --token e2e-token --xds-insecure \
  --xds-listen "127.0.0.1:$xds" &
pid=$!
stop() {
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap 'stop; exit 0' TERM INT
trap 'stop' EXIT
wait "$pid"
