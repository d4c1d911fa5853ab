#!/usr/bin/python3
"""Writes the language-pack manifest (/usr/share/inkling/manifest.json).

usage: make-manifest.py --inkling BIN --min-engine-version V [--url-base URL] OUT PACK...

For each pack: language, display name and version come from `inkling pack info PACK`; size and
SHA-256 are computed from the file. Bundled packs (the default) have an empty url; packs
published for download get URL_BASE/<file name>. The engine and CLI verify a pack against this
manifest's size and sha256 before using a downloaded copy.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys

FORMAT_VERSION = 1


def pack_info(inkling, path):
    out = subprocess.run([inkling, "pack", "info", path], check=True, capture_output=True, text=True).stdout
    info = {}
    for line in out.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() not in info:
            info[key.strip()] = value.strip()
    for key in ("language", "name", "version"):
        if not info.get(key):
            sys.exit(f"make-manifest: 'inkling pack info {path}' gave no {key}")
    return info


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inkling", required=True, help="the inkling binary (for pack info)")
    parser.add_argument("--min-engine-version", required=True)
    parser.add_argument("--url-base", default="", help="download URL prefix; empty for bundled packs")
    parser.add_argument("out")
    parser.add_argument("packs", nargs="+")
    args = parser.parse_args()

    packs = []
    for path in args.packs:
        info = pack_info(args.inkling, path)
        name = os.path.basename(path)
        packs.append({
            "language": info["language"],
            "displayName": info["name"],
            "version": info["version"],
            "minEngineVersion": args.min_engine_version,
            "file": "packs/" + name,
            "size": os.path.getsize(path),
            "sha256": sha256(path),
            "url": (args.url_base.rstrip("/") + "/" + name) if args.url_base else "",
        })
    packs.sort(key=lambda p: p["language"])
    manifest = {"formatVersion": FORMAT_VERSION, "packs": packs}
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=2, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
