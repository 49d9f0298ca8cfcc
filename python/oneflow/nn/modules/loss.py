"""The loss modules of oneflow.nn, with PyTorch's constructor signatures (positional order,
defaults, keyword-only arguments and the legacy size_average/reduce). Each forwards to
oneflow.nn.functional."""

import inspect

from oneflow.nn import functional as F
from oneflow.nn.modules.module import Module


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            if reduce is False:
                reduction = "none"
            elif size_average is False:
                reduction = "sum"
            else:
                reduction = "mean"
        self.reduction = reduction


class _WeightedLoss(_Loss):
    """A loss with a per-class `weight`, held as a buffer."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


_LEGACY = (("size_average", None), ("reduce", None), ("reduction", "mean"))
_REDUCTION_ARGS = {"size_average", "reduce", "reduction"}


def _loss(name, fn, signature, keyword_only=False):
    """A loss module whose constructor takes `signature` ((name, default) pairs, in PyTorch's
    order); `weight` becomes a buffer, the reduction arguments go to _Loss and the rest are
    attributes passed to F.`fn` as keywords."""
    kind = (
        inspect.Parameter.KEYWORD_ONLY if keyword_only else inspect.Parameter.POSITIONAL_OR_KEYWORD
    )
    sig = inspect.Signature(
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [inspect.Parameter(n, kind, default=d) for n, d in signature]
    )
    params = [n for n, _ in signature if n not in _REDUCTION_ARGS and n != "weight"]
    weighted = any(n == "weight" for n, _ in signature)

    def __init__(self, *args, **kwargs):
        try:
            bound = sig.bind(self, *args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{name}.__init__(): {e}") from None
        bound.apply_defaults()
        values = bound.arguments
        _Loss.__init__(self, values.get("size_average"), values.get("reduce"), values["reduction"])
        if weighted:
            self.register_buffer("weight", values["weight"])
        for p in params:
            setattr(self, p, values[p])

    __init__.__signature__ = sig

    def forward(self, *inputs):
        kwargs = {p: getattr(self, p) for p in params}
        if weighted:
            kwargs["weight"] = self.weight
        return getattr(F, fn)(*inputs, reduction=self.reduction, **kwargs)

    base = _WeightedLoss if weighted else _Loss
    return type(name, (base,), {"__init__": __init__, "forward": forward, "__module__": __name__})


L1Loss = _loss("L1Loss", "l1_loss", _LEGACY)
MSELoss = _loss("MSELoss", "mse_loss", _LEGACY)
SmoothL1Loss = _loss("SmoothL1Loss", "smooth_l1_loss", _LEGACY + (("beta", 1.0),))
HuberLoss = _loss("HuberLoss", "huber_loss", (("reduction", "mean"), ("delta", 1.0)))
NLLLoss = _loss(
    "NLLLoss",
    "nll_loss",
    (
        ("weight", None),
        ("size_average", None),
        ("ignore_index", -100),
        ("reduce", None),
        ("reduction", "mean"),
    ),
)
CrossEntropyLoss = _loss(
    "CrossEntropyLoss",
    "cross_entropy",
    (
        ("weight", None),
        ("size_average", None),
        ("ignore_index", -100),
        ("reduce", None),
        ("reduction", "mean"),
        ("label_smoothing", 0.0),
    ),
)
BCELoss = _loss("BCELoss", "binary_cross_entropy", (("weight", None),) + _LEGACY)
KLDivLoss = _loss("KLDivLoss", "kl_div", _LEGACY + (("log_target", False),))
MarginRankingLoss = _loss("MarginRankingLoss", "margin_ranking_loss", (("margin", 0.0),) + _LEGACY)
HingeEmbeddingLoss = _loss(
    "HingeEmbeddingLoss", "hinge_embedding_loss", (("margin", 1.0),) + _LEGACY
)
SoftMarginLoss = _loss("SoftMarginLoss", "soft_margin_loss", _LEGACY)
CosineEmbeddingLoss = _loss(
    "CosineEmbeddingLoss", "cosine_embedding_loss", (("margin", 0.0),) + _LEGACY
)
TripletMarginLoss = _loss(
    "TripletMarginLoss",
    "triplet_margin_loss",
    (("margin", 1.0), ("p", 2.0), ("eps", 1e-6), ("swap", False)) + _LEGACY,
)
PoissonNLLLoss = _loss(
    "PoissonNLLLoss",
    "poisson_nll_loss",
    (
        ("log_input", True),
        ("full", False),
        ("size_average", None),
        ("eps", 1e-8),
        ("reduce", None),
        ("reduction", "mean"),
    ),
)
GaussianNLLLoss = _loss(
    "GaussianNLLLoss",
    "gaussian_nll_loss",
    (("full", False), ("eps", 1e-6), ("reduction", "mean")),
    keyword_only=True,
)


class CTCLoss(_Loss):
    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(reduction=reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(
            log_probs,
            targets,
            input_lengths,
            target_lengths,
            self.blank,
            self.reduction,
            self.zero_infinity,
        )


class BCEWithLogitsLoss(_Loss):
    def __init__(
        self, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None
    ):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(
            input, target, self.weight, reduction=self.reduction, pos_weight=self.pos_weight
        )


class NLLLoss2d(NLLLoss):
    """NLLLoss under its deprecated name for 2-d inputs (PyTorch keeps it as a subclass)."""


__all__ = [
    name
    for name, value in list(globals().items())
    if isinstance(value, type)
    and issubclass(value, Module)
    and value is not Module
    and not name.startswith("_")
]

# The margin losses live beside the layers (modules extra and extra2 import this module); they
# are reached here as well, where PyTorch's loss module has them.
_DEFINED_ELSEWHERE = {
    "MultiLabelMarginLoss": "extra",
    "MultiLabelSoftMarginLoss": "extra",
    "MultiMarginLoss": "extra",
    "TripletMarginWithDistanceLoss": "extra2",
}
__all__ += list(_DEFINED_ELSEWHERE)


def __getattr__(name):
    if name in _DEFINED_ELSEWHERE:
        import importlib

        module = importlib.import_module(f"oneflow.nn.modules.{_DEFINED_ELSEWHERE[name]}")
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_DEFINED_ELSEWHERE))
