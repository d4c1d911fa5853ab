"""The Preferences buttons open inkling-setup: GNOME Settings' and ibus-setup's, each read and run
the way that program does it, with the component registered in a real ibus-daemon (the engine's
own --xml, as installed), the app's window then seen on the accessibility bus. Run by
Tests/Setup/run.sh inside dbus-run-session.

What the two programs do (read in their sources):
- gnome-control-center (43, Debian 12, to today's main), panels/keyboard/cc-input-source-ibus.c
  and cc-input-list-box.c: the row's Preferences action takes the engine's name from IBus, opens
  `ibus-setup-<name up to ':'>.desktop` with GDesktopAppInfo and launches it through the
  display's GdkAppLaunchContext with IBUS_ENGINE_NAME=<engine name> in the environment. It never
  reads the component's <setup>: without that desktop file the button does nothing.
- ibus-setup (/usr/share/ibus/setup/main.py, __get_engine_setup_exec_args): the engine
  description's `setup`, split at spaces, run with os.spawnl(P_NOWAIT, program, basename, ...).

gnome-control-center itself is not driven here (it is not installed by install-deps.sh; see
the issue's report); the launcher below is its two calls, in Python through the same libraries.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Integration"))
from ibus_harness import Daemon  # noqa: E402
from test_setup_app import BIN, compile_schema, find, listed_app, showing, start_xvfb, wait_for  # noqa: E402

# Runs as its own process, as gnome-control-center and ibus-setup are: reads the engine through
# IBus and starts its settings program the way the named program does.
LAUNCHER = r'''
import os, sys
import gi
gi.require_version("IBus", "1.0")
from gi.repository import IBus
IBus.init()
bus = IBus.Bus.new()
if not bus.is_connected():
    sys.exit("launcher: no ibus-daemon at IBUS_ADDRESS")
# gnome-control-center lists the engines and keys them by name.
engines = {engine.get_name(): engine for engine in bus.list_engines()}
desc = engines.get("inkling")
if desc is None:
    sys.exit("launcher: ibus-daemon has no engine named inkling: %s" % sorted(engines))
if sys.argv[1] == "gnome-settings":
    gi.require_version("Gtk", "4.0")
    gi.require_version("Gdk", "4.0")
    from gi.repository import Gdk, Gio, Gtk
    Gtk.init()
    desktop_id = "ibus-setup-%s.desktop" % desc.get_name().split(":", 1)[0]
    try:
        info = Gio.DesktopAppInfo.new(desktop_id)  # PyGObject raises where C returns NULL
    except TypeError:
        info = None
    if info is None:
        sys.exit("launcher: no %s in XDG_DATA_DIRS: the Preferences button would do nothing" % desktop_id)
    context = Gdk.Display.get_default().get_app_launch_context()
    context.set_timestamp(Gdk.CURRENT_TIME)
    context.setenv("IBUS_ENGINE_NAME", desc.get_name())
    info.launch([], context)
    print(info.get_commandline())
else:
    setup = desc.get_setup()
    if not setup:
        sys.exit("launcher: the engine description has no setup")
    args = setup.split()
    args.insert(1, os.path.basename(args[0]))
    os.spawnl(os.P_NOWAIT, *args)
    print(setup)
'''


class Desk:
    pass


@pytest.fixture(scope="module")
def desk():
    d = Desk()
    d.root = tempfile.mkdtemp(prefix="inkling-preferences-test-")
    schemas = os.path.join(d.root, "schemas")
    compile_schema(schemas)
    # The desktop files where the .deb puts them (scripts/deb-build.sh: /usr/share/applications).
    applications = os.path.join(d.root, "share", "applications")
    os.makedirs(applications)
    for name in os.listdir(os.path.join(ROOT, "data", "desktop")):
        shutil.copy(os.path.join(ROOT, "data", "desktop", name), applications)
    d.daemon = Daemon(env={"GSETTINGS_SCHEMA_DIR": schemas, "GSETTINGS_BACKEND": "keyfile"}, global_engine=None,
                      verbose=True)
    d.daemon.start()
    d.xvfb, display = start_xvfb()
    d.env = dict(d.daemon.env)
    # As installed: inkling-setup on PATH (the desktop file's Exec), the desktop files in XDG_DATA_DIRS.
    d.env.update({"DISPLAY": display, "GDK_BACKEND": "x11", "GSK_RENDERER": "cairo", "NO_AT_BRIDGE": "0",
                  "GTK_A11Y": "atspi", "LANGUAGE": "en", "LC_ALL": "C.UTF-8",
                  "PATH": BIN + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin"),
                  "XDG_DATA_DIRS": os.path.join(d.root, "share") + os.pathsep + "/usr/local/share:/usr/share"})
    yield d
    d.daemon.stop()
    d.xvfb.terminate()
    d.xvfb.wait()
    shutil.rmtree(d.root, ignore_errors=True)


def press_preferences(d, how):
    """Runs the launcher; returns what it started. Its output goes to files, not pipes: the app
    inherits them and lives on after the launcher exits."""
    wait_for(lambda: not app_listed(), "no inkling-setup before the button is pressed")
    out, err = (os.path.join(d.root, how + suffix) for suffix in (".out", ".err"))
    with open(out, "w") as stdout, open(err, "w") as stderr:
        status = subprocess.run(["/usr/bin/python3", "-c", LAUNCHER, how], env=d.env, stdout=stdout, stderr=stderr,
                                timeout=60).returncode
    with open(out) as stdout, open(err) as stderr:
        started, problem = stdout.read().strip(), stderr.read()
    assert status == 0, problem
    return started


def app_listed():
    return listed_app("inkling-setup") is not None


def running_setup_processes():
    """Process ids of every live inkling-setup of this build (for a failure's message)."""
    target = os.path.realpath(os.path.join(BIN, "inkling-setup"))
    found = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and os.path.realpath("/proc/%s/exe" % entry) == target:
                found.append(int(entry))
        except OSError:
            pass
    return found


def window_of_the_app(d, how):
    """The app's window, shown, with its first page drawn; and the app's process id. A loaded
    machine can take many seconds to start a GTK app: one deadline for all of it, and a failure
    says whether the app runs and what it printed (it inherits the launcher's output files)."""
    def shown():
        app = listed_app("inkling-setup")
        frame = app and find(app, "Inkling Preferences", "frame")
        if frame is None or not showing(frame) or find(app, "Suggestions per page", "spin button") is None:
            return None
        return app, frame

    try:
        app, frame = wait_for(shown, "the Inkling Preferences window", timeout=60)
    except AssertionError:
        with open(os.path.join(d.root, how + ".err")) as err:
            printed = err.read()[-2000:]
        raise AssertionError("no Inkling Preferences window within 60 s; inkling-setup processes: %r; listed on "
                             "the accessibility bus: %s; it printed: %r" % (running_setup_processes(),
                                                                            app_listed(), printed))
    return frame, app.get_process_id()


def close_app(pid):
    """Ends the app this test started (by its pid) and waits for it to go, so the next launch is
    a new process (GApplication is single-instance on the session bus)."""
    os.kill(pid, signal.SIGTERM)

    def gone():
        try:
            with open("/proc/%d/stat" % pid) as f:
                return f.read().split(")")[-1].split()[0] == "Z"
        except FileNotFoundError:
            return True

    wait_for(gone, "inkling-setup to exit")
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def environment_of(pid):
    with open("/proc/%d/environ" % pid, "rb") as f:
        return dict(item.split(b"=", 1) for item in f.read().split(b"\0") if b"=" in item)


def test_gnome_settings_preferences_button_opens_the_app(desk):
    command = press_preferences(desk, "gnome-settings")
    assert command.split()[0] == "inkling-setup", command
    frame, pid = window_of_the_app(desk, "gnome-settings")
    try:
        # The process is the one the desktop file names, started with GNOME Settings' environment.
        assert os.path.realpath("/proc/%d/exe" % pid) == os.path.realpath(os.path.join(BIN, "inkling-setup"))
        assert environment_of(pid).get(b"IBUS_ENGINE_NAME") == b"inkling"
        assert frame.name == "Inkling Preferences"
    finally:
        close_app(pid)


def test_ibus_setup_preferences_button_opens_the_app(desk):
    setup = press_preferences(desk, "ibus-setup")
    assert os.path.realpath(setup) == os.path.realpath(os.path.join(BIN, "inkling-setup")), setup
    frame, pid = window_of_the_app(desk, "ibus-setup")
    try:
        assert os.path.realpath("/proc/%d/exe" % pid) == os.path.realpath(setup)
    finally:
        close_app(pid)


def test_the_gnome_settings_launcher_is_hidden_and_runs_the_app():
    """The launcher GNOME Settings opens is not a second entry in the app grid, and runs the same
    program as the component's <setup> and the shown launcher."""
    def entry(name):
        with open(os.path.join(ROOT, "data", "desktop", name)) as f:
            return dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)

    hidden = entry("ibus-setup-inkling.desktop")
    shown = entry("org.freedesktop.ibus.engine.inkling.Setup.desktop")
    assert hidden["NoDisplay"] == "true"
    assert hidden["Exec"] == shown["Exec"] == "inkling-setup"
    assert hidden["Icon"] == shown["Icon"]
