#!/usr/bin/python3
"""Hostile and unlucky cases for `inkling packs` (issue 11, items 8, 9, 12 and 15).

Covers: manifest URLs with gopher://, dict://, file:// or clear-text http:// to another host are
refused before anything is fetched (a listening socket gets no connection); redirects to such
URLs are refused too; a server dripping bytes just fast enough to dodge the stall detector is
abandoned at a deadline scaled to the pack's size; language codes such as ../../victim are
refused by every packs command; under umask 000 every folder and file created is 0700/0600;
partial downloads of a killed install are removed by the next command, and by the install itself
on SIGTERM/SIGINT; an unreadable pack is reported in one sentence naming the file.
Run: Tests/Packs/run.sh (needs the release build).
"""
import hashlib
import http.server
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from german_pack import build_german_pack  # noqa: E402
from suite import Suite  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
INKLING = os.environ.get("INKLING", os.path.join(ROOT, ".build", "release", "inkling"))

# A generous bound for commands that must end early; the drip below would take far longer.
QUICK = 45


class Listener:
    """A TCP socket on every interface that counts the connections it is offered."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("0.0.0.0", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.received = b""
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            conn.settimeout(1)
            try:
                self.received += conn.recv(4096)
            except OSError:
                pass
            conn.close()


class Handler(http.server.BaseHTTPRequestHandler):
    files = {}
    redirects = {}
    drip_size = 0

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path in self.redirects:
            self.send_response(302)
            self.send_header("Location", self.redirects[self.path])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path.startswith("/drip"):
            # 600 bytes a second: above libcurl's stall limit, far too slow for the pack's size.
            self.send_response(200)
            self.send_header("Content-Length", str(self.drip_size))
            self.end_headers()
            try:
                for _ in range(self.drip_size // 60):
                    self.wfile.write(b"\0" * 60)
                    self.wfile.flush()
                    time.sleep(0.1)
            except OSError:
                pass
            return
        body = self.files.get(self.path)
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def run(args, env, timeout=120, umask=None):
    preexec = (lambda: os.umask(umask)) if umask is not None else None
    try:
        return subprocess.run([INKLING] + args, env=env, capture_output=True, text=True, timeout=timeout,
                              preexec_fn=preexec)
    except subprocess.TimeoutExpired as expired:
        return subprocess.CompletedProcess(expired.cmd, -999, expired.stdout or "", f"timed out after {timeout} s")


def one_sentence(stderr):
    """A single `inkling: …` line, no Foundation dump."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    return (len(lines) == 1 and lines[0].startswith("inkling: ")
            and "CocoaError" not in stderr and "userInfo" not in stderr)


def main():
    suite = Suite()
    work = tempfile.mkdtemp(prefix="inkling-pack-safety-")
    try:
        data = build_german_pack(INKLING, work)
        sha = hashlib.sha256(data).hexdigest()
        listener = Listener()
        lport = listener.port

        def entry(language, url, size=len(data), digest=sha):
            return {"language": language, "displayName": language.upper(), "version": "1", "minEngineVersion": "0.1.0",
                    "file": f"{language}.inkpack", "size": size, "sha256": digest, "url": url}

        # A valid pack that a file:// entry would copy (its size and hash match the manifest).
        local_copy = os.path.join(work, "local-copy.inkpack")
        shutil.copy(os.path.join(work, "de.inkpack"), local_copy)
        drip_size = 60_000  # the drip would need 100 s; the deadline is 2 s + 60000 / 16 KiB/s ≈ 6 s
        Handler.drip_size = drip_size
        hostile = {
            "go": f"gopher://127.0.0.1:{lport}/_PING%0d%0a",
            "di": f"dict://127.0.0.1:{lport}/d:inkling",
            "fi": "file://" + local_copy,
            "fj": "file:" + local_copy,
            "ht": f"http://0.0.0.0:{lport}/de.inkpack",  # 0.0.0.0 reaches this machine, but it is no loopback name
            "hx": f"http://192.0.2.1:{lport}/de.inkpack",
        }
        entries = [entry("de", "packs/de.inkpack")] + [entry(code, url) for code, url in hostile.items()]
        entries += [
            entry("rg", "/redirect/gopher"), entry("rf", "/redirect/file"), entry("rn", "/redirect/network"),
            entry("rl", "/redirect/loopback"), entry("dr", "/drip.inkpack", size=drip_size, digest="0" * 64),
        ]
        Handler.files = {"/manifest.json": json.dumps({"formatVersion": 1, "packs": entries}).encode(),
                         "/packs/de.inkpack": data}
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        port = server.server_address[1]
        Handler.redirects = {
            "/redirect/gopher": f"gopher://127.0.0.1:{lport}/_PING",
            "/redirect/file": "file://" + local_copy,
            "/redirect/network": f"http://0.0.0.0:{lport}/de.inkpack",
            "/redirect/loopback": f"http://127.0.0.1:{port}/packs/de.inkpack",
        }
        url = f"http://127.0.0.1:{port}/manifest.json"

        home = os.path.join(work, "home")
        env = dict(os.environ, XDG_DATA_HOME=os.path.join(home, "data"), HOME=home, INKLING_MANIFEST_URL=url,
                   INKLING_DOWNLOAD_BASE_SECONDS="2")
        for proxy in ["http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"]:
            env.pop(proxy, None)
        data_folder = os.path.join(home, "data", "inkling")
        packs = os.path.join(data_folder, "packs")

        def installed(code):
            return os.path.exists(os.path.join(packs, f"{code}.inkpack"))

        def partials():
            found = []
            for folder in (data_folder, packs):
                if os.path.isdir(folder):
                    found += [os.path.join(folder, n) for n in os.listdir(folder) if ".part-" in n]
            return found

        # --- item 12: under umask 000 everything created is private -------------------------------
        r = run(["packs", "update"], env, umask=0)
        suite.check("update works", r.returncode == 0, r.stderr)
        suite.check("update names every refused pack URL",
                    all(f"'{code}' pack's URL '{hostile[code]}'" in r.stderr for code in hostile)
                    and "'de' pack's URL" not in r.stderr, r.stderr)
        r = run(["packs", "list"], env)
        listed = {line.split("\t")[0]: line.split("\t")[-1] for line in r.stdout.splitlines()}
        suite.check("list marks refused URLs", all(listed.get(code, "").startswith("refused URL") for code in hostile)
                    and listed.get("de") == "available", r.stdout)
        r = run(["packs", "install", "de"], env, umask=0)
        suite.check("install works", r.returncode == 0 and installed("de"), r.stderr)
        learn_input = os.path.join(work, "learn.txt")
        with open(learn_input, "w") as f:
            f.write("Ich möchte gerne ein Haus haben.\n")
        r = run(["learn", learn_input, "--pack", os.path.join(packs, "de.inkpack")], env, umask=0)
        suite.check("learn creates the user store",
                    r.returncode == 0 and os.path.exists(os.path.join(data_folder, "user.sqlite3")), r.stderr)
        user_file = os.path.join(work, "user-model.tsv")
        subprocess.run([INKLING, "predict", "--stdio", "--learn", "--user-file", user_file], env=env, input=json.dumps(
            {"id": 1, "commit": "zorblax", "context": "hello"}) + "\n", capture_output=True, text=True, timeout=120,
            preexec_fn=lambda: os.umask(0))
        modes = {}
        for top in (os.path.join(home, "data"),):
            for folder, dirs, files in os.walk(top):
                modes[folder] = stat.S_IMODE(os.lstat(folder).st_mode)
                for name in files:
                    modes[os.path.join(folder, name)] = stat.S_IMODE(os.lstat(os.path.join(folder, name)).st_mode)
        if os.path.exists(user_file):
            modes[user_file] = stat.S_IMODE(os.lstat(user_file).st_mode)
        open_to_others = {path: oct(mode) for path, mode in modes.items() if mode & 0o077}
        suite.check("under umask 000 no created folder or file is open to others", open_to_others == {},
                    str(open_to_others))
        expected = {os.path.join(home, "data"): 0o700, data_folder: 0o700, packs: 0o700,
                    os.path.join(packs, "de.inkpack"): 0o600, os.path.join(data_folder, "manifest.json"): 0o600,
                    os.path.join(data_folder, "manifest.source"): 0o600,
                    os.path.join(data_folder, "user.sqlite3"): 0o600}
        wrong = {path: oct(modes.get(path, 0)) for path, mode in expected.items() if modes.get(path) != mode}
        suite.check("folders are 0700 and files 0600", wrong == {}, str(wrong))

        # --- item 8: only https (http to this machine), checked before any fetch ------------------
        for code, hostile_url in hostile.items():
            before = listener.connections
            r = run(["packs", "install", code], env, timeout=QUICK)
            scheme = hostile_url.split(":")[0]
            suite.check(f"{scheme} entry ({code}) is refused with a clear message",
                        r.returncode not in (0, -999) and "refused" in r.stderr and "https://" in r.stderr
                        and one_sentence(r.stderr), r.stderr)
            suite.check(f"{scheme} entry ({code}): nothing fetched, nothing installed",
                        listener.connections == before and not installed(code) and partials() == [],
                        f"connections {listener.connections - before}, partials {partials()}")
        r = run(["packs", "update", "--manifest-url", f"gopher://127.0.0.1:{lport}/_x"], env, timeout=QUICK)
        suite.check("a gopher manifest URL is refused before any fetch",
                    r.returncode not in (0, -999) and "https://" in r.stderr and listener.connections == 0, r.stderr)
        r = run(["packs", "update", "--manifest-url", f"http://0.0.0.0:{lport}/manifest.json"], env, timeout=QUICK)
        suite.check("a clear-text manifest URL to another host is refused before any fetch",
                    r.returncode not in (0, -999) and "only to this machine" in r.stderr
                    and listener.connections == 0, r.stderr)
        suite.check("the listener never got a byte", listener.received == b"", repr(listener.received[:80]))

        for code, words in [("rg", "gopher"), ("rf", "file"), ("rn", "clear-text http to another host")]:
            before = listener.connections
            r = run(["packs", "install", code], env, timeout=QUICK)
            suite.check(f"a redirect to {words} is refused",
                        r.returncode not in (0, -999) and "the redirect to" in r.stderr and not installed(code),
                        r.stderr)
            suite.check(f"a redirect to {words} fetches nothing", listener.connections == before and partials() == [])
        # A redirect between loopback URLs still works (mirrors and test servers use them).
        r = run(["packs", "install", "rl"], env, timeout=QUICK)
        suite.check("a redirect to loopback http is followed",
                    "redirect" not in r.stderr and "it is a 'de' pack" in r.stderr, r.stderr)

        started = time.monotonic()
        r = run(["packs", "install", "dr"], env, timeout=QUICK)
        took = time.monotonic() - started
        suite.check("a drip server is abandoned at the deadline",
                    r.returncode not in (0, -999) and "took longer" in r.stderr and partials() == [],
                    f"{took:.1f} s: {r.stderr}")
        print(f"     (drip abandoned after {took:.1f} s; the whole drip would take {drip_size / 600:.0f} s)")

        # Same class: the cloud endpoint's loopback test parses the host too (not a prefix match).
        schemas = os.path.join(work, "schemas")
        os.makedirs(schemas)
        for name in os.listdir(os.path.join(ROOT, "data", "gschema")):
            shutil.copy(os.path.join(ROOT, "data", "gschema", name), schemas)
        subprocess.run(["glib-compile-schemas", schemas], check=True)
        config_env = dict(env, GSETTINGS_SCHEMA_DIR=schemas, GSETTINGS_BACKEND="memory")
        for endpoint in ["http://localhost.evil.example/v1", "http://127.0.0.1.evil.example/v1",
                         "http://127.0.0.1@evil.example/v1"]:
            r = run(["config", "set", "cloud-endpoint", endpoint], config_env, timeout=QUICK)
            suite.check(f"config refuses the cloud endpoint {endpoint}", r.returncode == 1 and "https://" in r.stderr,
                        f"{r.returncode} {r.stderr}")
        r = run(["config", "set", "cloud-endpoint", "http://127.0.0.1:11434/v1"], config_env, timeout=QUICK)
        suite.check("config accepts a loopback cloud endpoint", r.returncode == 0, r.stderr)

        # --- item 9: language codes are checked by every command ----------------------------------
        victim = os.path.join(home, "victim.inkpack")
        with open(victim, "w") as f:
            f.write("precious")
        traversal = "../../../victim"
        assert os.path.abspath(os.path.join(packs, traversal + ".inkpack")) == victim
        for command in (["packs", "remove", traversal], ["packs", "verify", traversal], ["packs", "install", traversal],
                        ["packs", "remove", "de/../../../../victim"], ["packs", "remove", ".de"],
                        ["packs", "remove", "de.x"]):
            r = run(command, env, timeout=QUICK)
            suite.check(f"'{' '.join(command)}' is refused", r.returncode == 2 and "is not a language code" in r.stderr
                        and one_sentence(r.stderr), f"{r.returncode} {r.stderr}")
        suite.check("the victim file survives", os.path.exists(victim) and open(victim).read() == "precious")
        built = os.path.join(work, "bad-language.inkpack")
        r = run(["pack", "build", "--prepared", os.path.join(work, "prepared"), "-o", built, "--language", "../de"],
                env, timeout=QUICK)
        suite.check("'pack build --language ../de' is refused",
                    r.returncode == 2 and "is not a language code" in r.stderr
                    and not os.path.exists(built), f"{r.returncode} {r.stderr}")

        # --- item 15: partial downloads do not outlive their install -------------------------------
        def slow_install():
            proc = subprocess.Popen([INKLING, "packs", "install", "dr"],
                                    env=dict(env, INKLING_DOWNLOAD_BASE_SECONDS="120"),
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            deadline = time.monotonic() + QUICK

            def bytes_arrived():
                try:
                    return any(os.path.getsize(path) > 0 for path in partials())
                except OSError:
                    return False
            # Mid-download: the partial file exists and holds some bytes.
            while not bytes_arrived() and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.05)
            return proc

        proc = slow_install()
        left = partials()
        suite.check("a slow install writes a partial file", len(left) == 1, str(left))
        r = run(["packs", "list"], env, timeout=QUICK)
        suite.check("list keeps the partial file of an install still running",
                    all(os.path.exists(p) for p in left) and left != [])
        proc.kill()
        proc.wait(timeout=30)
        suite.check("kill -9 leaves the partial file behind", all(os.path.exists(p) for p in left) and left != [])
        r = run(["packs", "list"], env, timeout=QUICK)
        suite.check("the next list removes it", r.returncode == 0 and partials() == [], str(partials()))

        proc = slow_install()
        proc.kill()
        proc.wait(timeout=30)
        r = run(["packs", "install", "de"], env, timeout=QUICK)
        suite.check("the next install removes it", r.returncode == 0 and partials() == [], str(partials()) + r.stderr)

        for signal_number in (signal.SIGTERM, signal.SIGINT):
            proc = slow_install()
            had = partials()
            proc.send_signal(signal_number)
            code = proc.wait(timeout=30)
            suite.check(f"{signal_number.name} mid-download removes the partial file at once",
                        had != [] and partials() == [] and code == -signal_number, f"{had} {partials()} exit {code}")

        # --- item 15: an unreadable pack is one sentence naming the file ---------------------------
        folder_pack = os.path.join(work, "folder.inkpack")
        os.makedirs(folder_pack)
        garbage = os.path.join(work, "garbage.inkpack")
        with open(garbage, "wb") as f:
            f.write(os.urandom(5000))
        # The reason in the system's words or Inkling's ("Is a directory", "it is a folder").
        for path, reasons in [(folder_pack, ("directory", "folder")), (garbage, ("not an inkling language pack",))]:
            for command in (["suggest", "--pack", path, "Ich"], ["pack", "info", path]):
                r = run(command, env, timeout=QUICK)
                suite.check(f"'{command[0]}' on {os.path.basename(path)}: one clear sentence naming the file",
                            r.returncode == 1 and one_sentence(r.stderr) and any(w in r.stderr.lower() for w in reasons)
                            and path in r.stderr, r.stderr)
        if os.geteuid() != 0:
            locked = os.path.join(work, "locked.inkpack")
            shutil.copy(os.path.join(work, "de.inkpack"), locked)
            os.chmod(locked, 0)
            r = run(["suggest", "--pack", locked, "Ich"], env, timeout=QUICK)
            suite.check("an unreadable (chmod 000) pack: one clear sentence",
                        r.returncode == 1 and one_sentence(r.stderr)
                        and "permission denied" in r.stderr.lower() and locked in r.stderr, r.stderr)
        else:
            print("skip an unreadable (chmod 000) pack: running as root")
        de_pack = os.path.join(packs, "de.inkpack")
        os.remove(de_pack)
        os.makedirs(de_pack)
        r = run(["packs", "verify", "de"], env, timeout=QUICK)
        suite.check("verify names a folder in place of a pack", r.returncode == 1 and "not a regular file" in r.stdout
                    and de_pack in r.stdout and "CocoaError" not in r.stdout + r.stderr, r.stdout + r.stderr)
        os.rmdir(de_pack)
        missing = os.path.join(work, "missing", "words.txt")
        r = run(["learn", missing], env, timeout=QUICK)
        suite.check("learn names a missing input file in one sentence", r.returncode == 1 and one_sentence(r.stderr)
                    and missing in r.stderr and "no such file" in r.stderr.lower(), r.stderr)

        server.shutdown()
        server.server_close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{suite.passed} passed, {suite.failed} failed")
    return 1 if suite.failed else 0


if __name__ == "__main__":
    sys.exit(main())
