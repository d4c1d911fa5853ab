"""Language packs as Debian packages (scripts/deb-build-packs.sh, run by `make packs`).

A tiny German pack is built, packaged as inkling-lang-de (Architecture: all), installed with
dpkg into a private root (its own admin dir: the machine's package database is not touched),
verified with dpkg --verify, seen by that root's `inkling packs list` as installed by the system,
and removed again. Needs root (dpkg --root) and the release build of the CLI."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))  # Tests/
from german_pack import build_german_pack  # noqa: E402
from process_support import release_binary  # noqa: E402

ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
INKLING = release_binary("inkling", override="INKLING")


def run(*args, **kwargs):
    return subprocess.run(list(args), check=True, capture_output=True, text=True, timeout=120, **kwargs)


@pytest.fixture(scope="module")
def built():
    work = tempfile.mkdtemp(prefix="inkling-lang-debs-")
    packs = os.path.join(work, "packs")
    os.makedirs(packs)
    build_german_pack(INKLING, work)
    shutil.copy2(os.path.join(work, "de.inkpack"), os.path.join(packs, "de.inkpack"))
    run("/usr/bin/python3", os.path.join(ROOT, "packaging", "make-manifest.py"), "--inkling", INKLING,
        "--min-engine-version", "0.1.0", "--url-base", "https://packs.invalid/1", os.path.join(packs, "manifest.json"),
        os.path.join(packs, "de.inkpack"))
    run("bash", os.path.join(ROOT, "scripts", "deb-build-packs.sh"), packs)
    debs = [f for f in os.listdir(os.path.join(packs, "debs")) if f.endswith(".deb")]
    assert len(debs) == 1, debs
    yield work, os.path.join(packs, "debs", debs[0])
    shutil.rmtree(work, ignore_errors=True)


def test_the_package_is_architecture_all_and_holds_the_pack_and_its_entry(built):
    _, deb = built
    fields = {name: run("dpkg-deb", "-f", deb, name).stdout.strip() for name in ("Package", "Architecture", "Section")}
    assert fields == {"Package": "inkling-lang-de", "Architecture": "all", "Section": "localization"}
    contents = run("dpkg-deb", "-c", deb).stdout
    assert "./usr/share/inkling/packs/de.inkpack" in contents
    assert "./usr/share/inkling/manifests/de.json" in contents


@pytest.mark.skipif(os.geteuid() != 0, reason="dpkg --root needs root")
def test_dpkg_installs_verifies_and_removes_it_and_the_cli_sees_it(built):
    work, deb = built
    root = os.path.join(work, "root")
    admin = os.path.join(root, "var", "lib", "dpkg")
    for sub in ("info", "updates", "triggers"):
        os.makedirs(os.path.join(admin, sub))
    open(os.path.join(admin, "status"), "w").close()
    dpkg = ["dpkg", "--root=" + root, "--admindir=" + admin, "--log=/dev/null", "--force-script-chrootless"]
    run(*dpkg, "-i", deb)
    assert os.path.isfile(os.path.join(root, "usr", "share", "inkling", "packs", "de.inkpack"))
    verify = subprocess.run(dpkg + ["--verify", "inkling-lang-de"], capture_output=True, text=True, timeout=60)
    assert verify.returncode == 0 and verify.stdout == "", verify.stdout + verify.stderr

    # The CLI installed in that root finds the pack by its own location, with no download.
    os.makedirs(os.path.join(root, "usr", "bin"), exist_ok=True)
    cli = os.path.join(root, "usr", "bin", "inkling")
    shutil.copy2(INKLING, cli)
    env = dict(os.environ, XDG_DATA_HOME=os.path.join(work, "data"), INKLING_MANIFEST_URL="")
    listed = run(cli, "packs", "list", env=env).stdout
    line = next((row for row in listed.splitlines() if row.startswith("de\t")), None)
    assert line is not None and line.split("\t")[1] == "Deutsch" and line.endswith("\tsystem"), listed
    with open(os.path.join(root, "usr", "share", "inkling", "manifests", "de.json"), encoding="utf-8") as f:
        assert json.load(f)["packs"][0]["url"] == ""

    # A corrupted file is what dpkg --verify reports.
    with open(os.path.join(root, "usr", "share", "inkling", "packs", "de.inkpack"), "r+b") as f:
        f.seek(100)
        f.write(b"\xff\xff\xff\xff")
    verify = subprocess.run(dpkg + ["--verify", "inkling-lang-de"], capture_output=True, text=True, timeout=60)
    assert "de.inkpack" in verify.stdout, verify.stdout

    run(*dpkg, "-r", "inkling-lang-de")
    assert not os.path.exists(os.path.join(root, "usr", "share", "inkling", "packs", "de.inkpack"))
    listed = subprocess.run([cli, "packs", "list"], env=env, capture_output=True, text=True, timeout=60).stdout
    assert not any(row.startswith("de\t") for row in listed.splitlines()), listed
