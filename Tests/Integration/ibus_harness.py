"""A private headless IBus for tests and benchmarks, and a recording client.

Follows the recipe in shared/DESIGN.md: private XDG dirs, GSETTINGS_BACKEND=memory, a component
folder whose XML names the engine by absolute path, a unix socket address, and ibus-daemon with
--panel=disable --emoji-extension=disable --config=disable --cache=none as a child process.

Nothing here sleeps for a fixed time: `pump_until` iterates the GLib main context until a
condition holds, with a generous timeout so that a loaded machine does not flake.

Run under /usr/bin/python3 (Debian's python3-gi and gir1.2-ibus-1.0).
"""

import contextlib
import os
import shutil
import socket
import signal
import subprocess
import tempfile
import time

import gi

gi.require_version("IBus", "1.0")
from gi.repository import GLib, IBus  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_TIMEOUT = float(os.environ.get("INKLING_TEST_TIMEOUT", "10"))

ALL_CAPS = (
    IBus.Capabilite.PREEDIT_TEXT
    | IBus.Capabilite.AUXILIARY_TEXT
    | IBus.Capabilite.LOOKUP_TABLE
    | IBus.Capabilite.FOCUS
    | IBus.Capabilite.SURROUNDING_TEXT
)

RELEASE = int(IBus.ModifierType.RELEASE_MASK)
SHIFT = int(IBus.ModifierType.SHIFT_MASK)
CONTROL = int(IBus.ModifierType.CONTROL_MASK)


def engine_path():
    """The engine binary under test: $INKLING_ENGINE, else the release build in this checkout."""
    path = os.environ.get("INKLING_ENGINE") or os.path.join(REPO, ".build", "release", "ibus-engine-inkling")
    return os.path.realpath(path)


def helper_binary(name):
    """The helper `name` built beside the engine under test; raises when it is not there (a suite
    that cannot run fails, it is never skipped)."""
    path = os.path.join(os.path.dirname(engine_path()), name)
    if not os.access(path, os.X_OK):
        raise RuntimeError("no %s next to the engine at %s: build it (swift build -c release --static-swift-stdlib)"
                           % (name, path))
    return path


def cli_path():
    """The `inkling` CLI built beside the engine."""
    return os.path.join(os.path.dirname(engine_path()), "inkling")


def descendants(root_pid):
    """{pid: (parent pid, argv)} of every live process below `root_pid`."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                stat = f.read()
            with open("/proc/%s/cmdline" % entry, "rb") as f:
                argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] == "Z":
            continue
        table[int(entry)] = (int(fields[1]), argv)
    result = {}
    frontier = [root_pid]
    while frontier:
        parent = frontier.pop()
        for pid, (ppid, argv) in table.items():
            if ppid == parent and pid not in result:
                result[pid] = (ppid, argv)
                frontier.append(pid)
    return result


class Timeout(AssertionError):
    pass


def pump_until(condition, timeout=DEFAULT_TIMEOUT, what="condition"):
    """Iterates the default GLib main context until `condition()` is true."""
    context = GLib.MainContext.default()
    if condition():
        return
    # A ticker guarantees that a blocking iteration wakes up to re-check the condition.
    ticker = GLib.timeout_add(5, lambda: True)
    try:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise Timeout("timed out after %.1f s waiting for %s" % (timeout, what))
            context.iteration(True)
    finally:
        GLib.source_remove(ticker)


def pump_for(seconds):
    """Runs the default main context for `seconds`: only where the point is that nothing arrives,
    or as the interval of a loop that re-checks a condition with a deadline."""
    end = time.monotonic() + seconds
    pump_until(lambda: time.monotonic() >= end, timeout=seconds + 5, what="time to pass")


def drain():
    """Dispatches everything already pending on the default main context."""
    context = GLib.MainContext.default()
    while context.pending():
        context.iteration(False)


def shown_page(table):
    """The candidates a panel shows of `table`: the cursor's page. Inkling sends text only for
    that page (empty placeholders keep its place and stand for later pages)."""
    size = max(1, table.get_page_size())
    count = table.get_number_of_candidates()
    start = table.get_cursor_pos() // size * size
    return [table.get_candidate(i).get_text() for i in range(start, min(start + size, count))]


def component_xml(engine):
    return subprocess.run([engine, "--xml"], check=True, capture_output=True, text=True).stdout


class Daemon:
    """A private ibus-daemon; `components` maps file names to component XML."""

    def __init__(self, components=None, engine=None, env=None, global_engine="inkling", verbose=False):
        self.engine = engine or engine_path()
        if components is None:
            components = {"inkling.xml": component_xml(self.engine)}
        self.root = tempfile.mkdtemp(prefix="inkling-ibus-")
        for sub in ("config", "cache", "runtime", "components", "data"):
            os.makedirs(os.path.join(self.root, sub), mode=0o700)
        for name, xml in components.items():
            with open(os.path.join(self.root, "components", name), "w") as out:
                out.write(xml)
        self.socket = os.path.join(self.root, "ibus.sock")
        self.address = "unix:path=" + self.socket
        self.env = dict(os.environ)
        self.env.update(
            {
                "XDG_CONFIG_HOME": os.path.join(self.root, "config"),
                "XDG_CACHE_HOME": os.path.join(self.root, "cache"),
                "XDG_RUNTIME_DIR": os.path.join(self.root, "runtime"),
                "XDG_DATA_HOME": os.path.join(self.root, "data"),
                "GSETTINGS_BACKEND": "memory",
                "IBUS_COMPONENT_PATH": os.path.join(self.root, "components"),
                "IBUS_ADDRESS": self.address,
            }
        )
        if env:
            self.env.update(env)
        self.global_engine = global_engine
        # Without --verbose the daemon sends its engines' stderr to /dev/null.
        self.verbose = verbose
        self.stderr_path = os.path.join(self.root, "daemon.log")
        self.process = None
        self.bus = None

    def start(self):
        if os.path.exists(self.socket):
            os.unlink(self.socket)
        self.stderr = open(self.stderr_path, "w")
        self.process = subprocess.Popen(
            [
                "ibus-daemon",
                "--panel=disable",
                "--emoji-extension=disable",
                "--config=disable",
                "--cache=none",
                "--address=" + self.address,
            ]
            + (["--verbose"] if self.verbose else []),
            env=self.env,
            stdout=self.stderr,
            stderr=subprocess.STDOUT,
        )
        pump_until(
            lambda: os.path.exists(self.socket) or self.process.poll() is not None,
            what="the ibus-daemon socket",
        )
        if self.process.poll() is not None:
            raise RuntimeError("ibus-daemon exited: " + self.log())
        # The socket file exists from bind() on, before the daemon listens: a connection made in
        # between is refused (5 % of starts on a loaded two-core machine), and libibus's bus, one
        # per process, never tries the IBUS_ADDRESS again. Connect only once the daemon listens.
        pump_until(lambda: self.accepts_connections() or self.process.poll() is not None,
                   what="ibus-daemon to listen")
        if self.process.poll() is not None:
            raise RuntimeError("ibus-daemon exited: " + self.log())
        # The client library reads IBUS_ADDRESS from the environment.
        os.environ["IBUS_ADDRESS"] = self.address
        IBus.init()
        self.bus = IBus.Bus.new()
        pump_until(self.bus.is_connected, what="a connection to ibus-daemon")
        if self.global_engine:
            # New input contexts get this engine on focus-in, as on a desktop.
            if not self.bus.set_global_engine(self.global_engine):
                raise RuntimeError("cannot set the global engine %s: %s" % (self.global_engine, self.log()))
        return self

    def accepts_connections(self):
        """Whether the daemon's socket takes a connection (it listens, not only exists)."""
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(self.socket)
            return True
        except OSError:
            return False
        finally:
            probe.close()

    def log(self):
        try:
            with open(self.stderr_path) as f:
                return f.read()
        except OSError:
            return ""

    def children(self):
        """Pids of the engines the daemon spawned: its descendants, without the supervisors
        (`ibus-engine-inkling --supervise`, the component process) that run them."""
        return [pid for pid, (_, argv) in descendants(self.process.pid).items() if "--supervise" not in argv]

    def engine_pid(self, executable=None):
        """The pid of the running engine process (`executable`: default the Inkling engine)."""
        executable = os.path.realpath(executable or self.engine)
        for pid in self.children():
            # The command line first: /proc/PID/exe of a hardened (not dumpable) engine can be
            # read only by root, its cmdline by everyone.
            try:
                with open("/proc/%d/cmdline" % pid, "rb") as f:
                    argv = f.read().split(b"\0")
                if any(os.path.basename(executable).encode() in a for a in argv[:2]):
                    return pid
                if os.path.realpath("/proc/%d/exe" % pid) == executable:
                    return pid
            except OSError:
                continue
        return None

    def helpers(self, program=None):
        """Pids of the helper processes the engine started (its live children); `program`: only
        those whose command line names it (argv[0] of an exec'd helper, or a wrapper script)."""
        engine = self.engine_pid()
        if engine is None:
            return []
        return [pid for pid, (parent, argv) in descendants(engine).items()
                if parent == engine and (program is None or any(os.path.basename(a) == program for a in argv[:2]))]

    def stop(self):
        if self.bus is not None:
            try:
                self.bus.exit(False)
            except GLib.Error:
                pass
            self.bus = None
        if self.process is not None and self.process.poll() is None:
            engines = self.children()
            self.process.terminate()
            try:
                self.process.wait(timeout=DEFAULT_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            for pid in engines:
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        if getattr(self, "stderr", None):
            self.stderr.close()
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def executable_script(folder, name, text):
    """Writes `text` to an executable file `name` in `folder` (a wrapper that the engine starts
    in place of a helper); returns its path."""
    path = os.path.join(str(folder), name)
    with open(path, "w") as out:
        out.write(text)
    os.chmod(path, 0o755)
    return path


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS for %d" % pid)


def describe_properties(props):
    """An IBusPropList as plain data: {key: {label, symbol, state, type, items: {key: {...}}}}."""
    result = {}
    index = 0
    while props is not None:
        prop = props.get(index)
        if prop is None:
            break
        symbol = prop.get_symbol()
        result[prop.get_key()] = {
            "label": prop.get_label().get_text() if prop.get_label() else "",
            "symbol": symbol.get_text() if symbol else "",
            "state": int(prop.get_state()),
            "type": int(prop.get_prop_type()),
            "items": describe_properties(prop.get_sub_props()),
        }
        index += 1
    return result


class Client:
    """An IBus input context that behaves like a small text field and records what it receives.

    `text` is the field's committed text (the cursor is at its end); keys the engine does not
    handle are typed into it the way an application would. With `client_commit=True` the client
    behaves like GTK: it commits a visible commit-mode preedit itself on focus-out and reset.
    With `echo_surrounding=True` it reports its text after every change once the engine asked.
    """

    def __init__(self, daemon, caps=ALL_CAPS, client_commit=False, echo_surrounding=True, name="inkling-test"):
        self.daemon = daemon
        self.ic = daemon.bus.create_input_context(name)
        assert self.ic is not None, "create_input_context failed"
        self.client_commit = client_commit
        self.echo_surrounding = echo_surrounding
        self.text = ""
        self.commits = []
        self.preedit = ("", 0, False)
        self.preedit_mode = IBus.PreeditFocusMode.CLEAR
        self.preedit_updates = []
        self.tables = []  # every update-lookup-table: the candidates of the page shown (shown_page)
        self.sent_tables = []  # the same, every candidate as sent (placeholders included)
        self.table_visible = False
        self.aux = []
        self.deletes = []
        self.events = []
        self.handled = []
        self._handlers = []
        self.ic.set_client_commit_preedit(client_commit)
        self._connect("commit-text", self._on_commit)
        self._connect("update-preedit-text-with-mode", self._on_preedit_mode)
        self._connect("update-preedit-text", self._on_preedit)
        self._connect("show-preedit-text", lambda ic: self._set_preedit_visible(True))
        self._connect("hide-preedit-text", lambda ic: self._set_preedit_visible(False))
        self._connect("update-lookup-table", self._on_table)
        self._connect("show-lookup-table", lambda ic: self._set_table_visible(True))
        self._connect("hide-lookup-table", lambda ic: self._set_table_visible(False))
        self._connect("update-auxiliary-text", lambda ic, t, v: self.aux.append((t.get_text(), v)))
        self._connect("delete-surrounding-text", self._on_delete)
        # Every register-properties (sent to the client only with the PROPERTY capability).
        self.menus = []
        self._connect("register-properties", self._on_properties)
        self.ic.set_capabilities(int(caps))

    def _connect(self, name, handler):
        try:
            self._handlers.append(self.ic.connect(name, handler))
        except TypeError:
            pass  # signal missing in this libibus

    # -- signals in --

    def _on_properties(self, ic, props):
        self.menus.append(describe_properties(props))

    def _on_commit(self, ic, text):
        value = text.get_text()
        self.commits.append(value)
        self.events.append(("commit", value))
        self.text += value
        self._echo()

    def _on_preedit_mode(self, ic, text, cursor, visible, mode):
        self.preedit_mode = mode
        self._record_preedit(text, cursor, visible)

    def _on_preedit(self, ic, text, cursor, visible):
        # Also emitted alongside -with-mode by some libibus versions; record once per change.
        if self.preedit_updates and self.preedit_updates[-1] == (text.get_text(), cursor, visible):
            return
        self._record_preedit(text, cursor, visible)

    def _record_preedit(self, text, cursor, visible):
        value = (text.get_text(), cursor, bool(visible))
        attrs = []
        attr_list = text.get_attributes()
        if attr_list is not None:
            index = 0
            while True:
                attr = attr_list.get(index)
                if attr is None:
                    break
                attrs.append((attr.get_attr_type(), attr.get_value(), attr.get_start_index(), attr.get_end_index()))
                index += 1
        self.preedit = value
        self.preedit_attrs = attrs
        self.preedit_updates.append(value)
        self.events.append(("preedit",) + value)

    def _set_preedit_visible(self, visible):
        self.preedit = (self.preedit[0], self.preedit[1], visible)
        self.events.append(("preedit-visible", visible))

    def _on_table(self, ic, table, visible):
        candidates = shown_page(table)
        self.tables.append(candidates)
        self.sent_tables.append([table.get_candidate(i).get_text() for i in range(table.get_number_of_candidates())])
        self.table_visible = bool(visible)
        self.last_table = table
        self.events.append(("table", tuple(candidates), bool(visible)))

    def _set_table_visible(self, visible):
        self.table_visible = visible
        self.events.append(("table-visible", visible))

    def _on_delete(self, ic, offset, nchars):
        self.deletes.append((offset, nchars))
        self.events.append(("delete", offset, nchars))
        # The cursor is at the end of `text`; offsets count code points.
        end = len(self.text)
        start = max(0, end + offset)
        self.text = self.text[:start] + self.text[start + nchars:]
        self._echo()

    # -- actions --

    @property
    def shown(self):
        """What the field shows: its text plus a visible preedit."""
        return self.text + (self.preedit[0] if self.preedit[2] else "")

    def focus_in(self):
        self.ic.focus_in()
        drain()

    def focus_out(self):
        if self.client_commit:
            self._client_commit_preedit()
        self.ic.focus_out()
        drain()

    def reset(self):
        if self.client_commit:
            self._client_commit_preedit()
        self.ic.reset()
        drain()

    def _client_commit_preedit(self):
        text, _, visible = self.preedit
        if visible and text and self.preedit_mode == IBus.PreeditFocusMode.COMMIT:
            self.text += text
            self.events.append(("client-commit", text))
        self.preedit = ("", 0, False)

    def set_engine(self, name="inkling"):
        """Makes sure the context runs engine `name` (the daemon's global engine needs no request:
        asking again would replace the engine while keys are already on their way)."""
        if self.daemon.global_engine != name:
            self.ic.set_engine(name)

        def ready():
            desc = self.ic.get_engine()
            return desc is not None and desc.get_name() == name

        pump_until(ready, what="engine %s on the input context" % name)
        drain()

    def set_content_type(self, purpose, hints=0):
        self.ic.set_content_type(int(purpose), int(hints))
        drain()

    def wait_for_surrounding_request(self):
        pump_until(self.ic.needs_surrounding_text, what="the engine to request surrounding text")

    def set_surrounding(self, text, cursor=None, anchor=None):
        cursor = len(text) if cursor is None else cursor
        anchor = cursor if anchor is None else anchor
        self.ic.set_surrounding_text(IBus.Text.new_from_string(text), cursor, anchor)
        drain()

    def _echo(self):
        if self.echo_surrounding and self.ic.needs_surrounding_text():
            self.ic.set_surrounding_text(IBus.Text.new_from_string(self.text), len(self.text), len(self.text))

    def key(self, keyval, state=0, keycode=0, release=True):
        """Presses (and releases) a key; unhandled presses are applied to the text like an app would."""
        handled = bool(self.ic.process_key_event(keyval, keycode, state))
        drain()
        self.handled.append((keyval, state, handled))
        if not handled and not (state & RELEASE):
            self._apply_unhandled(keyval, state)
        if release and not (state & RELEASE):
            released = bool(self.ic.process_key_event(keyval, keycode, state | RELEASE))
            drain()
            self.handled.append((keyval, state | RELEASE, released))
        return handled

    def _apply_unhandled(self, keyval, state):
        if state & (CONTROL | int(IBus.ModifierType.MOD1_MASK)):
            return
        if keyval == IBus.KEY_BackSpace:
            self.text = self.text[:-1]
        elif keyval in (IBus.KEY_Return, IBus.KEY_KP_Enter):
            self.text += "\n"
        elif keyval == IBus.KEY_Tab:
            self.text += "\t"
        else:
            code = IBus.keyval_to_unicode(keyval)
            if code and code >= " " and code != "\x7f":
                self.text += code
            else:
                return
        self._echo()

    def type(self, text):
        for ch in text:
            if ch == " ":
                self.key(IBus.KEY_space)
            elif ch == "\n":
                self.key(IBus.KEY_Return)
            else:
                keyval = IBus.unicode_to_keyval(ch)
                self.key(keyval, SHIFT if ch.isupper() else 0)

    def wait_for_table(self, predicate=lambda candidates: bool(candidates), what="a lookup table"):
        pump_until(lambda: self.table_visible and self.tables and predicate(self.tables[-1]), what=what)
        return self.tables[-1]

    def destroy(self):
        for handler in self._handlers:
            self.ic.disconnect(handler)
        self._handlers = []
        self.ic.destroy()
        drain()


class AuxClient(Client):
    """A client that also follows the auxiliary text: `aux_now` is what the user sees (the text
    while it is shown, else ""), `aux_history` each value it took."""

    def __init__(self, daemon, **kw):
        super().__init__(daemon, **kw)
        self.aux_text = ""
        self.aux_visible = False
        self.aux_history = []
        self._connect("update-auxiliary-text", self._on_aux)
        self._connect("show-auxiliary-text", lambda ic: self._aux_shown(True))
        self._connect("hide-auxiliary-text", lambda ic: self._aux_shown(False))

    def _on_aux(self, ic, text, visible):
        self.aux_text = text.get_text()
        self.aux_visible = bool(visible)
        self.aux_history.append(self.aux_now)

    def _aux_shown(self, visible):
        self.aux_visible = visible
        self.aux_history.append(self.aux_now)

    @property
    def aux_now(self):
        return self.aux_text if self.aux_visible else ""


@contextlib.contextmanager
def focused(client):
    """`client` focused, with the inkling engine, once the engine has asked for the field's text;
    focused out and destroyed afterwards."""
    client.focus_in()
    client.set_engine("inkling")
    client.wait_for_surrounding_request()
    try:
        yield client
    finally:
        client.focus_out()
        client.destroy()
