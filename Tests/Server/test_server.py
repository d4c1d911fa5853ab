"""Integration and security tests of `inkling-server` on loopback, each over SQLite and
PostgreSQL (the same suite): the device-token lifecycle, limits, sign-in throttling, the
gateway, and the security assertions of issue 14."""

import http.client
import json
import select
import socket
import subprocess
import threading
import time

import pytest

import conftest

from conftest import BACKENDS, PASSWORDS, UPSTREAM_KEY, dump_database

both = pytest.mark.parametrize("backend", BACKENDS)


def altered(token):
    last = "A" if token[-1] != "A" else "B"
    return token[:-1] + last


@both
def test_health_answers_without_user_data(make_server, backend):
    server = make_server()
    response = server.request("GET", "/v1/health")
    assert response.status == 200
    assert response.json() == {"status": "ok"}


@both
def test_sign_in_check_and_the_upstream_sees_only_the_servers_key(make_server, upstream, backend):
    server = make_server()
    response = server.sign_in()
    assert response.status == 201
    answer = response.json()
    assert answer["token"].startswith("ink_") and len(answer["token"]) == 47
    assert answer["expires_at"] > time.time()
    upstream.control(reset=True, mode="agree")
    check = server.check(answer["token"])
    assert check.status == 200, check.body
    body = check.json()
    assert body["verdicts"] == [{"start": 6, "end": 9, "verdict": "agree", "explanation": "fake agree"}]
    assert body["fixes"] == []
    stats = upstream.stats()
    assert stats["authorizations"] == ["Bearer " + UPSTREAM_KEY]
    assert answer["token"] not in json.dumps(stats)


@both
def test_server_validates_the_upstream_answer_like_the_helper(make_server, upstream, backend):
    server = make_server()
    token = server.token()
    upstream.control(reset=True, mode="bad_spans")
    body = server.check(token).json()
    assert body == {"verdicts": [], "fixes": []}


@both
def test_missing_wrong_unknown_and_malformed_tokens_get_401(make_server, backend):
    server = make_server()
    token = server.token()
    for candidate in [None, altered(token), "ink_" + "A" * 43, "", "Bearer", token + "x", token.upper()]:
        response = server.check(candidate)
        assert response.status == 401, candidate
        assert response.json()["error"] == "unauthorized"
    response = server.request("POST", "/v1/check", {"sentence": "x", "language": "en", "flags": []},
                              headers={"Authorization": "Basic " + token})
    assert response.status == 401


@both
def test_wrong_password_and_unknown_user_get_401(make_server, backend):
    server = make_server()
    assert server.sign_in("ann", "not-the-password").status == 401
    assert server.sign_in("nobody", "whatever").status == 401


@both
def test_logout_revokes_at_once(make_server, backend):
    server = make_server()
    token = server.token()
    assert server.check(token).status == 200
    assert server.request("DELETE", "/v1/devices/current", token=token).status == 204
    assert server.check(token).status == 401
    assert server.request("POST", "/v1/devices/rotate", token=token).status == 401


@both
def test_expired_token_gets_401(make_server, backend):
    server = make_server({"tokens": {"lifetime": "2"}})
    token = server.token()
    assert server.check(token).status == 200
    time.sleep(2.2)
    assert server.check(token).status == 401


@both
def test_rotation_grace_then_401(make_server, backend):
    server = make_server({"tokens": {"grace": "1"}})
    old = server.token()
    response = server.request("POST", "/v1/devices/rotate", token=old)
    assert response.status == 200
    answer = response.json()
    assert set(answer) == {"token", "device_id", "expires_at", "old_token_valid_until"}
    new = answer["token"]
    assert new != old
    assert server.check(old).status == 200
    assert server.check(new).status == 200
    # The old token cannot fork the device with a second rotation.
    assert server.request("POST", "/v1/devices/rotate", token=old).status == 401
    time.sleep(1.2)
    assert server.check(old).status == 401
    assert server.check(new).status == 200


@both
def test_rotation_is_advised_by_a_header(make_server, backend):
    server = make_server({"tokens": {"rotate_after": "1"}})
    token = server.token()
    time.sleep(1.1)
    response = server.check(token)
    assert response.status == 200
    assert response.headers.get("Inkling-Rotate-Token") == "1"


@both
def test_sign_out_everywhere_and_users_are_isolated(make_server, backend):
    server = make_server()
    laptop = server.token("ann", "laptop")
    desktop = server.token("ann", "desktop")
    bobs = server.token("bob", "phone")
    # Bob signing out everywhere touches only Bob.
    assert server.request("DELETE", "/v1/devices", token=bobs).status == 204
    assert server.check(bobs).status == 401
    assert server.check(laptop).status == 200
    assert server.check(desktop).status == 200
    bobs = server.token("bob", "phone")
    assert server.request("DELETE", "/v1/devices", token=laptop).status == 204
    assert server.check(laptop).status == 401
    assert server.check(desktop).status == 401
    assert server.check(bobs).status == 200
    # No endpoint takes a device id: nothing to aim at another user's devices.
    assert server.request("DELETE", "/v1/devices/1", token=bobs).status == 404
    listing = server.admin("devices", "ann").stdout.decode()
    assert "revoked" in listing and "phone" not in listing


@both
def test_checks_per_minute_429_with_retry_after(make_server, backend):
    server = make_server({"limits": {"checks_per_minute": "3"}})
    token = server.token()
    for _ in range(3):
        assert server.check(token).status == 200
    response = server.check(token)
    assert response.status == 429
    retry = int(response.headers["Retry-After"])
    assert 1 <= retry <= 60
    assert response.json()["error"] == "rate_limited"
    # Another user has their own budget.
    assert server.check(server.token("bob")).status == 200


@both
def test_characters_per_day_429(make_server, backend):
    server = make_server({"limits": {"characters_per_day": "30"}})
    token = server.token()
    assert server.check(token, "I saw teh cat.").status == 200
    response = server.check(token, "I saw teh cat and the dog too.")
    assert response.status == 429 and int(response.headers["Retry-After"]) > 60


@both
def test_device_cap(make_server, backend):
    server = make_server({"limits": {"devices": "2"}})
    server.token(device="one")
    server.token(device="two")
    response = server.sign_in(device="three")
    assert response.status == 429
    assert response.json()["error"] == "too_many_devices"


@both
def test_brute_force_sign_in_is_throttled(make_server, backend):
    server = make_server({"limits": {"login_failures_per_user": "3", "login_failures_per_address": "6"}})
    for attempt in range(3):
        assert server.sign_in("ann", "guess-%d" % attempt).status == 401
    response = server.sign_in("ann")
    assert response.status == 429
    assert int(response.headers["Retry-After"]) >= 1
    # Per address too: unknown names from the same address.
    for attempt in range(3):
        server.sign_in("ghost%d" % attempt, "x")
    assert server.sign_in("bob").status == 429


@both
def test_bodies_over_16_kib_get_413(make_server, backend):
    server = make_server()
    token = server.token()
    sentence = "a" * (17 * 1024)
    response = server.request("POST", "/v1/check", {"sentence": sentence, "language": "en", "flags": []}, token=token)
    assert response.status == 413
    # A declared length far over the limit is refused without reading the body.
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(b"POST /v1/check HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token.encode() +
                  b"\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n" + b"{" * 1000)
        reply = s.recv(4096)
    assert reply.startswith(b"HTTP/1.1 413"), reply[:80]
    # Chunked, without a length, far over the limit: cut or refused, and the server lives on.
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(b"POST /v1/check HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        try:
            for _ in range(200):
                s.sendall(b"1000\r\n" + b"x" * 4096 + b"\r\n")
            s.sendall(b"0\r\n\r\n")
            reply = s.recv(4096)
        except OSError:
            reply = b""
    assert reply == b"" or reply.startswith(b"HTTP/1.1 413")
    assert server.request("GET", "/v1/health").status == 200


@both
def test_oversized_headers_are_refused(make_server, backend):
    server = make_server()
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"y" * (64 * 1024) + b"\r\n\r\n")
        try:
            reply = s.recv(4096)
        except OSError:
            reply = b""
    assert not reply.startswith(b"HTTP/1.1 200")
    assert server.request("GET", "/v1/health").status == 200


@both
def test_sql_metacharacters_in_every_field(make_server, backend):
    server = make_server()
    nasty = ["' OR '1'='1", "ann'; DROP TABLE users; --", "\"; DELETE FROM tokens; --", "$1 \\x00 %s ?1", "ann\u0000"]
    for value in nasty:
        assert server.sign_in(value, value).status in (400, 401)
        assert server.sign_in("ann", value).status == 401
    token = server.token(device="it's \"my\" laptop; DROP TABLE devices; --")
    for value in nasty:
        sentence = "Robert'); DROP TABLE users;-- " + value.replace("\u0000", "")
        response = server.check(token, sentence=sentence, flags=[])
        assert response.status == 200, response.body
        response = server.request("POST", "/v1/check", {"sentence": "ok", "language": value, "flags": []}, token=token)
        assert response.status in (200, 400)
    # Every table is still there and the user still signs in.
    assert server.token("bob")
    assert "ann" in server.admin("user", "list").stdout.decode()
    assert "my" in server.admin("devices", "ann").stdout.decode()
    assert server.admin("user", "add", "x'; DROP TABLE users; --", input="pw\n", check=False).returncode != 0


@both
def test_database_holds_no_token_no_password_and_no_typed_text(make_server, upstream, backend):
    server = make_server()
    upstream.control(reset=True, mode="agree")
    token = server.token()
    sentence = "Zanzibar quokkas juggle marmalade obliquely."
    flags = [{"start": 9, "end": 16, "word": "quokkas", "replacements": ["quokka"]}]
    assert server.check(token, sentence, flags=flags).status == 200
    rotated = server.request("POST", "/v1/devices/rotate", token=token).json()["token"]
    assert server.check(rotated, sentence, flags=[]).status == 200
    dump = dump_database(server)
    assert len(dump) > 0
    for secret in [token, rotated, token[4:], rotated[4:], PASSWORDS["ann"], sentence, "quokkas", "marmalade"]:
        assert secret.encode() not in dump, secret
    assert b"$argon2id$" in dump


@both
def test_slow_clients_are_cut_without_holding_a_worker(make_server, backend):
    # One worker thread and a 2-second request deadline: dribbling clients must not stop a
    # normal request from being answered, and are cut long before their dribble would end.
    server = make_server({"server": {"threads": "1", "request_timeout": "2", "idle_timeout": "30"}})
    token = server.token()
    cut_after = []

    def dribble():
        started = time.time()
        s = socket.create_connection(("127.0.0.1", server.port), timeout=70)
        request = b"POST /v1/check HTTP/1.1\r\nHost: x\r\nContent-Length: 60\r\n\r\n" + b"x" * 60
        try:
            for byte in request:
                s.sendall(bytes([byte]))
                time.sleep(0.5)  # the whole request would take about 60 s
                if time.time() - started > 65:
                    break
            s.recv(1)
        except OSError:
            pass
        cut_after.append(time.time() - started)
        s.close()

    threads = [threading.Thread(target=dribble) for _ in range(3)]
    for thread in threads:
        thread.start()
    time.sleep(0.5)
    started = time.time()
    assert server.check(token).status == 200
    assert server.request("GET", "/v1/health").status == 200
    assert time.time() - started < 5
    for thread in threads:
        thread.join(timeout=70)
    assert len(cut_after) == 3
    assert max(cut_after) < 15, cut_after


@both
def test_checks_waiting_on_a_slow_upstream_do_not_hold_the_http_threads(make_server, upstream, backend):
    # Two HTTP threads and four checks whose upstream answers only after 5 s: while they wait,
    # a health request and a sign-in are answered. Asserted on the order of completion, not on
    # times: the fast requests finish before any of the slow checks.
    server = make_server({"server": {"threads": "2"}, "upstream": {"timeout_ms": "15000"}})
    token = server.token()
    upstream.control(reset=True, mode="slow", delay=5)
    finished, upstream_requests = slow_checks_then_health_and_sign_in(server, token, upstream, "I saw teh cat %d.")
    assert upstream_requests == 4
    assert finished[:2] == [("health", 200), ("sign-in", 201)], finished
    assert sorted(finished[2:]) == [("check", 200)] * 4, finished


def slow_checks_then_health_and_sign_in(server, token, upstream, sentence):
    """Four checks against the (slow) upstream; once at least as many as there are HTTP threads
    wait on it, a health request and a sign-in. Returns (what, status) in order of completion and
    the upstream's request count, and puts the upstream back to answering at once."""
    finished = []
    lock = threading.Lock()

    def note(what, status):
        with lock:
            finished.append((what, status))

    def slow_check(n):
        note("check", server.check(token, sentence % n).status)

    threads = [threading.Thread(target=slow_check, args=(n,)) for n in range(4)]
    try:
        for thread in threads:
            thread.start()
        deadline = time.time() + 20
        while upstream.stats()["requests"] < 2 and time.time() < deadline:
            time.sleep(0.02)
        assert upstream.stats()["requests"] >= 2
        note("health", server.request("GET", "/v1/health").status)
        note("sign-in", server.sign_in(device="phone").status)
        for thread in threads:
            thread.join(timeout=60)
        return finished, upstream.stats()["requests"]
    finally:
        upstream.control(reset=True, mode="agree", delay=0)


@both
def test_a_fast_upstream_turning_slow_holds_at_most_half_the_http_threads(make_server, upstream, backend):
    # While the upstream is fast, checks are answered on the HTTP threads themselves (no hand-over);
    # when it turns slow, at most half of them (here one of two) are caught waiting on it, every
    # other check goes to the upstream threads, and a health request and a sign-in are answered
    # before any slow check. The other connections of the HTTP thread caught in the slow call wait
    # with it and are still answered: in place only when the upstream timeout is under the idle
    # timeout. (inline_check_ms is generous so a loaded machine still counts the warm-up calls as
    # fast.)
    server = make_server({"server": {"threads": "2", "inline_check_ms": "1000", "idle_timeout": "20"},
                          "upstream": {"timeout_ms": "15000"}})
    assert "checks_in_place=1" in server.log_text()
    token = server.token()
    upstream.control(reset=True, mode="agree")
    for n in range(20):
        assert server.check(token, "I saw teh cat %d." % n).status == 200
    assert "on=http" in server.log_text()
    upstream.control(reset=True, mode="slow", delay=5)
    finished, _ = slow_checks_then_health_and_sign_in(server, token, upstream, "I saw teh dog %d.")
    assert finished[:2] == [("health", 200), ("sign-in", 201)], finished
    assert sorted(finished[2:]) == [("check", 200)] * 4, finished
    log = server.log_text()
    assert "on=pool" in log


@both
def test_a_hundred_devices_checking_at_once_are_all_answered(make_server, upstream, backend):
    # 100 connections send a check at the same moment (the load benchmark's 100 devices): every
    # one is answered 200 (none refused, cut, timed out or turned away by a queue bound).
    server = make_server({"limits": {"checks_per_minute": "100000", "checks_per_day": "1000000",
                                     "devices": "100"}})
    tokens = [server.token("ann" if n % 2 == 0 else "bob", "device-%d" % n) for n in range(10)]
    upstream.control(reset=True, mode="agree")
    start = threading.Barrier(100)
    statuses = []
    lock = threading.Lock()

    def device(n):
        body = json.dumps({"sentence": "I saw teh cat %d." % n, "language": "en",
                           "flags": [{"start": 6, "end": 9, "word": "teh", "replacements": ["the"]}]})
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        try:
            start.wait(timeout=60)
            connection.request("POST", "/v1/check", body, {"Content-Type": "application/json",
                                                           "Authorization": "Bearer " + tokens[n % 10]})
            status = connection.getresponse().status
        except (OSError, http.client.HTTPException) as error:
            status = repr(error)
        finally:
            connection.close()
        with lock:
            statuses.append(status)

    threads = [threading.Thread(target=device, args=(n,)) for n in range(100)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert statuses == [200] * 100, sorted(map(str, statuses))


def test_the_fake_upstream_takes_a_burst_of_connections_at_once(upstream):
    # The server opens up to upstream_threads connections to the upstream at once, one per check
    # (the fake upstream speaks HTTP/1.0). With socketserver's listen backlog of 5 the kernel
    # dropped the rest, retried only after 1 s and 3 s: the load benchmark's 1-3 s p99 and its
    # timeouts at 100 devices. Every connection of a burst of 64 is established at once now
    # (the kernel completes it on loopback, however busy the fake is; 1 s is the retry's delay).
    sockets = [socket.socket() for _ in range(64)]
    try:
        for s in sockets:
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", upstream.port))
        pending = set(sockets)
        deadline = time.time() + 0.9
        while pending and time.time() < deadline:
            _, writable, _ = select.select([], list(pending), [], max(0, deadline - time.time()))
            pending -= set(writable)
        assert not pending, "%d of 64 connections not established within 0.9 s" % len(pending)
        assert all(s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0 for s in sockets)
    finally:
        for s in sockets:
            s.close()


@both
def test_logs_hold_no_token_password_name_or_sentence(make_server, upstream, backend):
    server = make_server()
    upstream.control(reset=True, mode="agree")
    token = server.token()
    sentence = "Pangolins waltz beneath xylophones."
    server.check(token, sentence, flags=[])
    server.check(altered(token), sentence, flags=[])
    server.sign_in("ann", "wrong-password-Zebra")
    server.request("POST", "/v1/devices/rotate", token=token)
    upstream.control(mode="error500")
    server.check(token, sentence, flags=[])
    upstream.control(reset=True, mode="agree")
    server.stop()
    log = server.log_text()
    assert "route=/v1/check status=200" in log
    for secret in [token, token[4:], altered(token), PASSWORDS["ann"], "wrong-password-Zebra", sentence, "Pangolins",
                   UPSTREAM_KEY, "ann", "127.0.0.1"]:
        assert secret not in log, secret


@both
def test_upstream_failures_answer_502_then_the_breaker_503(make_server, upstream, backend):
    server = make_server()
    token = server.token()
    upstream.control(reset=True, mode="error500")
    statuses = [server.check(token).status for _ in range(4)]
    upstream.control(reset=True, mode="agree")
    assert statuses[:3] == [502, 502, 502]
    assert statuses[3] == 503
    time.sleep(0.3)
    assert server.check(token).status == 200


@both
def test_unknown_paths_and_methods(make_server, backend):
    server = make_server()
    assert server.request("GET", "/v1/nothing").status == 404
    assert server.request("GET", "/v1/check").status == 405
    assert server.request("POST", "/v1/devices", raw=b"{not json").status == 400


@both
def test_admin_commands(make_server, backend):
    server = make_server()
    token = server.token(device="laptop")
    listing = server.admin("user", "list").stdout.decode()
    assert "ann\tactive\t1 device(s)" in listing
    devices = server.admin("devices", "ann").stdout.decode()
    device_id = devices.split("\t")[0]
    assert "laptop" in devices and "live until" in devices
    assert server.admin("revoke", "bob", device_id, check=False).returncode != 0
    assert server.check(token).status == 200
    server.admin("revoke", "ann", device_id)
    assert server.check(token).status == 401
    token = server.token()
    server.admin("user", "disable", "ann")
    assert server.check(token).status == 401
    assert server.sign_in().status == 401
    assert "ann\tdisabled" in server.admin("user", "list").stdout.decode()
    assert server.admin("user", "add", "ann", input="x\n", check=False).returncode != 0


@pytest.mark.parametrize("backend", ["postgresql"])
def test_two_instances_on_one_postgresql_act_as_one(make_server, backend):
    first = make_server({"limits": {"checks_per_minute": "4"}})
    second = make_server({"limits": {"checks_per_minute": "4"}}, database=first.database, users=())
    token = first.token()
    assert second.check(token).status == 200
    assert first.check(token).status == 200
    assert second.check(token).status == 200
    assert first.check(token).status == 200
    assert second.check(token).status == 429
    assert first.check(token).status == 429
    other = first.token(device="desktop")
    assert second.request("DELETE", "/v1/devices/current", token=other).status == 204
    assert first.check(other).status == 401


@both
def test_instances_migrating_at_once_all_succeed(make_server, backend, tmp_path):
    server = make_server()
    database = server.cluster.new_database() if server.cluster else str(tmp_path / "concurrent.db")
    config = open(server.config).read().replace("url=" + server.database, "url=" + database)
    path = tmp_path / "concurrent.conf"
    path.write_text(config)
    processes = [subprocess.Popen([conftest.SERVER, "--config", str(path), "migrate"], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT) for _ in range(8)]
    outputs = [(process.wait(timeout=60), process.stdout.read().decode()) for process in processes]
    assert all(code == 0 for code, _ in outputs), [o for o in outputs if o[0] != 0]
    assert sum("(1 migration(s) applied)" in output for _, output in outputs) == 1


def sql_rows(server, statement):
    """Rows of one statement on the server's database, as lists of strings."""
    if server.cluster:
        database = server.database.rsplit("/", 1)[1]
        out = server.cluster.psql(database, statement).stdout.decode()
        return [line.split("|") for line in out.splitlines() if line]
    import sqlite3
    connection = sqlite3.connect(server.database, timeout=10)
    try:
        with connection:
            return [[str(value) for value in row] for row in connection.execute(statement).fetchall()]
    finally:
        connection.close()


@both
def test_purge_leaves_no_expired_rows_in_a_dump(make_server, backend):
    import hashlib
    server = make_server({"tokens": {"grace": "1", "retention": "0"}})
    # serve purged once at start, and not again within the hour (counts only in the log).
    assert server.log_text().count("purged tokens=0 devices=0 usage=0 login_failures=0") == 1
    old = server.token()
    current = server.request("POST", "/v1/devices/rotate", token=old).json()["token"]
    assert server.check(current).status == 200
    bobs = server.token("bob")
    assert server.request("DELETE", "/v1/devices/current", token=bobs).status == 204
    ann_device = sql_rows(server, "SELECT id FROM devices WHERE name = 'laptop' AND revoked_at IS NULL")[0][0]
    # Rows as old as the epoch: an expired token, a usage day and a login-failure window.
    sql_rows(server, "INSERT INTO tokens (hash, device_id, created_at, expires_at) VALUES ('%s', %s, 0, 1)"
             % ("0" * 64, ann_device))
    sql_rows(server, "INSERT INTO usage (user_id, period, starts_at, checks, characters) "
             "SELECT user_id, 'day', 0, 1, 5 FROM devices WHERE id = %s" % ann_device)
    sql_rows(server, "INSERT INTO login_failures (key, starts_at, failures) VALUES ('user:old', 0, 3)")
    old_hash = hashlib.sha256(old.encode()).hexdigest().encode()
    assert old_hash in dump_database(server)
    time.sleep(2.1)  # past the 1 s grace, and retention 0: a device revoked seconds ago is past it
    result = server.admin("purge")
    assert result.stdout.decode().strip() == "purged tokens=2 devices=1 usage=1 login_failures=1"
    now = int(time.time())
    assert sql_rows(server, "SELECT COUNT(*) FROM tokens WHERE expires_at <= %d OR replaced_until <= %d"
                    % (now, now)) == [["0"]]
    assert sql_rows(server, "SELECT COUNT(*) FROM devices WHERE revoked_at IS NOT NULL") == [["0"]]
    assert sql_rows(server, "SELECT COUNT(*) FROM usage WHERE starts_at < %d" % (now - 2 * 86_400)) == [["0"]]
    assert sql_rows(server, "SELECT COUNT(*) FROM login_failures WHERE starts_at = 0") == [["0"]]
    if not server.cluster:
        # The server deletes with secure_delete on; the WAL may still hold the old page images
        # until a checkpoint, which is when they leave the file.
        sql_rows(server, "PRAGMA wal_checkpoint(TRUNCATE)")
    assert server.log_text().count("purged ") == 1
    dump = dump_database(server)
    assert old_hash not in dump and b"0" * 64 not in dump
    # What is live survived: the current token, its device and today's usage.
    assert server.check(current).status == 200
    assert int(sql_rows(server, "SELECT COUNT(*) FROM usage")[0][0]) >= 2
