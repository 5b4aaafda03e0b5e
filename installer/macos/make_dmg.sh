#!/bin/sh
# Wrap the macOS app bundle into a disk image. BUILT ON macOS ONLY (not built or tested on the team's Linux machines).
#
#   python3 installer/build.py [--variant cpu]    # on a Mac: the spec's BUNDLE step writes Scriptorium.app
#   sh installer/macos/make_dmg.sh [cpu|default]  # -> installer/dist/Scriptorium-<version>[-cpu].dmg
#
# The default variant on macOS is already CPU/MPS (PyPI's macOS torch has no CUDA), so both variants are small.
# Signing and notarisation need a Developer ID: set CODESIGN_IDENTITY to sign before the image is made.
set -eu
variant=${1:-default}
root=$(CDPATH= cd -- "$(dirname -- "$0")/../.." && pwd)
app="$root/installer/dist/$variant/Scriptorium.app"
[ "$(uname -s)" = Darwin ] || { echo "make_dmg.sh: run this on macOS" >&2; exit 1; }
[ -d "$app" ] || { echo "make_dmg.sh: $app not found; run installer/build.py first" >&2; exit 1; }
version=$(sed -n 's/^__version__ = "\(.*\)"/\1/p' "$root/app/__init__.py")
suffix=; [ "$variant" = default ] || suffix="-$variant"
if [ -n "${CODESIGN_IDENTITY:-}" ]; then
    codesign --deep --force --options runtime --sign "$CODESIGN_IDENTITY" "$app"
fi
stage=$(mktemp -d)
cp -R "$app" "$stage/"
ln -s /Applications "$stage/Applications"
hdiutil create -volname "Scriptorium $version" -srcfolder "$stage" -ov -format UDZO \
    "$root/installer/dist/Scriptorium-$version$suffix.dmg"
rm -rf "$stage"
echo "wrote installer/dist/Scriptorium-$version$suffix.dmg"
