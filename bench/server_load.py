#!/usr/bin/python3
"""Load benchmark of inkling-server on loopback (issue 14): checks per second and p50/p99
latency at 1, 10 and 100 concurrent devices (one keep-alive connection each, driven by `wrk`),
over SQLite and over PostgreSQL, and two instances on one PostgreSQL sharing the load. The
upstream is a fake that answers at once; limits are raised out of the way; every non-200
answer counts as an error.

    bench/server_load.py [--seconds 10] [--devices 1,10,100] [--backends sqlite,postgresql,two]

Uses .build/release/inkling-server ($INKLING_SERVER) and the test fixtures of Tests/Server.
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

LIMITS = {"limits": {"checks_per_minute": "1000000", "checks_per_day": "100000000", "characters_per_day": "10000000000", "devices": "1000"},
          "server": {"threads": "16", "log_requests": "false", "max_connections": "4096"}}


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
        match = re.search(r"RESULT requests=(\d+) seconds=([\d.]+) p50_ms=([\d.]+) p99_ms=([\d.]+) errors=(\d+)", output)
        if not match:
            raise RuntimeError("wrk said: " + output)
        results.append([float(g) for g in match.groups()])
    requests = sum(r[0] for r in results)
    duration = max(r[1] for r in results)
    # With two instances the percentiles are those of the slower instance (a conservative merge).
    return requests / duration, max(r[2] for r in results), max(r[3] for r in results), int(sum(r[4] for r in results))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--devices", default="1,10,100")
    parser.add_argument("--backends", default="sqlite,postgresql,two")
    args = parser.parse_args()
    if not shutil.which("wrk"):
        sys.exit("server_load.py: wrk is missing (apt install wrk)")
    device_counts = [int(n) for n in args.devices.split(",")]
    upstream = conftest.Upstream()
    upstream.control(reset=True, mode="agree")
    cluster = None
    rows = []
    directory = tempfile.mkdtemp(prefix="inkling-bench-")
    try:
        for backend in args.backends.split(","):
            if backend in ("postgresql", "two") and cluster is None:
                cluster = conftest.PostgresCluster()
            database = cluster.new_database() if backend in ("postgresql", "two") else os.path.join(directory, "bench-%s.db" % backend)
            servers = [conftest.Server(directory, database, upstream, LIMITS)]
            if backend == "two":
                servers.append(conftest.Server(directory, database, upstream, LIMITS, users=()))
            try:
                tokens = [servers[0].token("ann" if i % 2 == 0 else "bob", "device-%d" % i) for i in range(max(device_counts))]
                for devices in device_counts:
                    rate, p50, p99, errors = run_wrk([s.port for s in servers], tokens, devices, args.seconds)
                    label = {"sqlite": "SQLite", "postgresql": "PostgreSQL", "two": "2 instances, one PostgreSQL"}[backend]
                    rows.append((label, devices, rate, p50, p99, errors))
                    print("%-28s devices=%3d  checks/s=%7.0f  p50=%6.2f ms  p99=%7.2f ms  errors=%d" % rows[-1], flush=True)
            finally:
                for server in servers:
                    server.stop()
    finally:
        if cluster:
            cluster.stop()
        upstream.stop()
        shutil.rmtree(directory, ignore_errors=True)
    print("\n| storage | devices | checks/s | p50 | p99 | errors |\n|---|---|---|---|---|---|")
    for label, devices, rate, p50, p99, errors in rows:
        print("| %s | %d | %.0f | %.2f ms | %.2f ms | %d |" % (label, devices, rate, p50, p99, errors))


if __name__ == "__main__":
    main()
