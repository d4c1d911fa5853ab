"""A small GTK 3, GTK 4 or Qt 5 window with two text views, driven over stdin, for end-to-end tests.

    text_app.py --toolkit gtk3|gtk4|qt5

Commands (one per line on stdin), answers (one JSON line on stdout):
    dump              {"main": ..., "other": ..., "focus": "main"|"other"|null}
    focus main|other  moves keyboard focus (a real focus-out for the other view's input method)
    clear             empties both views
    set main|other J  sets a view's text to the JSON string J, cursor at the end
    quit
It prints {"ready": true, "title": ...} once the window is shown and the main view has focus.
"""

import argparse
import json
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--toolkit", choices=["gtk3", "gtk4", "qt5"], required=True)
parser.add_argument("--password", action="store_true", help="GTK: a third field, a password entry (`focus password`)")
args = parser.parse_args()


def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def run_qt():
    from PyQt5.QtCore import QSocketNotifier, QTimer
    from PyQt5.QtWidgets import QApplication, QPlainTextEdit, QVBoxLayout, QWidget

    title = "inkling-e2e-qt5"
    app = QApplication([sys.argv[0]])
    window = QWidget()
    window.setWindowTitle(title)
    window.resize(600, 300)
    layout = QVBoxLayout(window)
    views = {"main": QPlainTextEdit(), "other": QPlainTextEdit()}
    for view in views.values():
        layout.addWidget(view)

    def focused():
        for name, view in views.items():
            if window.focusWidget() is view:
                return name
        return None

    def on_stdin():
        line = sys.stdin.readline()
        command = line.split()
        if not line or (command and command[0] == "quit"):
            app.quit()
            return
        if not command:
            return
        if command[0] == "dump":
            say({"main": views["main"].toPlainText(), "other": views["other"].toPlainText(), "focus": focused()})
        elif command[0] == "focus":
            views[command[1]].setFocus()
            say({"focus": focused()})
        elif command[0] == "clear":
            for view in views.values():
                view.setPlainText("")
            say({"cleared": True})
        elif command[0] == "set":
            view = views[command[1]]
            view.setPlainText(json.loads(line.split(None, 2)[2]))
            view.moveCursor(view.textCursor().End)
            say({"set": True})

    notifier = QSocketNotifier(sys.stdin.fileno(), QSocketNotifier.Read)
    notifier.activated.connect(on_stdin)
    window.show()
    views["main"].setFocus()
    ready = {"sent": False}

    def check_ready():
        if not ready["sent"] and window.isVisible() and window.focusWidget() is views["main"]:
            ready["sent"] = True
            say({"ready": True, "title": title})
            timer.stop()

    timer = QTimer()
    timer.timeout.connect(check_ready)
    timer.start(10)
    app.exec_()


if args.toolkit == "qt5":
    run_qt()
    sys.exit(0)

import gi  # noqa: E402

gi.require_version("Gtk", args.toolkit[3:] + ".0")
from gi.repository import GLib, Gtk  # noqa: E402

GTK4 = args.toolkit == "gtk4"
TITLE = "inkling-e2e-" + args.toolkit


def text_of(view):
    buffer = view.get_buffer()
    return buffer.get_text(buffer.get_start_iter(), buffer.get_end_iter(), True)


class App:
    def __init__(self):
        self.window = Gtk.Window(title=TITLE)
        self.window.set_default_size(600, 300)
        box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=4)
        self.views = {"main": Gtk.TextView(), "other": Gtk.TextView()}
        # A one-line entry (GTK 4: a GtkText inside, as libadwaita's entry rows have).
        self.entries = {"entry": Gtk.Entry()}
        if args.password:
            entry = Gtk.PasswordEntry() if GTK4 else Gtk.Entry(visibility=False,
                                                               input_purpose=Gtk.InputPurpose.PASSWORD)
            self.entries["password"] = entry
        for view in list(self.views.values()) + list(self.entries.values()):
            view.set_hexpand(True)
            view.set_vexpand(True)
            if GTK4:
                box.append(view)
            else:
                box.pack_start(view, True, True, 0)
        if GTK4:
            self.window.set_child(box)
            self.window.connect("close-request", lambda *a: self.quit())
        else:
            self.window.add(box)
            self.window.connect("destroy", lambda *a: self.quit())
        self.loop = GLib.MainLoop()
        channel = GLib.IOChannel.unix_new(sys.stdin.fileno())
        GLib.io_add_watch(channel, GLib.PRIORITY_DEFAULT, GLib.IOCondition.IN | GLib.IOCondition.HUP, self.on_stdin)
        self.ready_sent = False

    def run(self):
        if GTK4:
            self.window.present()
        else:
            self.window.show_all()
        self.views["main"].grab_focus()
        GLib.timeout_add(10, self.check_ready)
        self.loop.run()

    def check_ready(self):
        if self.window.get_mapped() and self.views["main"].is_focus():
            say({"ready": True, "title": TITLE})
            return False
        return True

    def focused(self):
        for name, entry in self.entries.items():
            inner = self.window.get_focus() if GTK4 else None  # GTK 4: the entry's inner text widget
            if (inner is not None and (inner == entry or inner.is_ancestor(entry))) if GTK4 else entry.is_focus():
                return name
        for name, view in self.views.items():
            if view.is_focus():
                return name
        return None

    def on_stdin(self, channel, condition):
        line = sys.stdin.readline()
        if not line:
            self.quit()
            return False
        command = line.split()
        if not command:
            return True
        if command[0] == "dump":
            dump = {"main": text_of(self.views["main"]), "other": text_of(self.views["other"]), "focus": self.focused()}
            for name, entry in self.entries.items():
                dump[name] = entry.get_text()
            say(dump)
        elif command[0] == "focus":
            # IBus's preedit updates for the focused widget may be queued behind this command;
            # the toolkit commits the preedit it has seen when the focus leaves, so take them
            # first, as the application would have long before a person moves the focus.
            context = GLib.MainContext.default()
            while context.pending():
                context.iteration(False)
            (self.entries.get(command[1]) or self.views[command[1]]).grab_focus()
            say({"focus": self.focused()})
        elif command[0] == "clear":
            for view in self.views.values():
                view.get_buffer().set_text("")
            for entry in self.entries.values():
                entry.set_text("")
            say({"cleared": True})
        elif command[0] == "set":
            buffer = self.views[command[1]].get_buffer()
            buffer.set_text(json.loads(line.split(None, 2)[2]))
            buffer.place_cursor(buffer.get_end_iter())
            say({"set": True})
        elif command[0] == "quit":
            self.quit()
            return False
        return True

    def quit(self):
        if self.loop.is_running():
            self.loop.quit()


App().run()
