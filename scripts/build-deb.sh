#!/usr/bin/env bash
# Builds the Debian package from this working tree and checks it with lintian.
#   scripts/build-deb.sh [OUTDIR]     (default: out/; prints the .deb's path on stdout)
# dpkg-buildpackage writes its results next to the source directory, so the tree is copied to
# a temporary directory first: the repository's parent stays clean and uncommitted changes are
# built too. SWIFT selects the toolchain (see debian/rules). LINTIAN=no skips lintian.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
outdir=$(mkdir -p "${1:-$repo/out}" && cd "${1:-$repo/out}" && pwd)

# What dpkg-buildpackage, the build dependencies and lintian need (installed when missing).
"$repo/scripts/install-deps.sh" debhelper fakeroot build-essential lintian libsystemd-dev libcurl4-openssl-dev libglib2.0-dev pkg-config

work=$(mktemp -d /tmp/reachabilityd-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/src"
# Everything but VCS data, build directories and earlier outputs.
tar -C "$repo" --exclude=.git --exclude='./.build*' --exclude=./out \
    --exclude=./debian/.swift-build --exclude=./debian/reachabilityd --exclude=./debian/.debhelper \
    --exclude=./debian/reachabilityd-gio-module --exclude=./debian/.gio-build \
    -cf - . | tar -C "$work/src" -xf -

(cd "$work/src" && dpkg-buildpackage -us -uc -b -d) >&2

rm -f "$outdir"/reachabilityd_*.deb "$outdir"/reachabilityd-dbgsym_* "$outdir"/reachabilityd-gio-module*
cp "$work"/*.deb "$work"/*.ddeb "$work"/*.buildinfo "$work"/*.changes "$outdir"/ 2>/dev/null || true
deb=$(ls "$outdir"/reachabilityd_*.deb)
if [ "${LINTIAN:-yes}" != no ]; then
    echo "build-deb: lintian --fail-on error,warning" >&2
    lintian --fail-on error,warning --info "$outdir"/reachabilityd_*.changes >&2
fi
echo "$deb"
