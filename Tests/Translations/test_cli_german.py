"""The `inkling` command under LANGUAGE=de with po/ compiled into a private locale folder (as the
app's and the engine's German tests do): help, usage errors, status lines and failures are
German; what programs read (predict --stdio's JSON, config list/get, learned export's TSV,
suggest's words, packs list's rows) is byte for byte what it is in English.

The binary: $INKLING_BIN_DIR/inkling, else the newer of .build/release/inkling and
.build/debug/inkling (`make check` builds debug, `make test` release).
"""
import json
import os
import shutil
import subprocess
import tempfile

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PACK = os.path.join(ROOT, "data", "packs", "en.inkpack")
SCHEMA = "org.freedesktop.ibus.engine.inkling"


def inkling_binary():
    if os.environ.get("INKLING_BIN_DIR"):
        return os.path.join(os.environ["INKLING_BIN_DIR"], "inkling")
    built = [os.path.join(ROOT, ".build", kind, "inkling") for kind in ("release", "debug")]
    built = [path for path in built if os.path.exists(path)]
    assert built, "no inkling binary: build first (swift build)"
    return max(built, key=os.path.getmtime)


@pytest.fixture(scope="module")
def world():
    root = tempfile.mkdtemp(prefix="inkling-cli-de-")
    locale = os.path.join(root, "locale")
    subprocess.run(["bash", os.path.join(ROOT, "po", "build.sh"), locale], check=True)
    schemas = os.path.join(root, "schemas")
    os.makedirs(schemas)
    shutil.copy(os.path.join(ROOT, "data", "gschema", SCHEMA + ".gschema.xml"), schemas)
    subprocess.run(["glib-compile-schemas", schemas], check=True)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG"))}
    base.update({"XDG_DATA_HOME": os.path.join(root, "data"), "HOME": os.path.join(root, "home"),
                 "GSETTINGS_SCHEMA_DIR": schemas, "GSETTINGS_BACKEND": "memory", "INKLING_LOCALEDIR": locale,
                 "LC_ALL": "C.UTF-8"})
    os.makedirs(base["HOME"])
    # A downloaded manifest, so that `packs list` prints rows (the part inkling-setup parses).
    os.makedirs(os.path.join(base["XDG_DATA_HOME"], "inkling"))
    with open(os.path.join(base["XDG_DATA_HOME"], "inkling", "manifest.json"), "w") as f:
        json.dump({"formatVersion": 1, "packs": [
            {"language": "de", "displayName": "Deutsch", "version": "1", "minEngineVersion": "0.1.0",
             "file": "packs/de.inkpack", "size": 4096, "sha256": "0" * 64,
             "url": "https://packs.example/de.inkpack"}]}, f)
    world = type("World", (), {})()
    world.root = root
    world.binary = inkling_binary()
    world.english = dict(base, LANGUAGE="en")
    world.german = dict(base, LANGUAGE="de")
    # Learned words to list, export and forget (import needs no language pack).
    world.tsv = os.path.join(root, "words.tsv")
    with open(world.tsv, "w") as f:
        f.write("\tzorblax\tzorblax\t3.0\t1764633600\n\tquix\tquix\t1.0\t1764633600\n")
    yield world
    shutil.rmtree(root, ignore_errors=True)


def run(world, env, *arguments, input=None):
    return subprocess.run([world.binary, *arguments], env=env, capture_output=True, text=True, input=input,
                          stdin=None if input is not None else subprocess.DEVNULL, timeout=120)


def test_help_is_german(world):
    shown = run(world, world.german, "--help")
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout
    for german in ("Aufruf: inkling COMMAND", "Befehle:", "Optionen:", "diese Hilfe anzeigen und beenden",
                   "Exit-Status: 0 Erfolg", "Meldet diesen Computer für die Cloud-Prüfung"):
        assert german in text, german
    for english in ("usage:", "commands:", "show this help", "exit status:"):
        assert english not in text, english
    sub = run(world, world.german, "learned", "wipe", "--help").stdout
    assert "nicht nachfragen (erforderlich, wenn die Standardeingabe kein Terminal ist)" in sub
    assert "Aufruf: inkling learned wipe [--yes] [--db PATH]" in sub


def test_usage_errors_are_german_with_exit_status_2(world):
    wrong = run(world, world.german, "suggest", "-n", "99", "x")
    assert wrong.returncode == 2
    assert "inkling suggest: -n erwartet eine ganze Zahl von 1 bis 50, nicht „99“" in wrong.stderr
    assert "Mehr mit „inkling suggest --help“." in wrong.stderr
    unknown = run(world, world.german, "learned", "--bogus")
    assert unknown.returncode == 2
    assert "unbekannte Option „--bogus“" in unknown.stderr
    refused = run(world, world.german, "learned", "wipe", "--db", os.path.join(world.root, "wipe.sqlite3"))
    assert refused.returncode == 2
    assert "Löschen braucht --yes, wenn die Standardeingabe kein Terminal ist" in refused.stderr


def test_status_lines_and_failures_are_german(world):
    db = os.path.join(world.root, "status.sqlite3")
    imported = run(world, world.german, "learned", "import", world.tsv, "--db", db)
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.strip() == "2 Einträge aus %s importiert" % world.tsv
    listed = run(world, world.german, "learned", "list", "--db", db)
    assert listed.stdout.split("\n")[0].split() == ["Wort", "Anzahl", "zuletzt", "verwendet"]
    assert "2 von 2 Wörtern" in listed.stderr
    forgot = run(world, world.german, "learned", "forget", "quix", "--db", db)
    assert forgot.stdout.strip() == "„quix“ vergessen: 1 Eintrag entfernt"
    missing = run(world, world.german, "packs", "remove", "fr")
    assert missing.returncode == 1
    assert missing.stderr.strip() == "inkling: das Paket „fr“ ist nicht installiert"
    described = run(world, world.german, "config", "describe", "page-size")
    assert described.returncode == 0, described.stderr
    assert "  erlaubt: 1 bis 9" in described.stdout and "  Standard: 5" in described.stdout
    bad = run(world, world.german, "config", "set", "page-size", "many")
    assert bad.returncode == 1
    assert "page-size erwartet eine ganze Zahl (erlaubt: 1 bis 9), nicht „many“" in bad.stderr


def test_english_without_a_translation(world):
    """LANGUAGE=en (no en.po): the English text, unchanged."""
    wrong = run(world, world.english, "suggest", "-n", "99", "x")
    assert "inkling suggest: -n takes a whole number from 1 to 50, not '99'" in wrong.stderr
    assert "Run 'inkling suggest --help' for more." in wrong.stderr


def test_machine_readable_output_is_the_same_in_every_language(world):
    db = os.path.join(world.root, "machine.sqlite3")
    assert run(world, world.english, "learned", "import", world.tsv, "--db", db).returncode == 0
    requests = '{"id":1,"before":"the ","n":3}\nnot json\n{"id":2,"before":"' + "x" * 10 + '","n":99}\n'
    commands = [
        (["predict", "--stdio", "--pack", PACK], requests),
        (["suggest", "--pack", PACK, "--db", db, "--", "the "], None),
        (["config", "list"], None),
        (["config", "get", "selection-keys"], None),
        (["learned", "export", "-", "--db", db], None),
        (["packs", "list"], None),
    ]
    for arguments, given in commands:
        english = run(world, world.english, *arguments, input=given)
        german = run(world, world.german, *arguments, input=given)
        assert english.returncode == german.returncode, arguments
        assert german.stdout == english.stdout, arguments
    rows = run(world, world.german, "packs", "list").stdout
    assert rows.startswith("de\tDeutsch\t1\t4 KiB\tavailable"), rows
    # The protocol's error replies stay English (a program matches on them), and are there.
    replies = run(world, world.german, "predict", "--stdio", "--pack", PACK, input=requests).stdout
    assert '"id":null' in replies and "the request is not a JSON object" in replies
    assert "zorblax" in run(world, world.german, "learned", "export", "-", "--db", db).stdout
