"""Peak resident memory of the examples' training steps, oneflow vs PyTorch, each framework in a
fresh process (the peak of a process cannot be split between two frameworks).

    python -m benchmarks.peak_memory [--steps 20]

Prints, per model and framework, the peak RSS after import and model creation and the peak after
the training steps (MiB, from getrusage), and the growth the steps caused.
"""

import argparse
import json
import os
import subprocess
import sys

_CHILD = r"""
import json, resource, sys
sys.path.insert(0, {root!r})
fw_name, model_name, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
from benchmarks.cases import training
from benchmarks import frameworks
fw = frameworks._load_oneflow("cpu") if fw_name == "oneflow" else frameworks._load_torch("cpu", 2)
build = {{"gpt": training._build_gpt, "lenet": training._build_digits("lenet"),
         "mlp": training._build_digits("mlp")}}[model_name]
step = build(fw)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
for _ in range(steps):
    step()
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"before": before, "after": after}}))
"""


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = _CHILD.format(root=root)
    print("| model | framework | RSS before steps (MiB) | peak RSS after steps (MiB) | growth |")
    print("|---|---|---|---|---|")
    for model in ["mlp", "lenet", "gpt"]:
        for fw in ["oneflow", "torch"]:
            out = subprocess.run(
                [sys.executable, "-c", code, fw, model, str(args.steps)],
                capture_output=True,
                text=True,
                check=True,
            )
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(
                f"| {model} | {fw} | {r['before']:.0f} | {r['after']:.0f} | "
                f"{r['after'] - r['before']:.0f} |"
            )


if __name__ == "__main__":
    main()
