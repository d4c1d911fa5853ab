#!/usr/bin/python3
"""Process-level tests of `inkling packs`: a loopback HTTP server serves real packs and manifests.

Covers: normal install; a truncated file of the right name already present; a download cut off
mid-way; wrong size; wrong checksum; a pack that needs a newer engine; server down; two
concurrent installs; removing a pack a running predictor is using. Run: Tests/Packs/run.sh.
"""
import hashlib
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from german_pack import build_german_pack  # noqa: E402
from suite import Suite  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
INKLING = os.environ.get("INKLING", os.path.join(ROOT, ".build", "release", "inkling"))


class Behaviour:
    mode = "normal"
    hits = 0


class Handler(http.server.BaseHTTPRequestHandler):
    files = {}

    def log_message(self, *args):
        pass

    def do_GET(self):
        Behaviour.hits += 1
        body = self.files.get(self.path)
        if body is None:
            self.send_error(404)
            return
        if Behaviour.mode == "cut" and self.path.endswith(".inkpack"):
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.connection.close()
            return
        if Behaviour.mode == "bitflip" and self.path.endswith(".inkpack"):
            body = bytearray(body)
            body[len(body) // 2] ^= 0x10
            body = bytes(body)
        if Behaviour.mode == "longer" and self.path.endswith(".inkpack"):
            body = body + b"\0" * 100
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def run(args, env, check=None):
    result = subprocess.run([INKLING] + args, env=env, capture_output=True, text=True, timeout=120)
    return result


def main():
    suite = Suite()
    work = tempfile.mkdtemp(prefix="inkling-packs-")
    try:
        data = build_german_pack(INKLING, work)
        entry = {"language": "de", "displayName": "Deutsch", "version": "1", "minEngineVersion": "0.1.0",
                 "file": "packs/de.inkpack", "size": len(data), "sha256": hashlib.sha256(data).hexdigest(),
                 "url": "packs/de.inkpack"}
        future = dict(entry, language="fr", displayName="Français", minEngineVersion="99.0")
        manifest = {"formatVersion": 1, "packs": [entry, future]}
        Handler.files = {"/manifest.json": json.dumps(manifest).encode(), "/packs/de.inkpack": data}
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{server.server_address[1]}/manifest.json"

        home = os.path.join(work, "home")
        env = dict(os.environ, XDG_DATA_HOME=os.path.join(home, "data"), HOME=home, INKLING_MANIFEST_URL=url)
        packs = os.path.join(home, "data", "inkling", "packs")
        final = os.path.join(packs, "de.inkpack")

        def leftovers():
            return [n for n in os.listdir(packs) if n.startswith(".")] if os.path.isdir(packs) else []

        r = run(["packs", "update"], env)
        suite.check("update fetches the manifest", r.returncode == 0 and "2 packs" in r.stdout, r.stderr)

        # A truncated file of the right name is already present: verify says so, install replaces it.
        os.makedirs(packs, exist_ok=True)
        with open(final, "wb") as f:
            f.write(data[:1000])
        r = run(["packs", "verify", "de"], env)
        suite.check("verify refuses a truncated pack", r.returncode == 1 and "CORRUPT" in r.stdout, r.stdout)
        r = run(["predict", "--stdio", "--pack", final], env)
        suite.check("a truncated pack is refused with a clear message",
                    r.returncode != 0 and "truncated" in r.stderr, r.stderr)

        r = run(["packs", "install", "de"], env)
        suite.check("normal install", r.returncode == 0 and open(final, "rb").read() == data, r.stderr)
        suite.check("no temporary files left", leftovers() == [], str(leftovers()))
        r = run(["packs", "verify"], env)
        suite.check("verify accepts the installed pack", r.returncode == 0 and "de: ok" in r.stdout, r.stdout)
        r = run(["suggest", "--pack", final, "Ich möchte ge"], env)
        suite.check("the installed pack predicts German", "gerne" in r.stdout.split(), r.stdout + r.stderr)

        for mode, words in [("cut", "cut off mid-way"), ("bitflip", "wrong checksum"), ("longer", "wrong size")]:
            if os.path.exists(final):
                os.remove(final)
            Behaviour.mode = mode
            r = run(["packs", "install", "de"], env)
            suite.check(f"a download {words} is refused",
                        r.returncode != 0 and "nothing was installed" in r.stderr, r.stderr)
            suite.check(f"a download {words} leaves no file under the final name", not os.path.exists(final))
            suite.check(f"a download {words} leaves no temporary file", leftovers() == [], str(leftovers()))
        Behaviour.mode = "normal"

        r = run(["packs", "install", "fr"], env)
        suite.check("a pack needing a newer engine is refused",
                    r.returncode != 0 and "needs Inkling 99.0" in r.stderr, r.stderr)
        r = run(["packs", "list"], env)
        suite.check("list shows what needs a newer engine", "needs Inkling 99.0" in r.stdout, r.stdout)

        # Two installs at the same time: both finish, the result is the verified pack.
        procs = [subprocess.Popen([INKLING, "packs", "install", "de"], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(2)]
        codes = [p.wait(timeout=120) for p in procs]
        suite.check("two concurrent installs both succeed", codes == [0, 0], str(codes))
        suite.check("two concurrent installs leave one whole pack",
                    open(final, "rb").read() == data and leftovers() == [])

        # Removing a pack while a predictor uses it: the predictor keeps its mapping and answers.
        proc = subprocess.Popen([INKLING, "predict", "--stdio", "--pack", final], env=env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        proc.stdin.write(json.dumps({"id": 1, "reset": True}) + "\n")
        proc.stdin.flush()
        proc.stdout.readline()
        r = run(["packs", "remove", "de"], env)
        suite.check("remove deletes the pack", r.returncode == 0 and not os.path.exists(final), r.stderr)
        proc.stdin.write(json.dumps({"id": 2, "before": "Ich möchte ge", "n": 3}) + "\n")
        proc.stdin.flush()
        reply = json.loads(proc.stdout.readline())
        proc.stdin.close()
        proc.wait(timeout=30)
        suite.check("a predictor using a removed pack keeps working", "gerne" in reply.get("words", []), str(reply))

        server.shutdown()
        server.server_close()
        r = run(["packs", "install", "de"], env)
        suite.check("server down: a clear failure", r.returncode != 0 and "failed" in r.stderr, r.stderr)
        suite.check("server down: nothing installed", not os.path.exists(final) and leftovers() == [])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{suite.passed} passed, {suite.failed} failed")
    return 1 if suite.failed else 0


if __name__ == "__main__":
    sys.exit(main())
