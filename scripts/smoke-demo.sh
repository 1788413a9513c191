#!/usr/bin/env bash
# Checks the README's first command from this checkout: `npm run demo` starts the console and the local
# mesh of seed Example 1, and a probe through the gateway comes back through transcoder and worker.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
port="${SMOKE_PORT:-3999}"
log="$(mktemp)"
# scripts/demo.sh is what `npm run demo` runs; called directly, $! is the server itself (it execs node).
bash scripts/demo.sh examples/seed-example-1 --port "$port" >"$log" 2>&1 &
pid=$!
cleanup() {
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
trap cleanup EXIT
for _ in $(seq 1 180); do
  grep -q 'Meshdeck console:' "$log" && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 1
done
if ! grep -q 'Meshdeck console:' "$log"; then
  echo "smoke: the console did not come up; its output:" >&2
  cat "$log" >&2
  exit 1
fi
cat "$log"
out="$(node bin/meshdeck.mjs probe gateway-vsvc --url "http://127.0.0.1:$port" --from 127.0.0.100:9050 --payload hello)"
echo "$out"
grep -q 'reply: "worker-[01](tc(hello))"' <<<"$out"
SMOKE_URL="http://127.0.0.1:$port/api/state" node -e '
  (async () => {
  const s = await (await fetch(process.env.SMOKE_URL)).json();
  const ps = Object.values(s.proxies);
  if (ps.length !== 2 || !ps.every((p) => p.inSync)) { console.error("smoke: proxies not in sync", ps.map((p) => [p.id, p.phase])); process.exit(1); }
  console.log(`smoke: /api/state version ${s.version}, ${ps.length} proxies in sync`);
  })();'
proxies="$(pgrep -P "$pid" -x l7mp || true)"
[ -n "$proxies" ] || { echo "smoke: no l7mp processes under the server" >&2; exit 1; }
cleanup
trap - EXIT
sleep 1
for p in $proxies; do
  if kill -0 "$p" 2>/dev/null; then
    echo "smoke: l7mp process $p left behind after the console stopped" >&2
    exit 1
  fi
done
echo "smoke: README first command OK"
