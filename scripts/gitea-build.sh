#!/usr/bin/env bash
# Builds Gitea from its Go module (fetched through the Go module proxy) for the GitOps pull-request tests.
# Idempotent: the binary and its runtime files are cached outside git, keyed by version, and rebuilt only
# when missing. Prints the binary's path on its last line of stdout.
#
# Why not `go install code.gitea.io/gitea@v`: the module carries replace directives (and from 1.27 on it
# declares its path as `gitea.dev`), so it is built as the main module of a writable copy of its source.
# Measured cold (empty module and build caches) on a busy 2-core machine under `nice -n 19`: 43.6 min wall,
# 1342 s CPU (user+sys); the caches then hold 1.2 GB of modules and 1.2 GB of build output, the result
# (binary 104 MiB + templates/options/public) 119 MB.
# SQLite: Gitea 1.26 needs the `sqlite sqlite_unlock_notify` tags and cgo (mattn/go-sqlite3, gcc is on the
# machine); 1.27+ has a pure-Go driver (modernc) by default and needs neither. The script checks which.
# v1.27.3 is not used: the proxy refuses three of its dependencies (403 "This module version is not
# available": gitea.dev/actions-proto-go v0.6.0, gitea.dev/sdk v1.1.0, gitlab.com/gitlab-org/api/client-go/v2
# v2.42.0).
# Without the `bindata` tag Gitea reads templates/options/public from STATIC_ROOT_PATH at run time: they are
# copied beside the binary (the generated bindata files are not in the module, and the API needs no web assets).
set -euo pipefail

GITEA_VERSION="${GITEA_VERSION:-v1.26.0}"
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

export GOTOOLCHAIN=local GOWORK=off GOFLAGS=-mod=mod

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

if [ -f "$WORK/models/db/driver_sqlite_modernc.go" ]; then
  TAGS="" CGO=0
else
  TAGS="sqlite sqlite_unlock_notify" CGO=1
fi

echo "gitea-build: building with tags '$TAGS', CGO_ENABLED=$CGO (this takes many minutes on 2 cores)" >&2
(
  cd "$WORK"
  CGO_ENABLED=$CGO nice -n 19 go build -trimpath -tags "$TAGS" \
    -ldflags "-s -w -X main.Version=${GITEA_VERSION#v} -X 'main.Tags=$TAGS'" \
    -o "$OUT/gitea.tmp" .
)
cp -r "$WORK/templates" "$WORK/options" "$WORK/public" "$OUT/"
mv "$OUT/gitea.tmp" "$BIN"
"$BIN" --version >&2
touch "$OUT/.complete"
echo "gitea-build: done in $(($(date +%s) - start))s, $(du -sh "$OUT" | cut -f1) in $OUT" >&2
echo "$BIN"
