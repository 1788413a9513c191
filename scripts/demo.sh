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
dir="${1:-examples/seed-example-1}"
# Apply and rollouts write the mesh directory: the demo serves a copy of a shipped example, so the
# repository's examples (and the tests and goldens made from them) stay as they are. The copy is kept
# between runs, with the drafts and the apply history that go with it.
case "$(cd "$dir" 2>/dev/null && pwd -P)/" in
  "$(pwd -P)/examples/"*)
    copy="${MESHDECK_STATE_DIR:-${TMPDIR:-/tmp}/meshdeck}/demo/$(basename "$dir")"
    if [ ! -d "$copy" ]; then
      mkdir -p "$(dirname "$copy")"
      cp -R "$dir" "$copy"
    fi
    echo "==> serving a copy of $dir: $copy (what you apply goes there; delete it to start again from the example)"
    dir="$copy"
    ;;
esac
# A grpc-client demo app is a real grpc-js-xds client, which cannot present a client certificate: its
# ADS must be plaintext. The demo is on loopback, so it serves that (serve warns) unless told otherwise.
extra=()
if grep -rqsE --include='*.yaml' --include='*.yml' --include='*.json' \
  'meshdeck\.l7mp\.io/app"?: *["'"'"']?grpc-client' "$dir"; then
  case " ${*:2} " in
    *" --xds-insecure "* | *" --no-xds "* | *" --xds-listen "* | *" --kubeconfig "*) ;;
    *)
      echo "==> serving ADS in plaintext (--xds-insecure) for the grpc-js-xds client in $dir"
      extra=(--xds-insecure)
      ;;
  esac
fi
exec node bin/meshdeck.mjs serve "$dir" "${@:2}" ${extra[@]+"${extra[@]}"}
