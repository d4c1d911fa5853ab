"""Real applications under Xvfb for the desktop tests: LibreOffice Writer, Firefox, Chromium.

Each `App` starts the application on the display in `env` (whose GTK_IM_MODULE decides whether
keys go through the private IBus or not), waits for its window, focuses the field under test and
reads back what the application holds:

- Firefox and Chromium load page.html from a server on 127.0.0.1 (`PageServer`); the page posts
  every field's value to the server on each change, and takes commands (focus, clear) from it.
- LibreOffice Writer is read and cleared through UNO (python3-uno) on a local socket.

Nothing waits for a fixed time: `pump_until` polls a condition with a generous timeout.
"""

import http.server
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))

from ibus_harness import Timeout, pump_until  # noqa: E402  (sys.path set by the driver)
from process_support import stop_process  # noqa: E402

PAGE_TITLE = "inkling-desktop-page"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def xdotool(env, *args):
    result = subprocess.run(["xdotool"] + list(args), env=env, check=True, timeout=60, capture_output=True, text=True)
    return result.stdout


def find_window(env, name_regex, timeout=90):
    """The X window id of a visible window whose title matches, once it exists."""
    found = []

    def look():
        result = subprocess.run(
            ["xdotool", "search", "--onlyvisible", "--name", name_regex],
            env=env, capture_output=True, text=True, timeout=30,
        )
        ids = result.stdout.split()
        if ids:
            found.append(ids[-1])
        return bool(ids)

    pump_until(look, timeout=timeout, what="a window named %s" % name_regex)
    return found[0]


class PageServer:
    """Serves page.html and collects the values the page reports."""

    def __init__(self):
        self.values = {}
        self.focused = None
        self.sequence = 0
        self.commands = []
        self.lock = threading.Lock()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, body, kind):
                data = body.encode()
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Cache-Control", "no-store")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if self.path.startswith("/command"):
                    deadline = time.monotonic() + 2
                    while time.monotonic() < deadline:
                        with server.lock:
                            if server.commands:
                                self._send(json.dumps(server.commands.pop(0)), "application/json")
                                return
                        time.sleep(0.02)
                    self._send("{}", "application/json")
                    return
                with open(os.path.join(HERE, "page.html")) as f:
                    self._send(f.read(), "text/html; charset=utf-8")

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                report = json.loads(self.rfile.read(length) or b"{}")
                with server.lock:
                    if report.get("sequence", 0) >= server.sequence:
                        server.sequence = report.get("sequence", 0)
                        server.values = report.get("values", {})
                        server.focused = report.get("focused")
                self._send("{}", "application/json")

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d/page.html" % self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def command(self, **command):
        with self.lock:
            self.commands.append(command)

    def stop(self):
        self.httpd.shutdown()


# A quiet Firefox profile: no first-run pages, telemetry, session restore or password saving.
FIREFOX_PREFS = [
    ("browser.shell.checkDefaultBrowser", "false"),
    ("browser.startup.homepage_override.mstone", '"ignore"'),
    ("browser.aboutwelcome.enabled", "false"),
    ("datareporting.policy.dataSubmissionEnabled", "false"),
    ("toolkit.telemetry.reportingpolicy.firstRun", "false"),
    ("browser.tabs.warnOnClose", "false"),
    ("browser.sessionstore.resume_from_crash", "false"),
    ("signon.rememberSignons", "false"),
    ("app.update.enabled", "false"),
]


class Browser:
    """Firefox ESR or Chromium showing page.html."""

    def __init__(self, kind, env, log_path):
        self.kind = kind
        self.env = env
        self.server = PageServer()
        self.profile = tempfile.mkdtemp(prefix="inkling-desktop-%s-" % kind)
        self.log = open(log_path, "w")
        if kind == "firefox":
            with open(os.path.join(self.profile, "user.js"), "w") as f:
                for pref, value in FIREFOX_PREFS:
                    f.write("user_pref(%s, %s);\n" % (json.dumps(pref), value))
            command = ["firefox-esr", "--no-remote", "--new-instance", "--profile", self.profile, self.server.url]
            env = dict(env, MOZ_ENABLE_WAYLAND="0", MOZ_CRASHREPORTER_DISABLE="1")
        else:
            command = [
                "chromium", "--gtk-version=3", "--password-store=basic", "--user-data-dir=" + self.profile,
                "--no-first-run", "--no-default-browser-check", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-features=Translate", "--ozone-platform=x11", self.server.url,
            ]
            if os.geteuid() == 0:
                command.insert(1, "--no-sandbox")
        self.process = subprocess.Popen(command, env=env, stdout=self.log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        # The page reports once loaded, focused or not; then its window carries its title.
        pump_until(lambda: self.server.sequence > 0 or self.process.poll() is not None, timeout=180,
                   what="the page to load")
        if self.process.poll() is not None:
            raise RuntimeError("%s exited" % kind)
        # The window title follows the page's only once painted; the browser's name will do.
        self.window = find_window(self.env, PAGE_TITLE + "|Mozilla Firefox|Chromium", timeout=60)
        xdotool(self.env, "windowfocus", "--sync", self.window)
        pump_until(lambda: self.server.focused == "main", timeout=60, what="the page's main field to have focus")

    def clear(self):
        self.server.command(clear=True, focus="main")
        pump_until(lambda: self.server.values.get("main") == "" and self.server.focused == "main",
                   what="a cleared page")

    def focus(self, field):
        self.server.command(focus=field)
        pump_until(lambda: self.server.focused == field, what="focus on %s" % field)

    def value(self, field="main"):
        return self.server.values.get(field)

    def wait_for(self, field, expected, what, timeout=20):
        """Waits until the field holds `expected` (or times out) and returns what it holds."""
        try:
            pump_until(lambda: self.server.values.get(field) == expected, timeout=timeout, what=what)
        except Timeout:
            pass
        return self.server.values.get(field)

    def settle(self, field="main", quiet=1.5, timeout=30):
        """Waits until the field's value stops changing for `quiet` seconds; returns it."""
        return settle(lambda: self.server.values.get(field), quiet, timeout)

    def stop(self):
        stop_process(self.process, group=True)
        self.server.stop()
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)


def settle(read, quiet, timeout):
    last = [read(), time.monotonic()]

    def quiet_enough():
        value = read()
        if value != last[0]:
            last[0], last[1] = value, time.monotonic()
        return time.monotonic() - last[1] >= quiet

    try:
        pump_until(quiet_enough, timeout=timeout, what="the text to settle")
    except Timeout:
        pass
    return last[0]


# Writer's own AutoCorrect while typing (capitals, quotes, dashes) and word completion (which
# takes Return) would change the typed text: off, so that the text typed is the text expected.
WRITER_SETTINGS = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema"
           xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Writer/AutoFunction/Format/ByInput">
  <prop oor:name="Enable" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Writer/AutoFunction/Completion">
  <prop oor:name="Enable" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc">
  <prop oor:name="ShowTipOfTheDay" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc">
  <prop oor:name="FirstRun" oor:op="fuse"><value>false</value></prop></item>
</oor:items>
"""


class Writer:
    """LibreOffice Writer (gtk3 VCL plugin) with a new document, read through UNO."""

    def __init__(self, env, log_path):
        self.env = env
        self.profile = tempfile.mkdtemp(prefix="inkling-desktop-lo-")
        self.port = free_port()
        self.log = open(log_path, "w")
        os.makedirs(os.path.join(self.profile, "user"))
        with open(os.path.join(self.profile, "user", "registrymodifications.xcu"), "w") as f:
            f.write(WRITER_SETTINGS)
        env = dict(env, SAL_USE_VCLPLUGIN="gtk3")
        self.process = subprocess.Popen(
            [
                "soffice", "--writer", "--norestore", "--nologo", "--nofirststartwizard", "--nolockcheck",
                "-env:UserInstallation=file://" + self.profile,
                "--accept=socket,host=127.0.0.1,port=%d;urp;" % self.port,
            ],
            env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        import uno  # python3-uno, for /usr/bin/python3

        self.uno = uno
        local = uno.getComponentContext()
        resolver = local.ServiceManager.createInstanceWithContext("com.sun.star.bridge.UnoUrlResolver", local)
        box = []

        def connect():
            try:
                url = "uno:socket,host=127.0.0.1,port=%d;urp;StarOffice.ComponentContext" % self.port
                box.append(resolver.resolve(url))
                return True
            except Exception:
                if self.process.poll() is not None:
                    raise RuntimeError("soffice exited")
                return False

        pump_until(connect, timeout=120, what="LibreOffice's UNO socket")
        context = box[0]
        self.desktop = context.ServiceManager.createInstanceWithContext("com.sun.star.frame.Desktop", context)
        self.document = None

        def document():
            component = self.desktop.getCurrentComponent()
            if component is not None and component.supportsService("com.sun.star.text.TextDocument"):
                self.document = component
            return self.document is not None

        pump_until(document, timeout=120, what="a Writer document")
        self.window = find_window(self.env, "LibreOffice Writer", timeout=120)
        xdotool(self.env, "windowfocus", "--sync", self.window)

    def text(self):
        return self.document.getText().getString()

    def clear(self):
        self.document.getText().setString("")
        cursor = self.document.getCurrentController().getViewCursor()
        cursor.gotoEnd(False)
        pump_until(lambda: self.text() == "", what="an empty document")

    def wait_for(self, field, expected, what, timeout=20):
        try:
            pump_until(lambda: self.text() == expected, timeout=timeout, what=what)
        except Timeout:
            pass
        return self.text()

    def settle(self, field="main", quiet=1.5, timeout=30):
        return settle(self.text, quiet, timeout)

    def stop(self):
        try:
            self.document.setModified(False)
            self.desktop.terminate()
        except Exception:
            pass
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            pass
        stop_process(self.process, group=True)
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)


# KWrite's editing aids would change the typed text (word completion takes Return, brackets
# close themselves, trailing spaces go on save): off, so that the typed text is the text expected.
KWRITE_SETTINGS = """[KTextEditor Document]
Remove Spaces=0
Newline at End of File=false

[KTextEditor View]
Auto Completion=false
Auto Brackets=false
Word Completion=false
Keyword Completion=false

[General]
Show welcome view for new window=false
"""


class KWrite:
    """KDE's KWrite (Qt 5, KTextEditor) on a file, read back by saving it over D-Bus."""

    def __init__(self, env, log_path):
        self.root = tempfile.mkdtemp(prefix="inkling-desktop-kwrite-")
        config = os.path.join(self.root, "config")
        os.makedirs(config)
        for name in ("katerc", "kwriterc"):
            with open(os.path.join(config, name), "w") as f:
                f.write(KWRITE_SETTINGS)
        # Qt's IBus plugin finds the daemon through the address file under XDG_CONFIG_HOME.
        if env.get("XDG_CONFIG_HOME") and os.path.isdir(os.path.join(env["XDG_CONFIG_HOME"], "ibus")):
            os.symlink(os.path.join(env["XDG_CONFIG_HOME"], "ibus"), os.path.join(config, "ibus"))
        self.path = os.path.join(self.root, "text.txt")
        open(self.path, "w").close()
        self.env = dict(env, XDG_CONFIG_HOME=config, QT_QPA_PLATFORM="xcb")
        self.log = open(log_path, "w")
        self.process = subprocess.Popen(
            ["kwrite", self.path], env=self.env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        self.name = None

        def registered():
            result = subprocess.run(
                ["gdbus", "call", "--session", "--dest", "org.freedesktop.DBus",
                 "--object-path", "/org/freedesktop/DBus", "--method", "org.freedesktop.DBus.ListNames"],
                capture_output=True, text=True, timeout=30, env=self.env)
            names = [n.strip(" '[]()") for n in result.stdout.split(",") if "kwrite" in n]
            if names:
                self.name = names[0]
            if self.process.poll() is not None:
                raise RuntimeError("kwrite exited")
            return self.name is not None

        pump_until(registered, timeout=120, what="KWrite on the session bus")
        self.window = find_window(self.env, "text.txt", timeout=120)
        xdotool(self.env, "windowfocus", "--sync", self.window)

    def action(self, name):
        subprocess.run(["gdbus", "call", "--session", "--dest", self.name, "--object-path", "/kwrite/MainWindow_1",
                        "--method", "org.kde.KMainWindow.activateAction", name],
                       check=True, capture_output=True, timeout=30, env=self.env)

    def text(self):
        """Saves the document (an action over D-Bus: no key goes through the input method) and
        reads the file."""
        time.sleep(0.3)
        self.action("file_save_all")
        with open(self.path, encoding="utf-8") as f:
            return f.read()

    def set(self, text):
        self.action("file_save_all")
        with open(self.path, "w", encoding="utf-8") as f:
            f.write(text)
        self.action("file_reload_all")
        pump_until(lambda: self.text() == text, what="KWrite to reload its file")
        xdotool(self.env, "key", "ctrl+End")

    def clear(self):
        self.set("")

    def wait_for(self, field, expected, what, timeout=20):
        try:
            pump_until(lambda: self.text() == expected, timeout=timeout, what=what)
        except Timeout:
            pass
        return self.text()

    def settle(self, field="main", quiet=1.5, timeout=30):
        return settle(self.text, quiet, timeout)

    def stop(self):
        stop_process(self.process)
        self.log.close()
        shutil.rmtree(self.root, ignore_errors=True)
