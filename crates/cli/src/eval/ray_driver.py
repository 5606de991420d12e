"""rein eval's Ray driver: runs each attempt as a Ray task on the cluster.

rein writes the plan as JSON on stdin; this prints one JSON line per finished attempt on
stdout ({"record": {...}}), or {"error": "..."} when it cannot go on. Each Ray task runs the
same rein binary (`rein eval SUITE --attempt ID:N`), shipped through the object store and
cached on the worker by its hash, in a fresh workspace on that worker. An attempt whose
worker dies is run once more, and marked `retried`.
"""

import ctypes
import hashlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile


def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


try:
    import ray
    import ray.exceptions
except ImportError:
    say({"error": "Ray is not installed for %s: `%s -m pip install ray` (or pass --python PATH)"
         % (sys.executable, sys.executable)})
    sys.exit(2)


def pack(path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(path, arcname=".")
    return buf.getvalue()


def die_with_parent():
    # The attempt (and through it the agent) stops when this worker dies.
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def materialise(cache, name, digest, ref_box, unpack):
    """The cached copy of a shipped file or tree on this worker, fetched once."""
    target = os.path.join(cache, "%s-%s" % (name, digest))
    if os.path.exists(target):
        return target
    data = ray.get(ref_box[0])
    staging = tempfile.mkdtemp(dir=cache)
    if unpack:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            tar.extractall(staging, filter="data")
        path = staging
    else:
        path = os.path.join(staging, name)
        with open(path, "wb") as f:
            f.write(data)
        os.chmod(path, 0o755)
    try:
        if unpack:
            os.rename(path, target)  # fails on an existing (non-empty) directory
        else:
            # Never replaces: renaming over a binary another task already runs would unlink it
            # under that task, whose rein then cannot find itself to start the agent.
            os.link(path, target)
    except OSError:
        pass  # another task on this worker got there first
    shutil.rmtree(staging, ignore_errors=True)
    return target


@ray.remote(num_cpus=1, max_retries=0)
def run_attempt(task, n, shipped, flags, env):
    cache = os.path.join(tempfile.gettempdir(), "rein-ray-cache")
    os.makedirs(cache, exist_ok=True)
    rein = materialise(cache, "rein", shipped["rein_hash"], shipped["rein"], unpack=False)
    suite = materialise(cache, "suite", shipped["suite_hash"], shipped["suite"], unpack=True)
    args = [rein, "eval", os.path.join(suite, shipped["suite_file"]), "--attempt", "%s:%d" % (task, n)]
    args += flags
    if shipped.get("replay"):
        replay = materialise(cache, "replay", shipped["replay_hash"], shipped["replay"], unpack=True)
        args += ["--replay", replay]
    child_env = dict(os.environ)
    child_env.update(env)
    proc = subprocess.run(args, env=child_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          stdin=subprocess.DEVNULL, preexec_fn=die_with_parent)
    return {"code": proc.returncode, "stdout": proc.stdout.decode("utf-8", "replace"),
            "stderr": proc.stderr.decode("utf-8", "replace")[-4000:]}


def record_of(task, n, outcome):
    for line in reversed(outcome["stdout"].splitlines()):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("task") == task:
            return record
    return None


def failed(task, n, detail):
    return {"task": task, "attempt": n, "passed": False, "reason": "agent error", "detail": detail,
            "rounds": None, "usage": None, "cost_usd": None, "duration_ms": 0, "stop_reason": None,
            "permission_denials": [], "session_id": None, "session_file": None, "workspace": "",
            "model": None, "started_at_ms": 0, "ended_at_ms": 0, "retried": False}


WORKER_DIED = (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError,
               ray.exceptions.LocalRayletDiedError, ray.exceptions.ActorDiedError,
               ray.exceptions.OwnerDiedError)


def main():
    plan = json.load(sys.stdin)
    ray.init(address=plan["address"], logging_level="ERROR", log_to_driver=False,
             configure_logging=False)
    with open(plan["rein"], "rb") as f:
        rein_bytes = f.read()
    suite_bytes = pack(plan["suite_dir"])
    shipped = {
        "rein": [ray.put(rein_bytes)], "rein_hash": hashlib.sha256(rein_bytes).hexdigest()[:16],
        "suite": [ray.put(suite_bytes)], "suite_hash": hashlib.sha256(suite_bytes).hexdigest()[:16],
        "suite_file": plan["suite_file"],
    }
    if plan.get("replay_dir"):
        replay_bytes = pack(plan["replay_dir"])
        shipped["replay"] = [ray.put(replay_bytes)]
        shipped["replay_hash"] = hashlib.sha256(replay_bytes).hexdigest()[:16]
    jobs = plan.get("jobs") or max(1, int(ray.cluster_resources().get("CPU", 1)))
    pending = list(reversed([(t, n, False) for t, n in plan["attempts"]]))
    running = {}

    def submit(task, n, retried):
        ref = run_attempt.remote(task, n, shipped, plan["flags"], plan["env"])
        running[ref] = (task, n, retried)

    try:
        while pending or running:
            while pending and len(running) < jobs:
                submit(*pending.pop())
            done, _ = ray.wait(list(running), num_returns=1)
            ref = done[0]
            task, n, retried = running.pop(ref)
            try:
                outcome = ray.get(ref)
            except WORKER_DIED as e:
                if not retried:
                    submit(task, n, True)
                    continue
                say({"record": failed(task, n, "the Ray worker died twice: %s" % type(e).__name__)})
                continue
            except ray.exceptions.RayError as e:
                say({"record": failed(task, n, "the Ray task failed: %s" % str(e)[:500])})
                continue
            record = record_of(task, n, outcome)
            if record is None:
                detail = "rein eval --attempt exited with %s: %s" % (outcome["code"], outcome["stderr"].strip()[-500:])
                record = failed(task, n, detail)
            record["retried"] = retried
            say({"record": record})
    except KeyboardInterrupt:
        for ref in running:
            ray.cancel(ref, force=True)
        raise


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as e:  # the driver's own failure, said in one line
        say({"error": "%s: %s" % (type(e).__name__, e)})
        sys.exit(1)
