"""A private, headless GNOME Shell 43 on Wayland with Inkling as its input source.

Follows issue 12's recipe: a private system bus (the Shell's login-manager code fails without
one), private HOME and XDG dirs, GSettings in a key file there (input sources
[('ibus','inkling')], no animations, no lock), then

    gnome-shell --headless --wayland --no-x11 --virtual-monitor 1280x800

on the caller's session bus (run the caller under dbus-run-session). The Shell starts
ibus-daemon itself and draws the candidate popup. The engine runs through a wrapper in a private
component path, so that its stderr (which the daemon discards) lands in a log.

Keys go in through mutter's org.gnome.Mutter.RemoteDesktop (one session for the whole run);
screenshots come from org.gnome.Shell.Screenshot, which answers only a connection that owns the
name org.gnome.Screenshot.
"""

import os
import re
import shutil
import subprocess
import tempfile
import time

import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

from ibus_harness import Timeout, component_xml, pump_until  # noqa: E402

SYSTEM_BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=%s</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
"""

# The keyboard layout and variant of the session, with and without Inkling.
KEYBOARD = ("us", "intl")

# Key repeat is off: on a loaded machine a key's release (a separate RemoteDesktop call) can come
# later than the repeat delay, and mutter then repeats the key (GTK 3 prose got `offfffff`).
SETTINGS = """[org/gnome/desktop/input-sources]
sources=[('ibus', 'inkling')]
mru-sources=[('ibus', 'inkling')]

[org/gnome/desktop/interface]
enable-animations=false

[org/gnome/desktop/peripherals/keyboard]
repeat=false

[org/gnome/desktop/session]
idle-delay=uint32 0

[org/gnome/desktop/screensaver]
lock-enabled=false

[org/gnome/desktop/lockdown]
disable-lock-screen=true

[org/gnome/shell]
welcome-dialog-last-shown-version='999'
"""

# X keysyms for the keys the tests press by name.
KEYSYMS = {
    "Return": 0xFF0D, "BackSpace": 0xFF08, "Tab": 0xFF09, "Escape": 0xFF1B, "space": 0x20,
    "Shift_L": 0xFFE1, "Control_L": 0xFFE3, "Alt_L": 0xFFE9, "Left": 0xFF51, "Right": 0xFF53,
    "Home": 0xFF50, "End": 0xFF57, "Next": 0xFF56, "Prior": 0xFF55,
    "dead_acute": 0xFE51, "dead_tilde": 0xFE53, "dead_diaeresis": 0xFE57,
}
for _n in range(1, 13):
    KEYSYMS["F%d" % _n] = 0xFFBE + _n - 1


def keysym_of(character):
    code = ord(character)
    if character == "\n":
        return KEYSYMS["Return"]
    if 0x20 <= code <= 0x7E or 0xA0 <= code <= 0xFF:
        return code
    return 0x01000000 + code


class SessionStartTimeout(Timeout):
    """The Shell never selected Inkling (1 of about 20 starts on a loaded machine, not traced
    yet: the Shell's IBus client did not take up the daemon); the session is stopped."""


class GnomeSession:
    """The Shell, its private buses and dirs; `env` is what applications started in it need."""

    def __init__(self, engine, logs, size="1280x800", trace=False, input_method=True):
        self.root = tempfile.mkdtemp(prefix="inkling-gnome-")
        self.logs = logs
        paths = {name: os.path.join(self.root, name)
                 for name in ("home", "config", "data", "cache", "runtime", "components")}
        for path in paths.values():
            os.makedirs(path, mode=0o700)
        self.runtime = paths["runtime"]
        self.engine_log = os.path.join(logs, "engine.log")
        wrapper = os.path.join(paths["components"], "inkling-engine-logged")
        with open(wrapper, "w") as f:
            f.write('#!/bin/sh\nexec "%s" "$@" 2>>"%s"\n' % (engine, self.engine_log))
        os.chmod(wrapper, 0o755)
        xml = re.sub(r"<exec>\S+", "<exec>" + wrapper, component_xml(engine), count=1)
        # The keyboard is US-International (KEYBOARD), as for a user who types accents with dead
        # keys. Mutter types only keysyms its keymap has (a dead key sent to a plain US keymap is
        # dropped), and the Shell sets the keymap from the selected IBus engine's layout: a real
        # user's `[('xkb', 'us+intl'), ('ibus', 'inkling')]` keeps the last layout for Inkling's
        # `default` one, but at start the Shell may select the layout source for good (IBus not
        # ready yet: "Cannot find engine xkb:us::eng"). So this session's copy of the component
        # names the layout as the Shell's id `us+intl`: GNOME Shell 43's keyboard.js builds the
        # id from `engineDesc.variant`, which IBus.EngineDesc does not have (`layout-variant`), so
        # a separate `<layout_variant>` would be lost.
        xml = re.sub(r"<layout>default</layout>", "<layout>%s+%s</layout>" % KEYBOARD, xml, count=1)
        with open(os.path.join(paths["components"], "inkling.xml"), "w") as f:
            f.write(xml)
        # The daemon's registry cache would keep an earlier component's exec line.
        shutil.rmtree(os.path.join(paths["cache"], "ibus"), ignore_errors=True)
        os.makedirs(os.path.join(paths["config"], "glib-2.0", "settings"))
        with open(os.path.join(paths["config"], "glib-2.0", "settings", "keyfile"), "w") as f:
            # The control run: no IBus input source; keys go by the (same US-International) keymap.
            layout_only = SETTINGS.replace("('ibus', 'inkling')", "('xkb', '%s+%s')" % KEYBOARD)
            f.write(SETTINGS if input_method else layout_only)

        self.system_bus_socket = os.path.join(self.root, "system_bus_socket")
        config = os.path.join(self.root, "system-bus.conf")
        with open(config, "w") as f:
            f.write(SYSTEM_BUS_CONFIG % self.system_bus_socket)
        self.system_bus = subprocess.Popen(
            ["dbus-daemon", "--config-file=" + config, "--nofork", "--nopidfile", "--nosyslog"],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(logs, "system-bus.log"), "w"),
        )
        pump_until(lambda: os.path.exists(self.system_bus_socket) or self.system_bus.poll() is not None,
                   timeout=30, what="the private system bus")

        env = dict(os.environ)
        for name in ("DISPLAY", "WAYLAND_DISPLAY", "GTK_IM_MODULE", "QT_IM_MODULE", "XMODIFIERS", "IBUS_ADDRESS",
                     "GDK_BACKEND", "INKLING_DEBUG_EVENTS"):
            env.pop(name, None)
        env.update({
            "HOME": paths["home"], "XDG_CONFIG_HOME": paths["config"], "XDG_DATA_HOME": paths["data"],
            "XDG_CACHE_HOME": paths["cache"], "XDG_RUNTIME_DIR": paths["runtime"],
            "XDG_SESSION_TYPE": "wayland", "XDG_CURRENT_DESKTOP": "GNOME", "XDG_SESSION_DESKTOP": "gnome",
            "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=" + self.system_bus_socket,
            "GSETTINGS_BACKEND": "keyfile", "IBUS_COMPONENT_PATH": paths["components"],
            "LC_ALL": "en_US.UTF-8", "LANG": "en_US.UTF-8", "NO_AT_BRIDGE": "1",
        })
        # Names and numbers in the engine log, never text: the driver waits on these events
        # (the engine has answered every key, shown a table or a chip) instead of sleeping.
        env["INKLING_DEBUG_EVENTS"] = "1"
        self.env = env
        self.shell_log = open(os.path.join(logs, "gnome-shell.log"), "w")
        self.shell = subprocess.Popen(
            ["gnome-shell", "--headless", "--wayland", "--no-x11", "--virtual-monitor", size],
            env=env, stdout=self.shell_log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        self.bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
        try:
            pump_until(lambda: self.has_name("org.gnome.Mutter.RemoteDesktop")
                       and self.has_name("org.gnome.Shell.Screenshot")
                       or self.shell.poll() is not None, timeout=180, what="GNOME Shell on the session bus")
            pump_until(lambda: os.path.exists(os.path.join(self.runtime, "wayland-0")) or self.shell.poll() is not None,
                       timeout=60, what="the Wayland socket")
        except Timeout:
            self.stop()
            raise
        if self.shell.poll() is not None:
            log = self.log()
            self.stop()
            raise RuntimeError("gnome-shell exited: " + log[-3000:])
        self.env.update({"WAYLAND_DISPLAY": "wayland-0", "GDK_BACKEND": "wayland", "GSK_RENDERER": "cairo"})
        # In a Debian GNOME session systemd starts ibus-daemon (the Shell sees the user unit
        # org.freedesktop.IBus.session.GNOME.service and then does not spawn it); there is no
        # systemd here, so the daemon starts as that unit starts it. The Shell's IBus client
        # watches the address file and connects to it, as the panel.
        self.ibus_log = open(os.path.join(logs, "ibus-daemon.log"), "w")
        self.ibus = None if not input_method else subprocess.Popen(
            ["ibus-daemon", "--panel", "disable", "--config", "disable", "--verbose"],
            env=dict(self.env, GDK_BACKEND="wayland"),
            stdout=self.ibus_log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        self.session_path = None
        if input_method:
            # The Shell sets the global engine once it has connected to the daemon and read the
            # input sources; keys typed before that go past IBus.
            def engine_is_inkling():
                result = subprocess.run(["ibus", "engine"], env=self.env, capture_output=True, text=True, timeout=30)
                if result.stdout.strip() == "inkling":
                    return True
                time.sleep(0.5)
                return False

            try:
                pump_until(engine_is_inkling, timeout=120, what="the Shell to select Inkling")
            except Timeout as error:
                self.stop()
                raise SessionStartTimeout(str(error))
        self.session_path = None
        self._own_screenshot_name()
        self._start_remote_desktop()

    def has_name(self, name):
        reply = self.bus.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                   "NameHasOwner", GLib.Variant("(s)", (name,)), None, 0, 5000, None)
        return reply.unpack()[0]

    def log(self):
        self.shell_log.flush()
        with open(os.path.join(self.logs, "gnome-shell.log")) as f:
            return f.read()

    def _own_screenshot_name(self):
        owned = []
        self.screenshot_owner = Gio.bus_own_name_on_connection(
            self.bus, "org.gnome.Screenshot", Gio.BusNameOwnerFlags.NONE, lambda *a: owned.append(True), None)
        pump_until(lambda: bool(owned), timeout=30, what="the name org.gnome.Screenshot")

    def _start_remote_desktop(self):
        reply = self.bus.call_sync("org.gnome.Mutter.RemoteDesktop", "/org/gnome/Mutter/RemoteDesktop",
                                   "org.gnome.Mutter.RemoteDesktop", "CreateSession", None, GLib.VariantType("(o)"),
                                   0, 30000, None)
        self.session_path = reply.unpack()[0]
        self._session_call("Start", None)
        # The first key of a session can be lost; a Shift wakes the virtual keyboard up. Then
        # Escape leaves the overview the Shell starts in, again until the Shell says it has.
        self.key("Shift_L")
        for attempt in range(10):
            self.key("Escape")
            try:
                pump_until(lambda: not self.overview_active(), timeout=3, what="the overview to close")
                break
            except Timeout:
                continue

    def overview_active(self):
        """Whether the Shell shows its overview (org.gnome.Shell's OverviewActive)."""
        reply = self.bus.call_sync("org.gnome.Shell", "/org/gnome/Shell", "org.freedesktop.DBus.Properties", "Get",
                                   GLib.Variant("(ss)", ("org.gnome.Shell", "OverviewActive")),
                                   GLib.VariantType("(v)"), 0, 5000, None)
        return bool(reply.unpack()[0])

    def engine_mark(self):
        """A place in the engine's event log: `engine_events(mark)` returns what came after it."""
        try:
            return os.path.getsize(self.engine_log)
        except OSError:
            return 0

    def engine_events(self, mark):
        """The engine's traced events (names and numbers, never text) since `mark`."""
        try:
            with open(self.engine_log, "rb") as f:
                f.seek(mark)
                data = f.read().decode("utf-8", "replace")
        except OSError:
            return []
        return [line.split(" ", 3)[3] for line in data.splitlines() if " event engine=" in line
                and len(line.split(" ", 3)) == 4]

    def _session_call(self, method, parameters):
        self.bus.call_sync("org.gnome.Mutter.RemoteDesktop", self.session_path,
                           "org.gnome.Mutter.RemoteDesktop.Session", method, parameters, None, 0, 30000, None)

    def keysym(self, keysym, pressed):
        self._session_call("NotifyKeyboardKeysym", GLib.Variant("(ub)", (keysym, pressed)))

    def key(self, *names, delay=30):
        """Presses keys by name; `ctrl+alt+Return` holds modifiers."""
        for name in names:
            parts = name.split("+")
            modifiers = [{"ctrl": "Control_L", "alt": "Alt_L", "shift": "Shift_L"}[m] for m in parts[:-1]]
            last = parts[-1]
            code = KEYSYMS.get(last) or keysym_of(last)
            for m in modifiers:
                self.keysym(KEYSYMS[m], True)
            self.keysym(code, True)
            self.keysym(code, False)
            for m in reversed(modifiers):
                self.keysym(KEYSYMS[m], False)
            time.sleep(delay / 1000)

    def type(self, text, delay=30):
        """Types text one keysym at a time (mutter presses Shift itself where the keymap needs it)."""
        for character in text:
            code = keysym_of(character)
            self.keysym(code, True)
            self.keysym(code, False)
            time.sleep(delay / 1000)

    def screenshot(self, path):
        """Writes a PNG of the whole (virtual) screen to `path`."""
        reply = self.bus.call_sync("org.gnome.Shell.Screenshot", "/org/gnome/Shell/Screenshot",
                                   "org.gnome.Shell.Screenshot", "Screenshot",
                                   GLib.Variant("(bbs)", (False, False, path)), GLib.VariantType("(bs)"),
                                   0, 30000, None)
        ok, written = reply.unpack()
        if not ok:
            raise RuntimeError("the Shell did not take a screenshot")
        return written

    def stop(self):
        if self.session_path is not None:
            try:
                self._session_call("Stop", None)
            except GLib.Error:
                pass
            self.session_path = None
        if self.shell.poll() is None:
            os.killpg(self.shell.pid, 15)
            try:
                self.shell.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.shell.pid, 9)
                self.shell.wait()
        if self.ibus is not None and self.ibus.poll() is None:
            os.killpg(self.ibus.pid, 15)
            try:
                self.ibus.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.ibus.pid, 9)
                self.ibus.wait()
        self.ibus_log.close()
        # Anything else started in the session (the engine, helpers) left in its own group.
        for pid, argv in self._strays():
            try:
                os.kill(pid, 15)
            except ProcessLookupError:
                pass
        self.system_bus.terminate()
        self.system_bus.wait()
        self.shell_log.close()
        shutil.rmtree(self.root, ignore_errors=True)

    def _strays(self):
        """Processes still running with this session's private runtime dir in their environment."""
        marker = ("XDG_RUNTIME_DIR=" + self.runtime).encode()
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                with open("/proc/%s/environ" % entry, "rb") as f:
                    if marker in f.read().split(b"\0"):
                        with open("/proc/%s/cmdline" % entry, "rb") as c:
                            found.append((int(entry), c.read().split(b"\0")))
            except OSError:
                continue
        return found
