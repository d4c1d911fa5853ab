#!/usr/bin/python3
"""Load benchmark of inkling-server on loopback (issue 14): checks per second and p50/p99
latency at 1, 10 and 100 concurrent devices (one keep-alive connection each, driven by `wrk`),
over SQLite and over PostgreSQL, and two instances on one PostgreSQL sharing the load. The
upstream is a fake that answers at once; limits are raised out of the way; every non-200
answer counts as an error, and so does each of wrk's socket errors (connect, read, write,
timeout), reported apart.

    bench/server_load.py [--seconds 10] [--devices 1,10,100] [--backends sqlite,postgresql,two]
                         [--servers BIN[,BIN]]

Uses .build/release/inkling-server ($INKLING_SERVER) and the test fixtures of Tests/Server.
With two binaries in --servers (e.g. the build before a change and after it) each row is run
for one and then the other, back to back, so a busy machine loads both alike: compare ratios.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "Tests", "Server"))
import conftest  # noqa: E402  (the same server, upstream and PostgreSQL fixtures as the tests)

LIMITS = {"limits": {"checks_per_minute": "1000000", "checks_per_day": "100000000",
                     "characters_per_day": "10000000000", "devices": "1000"},
          # The shipped defaults for the timeouts (the tests' idle timeout is 5 s).
          "server": {"threads": "16", "log_requests": "false", "max_connections": "4096", "idle_timeout": "15"},
          "upstream": {"timeout_ms": "8000"}}


def run_wrk(ports, tokens, devices, seconds):
    """One wrk per server port, the devices split between them; returns the combined figures."""
    processes = []
    per_port = max(1, devices // len(ports))
    for index, port in enumerate(ports):
        share = tokens[index * per_port:(index + 1) * per_port]
        env = dict(os.environ, INKLING_TOKENS=",".join(share))
        threads = min(per_port, 4)
        processes.append(subprocess.Popen(
            ["wrk", "-t", str(threads), "-c", str(per_port), "-d", "%ds" % seconds, "--timeout", "10s",
             "-s", os.path.join(HERE, "server_check.lua"), "http://127.0.0.1:%d" % port],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
    results = []
    for process in processes:
        output = process.communicate()[0].decode()
        match = re.search(r"RESULT requests=(\d+) seconds=([\d.]+) p50_ms=([\d.]+) p99_ms=([\d.]+) "
                          r"connect=(\d+) read=(\d+) write=(\d+) timeout=(\d+) non200=(\d+) statuses=(\S*)", output)
        if not match:
            raise RuntimeError("wrk said: " + output)
        results.append(match.groups())
    requests = sum(int(r[0]) for r in results)
    duration = max(float(r[1]) for r in results)
    # Errors by kind: wrk's socket errors, then answers other than 200 by status.
    errors = {}
    for r in results:
        for kind, value in zip(("connect", "read", "write", "timeout"), r[4:8]):
            errors[kind] = errors.get(kind, 0) + int(value)
        for part in filter(None, r[9].split(",")):
            status, count = part.split(":")
            if status != "200":
                errors[status] = errors.get(status, 0) + int(count)
    errors = {kind: count for kind, count in errors.items() if count}
    # With two instances the percentiles are those of the slower instance (a conservative merge).
    return (requests / duration, max(float(r[2]) for r in results), max(float(r[3]) for r in results),
            sum(errors.values()), errors)


def describe(errors):
    """'0', or the total and its parts: '6 (timeout 4, 503 2)'."""
    if not errors:
        return "0"
    return "%d (%s)" % (sum(errors.values()), ", ".join("%s %d" % item for item in sorted(errors.items())))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--devices", default="1,10,100")
    parser.add_argument("--backends", default="sqlite,postgresql,two")
    parser.add_argument("--servers", default=conftest.SERVER,
                        help="inkling-server binaries, comma-separated; each row runs on each in turn")
    args = parser.parse_args()
    if not shutil.which("wrk"):
        sys.exit("server_load.py: wrk is missing (apt install wrk)")
    device_counts = [int(n) for n in args.devices.split(",")]
    binaries = args.servers.split(",")
    upstream = conftest.Upstream()
    upstream.control(reset=True, mode="agree")
    cluster = None
    rows = []
    directory = tempfile.mkdtemp(prefix="inkling-bench-")
    try:
        for backend in args.backends.split(","):
            label = {"sqlite": "SQLite", "postgresql": "PostgreSQL", "two": "2 instances, one PostgreSQL"}[backend]
            # Per binary: its own database and server(s), all started before the first row.
            setups = []
            try:
                for build, binary in enumerate(binaries):
                    conftest.SERVER = binary
                    if backend in ("postgresql", "two"):
                        if cluster is None:
                            cluster = conftest.PostgresCluster()
                        database = cluster.new_database()
                    else:
                        database = os.path.join(directory, "bench-%s-%d.db" % (backend, build))
                    servers = [conftest.Server(directory, database, upstream, LIMITS)]
                    setups.append((binary, servers))
                    if backend == "two":
                        servers.append(conftest.Server(directory, database, upstream, LIMITS, users=()))
                    tokens = [servers[0].token("ann" if i % 2 == 0 else "bob", "device-%d" % i)
                              for i in range(max(device_counts))]
                    setups[-1] = (binary, servers, tokens)
                for devices in device_counts:
                    for binary, servers, tokens in setups:
                        rate, p50, p99, total, errors = run_wrk([s.port for s in servers], tokens, devices,
                                                                args.seconds)
                        name = os.path.basename(binary) if len(binaries) > 1 else ""
                        rows.append((label, name, devices, rate, p50, p99, describe(errors)))
                        print("%-28s %s devices=%3d  checks/s=%7.0f  p50=%6.2f ms  p99=%7.2f ms  errors=%s"
                              % rows[-1], flush=True)
            finally:
                for setup in setups:
                    for server in setup[1]:
                        server.stop()
    finally:
        if cluster:
            cluster.stop()
        upstream.stop()
        shutil.rmtree(directory, ignore_errors=True)
    build_column = len(binaries) > 1
    print("\n| storage |%s devices | checks/s | p50 | p99 | errors |\n|---|%s---|---|---|---|---|"
          % (" build |" if build_column else "", "---|" if build_column else ""))
    for label, name, devices, rate, p50, p99, errors in rows:
        print("| %s |%s %d | %.0f | %.2f ms | %.2f ms | %s |"
              % (label, " %s |" % name if build_column else "", devices, rate, p50, p99, errors))


if __name__ == "__main__":
    main()
