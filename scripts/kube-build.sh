#!/usr/bin/env bash
# Builds kube-apiserver (from the k8s.io/kubernetes Go module) and etcd (from go.etcd.io/etcd/server/v3),
# both fetched through the Go module proxy, for the Kubernetes-mode integration tests.
# Idempotent: each binary is cached outside git, keyed by version (kube-<ver>/, etcd-<ver>/ under
# ~/.cache/meshdeck), and rebuilt only when missing. Prints the kube-apiserver path, then the etcd path,
# on the last two lines of stdout.
#
# Why wrapper modules and not `go install …@v`: both modules carry replace directives. k8s.io/kubernetes
# also requires its 33 staging modules (k8s.io/api, …) at the unresolvable v0.0.0 and maps them to
# ./staging/src; the wrapper replaces each of them with the published k8s.io/<m>@v0.<minor>.<patch>. The
# list is read from the go.mod the proxy serves, so a version bump cannot silently miss a module.
# etcd's server requires real versions, so its wrapper needs no replace lines.
#
# KUBE_VERSION: v1.36.3 is the highest v1.36.N in the proxy's version list (`go list -m -versions
# k8s.io/kubernetes` shows v1.35.4 v1.36.1 v1.36.3 v1.37.2). That list is incomplete: versions it omits
# (v1.36.2, k8s.io/cri-streaming v0.36.2) still download when asked for by name. v1.35.4 is the fallback.
# Measured cold (empty module and build caches, etcd then kube-apiserver) on a busy 2-core machine (load
# 8-12 from other builds) under `nice -n 15`: 34.0 min wall (etcd 7.7 min, kube-apiserver 26.4 min),
# 1300 s CPU (1090 user + 210 sys), peak RSS 1.8 GB; the caches then hold 1.0 GB of modules and 2.4 GB of
# build output; kube-apiserver 85 MiB, etcd 26 MiB (static, stripped).
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-v1.36.3}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.16}"
# Other engineers share the cores: compile at a low priority.
NICE="${KUBE_BUILD_NICE:-15}"
CACHE_ROOT="${MESHDECK_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/meshdeck}"
KUBE_OUT="$CACHE_ROOT/kube-$KUBE_VERSION"
ETCD_OUT="$CACHE_ROOT/etcd-$ETCD_VERSION"

mkdir -p "$CACHE_ROOT"
# One build at a time: a test run and a manual run may race, and two concurrent builds would double the
# load on a 2-core machine.
exec 9>"$CACHE_ROOT/kube-build.lock"
flock 9

# GOFLAGS is cleared (the machine sets -buildvcs=false; a stray -mod=vendor would break the wrapper).
export GOTOOLCHAIN=local GOWORK=off GOFLAGS= CGO_ENABLED=0

WORK="$(mktemp -d "$CACHE_ROOT/kube-build.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

build_etcd() {
  if [ -x "$ETCD_OUT/etcd" ] && [ -f "$ETCD_OUT/.complete" ]; then
    return
  fi
  local start w
  start=$(date +%s)
  w="$WORK/etcd"
  rm -rf "$ETCD_OUT"
  mkdir -p "$ETCD_OUT" "$w"
  echo "kube-build: etcd $ETCD_VERSION through $(go env GOPROXY)" >&2
  cat >"$w/go.mod" <<EOF
module local.invalid/etcd-build

go 1.25.0

tool go.etcd.io/etcd/server/v3

require go.etcd.io/etcd/server/v3 $ETCD_VERSION
EOF
  (
    cd "$w"
    go mod tidy
    nice -n "$NICE" go build -trimpath -ldflags="-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=$ETCD_VERSION" \
      -o "$ETCD_OUT/etcd.tmp" go.etcd.io/etcd/server/v3
    cp go.mod go.sum "$ETCD_OUT/"
  )
  mv "$ETCD_OUT/etcd.tmp" "$ETCD_OUT/etcd"
  "$ETCD_OUT/etcd" --version >&2
  touch "$ETCD_OUT/.complete"
  echo "kube-build: etcd done in $(($(date +%s) - start))s, $(du -sh "$ETCD_OUT/etcd" | cut -f1)" >&2
}

build_kube() {
  if [ -x "$KUBE_OUT/kube-apiserver" ] && [ -f "$KUBE_OUT/.complete" ]; then
    return
  fi
  local start w kgomod goline godebug staging minor build_date ver_flags pkg n
  start=$(date +%s)
  w="$WORK/kube"
  rm -rf "$KUBE_OUT"
  mkdir -p "$KUBE_OUT" "$w"
  staging="v0.${KUBE_VERSION#v1.}"
  echo "kube-build: k8s.io/kubernetes $KUBE_VERSION (staging $staging) through $(go env GOPROXY)" >&2
  kgomod="$(cd "$w" && go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" |
    sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
  if [ -z "$kgomod" ] || [ ! -f "$kgomod" ]; then
    echo "kube-build: could not download k8s.io/kubernetes@$KUBE_VERSION" >&2
    exit 1
  fi
  goline="$(grep -m1 '^go ' "$kgomod")"
  # Without k8s' own godebug line a 1.35 binary built by Go 1.26 would get Go 1.26 GODEBUG defaults.
  godebug="$(grep -m1 '^godebug default=' "$kgomod" || true)"
  cat >"$w/go.mod" <<EOF
module local.invalid/kube-apiserver-build

$goline
$godebug

tool k8s.io/kubernetes/cmd/kube-apiserver

require k8s.io/kubernetes $KUBE_VERSION
EOF
  sed -n 's|^[[:space:]]*\(k8s\.io/[^[:space:]]*\)[[:space:]]*=>[[:space:]]*\./staging/src/k8s\.io/.*|\1|p' "$kgomod" \
    >"$w/staging.txt"
  n=$(wc -l <"$w/staging.txt")
  if [ "$n" -lt 20 ]; then
    echo "kube-build: only $n staging modules found in $kgomod" >&2
    exit 1
  fi
  while read -r m; do
    (cd "$w" && go mod edit -replace="$m=$m@$staging")
  done <"$w/staging.txt"
  echo "kube-build: $n staging replace lines" >&2
  (cd "$w" && go mod tidy)

  minor="${KUBE_VERSION#v1.}"
  minor="${minor%%.*}"
  build_date="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  ver_flags=""
  # What hack/lib/version.sh stamps; without it /version reports v0.0.0-master+$Format:%H$.
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ver_flags+=" -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    ver_flags+=" -X $pkg.gitCommit=$KUBE_VERSION -X $pkg.gitTreeState=clean -X $pkg.buildDate=$build_date"
  done
  echo "kube-build: compiling kube-apiserver (a long build on 2 cores)" >&2
  (
    cd "$w"
    # Upstream's release tags and flags (hack/lib/golang.sh); kube-apiserver is a static binary upstream too.
    nice -n "$NICE" go build -trimpath -tags=selinux,notest,grpcnotrace -ldflags="-s -w$ver_flags" \
      -o "$KUBE_OUT/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver
    cp go.mod go.sum "$KUBE_OUT/"
  )
  mv "$KUBE_OUT/kube-apiserver.tmp" "$KUBE_OUT/kube-apiserver"
  "$KUBE_OUT/kube-apiserver" --version >&2
  touch "$KUBE_OUT/.complete"
  echo "kube-build: kube-apiserver done in $(($(date +%s) - start))s, $(du -sh "$KUBE_OUT/kube-apiserver" | cut -f1)" >&2
}

build_etcd
build_kube
echo "$KUBE_OUT/kube-apiserver"
echo "$ETCD_OUT/etcd"
