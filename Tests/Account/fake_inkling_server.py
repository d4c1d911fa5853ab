#!/usr/bin/python3
"""A fake Inkling Server (the HTTP API of issue 14) for testing the client side: `inkling
account` and `inkling-cloud` in account mode. Standard library only; the real server is
`inkling-server` (the tests use it when it is built, see conftest.py).

    fake_inkling_server.py [--user NAME:PASSWORD]... [--grace SECONDS] [--lifetime-token SECONDS]

Listens on 127.0.0.1 on an ephemeral port, prints `PORT <n>` once ready; exits when stdin
closes. Keeps only SHA-256 digests of tokens, like the real one. Its clock can be moved on
(`/_control {"advance": s}`) so grace periods and expiries are tested without waiting.

    POST /v1/devices, POST /v1/devices/rotate, DELETE /v1/devices/current, DELETE /v1/devices,
    POST /v1/check (agrees with every flag), GET /v1/health
    POST /_control {"ask_rotation": bool, "advance": s, "mint": user, "limited": seconds|null}
                   (limited: checks answer 429 with that Retry-After until set to null)  (mint: a token for
                   another device of `user`, returned as {"token": ...})
    GET  /_stats   {"checks": n, "rotations": n, "logins": n, "requests": [{"path", "auth",
                   "body"}...]}
"""

import argparse
import base64
import hashlib
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Cloud"))
from lifeline import exit_when_stdin_closes  # noqa: E402


def digest(token):
    return hashlib.sha256(token.encode()).hexdigest()


class State:
    def __init__(self, users, grace, token_lifetime):
        self.lock = threading.Lock()
        self.users = users
        self.grace = grace
        self.token_lifetime = token_lifetime
        self.offset = 0.0
        self.ask_rotation = False
        self.limited = None  # Retry-After seconds while checks answer 429
        self.oversized_login = False  # answer sign-ins with a body over the client's 64 KiB bound
        self.next_device = 1
        # digest -> {"user", "device", "expires", "valid_until" (None: current)}
        self.tokens = {}
        self.revoked_devices = set()
        self.checks = self.rotations = self.logins = 0
        self.requests = []

    def now(self):
        return time.time() + self.offset

    def mint(self, user, device):
        token = "ink_" + base64.urlsafe_b64encode(os.urandom(32)).decode().rstrip("=")
        expires = int(self.now() + self.token_lifetime)
        self.tokens[digest(token)] = {"user": user, "device": device, "expires": expires, "valid_until": None}
        return token, expires

    def authenticate(self, header):
        if not header or not header.startswith("Bearer "):
            return None
        entry = self.tokens.get(digest(header[len("Bearer "):]))
        if entry is None or entry["device"] in self.revoked_devices:
            return None
        now = self.now()
        if now >= entry["expires"]:
            return None
        if entry["valid_until"] is not None and now >= entry["valid_until"]:
            return None
        return entry


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_json(self, status, body=None, headers=()):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def do_GET(self):
        state = self.server.state
        if self.path == "/_stats":
            with state.lock:
                self.send_json(200, {"checks": state.checks, "rotations": state.rotations, "logins": state.logins,
                                     "requests": list(state.requests)})
        elif self.path == "/v1/health":
            self.send_json(200, {"status": "ok"})
        else:
            self.send_json(404, {"error": "not_found"})

    def do_POST(self):
        self.handle_request("POST")

    def do_DELETE(self):
        self.handle_request("DELETE")

    def handle_request(self, method):
        state = self.server.state
        raw = self.read_body()
        auth = self.headers.get("Authorization")
        with state.lock:
            if not self.path.startswith("/_"):
                state.requests.append({"method": method, "path": self.path, "auth": auth,
                                       "body": raw.decode("utf-8", "replace"),
                                       "headers": sorted(k.lower() for k in self.headers.keys())})
            if method == "POST" and self.path == "/_control":
                command = json.loads(raw or b"{}")
                if "limited" in command:
                    state.limited = command["limited"]
                if "ask_rotation" in command:
                    state.ask_rotation = bool(command["ask_rotation"])
                if "oversized_login" in command:
                    state.oversized_login = bool(command["oversized_login"])
                state.offset += float(command.get("advance", 0))
                answer = {}
                if "mint" in command:
                    device = state.next_device
                    state.next_device += 1
                    answer["token"], _ = state.mint(command["mint"], device)
                self.send_json(200, answer)
                return
            if method == "POST" and self.path == "/v1/devices":
                state.logins += 1
                try:
                    body = json.loads(raw)
                    user, password, name = body["username"], body["password"], body["device_name"]
                except (ValueError, KeyError, TypeError):
                    self.send_json(400, {"error": "bad_request"})
                    return
                if state.users.get(user) != password or not name:
                    self.send_json(401, {"error": "unauthorized"})
                    return
                device = state.next_device
                state.next_device += 1
                token, expires = state.mint(user, device)
                answer = {"token": token, "device_id": device, "expires_at": expires}
                if state.oversized_login:
                    answer["padding"] = "x" * (80 * 1024)
                self.send_json(201, answer)
                return
            entry = state.authenticate(auth)
            if entry is None:
                self.send_json(401, {"error": "unauthorized"})
                return
            if method == "POST" and self.path == "/v1/devices/rotate":
                state.rotations += 1
                valid_until = int(state.now() + state.grace)
                entry["valid_until"] = min(entry["valid_until"] or valid_until, valid_until)
                token, expires = state.mint(entry["user"], entry["device"])
                self.send_json(200, {"token": token, "device_id": entry["device"], "expires_at": expires,
                                     "old_token_valid_until": valid_until})
            elif method == "DELETE" and self.path == "/v1/devices/current":
                state.revoked_devices.add(entry["device"])
                self.send_json(204)
            elif method == "DELETE" and self.path == "/v1/devices":
                for other in state.tokens.values():
                    if other["user"] == entry["user"]:
                        state.revoked_devices.add(other["device"])
                self.send_json(204)
            elif method == "POST" and self.path == "/v1/check" and state.limited is not None:
                state.checks += 1
                self.send_json(429, {"error": "rate_limited", "retry_after": state.limited},
                               [("Retry-After", str(state.limited))])
            elif method == "POST" and self.path == "/v1/check":
                state.checks += 1
                body = json.loads(raw)
                verdicts = [{"start": f["start"], "end": f["end"], "verdict": "agree", "explanation": "a typo"}
                            for f in body.get("flags", [])]
                headers = [("Inkling-Rotate-Token", "1")] if state.ask_rotation else []
                self.send_json(200, {"verdicts": verdicts, "fixes": []}, headers)
            else:
                self.send_json(404, {"error": "not_found"})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--user", action="append", default=[])
    parser.add_argument("--grace", type=float, default=600)
    parser.add_argument("--lifetime-token", type=float, default=30 * 86400)
    args = parser.parse_args()
    users = dict(pair.split(":", 1) for pair in args.user)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.state = State(users, args.grace, args.lifetime_token)
    print("PORT %d" % server.server_address[1], flush=True)
    exit_when_stdin_closes()
    server.serve_forever()


if __name__ == "__main__":
    main()
