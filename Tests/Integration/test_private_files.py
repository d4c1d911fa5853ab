"""The engine's first start under `umask 000`: the data folder and the user store it creates are
private (folders 0700, files 0600), whatever the umask (issue 11, item 12).

libibus keeps one bus per process and the umask is per process, so the scenario runs this file
as a helper in a child process started with umask 000 (as test_settings_languages_learning.py
does for its scenarios).
"""

import json
import os
import stat
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_settings_languages_learning as scenarios  # noqa: E402


def test_the_engine_creates_its_data_privately_under_umask_000():
    result = subprocess.run([sys.executable, os.path.abspath(__file__), "umask"], capture_output=True, text=True,
                            timeout=180, preexec_fn=lambda: os.umask(0))
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    assert lines, "helper printed nothing (rc %d): %s" % (result.returncode, result.stderr[-3000:])
    report = json.loads(lines[-1])
    failed = [c for c in report["checks"] if not c[1]]
    assert report["ok"] and not failed, json.dumps(report, indent=1, ensure_ascii=False) + result.stderr[-3000:]


def scenario_umask(checks):
    checks.check("the helper runs under umask 000", os.umask(0) == 0)
    daemon = scenarios.make_daemon(settings=False).start()
    try:
        client = scenarios.new_client(daemon)
        client.type("Zorblax Zorblax ")
        words = None
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline:
            words = scenarios.learned_words(daemon) or set()
            if "Zorblax" in words:
                break
            scenarios.pump_for(0.3)
        checks.check("the engine created the store and learned", words and "Zorblax" in words, sorted(words or [])[:5])
        client.destroy()
        ours = os.path.join(daemon.env["XDG_DATA_HOME"], "inkling")
        modes = {}
        for folder, _, files in os.walk(ours):
            modes[folder] = stat.S_IMODE(os.lstat(folder).st_mode)
            for name in files:
                path = os.path.join(folder, name)
                modes[path] = stat.S_IMODE(os.lstat(path).st_mode)
        checks.check("the data folder is 0700", modes.get(ours) == 0o700, oct(modes.get(ours, 0)))
        store = os.path.join(ours, "user.sqlite3")
        checks.check("the store is 0600", modes.get(store) == 0o600, oct(modes.get(store, 0)))
        exposed = {path: oct(mode) for path, mode in modes.items() if mode & 0o077}
        checks.check("nothing the engine created is open to others", exposed == {}, exposed)
    finally:
        daemon.stop()


if __name__ == "__main__":
    checks = scenarios.Checks()
    error = None
    try:
        scenario_umask(checks)
    except Exception:  # reported, not raised: the parent prints the checks
        import traceback

        error = traceback.format_exc()
    print(json.dumps({"ok": error is None, "checks": checks.items, "error": error}, ensure_ascii=False))
