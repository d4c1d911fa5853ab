#!/usr/bin/python3
"""Engine RSS with English and one downloaded language, through a real headless ibus-daemon.

    /usr/bin/python3 bench/engine_language_memory.py LANG [--packs DIR] [--text FILE]

Installs DIR/LANG.inkpack (default build/packs, from `make packs`) with a manifest into a private
XDG_DATA_HOME, types 3,000 characters of the English dev text, switches the `languages` setting to
LANG, types 4,000 characters of that language's held-out dev text (.cache/prepared/LANG/dev.txt)
(or FILE) and reports the engine's RSS and its peak (VmHWM). The bar: 40 MB.
"""

import argparse
import hashlib
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Integration"))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Packs"))
import test_settings_languages_learning as scenarios  # noqa: E402
from ibus_harness import rss_kb  # noqa: E402


def type_prose(client, text):
    for character in text:
        if character.isalpha() or character in " .,":
            client.type(character)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("language")
    parser.add_argument("--packs", default=os.path.join(ROOT, "build", "packs"))
    parser.add_argument("--text", help="text typed after the switch (default: the language's held-out dev text)")
    args = parser.parse_args()
    with open(os.path.join(args.packs, args.language + ".inkpack"), "rb") as f:
        data = f.read()
    daemon = scenarios.make_daemon()
    inkling = os.path.join(daemon.env["XDG_DATA_HOME"], "inkling")
    os.makedirs(os.path.join(inkling, "packs"))
    with open(os.path.join(inkling, "packs", args.language + ".inkpack"), "wb") as f:
        f.write(data)
    entry = {"language": args.language, "displayName": args.language, "version": "1", "minEngineVersion": "0.1.0",
             "file": "packs/%s.inkpack" % args.language, "size": len(data),
             "sha256": hashlib.sha256(data).hexdigest(), "url": "packs/%s.inkpack" % args.language}
    with open(os.path.join(inkling, "manifest.json"), "w") as f:
        json.dump({"formatVersion": 1, "packs": [entry]}, f)
    daemon.start()
    try:
        client = scenarios.new_client(daemon)
        with open(os.path.join(ROOT, "..", "shared", "bench", "dev-en.txt"), encoding="utf-8") as f:
            type_prose(client, f.read()[:3000])
        scenarios.pump_for(0.5)
        english = rss_kb(daemon.engine_pid())
        scenarios.gsettings(daemon, "set", scenarios.SCHEMA, "languages", "['%s']" % args.language)
        scenarios.pump_for(3)
        text = args.text or os.path.join(ROOT, ".cache", "prepared", args.language, "dev.txt")
        with open(text, encoding="utf-8") as f:
            type_prose(client, f.read()[:4000])
        scenarios.pump_for(0.5)
        pid = daemon.engine_pid()
        both = rss_kb(pid)
        with open("/proc/%d/status" % pid) as f:
            peak = next(int(line.split()[1]) for line in f if line.startswith("VmHWM"))
        print("engine RSS: English typed %.1f MB; after switching to %s and typing %.1f MB; peak %.1f MB"
              % (english / 1024, args.language, both / 1024, peak / 1024))
    finally:
        daemon.stop()


if __name__ == "__main__":
    main()
