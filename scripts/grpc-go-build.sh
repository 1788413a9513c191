#!/usr/bin/env bash
# Builds test/grpc-go-xds-client (gRPC Go's own proxyless xDS client, google.golang.org/grpc from the Go
# module proxy) for the tests that need a real xDS client presenting a client certificate: gRPC Go reads
# the bootstrap's gRFC A65 `tls` channel credentials, which @grpc/grpc-js-xds cannot.
# Idempotent: the binary is cached outside git, keyed by the grpc version and a hash of the client's
# source (main.go, go.mod, go.sum), and rebuilt only when missing. Prints its path on the last line.
# Measured cold here (modules cached by the kube build, 2 cores busy with a test run, nice 19): 55 s wall,
# 67 s CPU; the binary is 26 MB.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../test/grpc-go-xds-client"
GRPC_VERSION="$(sed -n 's/^require google.golang.org\/grpc \(v[^ ]*\)$/\1/p' go.mod)"
HASH="$(cat main.go go.mod go.sum | sha256sum | cut -c1-12)"
CACHE_ROOT="${MESHDECK_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/meshdeck}"
OUT="$CACHE_ROOT/grpc-go-xds-client-$GRPC_VERSION-$HASH"
BIN="$OUT/grpc-go-xds-client"

mkdir -p "$CACHE_ROOT"
# One build at a time: test files in parallel may all ask for it.
exec 9>"$CACHE_ROOT/grpc-go-build.lock"
flock 9

if [ -x "$BIN" ]; then
  echo "$BIN"
  exit 0
fi

export GOTOOLCHAIN=local GOWORK=off GOFLAGS=-mod=readonly CGO_ENABLED=0
start=$(date +%s)
echo "grpc-go-build: building the gRPC Go xDS client (google.golang.org/grpc $GRPC_VERSION)" >&2
mkdir -p "$OUT"
nice -n 19 go build -trimpath -ldflags '-s -w' -o "$BIN.tmp" .
mv "$BIN.tmp" "$BIN"
echo "grpc-go-build: done in $(($(date +%s) - start))s: $BIN" >&2
echo "$BIN"
