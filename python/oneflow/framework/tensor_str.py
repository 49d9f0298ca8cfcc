"""repr/str of tensors in OneFlow's format:

    tensor([[1., 2.],
            [3., 4.]], dtype=oneflow.float32, requires_grad=True)

Floats print with 4 digits (fixed or scientific, chosen per tensor like PyTorch does), large
tensors are summarised with "...", and set_printoptions changes the defaults.
"""

import builtins
import math

import numpy as np


class _Options:
    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode = None


_opts = _Options()


def set_printoptions(
    precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None
):
    if profile == "default":
        _opts.precision, _opts.threshold, _opts.edgeitems, _opts.linewidth = 4, 1000, 3, 80
    elif profile == "short":
        _opts.precision, _opts.threshold, _opts.edgeitems, _opts.linewidth = 2, 1000, 2, 80
    elif profile == "full":
        _opts.precision, _opts.threshold, _opts.edgeitems, _opts.linewidth = 4, math.inf, 3, 80
    if precision is not None:
        _opts.precision = precision
    if threshold is not None:
        _opts.threshold = threshold
    if edgeitems is not None:
        _opts.edgeitems = edgeitems
    if linewidth is not None:
        _opts.linewidth = linewidth
    _opts.sci_mode = sci_mode


class _Formatter:
    """Chooses one format for every element so that columns line up."""

    def __init__(self, values, is_float):
        self.is_float = is_float
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if not is_float:
            for v in flat:
                self.max_width = builtins.max(self.max_width, len(self._plain(v)))
            return
        finite = flat[np.isfinite(flat)].astype(np.float64)
        nonzero = np.abs(finite[finite != 0])
        if finite.size == 0:
            return  # nan and inf print at their own width
        self.int_mode = bool(np.all(np.ceil(finite) == finite))
        if nonzero.size:
            lo, hi = nonzero.min(), nonzero.max()
            ratio = hi / lo
        else:
            lo = hi = ratio = 0
        if self.int_mode:
            if ratio > 1000 or hi > 1e8:
                self.sci_mode = True
        elif ratio > 1000 or hi > 1e8 or (nonzero.size and lo < 1e-4):
            self.sci_mode = True
        if _opts.sci_mode is not None:
            self.sci_mode = _opts.sci_mode
        # The column width comes from the nonzero finite values (zeros, nan and inf are not
        # padded to, nor pad the others: tensor([nan, inf, -inf, 1.]), as PyTorch and OneFlow).
        for v in finite[finite != 0]:
            self.max_width = builtins.max(self.max_width, len(self._format_raw(v)))

    @staticmethod
    def _special(v):
        if np.isnan(v):
            return "nan"
        return "inf" if v > 0 else "-inf"

    @staticmethod
    def _plain(v):
        if isinstance(v, (np.bool_, builtins.bool)):
            return "True" if v else "False"
        return str(v)

    def _format_raw(self, v):
        if not self.is_float:
            return self._plain(v)
        v = builtins.float(v)
        if not math.isfinite(v):
            return self._special(v)
        p = _opts.precision
        if self.sci_mode:
            return f"{v:.{p}e}"
        if self.int_mode:
            return f"{v:.0f}."
        return f"{v:.{p}f}"

    def format(self, v):
        return self._format_raw(v).rjust(self.max_width)


class _ComplexFormatter:
    """re+imj with one format for the real parts and one for the imaginary parts."""

    def __init__(self, values):
        self.re = _Formatter(values.real, True)
        self.im = _Formatter(np.abs(values.imag), True)
        self.max_width = self.re.max_width + self.im.max_width + 2

    def format(self, v):
        v = builtins.complex(v)
        sign = "-" if math.copysign(1.0, v.imag) < 0 else "+"
        return self.re.format(v.real) + sign + self.im._format_raw(abs(v.imag)) + "j"


def _summarize(a):
    """The elements that will be printed (edge items of every dim when summarising)."""
    e = _opts.edgeitems
    if a.ndim == 0:
        return a
    if a.shape[0] > 2 * e:
        parts = [_summarize(a[i]) for i in list(range(e)) + list(range(a.shape[0] - e, a.shape[0]))]
    else:
        parts = [_summarize(a[i]) for i in range(a.shape[0])]
    return np.concatenate([np.asarray(p).reshape(-1) for p in parts]) if parts else a.reshape(-1)


def _format_array(a, fmt, indent, summarize):
    e = _opts.edgeitems
    if a.ndim == 0:
        return fmt.format(a.item() if hasattr(a, "item") else a)
    if a.ndim == 1:
        n = a.shape[0]
        if summarize and n > 2 * e:
            items = [fmt.format(v) for v in a[:e]] + [" ..."] + [fmt.format(v) for v in a[n - e :]]
        else:
            items = [fmt.format(v) for v in a]
        elem_len = fmt.max_width + 2
        per_line = builtins.max(int((_opts.linewidth - indent) // elem_len), 1)
        lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"
    n = a.shape[0]
    if summarize and n > 2 * e:
        rows = [_format_array(a[i], fmt, indent + 1, summarize) for i in range(e)]
        rows.append("...")
        rows += [_format_array(a[i], fmt, indent + 1, summarize) for i in range(n - e, n)]
    else:
        rows = [_format_array(a[i], fmt, indent + 1, summarize) for i in range(n)]
    sep = "," + "\n" * (a.ndim - 1) + " " * (indent + 1)
    return "[" + sep.join(rows) + "]"


def _values(t):
    from oneflow import _oneflow_internal as _internal

    if t.is_global:
        from oneflow.framework.global_tensor import whole_value

        t = whole_value(t.detach())
    if t.dtype == _internal.bfloat16:
        t = t.float()
    return t.detach().cpu()._numpy_copy()


def tensor_repr(t):
    from oneflow import _oneflow_internal as _internal

    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if t.is_global:
        suffixes.append(f"placement={t.placement}")
        suffixes.append(f"sbp={t.sbp}")
    elif t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    if t.is_meta:  # no values to show
        body = "..."
        suffixes.append(f"size={tuple(t.shape)}")
    elif t.numel() == 0:
        body = "[]"
        if t.ndim != 1:
            suffixes.append(f"size={tuple(t.shape)}")
    else:
        a = _values(t)
        summarize = a.size > _opts.threshold
        is_float = t.dtype.is_floating_point
        shown = _summarize(a) if summarize else a
        fmt = _ComplexFormatter(shown) if t.dtype.is_complex else _Formatter(shown, is_float)
        body = _format_array(a, fmt, indent, summarize)
    suffixes.append(f"dtype={t.dtype}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    del _internal
    return prefix + body + ", " + ", ".join(suffixes) + ")"
