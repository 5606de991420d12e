#!/usr/bin/env python3
"""Measures rein's own overhead against a mock model that answers at once.

Scenarios (each run N times, medians reported):
  fix-import  3 rounds: read main.py + utils.py, edit + run it, answer (the demo project)
  read-20     20 rounds: one read_file per round, then an answer

Figures, per scenario:
  start_ms     process start (just before rein's exec) to the first request fully received
  start_wrapped_ms  the same, with rein started through GNU time (as in the RSS pass): the
               wrapper's own fork+exec counts against it; kept to compare with older figures
  round_ms     harness time per round: end of one response to the next request,
               tool execution included (median over every round of every run); the
               median of each round is printed too, with the time the commands the
               tools run take alone (fix-import runs `python3 main.py` through bash)
  rss_mb       peak resident memory of the rein process itself (its VmHWM)
  anon_mb      of it, the peak of rein's anonymous memory (RssAnon: heap, stacks): what rein
               itself allocates; the rest is the binary's code mapped from the page cache,
               which the kernel maps a whole page-cache folio (up to 2 MB) at a time: the
               release build packs the code a run executes together (crates/cli/build.rs,
               bench/link_order.py), so measure the README's build of rein-cli alone
  rss_tree_mb  the same as GNU time gives it: the largest of rein and the commands it ran
  cpu_ms       user + system CPU time of the rein process
  first_req_kb bytes of the first request body (system prompt + every tool schema)
  metadata_before/after  requests that are not model calls (model list, window probes),
               before the first answer and after it (median per run)

Each run is two passes of rein: one spawned directly (start, rounds, CPU), one under GNU
time (peak RSS: a child forked from Python would inherit Python's high-water mark), whose
own VmHWM is followed too.

Usage: python3 bench/agent.py [--runs N] [--rein PATH] [--mock PATH] [--baseline PATH] [--json]
Builds the release binaries first unless --rein/--mock are given. With --baseline, that
binary is measured too, its runs interleaved with rein's, so both see the same machine.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
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
    # One package per build: built together, their dependencies' features are unified, which
    # changes rein's symbol names, and crates/cli/link-order.txt then no longer matches them.
    for package in ("rein-cli", "rein-testkit"):
        subprocess.run(["cargo", "build", "--release", "--locked", "-p", package, "--bins"],
                       cwd=ROOT, check=True)
    target = os.path.join(ROOT, "target", "release")
    return os.path.join(target, "rein"), os.path.join(target, "rein-mock")


class HighWater:
    """Follows the peak resident memory of rein itself (VmHWM), not of the commands it runs.

    GNU time's figure is the largest of rein and every process it waited for: in fix-import
    that is python3 (about 13 MB), which hid rein's own. VmHWM is rein's high-water mark; it is
    read every millisecond until rein exits, and the last reading kept (rein frees, it does
    not grow, on its way out). Only in the RSS pass, so the polling costs the timed pass
    nothing.
    """

    def __init__(self, pid, active):
        self.pid = pid  # GNU time's: rein is its child
        self.peak_kb = 0
        self.anon_kb = 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True) if active else None
        if self.thread:
            self.thread.start()

    def run(self):
        # The pass runs rein under GNU time: follow time's child.
        pid = None
        while pid is None and not self.done.is_set():
            try:
                with open(f"/proc/{self.pid}/task/{self.pid}/children") as f:
                    pid = (f.read().split() or [None])[0]
            except OSError:
                return
            time.sleep(0.0002)
        path = f"/proc/{pid}/status"
        while not self.done.is_set():
            try:
                with open(path) as f:
                    for line in f:
                        if line.startswith("VmHWM:"):
                            self.peak_kb = max(self.peak_kb, int(line.split()[1]))
                        elif line.startswith("RssAnon:"):
                            self.anon_kb = max(self.anon_kb, int(line.split()[1]))
                            break
            except OSError:
                return
            time.sleep(0.001)

    def stop(self):
        self.done.set()
        if self.thread:
            self.thread.join()
        return self.peak_kb, self.anon_kb


# How the bench runs rein: JSON output, no questions.
FLAGS = ("--output-format", "json", "--permission-mode", "yolo")


def one_pass(rein, mock, scenario, tmp, wrapped, flags=FLAGS, prefix=()):
    """Runs rein once against a fresh mock; returns its requests, t0 and (status, rusage).

    `prefix` runs rein under another program (a profiler); `flags` replace the bench's own.
    """
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
    shutil.rmtree(os.path.join(tmp, "rein-home"), ignore_errors=True)
    server = subprocess.Popen([mock, "--script", script, "--log", log],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    max_kb = None
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
        argv = [*prefix, rein, "-p", prompt, *flags]
        measured = os.path.join(tmp, "time.txt")
        if wrapped:
            argv = [TIME, "-f", "%M %U %S", "-o", measured] + argv
        t0 = time.time_ns()
        proc = subprocess.Popen(argv, env=env, cwd=work, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        watcher = HighWater(proc.pid, wrapped)
        # wait4 gives CPU time with microsecond resolution (GNU time's is 10 ms); it covers
        # rein and the commands it ran.
        _, wait_status, usage = os.wait4(proc.pid, 0)
        status = os.waitstatus_to_exitcode(wait_status)
        if status != 0:
            raise SystemExit(f"{rein} failed in {scenario} (status {status})")
        own_kb, anon_kb = watcher.stop()
        if wrapped:
            with open(measured) as f:
                max_kb = int(f.read().split()[-3])
    finally:
        server.terminate()
        server.wait()
    with open(log) as f:
        logged = [json.loads(line) for line in f if line.strip()]
    requests = [r for r in logged if not r.get("metadata")]
    # The questions besides the model calls (model list, window probes), and how many of
    # them came after the first answer, inside the rounds.
    first_answer = requests[0]["responded_unix_nanos"]
    metadata = [r for r in logged if r.get("metadata")]
    asked = {"before": sum(r["received_unix_nanos"] < first_answer for r in metadata),
             "after": sum(r["received_unix_nanos"] >= first_answer for r in metadata)}
    return requests, t0, usage, (max_kb, own_kb, anon_kb), asked


def one_run(rein, mock, scenario, tmp):
    requests, t0, usage, _, asked = one_pass(rein, mock, scenario, tmp, wrapped=False)
    wrapped_requests, wrapped_t0, _, (max_kb, own_kb, anon_kb), _ = one_pass(rein, mock, scenario, tmp, wrapped=True)
    rounds = [(b["received_unix_nanos"] - a["responded_unix_nanos"]) / 1e6
              for a, b in zip(requests, requests[1:])]
    return {
        "start_ms": (requests[0]["received_unix_nanos"] - t0) / 1e6,
        "start_wrapped_ms": (wrapped_requests[0]["received_unix_nanos"] - wrapped_t0) / 1e6,
        "round_ms": rounds,
        "rss_mb": own_kb / 1024,
        "anon_mb": anon_kb / 1024,
        "rss_tree_mb": max_kb / 1024,
        "cpu_ms": (usage.ru_utime + usage.ru_stime) * 1000,
        "first_req_kb": requests[0]["body_bytes"] / 1024,
        "requests": len(requests),
        "asked": asked,
    }


def summarise(runs):
    all_rounds = [r for run in runs for r in run["round_ms"]]
    return {
        "runs": len(runs),
        "rounds": runs[0]["requests"],
        "start_ms": statistics.median(r["start_ms"] for r in runs),
        "start_wrapped_ms": statistics.median(r["start_wrapped_ms"] for r in runs),
        "round_ms": statistics.median(all_rounds),
        "round_ms_p90": statistics.quantiles(all_rounds, n=10)[-1] if len(all_rounds) > 1 else all_rounds[0],
        "rss_mb": statistics.median(r["rss_mb"] for r in runs),
        "anon_mb": statistics.median(r["anon_mb"] for r in runs),
        "rss_tree_mb": statistics.median(r["rss_tree_mb"] for r in runs),
        "cpu_ms": statistics.median(r["cpu_ms"] for r in runs),
        "first_req_kb": runs[0]["first_req_kb"],
        "metadata_before": statistics.median(r["asked"]["before"] for r in runs),
        "metadata_after": statistics.median(r["asked"]["after"] for r in runs),
        "round_ms_each": [statistics.median(run["round_ms"][i] for run in runs)
                          for i in range(len(runs[0]["round_ms"]))],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--rein")
    parser.add_argument("--mock")
    parser.add_argument("--baseline", help="another rein binary to measure in the same run")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()
    rein, mock = (os.path.abspath(args.rein), os.path.abspath(args.mock)) if args.rein and args.mock else build()
    binaries = {"rein": rein}
    if args.baseline:
        binaries = {"baseline": os.path.abspath(args.baseline), "rein": rein}
    results = {name: {} for name in binaries}
    for scenario in SCENARIOS:
        runs = {name: [] for name in binaries}
        with tempfile.TemporaryDirectory(prefix="rein-bench-") as tmp:
            for binary in binaries.values():
                one_run(binary, mock, scenario, tmp)  # warm the page cache
            for _ in range(args.runs):
                for name, binary in binaries.items():
                    runs[name].append(one_run(binary, mock, scenario, tmp))
        for name in binaries:
            results[name][scenario] = summarise(runs[name])
            if scenario in COMMANDS:
                results[name][scenario]["command_alone_ms"] = command_alone_ms(COMMANDS[scenario], args.runs)
    if args.json:
        print(json.dumps(results if args.baseline else results["rein"], indent=2))
        return
    print(f"{'binary':<9} {'scenario':<12} {'rounds':>6} {'start ms':>9} {'wrapped':>8} {'round ms':>9} {'p90 ms':>7} "
          f"{'RSS MB':>7} {'anon MB':>7} {'tree MB':>7} {'CPU ms':>7} {'1st req KB':>10}")
    for name, per_scenario in results.items():
        for scenario, r in per_scenario.items():
            print(f"{name:<9} {scenario:<12} {r['rounds']:>6} {r['start_ms']:>9.2f} {r['start_wrapped_ms']:>8.2f} "
                  f"{r['round_ms']:>9.3f} {r['round_ms_p90']:>7.3f} {r['rss_mb']:>7.1f} {r['anon_mb']:>7.1f} {r['rss_tree_mb']:>7.1f} "
                  f"{r['cpu_ms']:>7.1f} "
                  f"{r['first_req_kb']:>10.2f}")
    for name, per_scenario in results.items():
        for scenario, r in per_scenario.items():
            each = " ".join(f"{ms:.3f}" for ms in r["round_ms_each"])
            line = f"{name} {scenario}: median ms of each round: {each}"
            if "command_alone_ms" in r:
                line += f" (its command alone: {r['command_alone_ms']:.3f} ms)"
            line += (f"; other requests (model list, window probes): {r['metadata_before']:g} "
                     f"before the first answer, {r['metadata_after']:g} after")
            print(line)


if __name__ == "__main__":
    sys.exit(main())
