#!/usr/bin/env bash
# Builds Gitea from its Go module (fetched through the Go module proxy) for the GitOps pull-request tests.
# Idempotent: the binary and its runtime files are cached outside git, keyed by version, and rebuilt only
# when missing. Prints the binary's path on its last line of stdout.
#
# Why not `go install code.gitea.io/gitea@v`: the module at code.gitea.io/gitea declares its path as
# `gitea.dev` and carries replace directives, so it can only be built as the main module of its own source.
# Gitea >= 1.26 uses the pure-Go SQLite driver (modernc) unless built with the `sqlite_mattn` tag, so no cgo.
# Without the `bindata` tag Gitea reads templates/options/public from STATIC_ROOT_PATH at run time: they are
# copied beside the binary (the generated bindata files are not in the module, and the API needs no web assets).
set -euo pipefail

GITEA_VERSION="${GITEA_VERSION:-v1.27.3}"
CACHE_ROOT="${MESHDECK_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/meshdeck}"
OUT="$CACHE_ROOT/gitea-$GITEA_VERSION"
BIN="$OUT/gitea"

mkdir -p "$CACHE_ROOT"
# One build at a time per version: a test run and a manual run may race.
exec 9>"$OUT.lock"
flock 9

if [ -x "$BIN" ] && [ -f "$OUT/.complete" ]; then
  echo "$BIN"
  exit 0
fi

export GOTOOLCHAIN=local GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0

start=$(date +%s)
echo "gitea-build: downloading code.gitea.io/gitea@$GITEA_VERSION through $(go env GOPROXY)" >&2
SRC="$(go mod download -json "code.gitea.io/gitea@$GITEA_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
if [ -z "$SRC" ] || [ ! -f "$SRC/go.mod" ]; then
  echo "gitea-build: could not download code.gitea.io/gitea@$GITEA_VERSION" >&2
  exit 1
fi

rm -rf "$OUT"
mkdir -p "$OUT"
WORK="$(mktemp -d "$CACHE_ROOT/gitea-src.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
# The module cache is read-only; go may want to touch go.sum, so build in a writable copy.
cp -r "$SRC/." "$WORK/"
chmod -R u+w "$WORK"

echo "gitea-build: building (this takes many minutes on 2 cores)" >&2
(
  cd "$WORK"
  nice -n 19 go build -trimpath \
    -ldflags "-s -w -X main.Version=${GITEA_VERSION#v} -X main.Tags=" \
    -o "$OUT/gitea.tmp" .
)
cp -r "$WORK/templates" "$WORK/options" "$WORK/public" "$OUT/"
mv "$OUT/gitea.tmp" "$BIN"
"$BIN" --version >&2
touch "$OUT/.complete"
echo "gitea-build: done in $(($(date +%s) - start))s, $(du -sh "$OUT" | cut -f1) in $OUT" >&2
echo "$BIN"
