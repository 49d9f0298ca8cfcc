"""A short run of the API fuzzer (tools/fuzz_api.py): random, mostly invalid arguments to the
public ops, each call in a child process; every call must succeed or raise a Python exception.
The long run is documented in docs/development.md."""

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_fuzz_api_short_run_has_no_crash():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(ROOT, "python")] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    r = subprocess.run(
        [
            sys.executable,
            os.path.join(ROOT, "tools", "fuzz_api.py"),
            "--calls",
            "3000",
            "--seed",
            "0",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    print(r.stdout)
    summary = re.search(r"fuzz_api: (\d+) calls, (\d+) crashed, (\d+) hung", r.stdout)
    assert summary, r.stdout + r.stderr
    assert int(summary.group(1)) == 3000
    assert r.returncode == 0 and summary.group(2) == "0" and summary.group(3) == "0", r.stdout
