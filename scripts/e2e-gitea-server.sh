#!/usr/bin/env bash
# The second server the browser tests (playwright.config.ts) run against, for the pull-request spec: a
# real Gitea on loopback with a repository holding a port-shifted copy of seed Example 1, and
# `meshdeck serve` on port 3101 (token e2e-token) configured to commit to it and open pull requests there.
# See scripts/e2e-gitea-server.ts. Needs `next build` and the Gitea binary (scripts/gitea-build.sh, cached;
# a cold build takes many minutes, so CI builds it first). Stopped with SIGTERM to the process group.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec node --import tsx scripts/e2e-gitea-server.ts
