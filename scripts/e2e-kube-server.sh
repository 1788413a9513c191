#!/usr/bin/env bash
# The third server the browser tests (playwright.config.ts) run against, for e2e/console-cluster.spec.ts:
# a real kube-apiserver + etcd holding seed Example 2 as custom resources, real l7mp proxies, and
# `meshdeck serve --kubeconfig` on port 3102 (token e2e-token). See scripts/e2e-kube-server.ts. Needs
# `next build` and the kube binaries (scripts/kube-build.sh, cached). Stopped with SIGTERM.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec node --import tsx scripts/e2e-kube-server.ts
