#!/usr/bin/env python3
"""Measures rein's own overhead against a mock model that answers at once.

Scenarios (each run N times, medians reported):
  fix-import  3 rounds: read main.py + utils.py, edit + run it, answer (the demo project)
  read-20     20 rounds: one read_file per round, then an answer

Figures, per scenario:
  start_ms     process start (just before exec) to the first request fully received
  round_ms     harness time per round: end of one response to the next request,
               tool execution included (median over every round of every run); the
               median of each round is printed too, with the time the commands the
               tools run take alone (fix-import runs `python3 main.py` through bash)
  rss_mb       peak resident memory of the rein process
  cpu_ms       user + system CPU time of the rein process
  first_req_kb bytes of the first request body (system prompt + every tool schema)

Usage: python3 bench/agent.py [--runs N] [--rein PATH] [--mock PATH] [--json]
Builds the release binaries first unless --rein/--mock are given.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TIME = "/usr/bin/time"  # GNU time (Debian package "time")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEMO = os.path.join(ROOT, "crates", "cli", "demo", "project")


def call(call_id, name, args):
    return {"id": call_id, "name": name, "arguments": json.dumps(args), "split": {"every": 16}}


def turn(text=None, calls=()):
    t = {"usage": {"prompt_tokens": 2000, "completion_tokens": 40, "cached_tokens": 1800}}
    if text:
        t["text"] = [text]
    if calls:
        t["tool_calls"] = list(calls)
    return {"turn": t}


def fix_import_script():
    return {"replies": [
        turn("Reading both files.", [
            call("c1", "read_file", {"file_path": "main.py"}),
            call("c2", "read_file", {"file_path": "utils.py"}),
        ]),
        turn(None, [
            call("c3", "edit_file", {"file_path": "main.py",
                                     "old_string": "from helpers import greet, shout",
                                     "new_string": "from utils import greet, shout"}),
            call("c4", "bash", {"command": "python3 main.py"}),
        ]),
        turn("Fixed the import."),
    ]}


def read_20_script():
    replies = [turn(None, [call(f"r{i}", "read_file", {"file_path": "main.py", "limit": 1000 + i})]) for i in range(19)]
    replies.append(turn("Read it twenty times."))
    return {"replies": replies}


SCENARIOS = {
    "fix-import": (fix_import_script, "read main.py and fix the broken import"),
    "read-20": (read_20_script, "read main.py again and again"),
}

# What the scenario's tool calls run outside rein, so a round's own overhead can be told
# from the command's time.
COMMANDS = {"fix-import": "python3 main.py"}


def command_alone_ms(command, runs):
    """Median wall time of `bash -c COMMAND` in the fixed demo project, spawned directly."""
    with tempfile.TemporaryDirectory(prefix="rein-bench-cmd-") as tmp:
        work = os.path.join(tmp, "work")
        shutil.copytree(DEMO, work)
        main = os.path.join(work, "main.py")
        with open(main) as f:
            fixed = f.read().replace("from helpers import", "from utils import")
        with open(main, "w") as f:
            f.write(fixed)
        times = []
        for _ in range(runs):
            t0 = time.perf_counter_ns()
            subprocess.run(["bash", "-c", command], cwd=work, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times.append((time.perf_counter_ns() - t0) / 1e6)
        return statistics.median(times)


def build():
    subprocess.run(
        ["cargo", "build", "--release", "--locked", "-p", "rein-cli", "-p", "rein-testkit", "--bins"],
        cwd=ROOT, check=True)
    target = os.path.join(ROOT, "target", "release")
    return os.path.join(target, "rein"), os.path.join(target, "rein-mock")


def one_run(rein, mock, scenario, tmp):
    script_fn, prompt = SCENARIOS[scenario]
    work = os.path.join(tmp, "work")
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(DEMO, work)
    script = os.path.join(tmp, "script.json")
    with open(script, "w") as f:
        json.dump(script_fn(), f)
    log = os.path.join(tmp, "requests.jsonl")
    if os.path.exists(log):
        os.remove(log)
    server = subprocess.Popen([mock, "--script", script, "--log", log],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        base = server.stdout.readline().strip()
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": tmp,
            "REIN_HOME": os.path.join(tmp, "rein-home"),
            "OPENAI_API_KEY": "sk-bench",
            "REIN_BASE_URL": base + "/v1",
            "REIN_MODEL": "gpt-4o",
        }
        # GNU time measures the peak RSS of rein alone: a child forked from Python would
        # inherit Python's high-water mark. Its own fork+exec counts against rein's start.
        measured = os.path.join(tmp, "time.txt")
        argv = [TIME, "-f", "%M %U %S", "-o", measured, rein, "-p", prompt, "--output-format", "json", "--permission-mode", "yolo"]
        t0 = time.time_ns()
        proc = subprocess.Popen(argv, env=env, cwd=work, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        # wait4 gives CPU time with microsecond resolution (GNU time's is 10 ms); it covers
        # rein and the commands it ran, plus GNU time's own negligible share.
        _, wait_status, usage = os.wait4(proc.pid, 0)
        proc.returncode = status = os.waitstatus_to_exitcode(wait_status)
        if status != 0:
            raise SystemExit(f"rein failed in {scenario} (status {status})")
        with open(measured) as f:
            max_kb = f.read().split()[-3]
    finally:
        server.terminate()
        server.wait()
    with open(log) as f:
        requests = [json.loads(line) for line in f if line.strip()]
    rounds = [(b["received_unix_nanos"] - a["responded_unix_nanos"]) / 1e6
              for a, b in zip(requests, requests[1:])]
    return {
        "start_ms": (requests[0]["received_unix_nanos"] - t0) / 1e6,
        "round_ms": rounds,
        "rss_mb": int(max_kb) / 1024,
        "cpu_ms": (usage.ru_utime + usage.ru_stime) * 1000,
        "first_req_kb": requests[0]["body_bytes"] / 1024,
        "requests": len(requests),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--rein")
    parser.add_argument("--mock")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()
    rein, mock = (os.path.abspath(args.rein), os.path.abspath(args.mock)) if args.rein and args.mock else build()
    results = {}
    for scenario in SCENARIOS:
        runs = []
        with tempfile.TemporaryDirectory(prefix="rein-bench-") as tmp:
            one_run(rein, mock, scenario, tmp)  # warm the page cache
            for _ in range(args.runs):
                runs.append(one_run(rein, mock, scenario, tmp))
        all_rounds = [r for run in runs for r in run["round_ms"]]
        results[scenario] = {
            "runs": len(runs),
            "rounds": runs[0]["requests"],
            "start_ms": statistics.median(r["start_ms"] for r in runs),
            "round_ms": statistics.median(all_rounds),
            "round_ms_p90": statistics.quantiles(all_rounds, n=10)[-1] if len(all_rounds) > 1 else all_rounds[0],
            "rss_mb": statistics.median(r["rss_mb"] for r in runs),
            "cpu_ms": statistics.median(r["cpu_ms"] for r in runs),
            "first_req_kb": runs[0]["first_req_kb"],
            "round_ms_each": [statistics.median(run["round_ms"][i] for run in runs)
                              for i in range(len(runs[0]["round_ms"]))],
        }
        if scenario in COMMANDS:
            results[scenario]["command_alone_ms"] = command_alone_ms(COMMANDS[scenario], args.runs)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"{'scenario':<12} {'rounds':>6} {'start ms':>9} {'round ms':>9} {'p90 ms':>7} {'RSS MB':>7} {'CPU ms':>7} {'1st req KB':>10}")
    for name, r in results.items():
        print(f"{name:<12} {r['rounds']:>6} {r['start_ms']:>9.2f} {r['round_ms']:>9.3f} {r['round_ms_p90']:>7.3f} "
              f"{r['rss_mb']:>7.1f} {r['cpu_ms']:>7.1f} {r['first_req_kb']:>10.2f}")
    for name, r in results.items():
        each = " ".join(f"{ms:.3f}" for ms in r["round_ms_each"])
        line = f"{name}: median ms of each round: {each}"
        if "command_alone_ms" in r:
            line += f" (its command alone: {r['command_alone_ms']:.3f} ms)"
        print(line)


if __name__ == "__main__":
    sys.exit(main())
