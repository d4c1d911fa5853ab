#!/usr/bin/python3
"""A pack changed on disk while a process uses it: rewritten in place (`cp` or `rsync --inplace`
over it) or truncated (a disk-full rewrite). The process must stay alive and keep answering
from the pack it opened; with the file mapped it died of SIGBUS at the next request.

Run: Tests/Packs/run.sh (needs the release build; INKLING overrides the CLI binary).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
INKLING = os.environ.get("INKLING", os.path.join(ROOT, ".build", "release", "inkling"))
ENGLISH = os.path.join(ROOT, "data", "packs", "en.inkpack")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from german_pack import build_german_pack  # noqa: E402
from suite import Suite  # noqa: E402


class Predictor:
    """`inkling predict --stdio --pack PATH`, one JSON request and reply per line."""

    def __init__(self, pack):
        self.proc = subprocess.Popen([INKLING, "predict", "--stdio", "--pack", pack], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.next_id = 0

    def suggest(self, before):
        """The words for `before`, or None when the process gave no reply (it died)."""
        self.next_id += 1
        try:
            self.proc.stdin.write(json.dumps({"id": self.next_id, "before": before, "n": 5}) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            return None
        line = self.proc.stdout.readline()
        if not line:
            return None
        reply = json.loads(line)
        return reply.get("words") if reply.get("id") == self.next_id else None

    def close(self):
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        return self.proc.wait(timeout=30)


def truncate_in_place(path):
    os.truncate(path, 0)


def rewrite_in_place(path, data):
    """What `cp other path` does: same inode, truncated, then written."""
    with open(path, "r+b") as f:
        f.truncate(0)
        f.write(data)


def scenario(suite, name, pack, prompts, change):
    later = ["zebra", "q", "Ich möchte ge", "The president of the Un", "Hello, how are y"]
    # What the pack answers while its file is intact (a separate process on a separate copy).
    reference_copy = pack + ".reference"
    shutil.copyfile(pack, reference_copy)
    reference = Predictor(reference_copy)
    expected = [reference.suggest(p) for p in prompts + later]
    reference.close()
    os.unlink(reference_copy)

    predictor = Predictor(pack)
    before = [predictor.suggest(p) for p in prompts]
    suite.check(f"{name}: answers before the change", all(w is not None for w in before), before)
    change()
    # Prompts the process has not answered yet touch parts of the pack it has not read yet.
    after = [predictor.suggest(p) for p in prompts + later]
    rc = predictor.close()
    stderr = predictor.proc.stderr.read()
    suite.check(f"{name}: the process is alive and answers every request", all(w is not None for w in after),
                f"replies {after}, exit status {rc}, stderr {stderr[-500:]!r}")
    suite.check(f"{name}: the answers come from the pack as it was opened", after == expected, [expected, after])
    suite.check(f"{name}: exits normally", rc == 0, f"exit status {rc}")


def main():
    suite = Suite()
    work = tempfile.mkdtemp(prefix="inkling-pack-in-use-")
    try:
        german = build_german_pack(INKLING, work)
        english = os.path.join(work, "en.inkpack")
        prompts = ["I don", "the pres", "Thank you for the"]

        shutil.copyfile(ENGLISH, english)
        scenario(suite, "English truncated in place", english, prompts, lambda: truncate_in_place(english))

        shutil.copyfile(ENGLISH, english)
        scenario(suite, "English overwritten in place by another pack", english, prompts,
                 lambda: rewrite_in_place(english, german))

        shutil.copyfile(ENGLISH, english)
        with open(ENGLISH, "rb") as f:
            zeros = bytes(len(f.read()))
        scenario(suite, "English overwritten in place with zeros", english, prompts,
                 lambda: rewrite_in_place(english, zeros))

        german_path = os.path.join(work, "de.inkpack")
        scenario(suite, "German truncated in place", german_path, ["Ich möchte ge", "Die Stra"],
                 lambda: truncate_in_place(german_path))

        # A pack truncated before a process opens it is refused with one sentence, no crash.
        truncate_in_place(english)
        r = subprocess.run([INKLING, "suggest", "--pack", english, "I don"], capture_output=True, text=True,
                           timeout=60)
        suite.check("an empty pack is refused with a clear error", r.returncode > 0 and "truncated" in r.stderr,
                    f"rc {r.returncode}: {r.stderr!r}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{suite.passed} passed, {suite.failed} failed")
    return 1 if suite.failed else 0


if __name__ == "__main__":
    sys.exit(main())
