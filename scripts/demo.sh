#!/usr/bin/env bash
# `npm run demo`: the README's first command. On a fresh machine it installs the npm packages and
# builds the console, then runs the console and the control plane on the local mesh of seed Example 1
# (real l7mp proxies on loopback), reconciles, and prints the URL. Ctrl-C stops everything.
# Another mesh directory: npm run demo -- examples/seed-example-2
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export NEXT_TELEMETRY_DISABLED=1
if [ ! -d node_modules/@l7mp/l7mp ] || [ ! -d node_modules/next ]; then
  echo "==> installing npm packages (npm ci)"
  npm ci --no-audit --no-fund
fi
if [ ! -f .next/BUILD_ID ] || [ -n "$(find app components lib server -newer .next/BUILD_ID -name '*.ts*' -print -quit 2>/dev/null)" ]; then
  echo "==> building the console (next build)"
  npx next build >/dev/null
fi
exec node bin/meshdeck.mjs serve "${1:-examples/seed-example-1}" "${@:2}"
