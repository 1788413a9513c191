#!/usr/bin/env bash
# `npm run demo`: the README's first command. Installs the npm packages on first use, then checks seed
# Example 1 and prints the l7mp REST calls that configure each of its proxies.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ ! -d node_modules/@l7mp/l7mp ] || [ ! -d node_modules/tsx ]; then
  npm ci --no-audit --no-fund
fi
example="${1:-examples/seed-example-1}"
node bin/meshdeck.mjs check "$example" || true
node bin/meshdeck.mjs render "$example" --format ops
