#!/usr/bin/env python3
"""What a 30-round session costs, billed the way each provider bills prompt caching.

rein runs a scripted task against rein-mock: 29 rounds that each read one more ~5 KB file,
then an answer, so the context grows to about 40k tokens. The mock saves every request
body (--bodies); this script then bills the requests as each provider does:

  Anthropic  a prefix is read from the cache only up to a `cache_control` breakpoint that an
             earlier request wrote (looking back up to 20 blocks before each breakpoint, as
             the API does); at most 4 breakpoints a request; nothing under 1,024 tokens is
             cached; what the last breakpoint covers beyond the read part is written.
  OpenAI     the longest prefix (of the rendered tools and messages) seen in an earlier
             request is read from the cache, in 128-token steps from 1,024 tokens.

Tokens are estimated as one per 4 bytes of JSON. Reported per provider: input tokens billed
at full price, cache reads, cache writes, the share of input read from the cache on rounds
2-30, the dollars at list prices (Claude Sonnet 4.5: $3 in, $3.75 write, $0.30 read, $15 out;
GPT-4.1: $2 in, $0.50 cached, $8 out), the same session's dollars with no caching at all,
and whether the OpenAI prefix stayed byte-stable from round to round.

Usage: python3 bench/cost.py [--rein PATH] [--mock PATH] [--json]
Builds the debug binaries first unless --rein/--mock are given (speed does not matter here).
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROUNDS = 30
FILE_BYTES = 5000
OUTPUT_TOKENS = 40
MIN_CACHED_TOKENS = 1024
OPENAI_STEP_TOKENS = 128
LOOKBACK_BLOCKS = 20

PRICES = {  # USD per million tokens
    "anthropic": {"model": "claude-sonnet-4-5", "input": 3.0, "write": 3.75, "read": 0.30, "output": 15.0},
    "openai": {"model": "gpt-4.1", "input": 2.0, "write": 2.0, "read": 0.50, "output": 8.0},
}


def tokens(data):
    return (len(data) + 3) // 4


def script():
    def turn(text=None, call=None):
        t = {"usage": {"prompt_tokens": 1000, "completion_tokens": OUTPUT_TOKENS}}
        if text:
            t["text"] = [text]
        if call:
            t["tool_calls"] = [call]
        return {"turn": t}

    replies = [turn(None, {"id": f"toolu_{i:02}", "name": "read_file",
                           "arguments": json.dumps({"file_path": f"src/part{i:02}.py"})})
               for i in range(1, ROUNDS)]
    replies.append(turn("Read every part."))
    return {"replies": replies}


def workspace(work):
    os.makedirs(os.path.join(work, "src"))
    for i in range(1, ROUNDS):
        lines, size = [], 0
        n = 0
        while size < FILE_BYTES:
            line = f"def part_{i:02}_step_{n:03}(value):\n    return value * {n} + {i}  # step {n} of part {i}\n"
            lines.append(line)
            size += len(line)
            n += 1
        with open(os.path.join(work, "src", f"part{i:02}.py"), "w") as f:
            f.write("".join(lines))


def run(rein, mock, provider, tmp):
    work = os.path.join(tmp, provider, "work")
    bodies = os.path.join(tmp, provider, "bodies")
    os.makedirs(bodies)
    workspace(work)
    script_path = os.path.join(tmp, provider, "script.json")
    with open(script_path, "w") as f:
        json.dump(script(), f)
    server = subprocess.Popen([mock, "--script", script_path, "--bodies", bodies],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        base = server.stdout.readline().strip()
        env = {"PATH": os.environ.get("PATH", ""), "HOME": tmp,
               "REIN_HOME": os.path.join(tmp, provider, "rein-home"),
               "REIN_MODEL": PRICES[provider]["model"]}
        if provider == "anthropic":
            env.update(ANTHROPIC_API_KEY="sk-ant-bench", REIN_BASE_URL=base)
        else:
            env.update(OPENAI_API_KEY="sk-bench", REIN_BASE_URL=base + "/v1")
        argv = [rein, "-p", "read every file under src/, one per round", "--output-format", "json",
                "--permission-mode", "yolo", "--max-rounds", str(ROUNDS + 5)]
        done = subprocess.run(argv, env=env, cwd=work, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"rein failed for {provider}: {done.stderr[-2000:]}")
    finally:
        server.terminate()
        server.wait()
    names = sorted(n for n in os.listdir(bodies) if n.endswith(".json"))
    out = []
    for name in names:
        with open(os.path.join(bodies, name), "rb") as f:
            out.append(f.read())
    return out


def unmarked(value):
    """`value` without its cache_control: a moving breakpoint must not change the prefix."""
    if isinstance(value, dict):
        return {k: unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [unmarked(v) for v in value]
    return value


def anthropic_blocks(body):
    """The request as the cache sees it: tools, system, then messages, block by block, each
    with its token count and whether it carries a breakpoint."""
    blocks = []
    for tool in body.get("tools", []):
        blocks.append((json.dumps(unmarked(tool), sort_keys=True), "cache_control" in tool))
    for block in body.get("system", []):
        blocks.append((json.dumps(unmarked(block), sort_keys=True), "cache_control" in block))
    for message in body["messages"]:
        for block in message["content"]:
            blocks.append((message["role"] + json.dumps(unmarked(block), sort_keys=True),
                           "cache_control" in block))
    return blocks


def bill_anthropic(raw_bodies, use_breakpoints=True):
    cache = set()
    rows = []
    for raw in raw_bodies:
        body = json.loads(raw)
        blocks = anthropic_blocks(body)
        digest, hashes, cumulative, total = hashlib.sha256(), [], [], 0
        for text, _ in blocks:
            digest.update(text.encode())
            hashes.append(digest.hexdigest())
            total += tokens(text.encode())
            cumulative.append(total)
        marks = [i for i, (_, bp) in enumerate(blocks) if bp] if use_breakpoints else []
        if len(marks) > 4:
            raise SystemExit(f"{len(marks)} breakpoints in one request: Anthropic refuses more than 4")
        read = 0
        for mark in reversed(marks):
            for j in range(mark, max(-1, mark - LOOKBACK_BLOCKS - 1), -1):
                if hashes[j] in cache:
                    read = max(read, cumulative[j])
                    break
        write = 0
        if marks and cumulative[marks[-1]] >= MIN_CACHED_TOKENS:
            write = max(0, cumulative[marks[-1]] - read)
        for mark in marks:
            if cumulative[mark] >= MIN_CACHED_TOKENS:
                cache.add(hashes[mark])
        rows.append({"input": total, "read": read, "write": write, "full": total - read - write})
    return rows


def openai_prompt(raw):
    """The rendered prompt, as bytes: the tools, then the messages (the server puts the
    tool definitions first whatever the JSON order)."""
    text = raw.decode()
    start = text.index('"messages":[') + len('"messages":[')
    end = text.index('],"tools":')
    tools_end = text.index('],"stream"', end)
    return (text[end:tools_end] + text[start:end]).encode(), text[start:end].encode()


def bill_openai(raw_bodies):
    seen = []
    rows = []
    stable = []
    previous_messages = None
    for raw in raw_bodies:
        prompt, messages = openai_prompt(raw)
        longest = 0
        for earlier in seen:
            n = os.path.commonprefix([earlier, prompt])
            longest = max(longest, len(n))
        matched = tokens(prompt[:longest]) if longest else 0
        read = 0
        if matched >= MIN_CACHED_TOKENS:
            read = MIN_CACHED_TOKENS + (matched - MIN_CACHED_TOKENS) // OPENAI_STEP_TOKENS * OPENAI_STEP_TOKENS
        total = tokens(prompt)
        rows.append({"input": total, "read": read, "write": 0, "full": total - read})
        if previous_messages is not None:
            stable.append(messages.startswith(previous_messages))
        previous_messages = messages
        seen.append(prompt)
    return rows, stable


def dollars(rows, price, cached=True):
    usd = 0.0
    for r in rows:
        if cached:
            usd += (r["full"] * price["input"] + r["read"] * price["read"] + r["write"] * price["write"]) / 1e6
        else:
            usd += r["input"] * price["input"] / 1e6
        usd += OUTPUT_TOKENS * price["output"] / 1e6
    return usd


def summary(rows, price, stable=None):
    later = rows[1:]
    later_input = sum(r["input"] for r in later)
    result = {
        "requests": len(rows),
        "last_request_tokens": rows[-1]["input"],
        "input_tokens": sum(r["input"] for r in rows),
        "full_price_input_tokens": sum(r["full"] for r in rows),
        "cache_read_tokens": sum(r["read"] for r in rows),
        "cache_write_tokens": sum(r["write"] for r in rows),
        "read_share_rounds_2_on": sum(r["read"] for r in later) / later_input if later_input else 0.0,
        "usd": round(dollars(rows, price), 4),
        "usd_without_caching": round(dollars(rows, price, cached=False), 4),
    }
    if stable is not None:
        result["byte_stable_rounds"] = f"{sum(stable)}/{len(stable)}"
    return result


def build():
    subprocess.run(["cargo", "build", "--locked", "-p", "rein-cli", "-p", "rein-testkit", "--bins"],
                   cwd=ROOT, check=True)
    target = os.path.join(ROOT, "target", "debug")
    return os.path.join(target, "rein"), os.path.join(target, "rein-mock")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rein")
    parser.add_argument("--mock")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rein, mock = (os.path.abspath(args.rein), os.path.abspath(args.mock)) if args.rein and args.mock else build()
    results = {}
    with tempfile.TemporaryDirectory(prefix="rein-cost-") as tmp:
        bodies = run(rein, mock, "anthropic", tmp)
        results["anthropic"] = summary(bill_anthropic(bodies), PRICES["anthropic"])
        results["anthropic_without_breakpoints"] = summary(
            bill_anthropic(bodies, use_breakpoints=False), PRICES["anthropic"])
        bodies = run(rein, mock, "openai", tmp)
        rows, stable = bill_openai(bodies)
        results["openai"] = summary(rows, PRICES["openai"], stable)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"{'provider':<32} {'reqs':>4} {'last req':>8} {'input':>8} {'full':>8} {'read':>8} {'write':>7} "
          f"{'read 2-30':>9} {'USD':>8} {'no cache':>8}")
    for name, r in results.items():
        print(f"{name:<32} {r['requests']:>4} {r['last_request_tokens']:>8} {r['input_tokens']:>8} "
              f"{r['full_price_input_tokens']:>8} {r['cache_read_tokens']:>8} {r['cache_write_tokens']:>7} "
              f"{r['read_share_rounds_2_on']:>8.1%} {r['usd']:>8.4f} {r['usd_without_caching']:>8.4f}"
              + (f"  byte-stable {r['byte_stable_rounds']}" if "byte_stable_rounds" in r else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
