"""Command line: ``python -m benchmarks run [--filter F] [--device cpu|cuda] [--quick]``."""

import argparse
import sys
import time
from pathlib import Path

from benchmarks import env, report
from benchmarks.registry import all_cases
from benchmarks.timing import RunConfig, run_case

RESULTS_DIR = Path(__file__).resolve().parent / "results"
HEAVY_LOAD = 0.25  # foreign CPU share over the run that earns a warning in the header


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the benchmarks and write the results")
    run.add_argument("--filter", help="regex over 'family/case', e.g. 'matmul|dispatch'")
    run.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    run.add_argument("--quick", action="store_true", help="few trials; under 2 min on 2 cores")
    run.add_argument("--out", default=str(RESULTS_DIR), help="results folder")
    run.add_argument("--no-save", action="store_true", help="print the table only")
    run.add_argument(
        "--same-process",
        action="store_true",
        help="load every framework into this process (default: one worker process each; "
        "see benchmarks/worker.py for why)",
    )
    listing = sub.add_parser("list", help="list the cases")
    listing.add_argument("--filter")
    return parser.parse_args(argv)


def list_cases(args):
    for case in all_cases(args.filter):
        print(f"{case.key}  [{case.metric}]  ({', '.join(case.frameworks)})")
    return 0


def _load_frameworks(device, threads, same_process):
    """{name: runner} (benchmarks.timing.LocalRunner or benchmarks.worker.WorkerRunner), or
    None (after a message) when OneFlow or PyTorch is unusable."""
    if same_process:
        from benchmarks import frameworks as fwmod
        from benchmarks.timing import LocalRunner

        loaded, skipped = fwmod.load(device, threads)
        runners = {name: LocalRunner(fw) for name, fw in loaded.items()}
    else:
        from benchmarks.worker import start_workers

        runners, skipped = start_workers(device, threads)
    missing = [name for name in ("oneflow", "torch") if name not in runners]
    if missing:
        for name in missing:
            print(f"benchmarks: skipping the {device} run: {skipped[name]}", file=sys.stderr)
        for runner in runners.values():
            runner.close()
        return None, skipped
    return runners, skipped


def _measure_all(cases, frameworks, cfg):
    records = []
    for index, case in enumerate(cases, 1):
        print(f"[{index}/{len(cases)}] {case.key} ...", end=" ", file=sys.stderr, flush=True)
        record = run_case(case, frameworks, cfg)
        print(f"{record['seconds']:.1f} s", file=sys.stderr, flush=True)
        records.append(record)
    return records


def _meta(args, cfg, threads, frameworks, skipped):
    meta = env.machine_info(threads)
    meta.update(
        device=args.device,
        mode="quick" if args.quick else "full",
        filter=args.filter,
        trials=cfg.trials,
        import_runs=cfg.import_runs,
        command="python -m benchmarks " + " ".join(sys.argv[1:] or ["run"]),
        frameworks={name: fw.version for name, fw in frameworks.items()},
        processes="one" if args.same_process else "one per framework",
        skipped=skipped,
    )
    return meta


def _stem(args, date):
    stem = f"{date}-{args.device}"
    if args.quick:
        stem += "-quick"
    if args.filter:
        stem += "-filtered"
    return stem


def run(args):
    threads = env.pin_threads()  # before numpy, torch or oneflow is imported
    frameworks, skipped = _load_frameworks(args.device, threads, args.same_process)
    if frameworks is None:
        return 0
    try:
        return _run_cases(args, threads, frameworks, skipped)
    finally:
        for runner in frameworks.values():
            runner.close()


def _run_cases(args, threads, frameworks, skipped):
    cfg = RunConfig.quick_preset() if args.quick else RunConfig.full()
    cases = all_cases(args.filter)
    if not cases:
        print(f"benchmarks: no case matches {args.filter!r}", file=sys.stderr)
        return 1
    meta = _meta(args, cfg, threads, frameworks, skipped)
    pids = [r.pid for r in frameworks.values() if r.pid]
    started, probe = time.perf_counter(), env.LoadProbe(pids=pids).start()
    records = _measure_all(cases, frameworks, cfg)
    meta["duration_s"] = time.perf_counter() - started
    meta["foreign_load"] = probe.stop()
    if (meta["foreign_load"] or 0) > HEAVY_LOAD:
        meta["load_warning"] = "heavy load from other processes during the run; numbers are noisy"
    print(report.markdown(records, meta))
    if not args.no_save:
        for path in report.save(records, meta, args.out, _stem(args, meta["date"])):
            print(f"wrote {path}", file=sys.stderr)
    return 0


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    return list_cases(args) if args.command == "list" else run(args)
