"""oneflow.version: what this build is, with the names of PyTorch's torch.version.

``cuda`` is the CUDA runtime version ("13.0") when oneflow was built with CUDA, else None;
``git_version`` the commit of the source checkout the package is loaded from ("Unknown" for an
installed copy); ``hip``, ``rocm`` and ``xpu`` are None and ``debug`` False."""

import os

__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu"]

__version__ = "0.1.0"
debug = False
hip = None
rocm = None
xpu = None


def _cuda_runtime_version():
    """The version of the CUDA runtime this build loaded, as "major.minor"; None without CUDA."""
    from oneflow import _oneflow_internal

    if not _oneflow_internal.with_cuda:
        return None
    path = None
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                name = line.rsplit(None, 1)[-1]
                if os.path.basename(name).startswith("libcudart.so"):
                    path = name
                    break
    except OSError:
        pass
    if path is not None:
        try:
            import ctypes

            value = ctypes.c_int(0)
            if ctypes.CDLL(path).cudaRuntimeGetVersion(ctypes.byref(value)) == 0 and value.value:
                return f"{value.value // 1000}.{value.value % 1000 // 10}"
        except (OSError, AttributeError):
            pass
        major = os.path.basename(path)[len("libcudart.so.") :].split(".")[0]
        if major.isdigit():
            return f"{major}.0"
    return "Unknown"


def _git_version():
    """The commit checked out where this package's sources are, read from the .git folder."""
    here = os.path.dirname(os.path.abspath(__file__))
    git = os.path.join(here, "..", "..", ".git")
    try:
        if os.path.isfile(git):  # a worktree: "gitdir: <path>"
            with open(git) as f:
                git = f.read().split(":", 1)[1].strip()
        with open(os.path.join(git, "HEAD")) as f:
            head = f.read().strip()
        if not head.startswith("ref:"):
            return head
        ref = head.split(":", 1)[1].strip()
        for root in (git, _common_dir(git)):
            ref_path = os.path.join(root, ref)
            if os.path.isfile(ref_path):
                with open(ref_path) as f:
                    return f.read().strip()
            packed = os.path.join(root, "packed-refs")
            if os.path.isfile(packed):
                with open(packed) as f:
                    for line in f:
                        parts = line.split()
                        if len(parts) == 2 and parts[1] == ref:
                            return parts[0]
    except (OSError, IndexError):
        pass
    return "Unknown"


def _common_dir(git):
    try:
        with open(os.path.join(git, "commondir")) as f:
            return os.path.normpath(os.path.join(git, f.read().strip()))
    except OSError:
        return git


cuda = _cuda_runtime_version()
git_version = _git_version()
