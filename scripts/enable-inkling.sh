#!/bin/bash
# Installs or removes the Inkling package and turns it on or off for the desktop user.
#
#   scripts/enable-inkling.sh install [DEB]   apt-get install the .deb (default: build/ibus-inkling_*.deb),
#                                             then `enable`
#   scripts/enable-inkling.sh uninstall       `disable`, then apt-get purge ibus-inkling
#   scripts/enable-inkling.sh enable          restart IBus and add Inkling to the GNOME input sources
#   scripts/enable-inkling.sh disable         remove Inkling from the GNOME input sources, restart IBus
#
# Run as root (or through sudo, or as the desktop user with sudo available for apt). The desktop
# user is $SUDO_USER, else the invoking user when not root, else the owner of a running graphical
# session. The desktop steps talk to that user's session bus and IBus; when there is no session
# (a headless machine, a container, CI) they are skipped with a message and the script succeeds.
set -euo pipefail

cd "$(dirname "$0")/.."
PACKAGE=ibus-inkling
SOURCE="('ibus', 'inkling')"

say() { echo "inkling: $*"; }

as_root() {
    if [ "$(id -u)" = 0 ]; then
        "$@"
    elif command -v sudo >/dev/null; then
        sudo "$@"
    else
        say "need root for: $*"
        exit 1
    fi
}

# --- the desktop user and their session --------------------------------------------------------
DESKTOP_USER=""
DESKTOP_UID=""
SESSION_ENV=() # NAME=value pairs taken from one of the user's session processes

find_desktop_user() {
    local user=""
    if [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ]; then
        user=$SUDO_USER
    elif [ -n "${PKEXEC_UID:-}" ]; then
        user=$(id -nu "$PKEXEC_UID" 2>/dev/null || true)
    elif [ "$(id -u)" != 0 ]; then
        user=$(id -nu)
    elif command -v loginctl >/dev/null; then
        # The owner of an active graphical session.
        local id type name
        while read -r id _ name _; do
            [ -n "$id" ] || continue
            type=$(loginctl show-session "$id" -p Type --value 2>/dev/null || true)
            if [ "$type" = x11 ] || [ "$type" = wayland ]; then
                user=$name
                break
            fi
        done < <(loginctl list-sessions --no-legend 2>/dev/null || true)
    fi
    if [ -z "$user" ] && [ "$(id -u)" = 0 ]; then
        # No logind: the owner of a running desktop shell or IBus.
        local pid
        for name in gnome-shell plasmashell gnome-session-binary ibus-daemon; do
            pid=$(pgrep -n -x "$name" 2>/dev/null || true)
            if [ -n "$pid" ]; then
                user=$(ps -o user= -p "$pid" | tr -d ' ')
                [ "$user" != root ] && break
                user=""
            fi
        done
    fi
    [ -n "$user" ] || return 1
    DESKTOP_USER=$user
    DESKTOP_UID=$(id -u "$user")
}

# Copies DBUS_SESSION_BUS_ADDRESS, DISPLAY, WAYLAND_DISPLAY, XDG_RUNTIME_DIR from a process of the
# user's desktop session (so `ibus` finds the right daemon and gsettings the right dconf).
find_session_env() {
    local pid name environ var value
    for name in gnome-shell plasmashell gnome-session-binary ksmserver xfce4-session ibus-daemon; do
        pid=$(pgrep -n -u "$DESKTOP_UID" -x "$name" 2>/dev/null || true)
        [ -n "$pid" ] || continue
        environ=$(tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null || true)
        [ -n "$environ" ] || continue
        for var in DBUS_SESSION_BUS_ADDRESS DISPLAY WAYLAND_DISPLAY XDG_RUNTIME_DIR XDG_CURRENT_DESKTOP; do
            value=$(sed -n "/^$var=/{s/^$var=//p;q}" <<<"$environ")
            if [ -n "$value" ]; then SESSION_ENV+=("$var=$value"); fi
        done
        break
    done
    if [[ " ${SESSION_ENV[*]+"${SESSION_ENV[*]}"}" != *" DBUS_SESSION_BUS_ADDRESS="* ]]; then
        if [ -S "/run/user/$DESKTOP_UID/bus" ]; then
            SESSION_ENV+=("DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/$DESKTOP_UID/bus"
                "XDG_RUNTIME_DIR=/run/user/$DESKTOP_UID")
        elif [ "$(id -u)" = "$DESKTOP_UID" ] && [ -n "${DBUS_SESSION_BUS_ADDRESS:-}" ]; then
            SESSION_ENV+=("DBUS_SESSION_BUS_ADDRESS=$DBUS_SESSION_BUS_ADDRESS")
        else
            return 1
        fi
    fi
}

as_user() {
    local home
    home=$(getent passwd "$DESKTOP_USER" | cut -d: -f6)
    if [ "$(id -u)" = "$DESKTOP_UID" ]; then
        env "${SESSION_ENV[@]}" "$@"
    elif [ "$(id -u)" = 0 ]; then
        runuser -u "$DESKTOP_USER" -- env HOME="$home" USER="$DESKTOP_USER" "${SESSION_ENV[@]}" "$@"
    else
        return 1
    fi
}

desktop_session() {
    if ! find_desktop_user; then
        say "no desktop user found (headless?): skipping the IBus restart and the input-source setup"
        return 1
    fi
    if ! find_session_env; then
        say "no desktop session running for $DESKTOP_USER: skipping the IBus restart and the input-source setup"
        say "after logging in, run: scripts/enable-inkling.sh enable   (or add Inkling in Settings → Keyboard)"
        return 1
    fi
}

# --- IBus and GNOME input sources --------------------------------------------------------------
restart_ibus() {
    if ! pgrep -u "$DESKTOP_UID" -x ibus-daemon >/dev/null 2>&1; then
        say "IBus is not running for $DESKTOP_USER: it will find Inkling when it starts"
        return 0
    fi
    if as_user ibus restart >/dev/null 2>&1; then
        say "restarted IBus for $DESKTOP_USER"
    else
        say "could not restart IBus for $DESKTOP_USER; log out and in again (or run 'ibus restart')"
    fi
}

# Pipelines into `grep -q` are avoided throughout: under `pipefail`, grep exiting at the first match
# makes the writer die of SIGPIPE and the whole test fail at random (gsettings writes key by key).
gnome_sources_available() {
    local keys
    command -v gsettings >/dev/null &&
        keys=$(as_user gsettings list-keys org.gnome.desktop.input-sources 2>/dev/null) &&
        grep -qx sources <<<"$keys"
}

add_input_source() {
    if ! gnome_sources_available; then
        say "GNOME input-source settings not available: skipping"
        return 0
    fi
    local current new layout variant
    current=$(as_user gsettings get org.gnome.desktop.input-sources sources)
    if [[ "$current" == *"$SOURCE"* ]]; then
        say "Inkling is already among $DESKTOP_USER's input sources"
        return 0
    fi
    if [[ "$current" =~ ^(@a\(ss\)\ )?\[\]$ ]]; then
        # No sources configured means "the system layout": keep it in front of Inkling.
        layout=us
        variant=""
        if [ -f /etc/default/keyboard ]; then
            # shellcheck source=/dev/null
            layout=$(. /etc/default/keyboard && echo "${XKBLAYOUT%%,*}")
            # shellcheck source=/dev/null
            variant=$(. /etc/default/keyboard && echo "${XKBVARIANT%%,*}")
        fi
        new="[('xkb', '${layout:-us}${variant:++$variant}'), $SOURCE]"
    else
        new="${current%]}, $SOURCE]"
    fi
    if as_user gsettings set org.gnome.desktop.input-sources sources "$new"; then
        say "added Inkling to $DESKTOP_USER's input sources: $new"
        say "switch to it with Super+Space (or from the keyboard menu in the top bar)"
    else
        say "could not change $DESKTOP_USER's input sources; add Inkling in Settings → Keyboard → Input Sources"
    fi
}

remove_input_source() {
    gnome_sources_available || return 0
    local current new
    current=$(as_user gsettings get org.gnome.desktop.input-sources sources)
    [[ "$current" == *"$SOURCE"* ]] || return 0
    new=${current//", $SOURCE"/}
    new=${new//"$SOURCE, "/}
    new=${new//"$SOURCE"/}
    if [ "$new" = "[]" ]; then new="@a(ss) []"; fi
    as_user gsettings set org.gnome.desktop.input-sources sources "$new" &&
        say "removed Inkling from $DESKTOP_USER's input sources"
}

kde_hint() {
    cat <<'EOF'
inkling: on KDE Plasma, X11: run `im-config -n ibus` once (package im-config), log out and in,
inkling:   then add Inkling in the IBus preferences (`ibus-setup` → Input Method → Add → English).
inkling: on KDE Plasma, Wayland: System Settings → Input Devices → Virtual Keyboard → "IBus Wayland",
inkling:   then add Inkling in `ibus-setup` → Input Method.
EOF
}

enable() {
    if desktop_session; then
        restart_ibus
        add_input_source
    fi
    kde_hint
}

disable() {
    if desktop_session; then
        remove_input_source
        restart_ibus
    fi
}

case "${1:-}" in
install)
    deb=${2:-}
    # The newest by time; the names are ours (<package>_<version>_amd64.deb), plain ASCII.
    # shellcheck disable=SC2012
    if [ -z "$deb" ]; then deb=$(ls -t build/"${PACKAGE}"_*.deb 2>/dev/null | head -1 || true); fi
    if [ -z "$deb" ] || [ ! -f "$deb" ]; then say "no .deb found (run 'make deb')"; exit 1; fi
    deb=$(realpath "$deb")
    say "installing $deb"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -o Dpkg::Use-Pty=0 --reinstall "$deb"
    enable
    say "installed: $(dpkg-query -W -f='${Package} ${Version}' "$PACKAGE")"
    ;;
uninstall)
    disable
    if [[ "$(dpkg-query -W -f='${Status}' "$PACKAGE" 2>/dev/null || true)" == *"ok installed"* ]]; then
        as_root env DEBIAN_FRONTEND=noninteractive apt-get purge -y -o Dpkg::Use-Pty=0 "$PACKAGE"
        say "removed $PACKAGE (settings and downloaded packs in your home folder are kept)"
    else
        say "$PACKAGE is not installed"
    fi
    ;;
enable) enable ;;
disable) disable ;;
*)
    echo "usage: $0 install [DEB] | uninstall | enable | disable" >&2
    exit 2
    ;;
esac
