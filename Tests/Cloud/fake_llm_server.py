#!/usr/bin/python3
"""A fake OpenAI-compatible chat-completions server for testing `inkling-cloud`.

Standard library only. Listens on 127.0.0.1 on an ephemeral port and prints `PORT <n>` on
stdout once ready. Stops by itself: after --lifetime seconds, when its stdin reaches EOF (the
test process died), or on `POST /_control {"quit": true}`.

    POST <anything>/chat/completions   answers according to the current mode
    POST /_control  {"mode": ..., "reset": true, "delay": s, "content": str,
                     "fix_original": str, "fix_replacement": str, "quit": true}
    GET  /_stats    {"requests": n, "authorizations": [...], "last_body": {...}, "mode": ...}

Modes:
    agree        a verdict "agree" for every flag in the prompt
    disagree     a verdict "disagree" for every flag
    extra_fix    agree, plus a fix of the word `fix_original` (offsets taken from the prompt's
                 word list) to `fix_replacement`
    bad_spans    a verdict on a span that is no flag and a fix whose span does not hold its text
    content      the assistant content is exactly `content` (the test supplies the answer)
    malformed    assistant content that is not JSON
    bad_body     HTTP 200 whose body is not a chat-completions response
    error500     HTTP 500
    slow         wait `delay` seconds, then agree
    hang         never answer (until the client goes away or --hang-max seconds pass)
    big          a response body larger than the helper accepts
"""

import argparse
import json
import os
import select
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from lifeline import exit_when_stdin_closes

MAX_BODY = 1024 * 1024


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        self.mode = "agree"
        self.delay = 0.0
        self.content = ""
        self.fix_original = ""
        self.fix_replacement = ""
        self.requests = 0
        self.authorizations = []
        self.last_body = None

    def snapshot(self):
        return {
            "mode": self.mode,
            "requests": self.requests,
            "authorizations": list(self.authorizations),
            "last_body": self.last_body,
        }


STATE = State()
HANG_MAX = 30.0


def prompt_of(body):
    """The user message of the helper's prompt, parsed (the helper sends JSON there)."""
    try:
        return json.loads(body["messages"][-1]["content"])
    except (KeyError, IndexError, TypeError, ValueError):
        return {}


def verdicts_for(prompt, verdict):
    return [
        {"start": f["start"], "end": f["end"], "verdict": verdict, "explanation": "fake " + verdict}
        for f in prompt.get("flags", [])
    ]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, *args):
        pass

    def send_json(self, status, obj=None, raw=None):
        data = raw if raw is not None else json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length < 0 or length > MAX_BODY:
            return None
        return self.rfile.read(length)

    def client_gone(self, seconds):
        """Waits up to `seconds`; True as soon as the client closes the connection."""
        end = time.monotonic() + seconds
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return False
            ready, _, _ = select.select([self.connection], [], [], min(left, 0.05))
            if ready:
                try:
                    if not self.connection.recv(1, 0x40):  # MSG_DONTWAIT
                        return True
                except BlockingIOError:
                    pass
                except OSError:
                    return True

    def do_GET(self):
        if self.path == "/_stats":
            with STATE.lock:
                self.send_json(200, STATE.snapshot())
        else:
            self.send_json(404, {"error": "not found"})

    def do_POST(self):
        raw = self.read_body()
        if raw is None:
            self.send_json(413, {"error": "too large"})
            return
        if self.path == "/_control":
            self.control(json.loads(raw or b"{}"))
        elif self.path.endswith("/chat/completions"):
            self.chat(raw)
        else:
            self.send_json(404, {"error": "not found"})

    def control(self, command):
        with STATE.lock:
            if command.get("reset"):
                STATE.reset()
            for key in ("mode", "delay", "content", "fix_original", "fix_replacement"):
                if key in command:
                    setattr(STATE, key, command[key])
            snapshot = STATE.snapshot()
        self.send_json(200, snapshot)
        if command.get("quit"):
            threading.Thread(target=lambda: os._exit(0), daemon=True).start()

    def chat(self, raw):
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        with STATE.lock:
            STATE.requests += 1
            STATE.authorizations.append(self.headers.get("Authorization"))
            del STATE.authorizations[:-50]
            STATE.last_body = body
            mode, delay, content = STATE.mode, STATE.delay, STATE.content
            fix_original, fix_replacement = STATE.fix_original, STATE.fix_replacement
        prompt = prompt_of(body or {})

        if mode == "hang":
            self.client_gone(HANG_MAX)
            return
        if mode == "slow":
            if self.client_gone(float(delay)):
                return
            mode = "agree"
        if mode == "error500":
            self.send_json(500, {"error": {"message": "internal error"}})
            return
        if mode == "bad_body":
            self.send_json(200, raw=b"<html>this is not json</html>")
            return
        if mode == "big":
            self.send_json(200, raw=b'{"choices":[{"message":{"content":"' + b"x" * (300 * 1024) + b'"}}]}')
            return

        if mode in ("agree", "disagree"):
            answer = json.dumps({"verdicts": verdicts_for(prompt, mode), "fixes": []})
        elif mode == "extra_fix":
            fixes = [
                {"start": w["start"], "end": w["end"], "original": w["text"],
                 "replacement": fix_replacement, "explanation": "fake fix"}
                for w in prompt.get("words", []) if w.get("text") == fix_original
            ]
            answer = json.dumps({"verdicts": verdicts_for(prompt, "agree"), "fixes": fixes})
        elif mode == "bad_spans":
            verdicts = [dict(v, start=v["start"] + 1) for v in verdicts_for(prompt, "agree")]
            fixes = [{"start": 0, "end": 3, "original": "zzzq", "replacement": "fine", "explanation": "x"}]
            answer = json.dumps({"verdicts": verdicts, "fixes": fixes})
        elif mode == "malformed":
            answer = "Sure! Here is my answer: {verdicts: [agree"
        elif mode == "content":
            answer = content
        else:
            self.send_json(400, {"error": {"message": "unknown mode"}})
            return
        self.send_json(200, {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "model": (body or {}).get("model", ""),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}],
        })


class Server(ThreadingHTTPServer):
    """One thread per connection. A full listen backlog (socketserver's default is 5) drops
    connection attempts, which the client retries only after a second (TCP's SYN retransmission):
    the server load benchmark opens ~1000 upstream connections a second (HTTP/1.0, one each)."""

    daemon_threads = True
    request_queue_size = socket.SOMAXCONN


def main():
    global HANG_MAX
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lifetime", type=float, default=180.0, help="exit after this many seconds")
    parser.add_argument("--hang-max", type=float, default=30.0, help="longest a hanging request is held")
    parser.add_argument("--mode", default="agree", help="initial mode")
    parser.add_argument("--no-stdin-watch", action="store_true", help="do not exit on stdin EOF")
    args = parser.parse_args()
    HANG_MAX = args.hang_max
    STATE.mode = args.mode

    server = Server(("127.0.0.1", 0), Handler)
    print("PORT %d" % server.server_address[1], flush=True)

    def watchdog():
        time.sleep(args.lifetime)
        os._exit(0)

    threading.Thread(target=watchdog, daemon=True).start()
    if not args.no_stdin_watch:
        exit_when_stdin_closes()
    server.serve_forever(poll_interval=0.1)


if __name__ == "__main__":
    main()
