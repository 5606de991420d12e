#!/usr/bin/env python3
"""Peak memory of a 2,000-message session, with context management at work.

Two passes, each rein run under GNU time against rein-mock (a model that answers at once):
  live     one request of 1,000 rounds (a bash call each, ~2 KB of output), so the
           conversation grows to 2,001 messages; the mock says (llama.cpp /props) the window
           is 32768 tokens, so rein prunes and summarises all along the way
  resume   `rein -r ID` of a session file of 2,000 messages written beforehand (1,000 rounds
           of a ~3 KB tool result each, with compactions every 100 rounds), then one request:
           the whole file is read, the compactions replayed

Figures: peak RSS of the rein process (MB), wall time, messages and compactions.
The target is under 40 MB for both.

Usage: python3 bench/context_rss.py [--rein PATH] [--mock PATH] [--json]
Builds the release binaries first unless --rein/--mock are given.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

TIME = "/usr/bin/time"  # GNU time (Debian package "time")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROUNDS = 1000
WINDOW = 32768


def build():
    # One package per build, as bench/agent.py says why.
    for package in ("rein-cli", "rein-testkit"):
        subprocess.run(["cargo", "build", "--release", "--locked", "-p", package, "--bins"],
                       cwd=ROOT, check=True)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    return os.path.join(target, "release", "rein"), os.path.join(target, "release", "rein-mock")


def start_mock(mock, script, tmp):
    path = os.path.join(tmp, "script.json")
    with open(path, "w") as f:
        json.dump(script, f)
    proc = subprocess.Popen([mock, "--script", path, "--context-window", str(WINDOW)],
                            stdout=subprocess.PIPE, text=True)
    base = proc.stdout.readline().strip()
    return proc, base


def run_timed(rein, args, env, cwd):
    started = time.monotonic()
    out = subprocess.run([TIME, "-v", rein] + args, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.monotonic() - started
    rss_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", out.stderr).group(1))
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return rss_kb / 1024, wall, result


def environment(tmp, base):
    home = os.path.join(tmp, "home")
    os.makedirs(home, exist_ok=True)
    return {
        "PATH": os.environ["PATH"],
        "HOME": home,
        "REIN_HOME": os.path.join(tmp, "rein-home"),
        "OPENAI_API_KEY": "sk-bench",
        "REIN_BASE_URL": base + "/v1",
        "REIN_MODEL": "gpt-4o",
    }


def output_lines(n):
    return "".join(f"line {i:04}: the build printed something worth reading\n" for i in range(n))


def live(rein, mock):
    with tempfile.TemporaryDirectory() as tmp:
        work = os.path.join(tmp, "work")
        os.makedirs(work)
        with open(os.path.join(work, "out.txt"), "w") as f:
            f.write(output_lines(40))
        call = {"id": "c", "name": "bash",
                "arguments": json.dumps({"command": "echo $RANDOM; cat out.txt"})}
        script = {"replies": [{"turn": {"text": ["Once more."], "tool_calls": [call]}}], "repeat": True}
        proc, base = start_mock(mock, script, tmp)
        try:
            env = environment(tmp, base)
            rss, wall, result = run_timed(rein, ["-p", "go", "--permission-mode", "yolo",
                                                 "--max-rounds", str(ROUNDS), "--output-format", "json"],
                                          env, work)
        finally:
            proc.kill()
        return {"rss_mb": round(rss, 1), "wall_s": round(wall, 1), "rounds": result["rounds"],
                "messages": 1 + 2 * result["rounds"], "compactions": result["compactions"]}


def write_session(rein_home, cwd):
    sessions = os.path.join(rein_home, "sessions")
    os.makedirs(sessions)
    sid = "20260101-000000-bench1"
    result = output_lines(55)
    lines = [{"type": "header", "format": 1, "id": sid, "model": "gpt-4o", "provider": "openai",
              "cwd": cwd, "created": "2026-01-01T00:00:00.000Z", "rein_version": "0.1.0"},
             {"type": "message", "role": "user", "parts": [{"type": "text", "text": "go"}]}]
    context = 1
    for r in range(ROUNDS):
        cid = f"call_{r}"
        lines.append({"type": "message", "role": "assistant", "parts": [
            {"type": "text", "text": "Once more."},
            {"type": "tool_call", "id": cid, "name": "bash",
             "arguments": {"kind": "json", "value": {"command": "cat out.txt"}}}]})
        lines.append({"type": "message", "role": "tool", "parts": [
            {"type": "tool_result", "call_id": cid, "content": result}]})
        context += 2
        if r % 100 == 99:
            # The first context-1 messages give way to a summary; the last round stays.
            summary = {"role": "user", "parts": [{"type": "text", "text":
                       f"[rein: context summary] The conversation so far was compacted to fit the model's context window: this summary stands for its first {context - 2} messages (the session file keeps them whole). Go on from where it leaves off.\n\n## Goal\nKeep going."}]}
            lines.append({"type": "event", "kind": "compaction", "layer": "summary",
                          "replaced": context - 2, "with": [summary],
                          "tokens_before": 30000, "tokens_after": 3000})
            context = 3
    with open(os.path.join(sessions, sid + ".jsonl"), "w") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")
    return sid, 1 + 2 * ROUNDS


def resume(rein, mock):
    with tempfile.TemporaryDirectory() as tmp:
        work = os.path.join(tmp, "work")
        os.makedirs(work)
        env_home = os.path.join(tmp, "rein-home")
        sid, messages = write_session(env_home, work)
        script = {"replies": [{"turn": {"text": ["Resumed."]}}], "repeat": True}
        proc, base = start_mock(mock, script, tmp)
        try:
            env = environment(tmp, base)
            rss, wall, result = run_timed(rein, ["-r", sid, "-p", "go on", "--output-format", "json"], env, work)
        finally:
            proc.kill()
        assert result["stop_reason"] == "end_turn", result
        return {"rss_mb": round(rss, 1), "wall_s": round(wall, 2), "messages": messages,
                "compactions_replayed": ROUNDS // 100}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rein")
    parser.add_argument("--mock")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.rein and args.mock:
        rein, mock = args.rein, args.mock
    else:
        rein, mock = build()
    figures = {"live": live(rein, mock), "resume": resume(rein, mock)}
    if args.json:
        print(json.dumps(figures))
    else:
        for name, f in figures.items():
            print(f"{name:7} " + "  ".join(f"{k}={v}" for k, v in f.items()))
    return 0 if all(f["rss_mb"] < 40 for f in figures.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
