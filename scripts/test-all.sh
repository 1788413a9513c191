#!/usr/bin/env bash
# The single test command (`npm test`): typecheck, lint, format, unit tests, production build, e2e.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

export NEXT_TELEMETRY_DISABLED=1

step() {
  printf '\n==> %s\n' "$*"
}

step 'next typegen (next-env.d.ts and route types for tsc)'
npx next typegen

step 'tsc --noEmit'
npx tsc --noEmit

step 'eslint .'
npx eslint .

step 'prettier --check .'
npx prettier --check .

step 'vitest run'
npx vitest run

step 'component tests (Vitest browser mode in Debian chromium)'
npm run test:components

step 'next build'
npx next build

step "smoke: the README's first command (npm run demo) and meshdeck probe"
bash scripts/smoke-demo.sh

step 'playwright test'
npx playwright test
