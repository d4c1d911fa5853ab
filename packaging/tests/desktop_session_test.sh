#!/bin/bash
# Runs inside the clean-room root (as root): the desktop steps of `make install` / `make uninstall`
# against a simulated desktop user — a session D-Bus with dconf, the user's own ibus-daemon and
# GNOME's input-source settings — driven exactly as `sudo make install` would (SUDO_USER).
#
#   desktop_session_test.sh ENABLE_SCRIPT
set -euo pipefail
ENABLE=$1
USER_NAME=inkling-desktop-test

fail() { echo "desktop_session_test: FAIL: $*" >&2; exit 1; }

# Headless first: no desktop user at all, so the desktop steps are skipped and nothing fails.
out=$(env -u SUDO_USER bash "$ENABLE" enable 2>&1) || fail "enable failed headless: $out"
grep -q "no desktop user found" <<<"$out" || fail "headless enable did not say it skipped: $out"
echo "headless: $(head -1 <<<"$out")"

id "$USER_NAME" >/dev/null 2>&1 || useradd -m "$USER_NAME"
uid=$(id -u "$USER_NAME")
run=/run/user/$uid
mkdir -p "$run"
chown "$USER_NAME:" "$run"
chmod 700 "$run"
bus="unix:path=$run/bus"
user_env=(HOME="/home/$USER_NAME" XDG_RUNTIME_DIR="$run" DBUS_SESSION_BUS_ADDRESS="$bus")
as_user() { runuser -u "$USER_NAME" -- env "${user_env[@]}" "$@"; }

as_user dbus-daemon --session --address="$bus" --fork --print-pid >/dev/null
as_user ibus-daemon --daemonize --panel=disable --emoji-extension=disable --config=disable --cache=none
for _ in $(seq 100); do
    ls "/home/$USER_NAME/.config/ibus/bus/"* >/dev/null 2>&1 && break
    sleep 0.05
done
ls "/home/$USER_NAME/.config/ibus/bus/"* >/dev/null 2>&1 || fail "the user's ibus-daemon did not start"
daemon_before=$(pgrep -u "$uid" -x ibus-daemon)

as_user gsettings set org.gnome.desktop.input-sources sources "[('xkb', 'us')]"

out=$(SUDO_USER=$USER_NAME bash "$ENABLE" enable 2>&1) || fail "enable failed: $out"
while IFS= read -r line; do echo "  $line"; done <<<"$out"
grep -q "restarted IBus for $USER_NAME" <<<"$out" || fail "IBus was not restarted"
sources=$(as_user gsettings get org.gnome.desktop.input-sources sources)
[ "$sources" = "[('xkb', 'us'), ('ibus', 'inkling')]" ] || fail "sources after enable: $sources"
for _ in $(seq 100); do
    # Captured, not piped into `grep -q`: under pipefail the early exit would SIGPIPE the writer.
    engines=$(as_user ibus list-engine 2>/dev/null || true)
    grep -q '^ *inkling ' <<<"$engines" && break
    sleep 0.05
done
grep -q '^ *inkling ' <<<"$engines" || fail "the user's IBus does not list inkling after the restart"
echo "enable: sources $sources; IBus (pid $daemon_before before) lists inkling"

out=$(SUDO_USER=$USER_NAME bash "$ENABLE" enable 2>&1) || fail "second enable failed: $out"
grep -q "already among" <<<"$out" || fail "second enable did not notice Inkling was there: $out"
sources=$(as_user gsettings get org.gnome.desktop.input-sources sources)
[ "$sources" = "[('xkb', 'us'), ('ibus', 'inkling')]" ] || fail "sources after a second enable: $sources"

out=$(SUDO_USER=$USER_NAME bash "$ENABLE" disable 2>&1) || fail "disable failed: $out"
sources=$(as_user gsettings get org.gnome.desktop.input-sources sources)
[ "$sources" = "[('xkb', 'us')]" ] || fail "sources after disable: $sources"
echo "disable: sources $sources"

# Empty sources ("use the system layout"): Inkling goes after the system layout.
as_user gsettings reset org.gnome.desktop.input-sources sources
# dconf applies writes through its service: wait until the reset is visible before enabling.
for _ in $(seq 50); do
    [[ "$(as_user gsettings get org.gnome.desktop.input-sources sources)" =~ ^(@a\(ss\)\ )?\[\]$ ]] && break
    sleep 0.1
done
out=$(SUDO_USER=$USER_NAME bash "$ENABLE" enable 2>&1) || fail "enable on empty sources failed: $out"
for _ in $(seq 50); do
    sources=$(as_user gsettings get org.gnome.desktop.input-sources sources)
    [[ "$sources" == "[('xkb', '"*"'), ('ibus', 'inkling')]" ]] && break
    sleep 0.1
done
[[ "$sources" == "[('xkb', '"*"'), ('ibus', 'inkling')]" ]] || fail "sources after enable on empty: $sources (enable said: $out)"
out=$(SUDO_USER=$USER_NAME bash "$ENABLE" disable 2>&1) || fail "disable failed: $out"
echo "empty sources: enable gave $sources; disable gave $(as_user gsettings get org.gnome.desktop.input-sources sources)"

for pid in $(pgrep -u "$uid"); do kill "$pid" 2>/dev/null || true; done
echo "desktop_session_test: ok"
