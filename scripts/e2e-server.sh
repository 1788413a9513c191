#!/usr/bin/env bash
# The server the browser tests (playwright.config.ts) run against: `meshdeck serve` on a fresh copy of
# seed Example 1 (real l7mp proxies on loopback), with a known console token (e2e-token) and its own
# state directory, both in a temp dir that is removed when the server stops. Needs `next build` first.
# Playwright stops it with SIGTERM to the whole process group (gracefulShutdown).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
port="${E2E_PORT:-3100}"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/md-e2e-XXXXXX")"
cp -R examples/seed-example-1 "$tmp/mesh"
export MESHDECK_STATE_DIR="$tmp/state"
export NEXT_TELEMETRY_DISABLED=1
# Server layouts (server/console/DraftLayouts.ts) a second after a draft settles, not ten: the large-mesh
# tests wait for them. bench/ui.ts sets its own.
export MESHDECK_SERVER_LAYOUT_LATER_MS="${MESHDECK_SERVER_LAYOUT_LATER_MS:-1000}"
node bin/meshdeck.mjs serve "$tmp/mesh" --port "$port" --token e2e-token --no-xds &
pid=$!
stop() {
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap 'stop; exit 0' TERM INT
trap 'stop' EXIT
wait "$pid"
