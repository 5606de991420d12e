#!/usr/bin/env python3
"""Start-up to first request with MCP servers configured (issue 13's performance bullet).

Three cases, each run N times against rein-mock (a model that answers at once), medians:
  none       no MCP server configured
  three      three stdio servers (rein-mcp-fake --start-delay-ms 50), ready in about 50 ms
  server     the fake server alone: spawn to its answer to `tools/list`, driven from here
             (what "the slowest server's own start" means); the slowest of three per run

Figures: start_ms = process start (just before rein's exec) to the first request fully
received by the mock; for `server`, spawn to the tools list. The target: three <= server +
15 ms, and none unchanged from a build without MCP.

Usage: python3 bench/mcp_start.py [--runs N] [--rein PATH] [--mock PATH] [--fake PATH] [--json]
Builds the release binaries first unless the paths are given.
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DELAY_MS = 50


def build():
    # One package per build, as bench/agent.py says why.
    for package in ("rein-cli", "rein-testkit"):
        subprocess.run(["cargo", "build", "--release", "--locked", "-p", package, "--bins"],
                       cwd=ROOT, check=True)
    target = os.path.join(ROOT, "target", "release")
    return [os.path.join(target, b) for b in ("rein", "rein-mock", "rein-mcp-fake")]


def first_request_ms(rein, mock, fake, servers, tmp):
    """One run of rein -p; returns ms from spawn to the mock's first request."""
    home = os.path.join(tmp, "rein-home")
    os.makedirs(home, exist_ok=True)
    with open(os.path.join(home, "config.toml"), "w") as f:
        for i in range(servers):
            f.write(f'[mcp_servers.s{i}]\ncommand = "{fake}"\n'
                    f'args = ["--start-delay-ms", "{DELAY_MS}"]\n')
    script = os.path.join(tmp, "script.json")
    with open(script, "w") as f:
        json.dump({"replies": [{"turn": {"text": ["done"]}}]}, f)
    log = os.path.join(tmp, "requests.jsonl")
    if os.path.exists(log):
        os.remove(log)
    server = subprocess.Popen([mock, "--script", script, "--log", log],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        base = server.stdout.readline().strip()
        env = {"PATH": os.environ.get("PATH", ""), "HOME": tmp, "REIN_HOME": home,
               "OPENAI_API_KEY": "sk-bench", "REIN_BASE_URL": base + "/v1",
               "REIN_MODEL": "gpt-4o"}
        work = os.path.join(tmp, "work")
        os.makedirs(work, exist_ok=True)
        t0 = time.time_ns()
        subprocess.run([rein, "-p", "hi", "--output-format", "json"], env=env, cwd=work,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)
    finally:
        server.terminate()
        server.wait()
    with open(log) as f:
        first = next(r for r in map(json.loads, f) if not r.get("metadata"))
    return (first["received_unix_nanos"] - t0) / 1e6


def server_start_ms(fake):
    """Spawn to the answer to tools/list, for one fake server."""
    t0 = time.perf_counter_ns()
    p = subprocess.Popen([fake, "--start-delay-ms", str(DELAY_MS)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def send(message):
        p.stdin.write(json.dumps(message) + "\n")
        p.stdin.flush()

    def answer():
        while True:
            message = json.loads(p.stdout.readline())
            if "id" in message:
                return message

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"}}})
    answer()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    answer()
    elapsed = (time.perf_counter_ns() - t0) / 1e6
    p.kill()
    p.wait()
    return elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--rein")
    parser.add_argument("--mock")
    parser.add_argument("--fake")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.rein and args.mock and args.fake:
        rein, mock, fake = args.rein, args.mock, args.fake
    else:
        rein, mock, fake = build()
    none, three, server = [], [], []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="rein-bench-mcp-") as tmp:
            none.append(first_request_ms(rein, mock, fake, 0, tmp))
        with tempfile.TemporaryDirectory(prefix="rein-bench-mcp-") as tmp:
            three.append(first_request_ms(rein, mock, fake, 3, tmp))
        server.append(max(server_start_ms(fake) for _ in range(3)))
    result = {
        "runs": args.runs,
        "none_start_ms": statistics.median(none),
        "three_start_ms": statistics.median(three),
        "slowest_server_start_ms": statistics.median(server),
    }
    result["three_minus_server_ms"] = result["three_start_ms"] - result["slowest_server_start_ms"]
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:26} {value:8.1f}" if isinstance(value, float) else f"{key:26} {value}")


if __name__ == "__main__":
    main()
