#!/bin/sh
# Recipe for a single-file AppImage from a built bundle (Linux).
#
#   python3 installer/build.py --variant cpu            # -> installer/dist/cpu/scriptorium/
#   sh installer/linux/appimage.sh [cpu|default]        # -> installer/dist/Scriptorium-<version>-<arch>[-cpu].AppImage
#
# It lays out an AppDir (AppRun, desktop entry, icon, AppStream metadata, the bundle under usr/lib/scriptorium/),
# then runs appimagetool when it is on PATH (get it from the AppImage project's releases; it is not in PyPI or
# Debian). Without appimagetool it stops after the AppDir, which is what the team's machines can check.
set -eu
variant=${1:-default}
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
root=$(CDPATH= cd -- "$here/../.." && pwd)
bundle="$root/installer/dist/$variant/scriptorium"
appdir="$root/installer/build/Scriptorium-$variant.AppDir"
APP_ID=org.scriptorium.Scriptorium
[ -x "$bundle/scriptorium" ] || { echo "appimage.sh: $bundle not built; run installer/build.py --variant $variant" >&2; exit 1; }
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/pyproject.toml")
arch=$(uname -m)
suffix=; [ "$variant" = default ] || suffix="-$variant"

rm -rf "$appdir"
mkdir -p "$appdir/usr/lib" "$appdir/usr/share/metainfo" "$appdir/usr/share/applications" \
         "$appdir/usr/share/icons/hicolor/256x256/apps"
cp -R "$bundle" "$appdir/usr/lib/scriptorium"
cat > "$appdir/AppRun" <<'RUN'
#!/bin/sh
here=$(dirname "$(readlink -f "$0")")
exec "$here/usr/lib/scriptorium/scriptorium" "$@"
RUN
chmod +x "$appdir/AppRun"
cp "$here/$APP_ID.desktop" "$appdir/$APP_ID.desktop"
cp "$here/$APP_ID.desktop" "$appdir/usr/share/applications/$APP_ID.desktop"
cp "$here/$APP_ID.metainfo.xml" "$appdir/usr/share/metainfo/$APP_ID.metainfo.xml"
cp "$root/resources/icons/scriptorium-256.png" "$appdir/scriptorium.png"
cp "$root/resources/icons/scriptorium-256.png" "$appdir/usr/share/icons/hicolor/256x256/apps/scriptorium.png"
ln -sf scriptorium.png "$appdir/.DirIcon"
echo "AppDir ready: $appdir"

if command -v appimagetool >/dev/null 2>&1; then
    out="$root/installer/dist/Scriptorium-$version-$arch$suffix.AppImage"
    ARCH=$arch appimagetool "$appdir" "$out"
    echo "wrote $out"
else
    echo "appimagetool not on PATH: stopping at the AppDir (run 'appimagetool $appdir' where it is installed)"
fi
