"""The bundled pack mapped and trusted on its verification record (issue 18), through a real
ibus-daemon and client: the engine records a verified pack, uses it at once at the next start on
that record, and a pack corrupted after its record was written is detected and refused (keys
then pass through, as for a pack found corrupt at start), whether `stat` shows the change or not.

Each scenario runs this file as a helper in a child process (libibus keeps one bus per process):

    test_pack_mapping.py SCENARIO   →   one JSON line {"ok": bool, "checks": [...]}
"""

import hashlib
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_settings_languages_learning as scenarios  # noqa: E402
from ibus_harness import pump_for  # noqa: E402


def run(name):
    scenarios.run_helper(__file__, name, timeout=240)


def test_a_verified_pack_is_recorded_and_a_pack_corrupted_after_its_record_is_refused():
    run("record")


def record_fields(path):
    """The record's fields: v1 device inode size modified changed verifiedAt sha256."""
    try:
        with open(path) as f:
            return f.read().split()
    except OSError:
        return None


def wait_for(condition, seconds):
    from ibus_harness import pump_until, Timeout

    try:
        pump_until(condition, timeout=seconds, what="condition")
        return True
    except Timeout:
        return False


def scenario_record(checks):
    engine = scenarios.private_install()
    pack = os.path.join(os.path.dirname(os.path.dirname(engine)), "share", "inkling", "packs", "en.inkpack")
    os.chmod(pack, 0o644)  # a package's pack: root's, writable by nobody else (these tests run as root)
    with open(pack, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    daemon = scenarios.make_daemon(settings=False, engine=engine)
    record = os.path.join(daemon.env["XDG_DATA_HOME"], "inkling", "verified", "en")
    daemon.start()
    try:
        client = scenarios.new_client(daemon)
        checks.check("English at the first start", scenarios.table_after(client, "th", lambda c: "the" in c))
        scenarios.erase_word(client)
        # Verified in the background a few seconds after the start, then recorded.
        checks.check("the verified pack is recorded", wait_for(lambda: record_fields(record) is not None, 30))
        status = os.stat(pack)
        fields = record_fields(record) or [""] * 8
        checks.check("the record names this file and its SHA-256",
                     fields[2] == str(status.st_ino) and fields[3] == str(status.st_size) and fields[7] == digest,
                     fields)

        # The next start trusts the record, and the background check confirms it again.
        client, _ = scenarios.restart_engine(daemon, client)
        checks.check("English at once on the record", scenarios.table_after(client, " th", lambda c: "the" in c))
        scenarios.erase_word(client)
        checks.check("the record is confirmed again",
                     wait_for(lambda: record_fields(record) is not None and not os.path.exists(record + ".unconfirmed"),
                              30))

        # Corrupted in place after the record was written (the header's checksum: nothing the
        # readers use): stat shows the change, so the pack is verified in full at open and refused.
        with open(pack, "r+b") as f:
            f.seek(24)
            byte = f.read(1)
            f.seek(24)
            f.write(bytes([byte[0] ^ 0x5A]))
        client, _ = scenarios.restart_engine(daemon, client)
        checks.check("a changed pack is verified at open and refused",
                     wait_for(lambda: "cannot use the language pack" in daemon.log(), 20), daemon.log()[-1500:])
        checks.check("then keys pass through",
                     scenarios.table_after(client, " th", lambda c: True, timeout=1.5) is None)
        checks.check("no record of the corrupt pack", record_fields(record) is None)

        # The same corruption where stat shows nothing (bit rot under an unchanged identity): a
        # record of this very file with the good pack's SHA-256. The engine uses the pack at once,
        # finds the mismatch in the background, drops the record and restarts; the fresh engine
        # verifies in full and refuses the pack.
        status = os.stat(pack)
        forged = "v1 %d %d %d %d %d %d %s\n" % (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns,
                                                status.st_ctime_ns, status.st_ctime_ns + 3_000_000_000, digest)
        with open(record, "w") as f:
            f.write(forged)
        before = daemon.log().count("cannot use the language pack")
        client, _ = scenarios.restart_engine(daemon, client)
        checks.check("the background check finds the mismatch",
                     wait_for(lambda: "does not match its verification record" in daemon.log(), 30),
                     daemon.log()[-1500:])
        checks.check("the fresh engine verifies in full and refuses the pack",
                     wait_for(lambda: daemon.log().count("cannot use the language pack") > before, 30),
                     daemon.log()[-1500:])
        checks.check("the record is gone",
                     record_fields(record) is None and not os.path.exists(record + ".unconfirmed"))
        pump_for(0.2)
        client.destroy()
    except Exception:
        checks.extra["daemon_log"] = daemon.log()[-4000:]
        raise
    finally:
        daemon.stop()
        shutil.rmtree(os.path.dirname(os.path.dirname(engine)), ignore_errors=True)


def helper_main(name):
    scenarios.report_scenario({"record": scenario_record}, name)


if __name__ == "__main__":
    helper_main(sys.argv[1])
