"""A tiny but real German language pack, built with `inkling pack build` from a fixed fixture.

Shared by the pack-download tests and the engine's language tests.
"""
import os
import subprocess

GERMAN_WORDS = """der 0.03
die 0.03
und 0.02
ich 0.015
möchte 0.002
gerne 0.001
haus 0.001
häuser 0.0005
straße 0.0004
schön 0.0008
heute 0.0009
morgen 0.0007
"""
GERMAN_TEXT = """Ich möchte gerne ein Haus haben.
Die Straße ist heute schön.
Ich möchte morgen die Häuser sehen.
Der Morgen ist schön und die Straße auch.
"""


def build_german_pack(inkling, work):
    """Builds `work/de.inkpack` with the `inkling` CLI and returns its bytes."""
    prepared = os.path.join(work, "prepared")
    os.makedirs(prepared, exist_ok=True)
    with open(os.path.join(prepared, "wordfreq.tsv"), "w") as f:
        f.write(GERMAN_WORDS.replace(" ", "\t"))
    with open(os.path.join(prepared, "corpus.txt"), "w") as f:
        f.write(GERMAN_TEXT)
    pack = os.path.join(work, "de.inkpack")
    built = subprocess.run([inkling, "pack", "build", "--prepared", prepared, "-o", pack, "--language", "de",
                            "--name", "Deutsch", "--char-table-bytes", "65536"], capture_output=True, text=True)
    if built.returncode != 0:
        raise RuntimeError("pack build failed: " + built.stderr)
    with open(pack, "rb") as f:
        return f.read()
