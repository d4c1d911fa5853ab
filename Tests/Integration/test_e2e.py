"""End-to-end under Xvfb: real GTK 3, GTK 4 and Qt 5 text views, typed into with xdotool.

Each toolkit's cases run in one driver process (e2e/e2e_driver.py) under dbus-run-session, with
its own Xvfb, ibus-daemon and panel recorder; each case is reported as its own test here.
"""

import functools
import json
import os
import shutil
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER = os.path.join(HERE, "e2e", "e2e_driver.py")

COMMON = ["select", "punctuation", "focus-out", "panel-click", "surrounding-ascii"]
CASES = {
    "gtk3": COMMON + ["surrounding", "fix", "dead-keys", "altgr-pl", "entry"],
    "gtk4": COMMON + ["surrounding", "fix", "dead-keys", "altgr-pl", "entry"],
    # Qt reports surrounding-text offsets in UTF-16 units: with an emoji before the cursor the
    # offsets cannot be code points, the text is rejected (by design), and no prediction follows.
    "qt5": COMMON,
}


def toolkit_available(toolkit):
    if toolkit == "qt5":
        probe = "import PyQt5.QtWidgets"
    else:
        probe = "import gi; gi.require_version('Gtk', '%s.0'); from gi.repository import Gtk" % toolkit[3:]
    return subprocess.run(["/usr/bin/python3", "-c", probe], capture_output=True).returncode == 0


@functools.lru_cache(maxsize=None)
def run_driver(toolkit):
    for tool in ("Xvfb", "xdotool", "dbus-run-session", "setxkbmap"):
        if shutil.which(tool) is None:
            pytest.fail("%s is missing (scripts/install-deps.sh installs it)" % tool)
    command = ["dbus-run-session", "--", "/usr/bin/python3", DRIVER, "--toolkit", toolkit]
    for case in CASES[toolkit]:
        command += ["--case", case]
    result = subprocess.run(command, capture_output=True, text=True, timeout=240)
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    if result.returncode != 0 or not lines:
        return {"__error__": "driver exited %d\n%s\n%s"
                % (result.returncode, result.stdout[-3000:], result.stderr[-3000:])}
    return json.loads(lines[-1])


@pytest.mark.parametrize("toolkit,case", [(t, c) for t, cases in CASES.items() for c in cases])
def test_e2e(toolkit, case):
    if toolkit == "qt5" and not toolkit_available("qt5"):
        pytest.skip("python3-pyqt5 is not installed")
    report = run_driver(toolkit)
    assert "__error__" not in report, report.get("__error__")
    outcome = report.get(case)
    assert outcome is not None, "case %s did not run: %s" % (case, report)
    assert outcome["ok"], json.dumps(outcome, indent=1, ensure_ascii=False)
