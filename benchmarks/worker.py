"""Each framework in a process of its own: the parent sends one JSON request per line, the
worker answers one JSON line.

Why: PyTorch's wheel ships a ``libgomp.so.1``, which then serves every OpenMP user in the
process. libgomp counts the threads of all teams, and when they outnumber the cores its idle
threads spin ~100 times instead of ~300000 before sleeping, so every parallel region of every
framework has to wake its team. With OneFlow's stream-thread team and PyTorch's team in one
process on 2 cores, a chain of 100 256x256 multiplications took 7-8 ms in PyTorch instead of
0.7-0.9 ms. A user runs one framework per process; so does the benchmark.
"""

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent


class WorkerRunner:
    """A framework in a child process, with LocalRunner's interface (benchmarks.timing)."""

    def __init__(self, name, device, threads):
        self.name, self.device = name, device
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_ROOT), env.get("PYTHONPATH")) if p)
        if name == "numpy" and "OPENBLAS_THREAD_TIMEOUT" not in env:
            # NumPy's OpenBLAS threads poll for work ~2^28 cycles (~0.1 s) after each call, far
            # past the pause between trials, and took a core from the framework measured next
            # (OneFlow, in two rotations of three): matmul 1024 5.6 -> 6.9 ms. 2^4 cycles: they
            # sleep at once. NumPy is a reference column, not a framework under comparison.
            env["OPENBLAS_THREAD_TIMEOUT"] = "4"
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.worker", name, device, str(threads)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=str(_ROOT),
        )
        self.pid = self._proc.pid
        hello = self._receive()
        if "unusable" in hello:
            self.close()
            raise RuntimeError(hello["unusable"])
        self.version = hello["version"]

    def _receive(self):
        line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the {self.name} benchmark worker exited ({self._proc.wait()})")
        reply = json.loads(line)
        if "failure" in reply:
            raise RuntimeError(f"{self.name} worker: {reply['failure']}")
        return reply

    def _call(self, **request):
        self._proc.stdin.write(json.dumps(request) + "\n")
        self._proc.stdin.flush()
        return self._receive()

    def prepare(self, case):
        return self._call(op="prepare", case=case.key)["status"]

    def calibrate(self, cfg):
        return self._call(op="calibrate", cfg=dataclasses.asdict(cfg))["reps"]

    def time(self, reps):
        return self._call(op="time", reps=reps)["seconds"]

    def release(self):
        self._call(op="release")

    def close(self):
        if self._proc.poll() is None:
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()


def start_workers(device, threads):
    """({name: WorkerRunner}, {name: reason}) for the frameworks usable on ``device``."""
    from benchmarks.frameworks import ORDER

    runners, skipped = {}, {}
    for name in ORDER:
        try:
            runners[name] = WorkerRunner(name, device, threads)
        except RuntimeError as exc:
            skipped[name] = str(exc)
    return runners, skipped


def _serve(name, device, threads, out):
    from benchmarks import frameworks
    from benchmarks.registry import all_cases
    from benchmarks.timing import LocalRunner, RunConfig

    def send(reply):
        out.write(json.dumps(reply) + "\n")
        out.flush()

    try:
        fw = frameworks.load_one(name, device, threads)
    except (ImportError, RuntimeError) as exc:
        send({"unusable": str(exc)})
        return
    runner = LocalRunner(fw)
    cases = {case.key: case for case in all_cases()}
    send({"version": fw.version})
    for line in sys.stdin:
        request = json.loads(line)
        op = request["op"]
        try:
            if op == "prepare":
                send({"status": runner.prepare(cases[request["case"]])})
            elif op == "calibrate":
                send({"reps": runner.calibrate(RunConfig(**request["cfg"]))})
            elif op == "time":
                send({"seconds": runner.time(request["reps"])})
            elif op == "release":
                runner.release()
                send({})
            else:
                send({"failure": f"unknown request {op!r}"})
        except Exception as exc:  # reported to the parent, which stops the run
            send({"failure": f"{type(exc).__name__}: {exc}"})


def main():
    name, device, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
    # The protocol owns the original stdout; anything the frameworks print goes to stderr.
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    _serve(name, device, threads, out)


if __name__ == "__main__":
    main()
