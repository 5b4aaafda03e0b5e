#!/bin/sh
# Install (or uninstall) a Scriptorium bundle for the current user, into the standard XDG places. No root needed.
#
#   ./install.sh                     install the bundle found beside this script (or in installer/dist/)
#   ./install.sh --bundle DIR        install the bundle folder DIR (the one holding the `scriptorium` executable)
#   ./install.sh --uninstall         remove what install put there; your documents, settings and downloaded
#                                    models (~/.local/share/scriptorium) are kept
#   --prefix DIR                     install under DIR instead of ~/.local (DIR/lib, DIR/bin, DIR/share)
#
# What goes where (defaults):
#   ~/.local/lib/scriptorium/                       the bundle (executable + _internal/)
#   ~/.local/bin/scriptorium                        a link to the executable
#   $XDG_DATA_HOME/applications/org.scriptorium.Scriptorium.desktop        the menu entry
#   $XDG_DATA_HOME/metainfo/org.scriptorium.Scriptorium.metainfo.xml       AppStream metadata
#   $XDG_DATA_HOME/icons/hicolor/{scalable,NxN}/apps/scriptorium.{svg,png} the icons
# ($XDG_DATA_HOME defaults to ~/.local/share.)
set -eu

APP_ID=org.scriptorium.Scriptorium
NAME=scriptorium
MARKER=.scriptorium-bundle

here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
action=install
bundle=
prefix=

usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
    case "$1" in
        --uninstall) action=uninstall ;;
        --bundle) bundle=${2:?--bundle needs a folder}; shift ;;
        --prefix) prefix=${2:?--prefix needs a folder}; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "install.sh: unknown argument: $1" >&2; usage >&2; exit 2 ;;
    esac
    shift
done

if [ -n "$prefix" ]; then
    data=$prefix/share
else
    prefix=$HOME/.local
    data=${XDG_DATA_HOME:-$HOME/.local/share}
fi
libdir=$prefix/lib/$NAME
bindir=$prefix/bin
appdir=$data/applications
metadir=$data/metainfo
icondir=$data/icons/hicolor

# Where the desktop entry, metainfo and icons come from: beside this script (the tarball's layout) or the
# source checkout (installer/linux/ and resources/icons/).
find_first() { for p in "$@"; do [ -e "$p" ] && { echo "$p"; return 0; }; done; return 1; }

refresh_caches() {
    command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$appdir" 2>/dev/null || true
    command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -f -t "$icondir" 2>/dev/null || true
}

uninstall() {
    if [ -d "$libdir" ] && [ ! -f "$libdir/$MARKER" ]; then
        echo "install.sh: $libdir was not made by this script; leaving it alone" >&2
        exit 1
    fi
    rm -rf "$libdir"
    if [ -L "$bindir/$NAME" ] || [ -f "$bindir/$NAME" ]; then rm -f "$bindir/$NAME"; fi
    rm -f "$appdir/$APP_ID.desktop" "$metadir/$APP_ID.metainfo.xml" "$icondir/scalable/apps/$NAME.svg"
    for f in "$icondir"/*/apps/$NAME.png; do [ -e "$f" ] && rm -f "$f"; done
    refresh_caches
    echo "Scriptorium removed. Your data in ${XDG_DATA_HOME:-$HOME/.local/share}/scriptorium is kept."
}

install() {
    if [ -z "$bundle" ]; then
        bundle=$(find_first "$here/$NAME" "$here/../dist/cpu/$NAME" "$here/../dist/default/$NAME") || {
            echo "install.sh: no bundle found; build one with 'python3 installer/build.py' or pass --bundle DIR" >&2
            exit 1
        }
    fi
    bundle=$(CDPATH= cd -- "$bundle" && pwd)
    [ -x "$bundle/$NAME" ] || { echo "install.sh: $bundle/$NAME is not an executable" >&2; exit 1; }
    desktop=$(find_first "$here/$APP_ID.desktop" "$here/linux/$APP_ID.desktop")
    metainfo=$(find_first "$here/$APP_ID.metainfo.xml" "$here/linux/$APP_ID.metainfo.xml")
    icons=$(find_first "$here/icons" "$here/../../resources/icons") || { echo "install.sh: icons not found" >&2; exit 1; }

    if [ -d "$libdir" ]; then
        [ -f "$libdir/$MARKER" ] || { echo "install.sh: $libdir exists and was not made by this script" >&2; exit 1; }
        rm -rf "$libdir"
    fi
    mkdir -p "$prefix/lib" "$bindir" "$appdir" "$metadir" "$icondir/scalable/apps"
    cp -R "$bundle" "$libdir"
    echo "installed from $bundle" > "$libdir/$MARKER"
    ln -sf "$libdir/$NAME" "$bindir/$NAME"
    # The menu entry names the executable by its full path: ~/.local/bin is not on every desktop session's PATH.
    sed -e "s|^Exec=$NAME |Exec=$libdir/$NAME |" -e "s|^TryExec=$NAME\$|TryExec=$libdir/$NAME|" \
        "$desktop" > "$appdir/$APP_ID.desktop"
    cp "$metainfo" "$metadir/$APP_ID.metainfo.xml"
    cp "$icons/$NAME.svg" "$icondir/scalable/apps/$NAME.svg"
    for png in "$icons"/$NAME-*.png; do
        [ -e "$png" ] || continue
        size=${png##*/$NAME-}; size=${size%.png}
        mkdir -p "$icondir/${size}x${size}/apps"
        cp "$png" "$icondir/${size}x${size}/apps/$NAME.png"
    done
    refresh_caches
    echo "Scriptorium installed in $libdir"
    echo "  menu entry: $appdir/$APP_ID.desktop"
    echo "  command:    $bindir/$NAME"
    case ":$PATH:" in *":$bindir:"*) ;; *) echo "  ($bindir is not on your PATH; add it to run 'scriptorium' from a shell)";; esac
}

"$action"
