"""python -m oneflow.distributed.launch [options] script.py [script args]

Starts --nproc_per_node processes of a program on this node, one per local rank, each with the
variables a rank reads: MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK, LOCAL_RANK and
LOCAL_WORLD_SIZE. The processes live and die as one group: the first rank to exit with an error
takes the others down (SIGTERM, then SIGKILL after a grace period) and its exit code becomes the
launcher's; SIGINT and SIGTERM sent to the launcher go to every rank. Each rank runs in its own
session, so a terminal's Ctrl-C reaches it once (through the launcher), and on Linux it is
killed if the launcher dies."""

import argparse
import os
import signal
import subprocess
import sys
import time

# How often the ranks are polled, and how long a rank may take to exit after SIGTERM.
_POLL_SECONDS = 0.1
_GRACE_SECONDS = 5.0


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m oneflow.distributed.launch",
        description="Starts the processes of a distributed OneFlow program on this node.",
    )
    parser.add_argument("--nnodes", type=int, default=1, help="number of nodes")
    parser.add_argument(
        "--node_rank", type=int, default=0, help="rank of this node, in [0, nnodes)"
    )
    parser.add_argument(
        "--nproc_per_node",
        type=int,
        default=1,
        help="processes to start on this node (for GPU training, its number of GPUs)",
    )
    parser.add_argument(
        "--master_addr",
        type=str,
        default="127.0.0.1",
        help="address of the node of rank 0, which serves the rendezvous store",
    )
    parser.add_argument(
        "--master_port",
        type=int,
        default=29500,
        help="free port on the node of rank 0 for the rendezvous store",
    )
    parser.add_argument(
        "-m",
        "--module",
        action="store_true",
        help="run the program as a module, as `python -m` does",
    )
    parser.add_argument(
        "--no_python",
        action="store_true",
        help="run the program directly instead of with the Python interpreter",
    )
    parser.add_argument(
        "--redirect_stdout_and_stderr",
        action="store_true",
        help="accepted for OneFlow scripts: with --logdir the output is always redirected",
    )
    parser.add_argument(
        "--logdir",
        type=str,
        default=None,
        help="directory for the ranks' output: LOGDIR/local_rank_<i>/stdout and stderr",
    )
    parser.add_argument("training_script", type=str, help="the program, then its arguments")
    parser.add_argument("training_script_args", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.nproc_per_node < 1:
        parser.error(f"--nproc_per_node must be at least 1, got {args.nproc_per_node}")
    if args.nnodes < 1:
        parser.error(f"--nnodes must be at least 1, got {args.nnodes}")
    if not 0 <= args.node_rank < args.nnodes:
        parser.error(f"--node_rank must be in [0, {args.nnodes}), got {args.node_rank}")
    if not 0 < args.master_port < 65536:
        parser.error(f"--master_port must be in [1, 65535], got {args.master_port}")
    if args.module and args.no_python:
        parser.error("--module and --no_python cannot be used together")
    if args.redirect_stdout_and_stderr and not args.logdir:
        parser.error("--redirect_stdout_and_stderr needs --logdir")
    return args


def _command(args):
    if args.no_python:
        return [args.training_script, *args.training_script_args]
    # -u: unbuffered, so the ranks' output interleaves as it happens and reaches log files
    # of a rank that is killed.
    python = [sys.executable, "-u"] + (["-m"] if args.module else [])
    return python + [args.training_script, *args.training_script_args]


def _rank_env(args, local_rank):
    env = dict(os.environ)
    env.update(
        MASTER_ADDR=args.master_addr,
        MASTER_PORT=str(args.master_port),
        WORLD_SIZE=str(args.nnodes * args.nproc_per_node),
        RANK=str(args.node_rank * args.nproc_per_node + local_rank),
        LOCAL_RANK=str(local_rank),
        LOCAL_WORLD_SIZE=str(args.nproc_per_node),
    )
    # Each process would otherwise size its OpenMP team to every core of the node, and the
    # ranks would oversubscribe them.
    if args.nproc_per_node > 1 and "OMP_NUM_THREADS" not in os.environ:
        env["OMP_NUM_THREADS"] = "1"
    return env


def _die_with_parent():
    """Runs in the child before exec: the kernel sends it SIGKILL when the launcher dies, even
    by SIGKILL (Linux's PR_SET_PDEATHSIG; elsewhere a no-op)."""
    if _prctl is not None:
        _prctl(1, _SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG = 1
        if os.getppid() != _launcher_pid:  # the launcher died before the call
            os._exit(1)


def _load_prctl():
    # Looked up before any fork: the child only calls it.
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_prctl = None
_launcher_pid = os.getpid()
_SIGKILL = int(signal.SIGKILL)


class _Group:
    """The ranks started on this node."""

    def __init__(self):
        self.procs = []  # (local_rank, Popen)
        self.files = []

    def start(self, args):
        cmd = _command(args)
        for local_rank in range(args.nproc_per_node):
            stdout = stderr = None
            env = _rank_env(args, local_rank)
            if args.logdir:
                rank_dir = os.path.join(os.path.abspath(args.logdir), f"local_rank_{local_rank}")
                os.makedirs(rank_dir, exist_ok=True)
                env["GLOG_log_dir"] = rank_dir
                stdout = open(os.path.join(rank_dir, "stdout"), "w")
                stderr = open(os.path.join(rank_dir, "stderr"), "w")
                self.files += [stdout, stderr]
            proc = subprocess.Popen(
                cmd,
                env=env,
                stdout=stdout,
                stderr=stderr,
                start_new_session=True,
                preexec_fn=_die_with_parent if _prctl is not None else None,
            )
            self.procs.append((local_rank, proc))

    def signal(self, signum):
        """Sends `signum` to every live rank's process group (its children too)."""
        for _, proc in self.procs:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signum)
                except (ProcessLookupError, PermissionError):
                    pass

    def alive(self):
        return [proc for _, proc in self.procs if proc.poll() is None]

    def stop(self, grace=_GRACE_SECONDS):
        """SIGTERM to the live ranks, SIGKILL to those still alive after `grace` seconds."""
        self.signal(signal.SIGTERM)
        deadline = time.monotonic() + grace
        while self.alive() and time.monotonic() < deadline:
            time.sleep(_POLL_SECONDS / 2)
        self.signal(signal.SIGKILL)
        for proc in self.alive():
            try:
                proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                pass

    def close(self):
        for f in self.files:
            f.close()


def _exit_code(returncode):
    # A rank killed by signal N reports -N; a shell reports 128 + N.
    return 128 - returncode if returncode < 0 else returncode


def main(argv=None):
    global _prctl, _launcher_pid
    args = parse_args(argv)
    if args.logdir and os.path.exists(args.logdir) and not os.path.isdir(args.logdir):
        print(f"launch: --logdir {args.logdir} is not a directory", file=sys.stderr)
        return 2
    _prctl, _launcher_pid = _load_prctl(), os.getpid()
    group = _Group()
    received = []

    def forward(signum, frame):
        received.append(signum)
        group.signal(signum)

    previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            group.start(args)
        except OSError as e:
            print(f"launch: cannot start {args.training_script}: {e}", file=sys.stderr)
            group.stop()
            return 127 if isinstance(e, FileNotFoundError) else 126
        while True:
            if received:
                # The ranks got the signal; give them the grace period to exit on their own.
                deadline = time.monotonic() + _GRACE_SECONDS
                while group.alive() and time.monotonic() < deadline:
                    time.sleep(_POLL_SECONDS)
                group.stop(grace=0)
                return 128 + received[0]
            running = False
            for local_rank, proc in group.procs:
                code = proc.poll()
                if code is None:
                    running = True
                elif code != 0:
                    if len(group.procs) > 1:
                        print(
                            f"launch: local rank {local_rank} (pid {proc.pid}) exited with code "
                            f"{code}; stopping the other ranks",
                            file=sys.stderr,
                        )
                    group.stop()
                    return _exit_code(code)
            if not running:
                return 0
            time.sleep(_POLL_SECONDS)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        group.close()


if __name__ == "__main__":
    sys.exit(main())
