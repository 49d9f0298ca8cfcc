"""Framework adapters: load oneflow, torch and numpy for a device, with a synchronize hook."""

import importlib
from dataclasses import dataclass, field
from typing import Callable

ORDER = ("oneflow", "torch", "numpy")
LABELS = {"oneflow": "OneFlow", "torch": "PyTorch", "numpy": "NumPy"}


def _no_sync():
    return None


@dataclass
class Framework:
    """One framework bound to one device; ``sync`` waits for queued device work."""

    name: str
    module: object
    device: str
    version: str
    sync: Callable[[], None] = field(default=_no_sync)


def _load_oneflow(device):
    flow = importlib.import_module("oneflow")
    if device == "cuda" and not flow.cuda.is_available():
        raise RuntimeError("oneflow has no CUDA (built without it, or no GPU visible)")
    # CPU ops run asynchronously on the eager engine's stream thread: wait for them too.
    sync = flow.cuda.synchronize if device == "cuda" else flow.cpu.synchronize
    return Framework("oneflow", flow, device, getattr(flow, "__version__", "?"), sync)


def _load_torch(device, threads):
    torch = importlib.import_module("torch")
    torch.set_num_threads(threads)
    if device == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("torch has no CUDA (CPU-only build, or no GPU visible)")
    sync = torch.cuda.synchronize if device == "cuda" else _no_sync
    return Framework("torch", torch, device, torch.__version__, sync)


def _load_numpy(device):
    if device != "cpu":
        raise RuntimeError("numpy runs on the CPU only")
    np = importlib.import_module("numpy")
    return Framework("numpy", np, device, np.__version__)


def load_one(name, device, threads):
    """The Framework ``name`` on ``device`` (seeded); ImportError or RuntimeError if unusable."""
    if name == "oneflow":
        fw = _load_oneflow(device)
    elif name == "torch":
        fw = _load_torch(device, threads)
    else:
        return _load_numpy(device)
    fw.module.manual_seed(0)
    return fw


def load(device, threads):
    """Returns ({name: Framework}, {name: reason}) for the frameworks usable on ``device``."""
    loaded, skipped = {}, {}
    for name in ORDER:
        try:
            loaded[name] = load_one(name, device, threads)
        except (ImportError, RuntimeError) as exc:
            skipped[name] = str(exc)
    return loaded, skipped
