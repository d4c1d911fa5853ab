"""Dead keys, Compose sequences and AltGr characters through a real ibus-daemon and IBus client.

The engine must read the system's Compose table for a fixed locale, so it runs under a daemon of
its own (LC_ALL=en_US.UTF-8, and $XCOMPOSEFILE naming a file that includes the locale's table
plus one sequence of its own, which also keeps the user's ~/.XCompose out of the test). libibus
keeps one bus per process, so the scenarios run in this file as a helper in a child process:

    test_compose.py   →   one JSON line {"ok": bool, "scenarios": {name: [[check, ok, detail]]}}
"""

import json
import os
import subprocess
import sys
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

LOCALE = "en_US.UTF-8"
LOCALE_COMPOSE = os.path.join("/usr/share/X11/locale", LOCALE, "Compose")
# One sequence that no locale defines, and that types several letters at once.
OWN_SEQUENCE = '<Multi_key> <w> <r> <d> : "word"\n'


# -- the tests (run the helper once, one test per scenario) --------------------------------------


@pytest.fixture(scope="module")
def report():
    if not os.path.exists(LOCALE_COMPOSE):
        pytest.fail("%s is missing: install libx11-data (scripts/install-deps.sh)" % LOCALE_COMPOSE)
    result = subprocess.run(
        [sys.executable, os.path.abspath(__file__)], capture_output=True, text=True, timeout=300
    )
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    assert lines, "helper printed nothing (rc %d): %s" % (result.returncode, result.stderr[-3000:])
    return json.loads(lines[-1]), result.stderr[-3000:]


def check(report, name):
    data, stderr = report
    checks = data["scenarios"].get(name)
    assert checks is not None, "scenario %s did not run: %s" % (name, stderr)
    failed = [c for c in checks if not c[1]]
    assert not failed, json.dumps(checks, indent=1, ensure_ascii=False) + "\n" + stderr


def test_dead_acute_composes_inside_the_word_with_candidates(report):
    check(report, "cafe")


def test_dead_diaeresis_and_dead_tilde(report):
    check(report, "naive_senor")


def test_compose_key_s_s_is_sharp_s_inside_the_word(report):
    check(report, "strasse")


def test_two_dead_keys_in_one_word_with_candidates(report):
    check(report, "resume")


def test_altgr_characters_of_a_polish_layout_join_the_word(report):
    check(report, "lodz")


def test_a_cancelled_sequence_is_dropped_and_the_word_kept(report):
    check(report, "cancelled")


def test_password_fields_get_dead_keys_untouched(report):
    check(report, "password")


def test_xcomposefile_sequences_are_used(report):
    check(report, "xcomposefile")


# -- the helper (runs in its own process) -------------------------------------------------------


class Checks:
    def __init__(self):
        self.items = []

    def check(self, name, condition, detail=""):
        self.items.append([name, bool(condition), str(detail)[:400]])
        return condition


def helper_main():
    from ibus_harness import SHIFT, Client, Daemon, IBus, Timeout

    mod5 = int(IBus.ModifierType.MOD5_MASK)
    root = tempfile.mkdtemp(prefix="inkling-compose-")
    compose_file = os.path.join(root, "XCompose")
    with open(compose_file, "w") as f:
        f.write('include "%L"\n' + OWN_SEQUENCE)
    env = {"LC_ALL": LOCALE, "LC_CTYPE": LOCALE, "LANG": LOCALE, "XCOMPOSEFILE": compose_file}
    daemon = Daemon(env=env, verbose=True).start()
    scenarios = {}

    def new_client():
        client = Client(daemon)
        client.focus_in()
        client.set_engine("inkling")
        client.commits.clear()
        client.tables.clear()
        return client

    def press(client, keyval, state=0, keycode=0):
        """Press and release; returns (press handled, release handled)."""
        handled = client.key(keyval, state, keycode)
        return handled, client.handled[-1][2]

    def table_with(client, word):
        try:
            client.wait_for_table(lambda candidates: word in candidates, what="%r among the candidates" % word)
            return True
        except Timeout:
            return False

    def cafe(c):
        client = new_client()
        client.type("caf")
        handled, released = press(client, IBus.KEY_dead_acute, keycode=48)
        c.check("the dead key is consumed", handled)
        c.check("its release is consumed", released)
        c.check("nothing committed by the dead key", client.commits == [], client.commits)
        c.check("the word stays shown while the accent is pending", client.preedit == ("caf", 3, True), client.preedit)
        handled, released = press(client, IBus.KEY_e, keycode=26)
        c.check("the final key is consumed", handled and released)
        c.check("preedit is café", client.preedit == ("café", 4, True), client.preedit)
        c.check("the word was not split", client.commits == [], client.commits)
        c.check("candidates follow the composed word", table_with(client, "cafés"), client.tables[-1:])
        client.key(IBus.KEY_space)
        c.check("space commits café", client.text == "café ", client.text)
        client.destroy()

    def naive_senor(c):
        client = new_client()
        client.type("na")
        press(client, IBus.KEY_dead_diaeresis)
        client.type("i")
        c.check("preedit naï", client.preedit == ("naï", 3, True), client.preedit)
        c.check("candidates for naï", table_with(client, "naïve"), client.tables[-1:])
        client.type("ve se")
        press(client, IBus.KEY_dead_tilde)
        client.type("n")
        c.check("preedit señ", client.preedit == ("señ", 3, True), client.preedit)
        client.type("or ")
        c.check("text naïve señor", client.text == "naïve señor ", client.text)
        client.destroy()

    def strasse(c):
        client = new_client()
        client.type("Stra")
        c.check("Multi_key consumed", press(client, IBus.KEY_Multi_key) == (True, True))
        c.check("first s consumed", press(client, IBus.KEY_s) == (True, True))
        c.check("preedit unchanged mid-sequence", client.preedit == ("Stra", 4, True), client.preedit)
        press(client, IBus.KEY_s)
        c.check("preedit Straß", client.preedit == ("Straß", 5, True), client.preedit)
        client.type("e ")
        c.check("text Straße", client.text == "Straße ", client.text)
        client.destroy()

    def resume(c):
        client = new_client()
        client.type("r")
        press(client, IBus.KEY_dead_acute)
        press(client, IBus.KEY_e)
        c.check("preedit ré", client.preedit == ("ré", 2, True), client.preedit)
        c.check("résumé offered after ré", table_with(client, "résumé"), client.tables[-1:])
        client.type("sum")
        press(client, IBus.KEY_dead_acute)
        press(client, IBus.KEY_e)
        client.key(IBus.KEY_space)
        c.check("text résumé", client.text == "résumé ", client.text)
        client.destroy()

    def lodz(c):
        client = new_client()
        keys = [
            (IBus.KEY_ISO_Level3_Shift, 0),
            (IBus.KEY_Lstroke, SHIFT | mod5),
            (IBus.KEY_oacute, mod5),
            (IBus.KEY_d, 0),
            (IBus.KEY_zacute, mod5),
        ]
        results = [press(client, keyval, state)[0] for keyval, state in keys]
        c.check("AltGr itself reaches the application", results[0] is False)
        c.check("AltGr letters are typed into the word", all(results[1:]), results)
        c.check("preedit Łódź", client.preedit == ("Łódź", 4, True), client.preedit)
        c.check("nothing committed", client.commits == [], client.commits)
        client.key(IBus.KEY_space)
        c.check("text Łódź", client.text == "Łódź ", client.text)
        client.destroy()

    def cancelled(c):
        client = new_client()
        client.type("caf")
        press(client, IBus.KEY_dead_acute)
        c.check("dead_acute q is dropped whole", press(client, IBus.KEY_q) == (True, True))
        c.check("the word is kept", client.preedit == ("caf", 3, True) and client.commits == [], client.preedit)
        press(client, IBus.KEY_dead_acute)
        c.check("Escape cancels the accent", press(client, IBus.KEY_Escape)[0])
        c.check("the word is still kept", client.preedit == ("caf", 3, True), client.preedit)
        client.type("e ")
        c.check("text cafe", client.text == "cafe ", client.text)
        client.type("caf")
        candidates = client.wait_for_table(what="completions of caf")
        press(client, IBus.KEY_dead_acute)
        c.check("F1 after a dead key still selects", press(client, IBus.KEY_F1)[0])
        c.check("the first candidate is committed", client.commits[-1:] == candidates[:1], client.commits[-1:])
        client.destroy()

    def password(c):
        client = new_client()
        client.set_content_type(IBus.InputPurpose.PASSWORD)
        dead = press(client, IBus.KEY_dead_acute)
        letter = press(client, IBus.KEY_e)
        c.check("the dead key reaches the application", dead == (False, False), dead)
        c.check("the letter reaches the application", letter == (False, False), letter)
        c.check("no preedit, no commit", client.preedit[0] == "" and client.commits == [], client.preedit)
        client.destroy()

    def xcomposefile(c):
        client = new_client()
        client.type("a")
        for keyval in (IBus.KEY_Multi_key, IBus.KEY_w, IBus.KEY_r, IBus.KEY_d):
            press(client, keyval)
        c.check("a sequence from $XCOMPOSEFILE types its letters into the word",
                client.preedit == ("aword", 5, True), client.preedit)
        client.destroy()

    ok = True
    try:
        for scenario in (cafe, naive_senor, strasse, resume, lodz, cancelled, password, xcomposefile):
            c = Checks()
            try:
                scenario(c)
            except Exception as error:  # noqa: BLE001 - reported as a failed check
                c.check("scenario ran", False, repr(error))
            scenarios[scenario.__name__] = c.items
            ok = ok and all(item[1] for item in c.items)
    finally:
        daemon.stop()
    print(json.dumps({"ok": ok, "scenarios": scenarios}, ensure_ascii=False))


if __name__ == "__main__":
    helper_main()
