"""AdaptiveLogSoftmaxWithLoss (PyTorch's): a log-softmax over many classes as a head over the
frequent classes plus one entry per cluster of rare ones, each cluster a projection to a
smaller hidden size and its own softmax (Grave et al., efficient softmax approximation)."""

from collections import namedtuple

import oneflow
from oneflow.nn import functional as F
from oneflow.nn.modules.container import ModuleList, Sequential
from oneflow.nn.modules.layers import Linear
from oneflow.nn.modules.module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    def __init__(
        self,
        in_features,
        n_classes,
        cutoffs,
        div_value=4.0,
        head_bias=False,
        device=None,
        dtype=None,
    ):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (
            cutoffs != sorted(cutoffs)
            or min(cutoffs) <= 0
            or max(cutoffs) > n_classes - 1
            or len(set(cutoffs)) != len(cutoffs)
            or any(int(c) != c for c in cutoffs)
        ):
            raise ValueError(
                "cutoffs should be a sequence of unique, positive integers sorted in an "
                "increasing order, where each value is between 1 and n_classes-1"
            )
        kw = {"device": device, "dtype": dtype}
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(
                Sequential(
                    Linear(in_features, hidden, bias=False, **kw),
                    Linear(hidden, size, bias=False, **kw),
                )
            )

    def reset_parameters(self):
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_, target_):
        name = "AdaptiveLogSoftmaxWithLoss"
        if target_.ndim == 1:
            if input_.shape[0] != target_.shape[0]:
                raise RuntimeError(
                    f"{name}: Input and target should have the same size in the batch dimension."
                )
            if input_.ndim != 2:
                raise RuntimeError(
                    f"{name}: 1D target tensor expects 2D input tensors, but found inputs with "
                    f"size {tuple(input_.shape)}"
                )
        elif target_.ndim == 0:
            if input_.ndim != 1:
                raise RuntimeError(
                    f"{name}: 0D target tensor expects 1D input tensors, but found inputs with "
                    f"size {tuple(input_.shape)}"
                )
        else:
            raise RuntimeError(
                f"{name}: 0D or 1D target tensor expected, multi-target not supported"
            )
        batched = target_.ndim > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        batch = target.shape[0]
        output = oneflow.zeros(batch, dtype=input.dtype, device=input.device)
        gather = oneflow.zeros(batch, dtype=target.dtype, device=target.device)
        bounds = [0] + self.cutoffs
        used = 0
        for i in range(len(bounds) - 1):
            low, high = bounds[i], bounds[i + 1]
            mask = (target >= low) & (target < high)
            rows = mask.nonzero().reshape(-1)
            if rows.numel() == 0:
                continue
            if i == 0:
                gather = gather.index_copy(0, rows, target[mask])
            else:
                relative = target[mask] - low
                cluster = self.tail[i - 1](input.index_select(0, rows))
                gather = gather.index_fill(0, rows, self.shortlist_size + i - 1)
                logprob = F.log_softmax(cluster, dim=1).gather(1, relative.unsqueeze(1))
                output = output.index_copy(0, rows, logprob.squeeze(1))
            used += rows.numel()
        if used != batch:
            raise RuntimeError(
                f"{name}: Target values should be in [0, {self.n_classes - 1}], but values in "
                f"range [{int(target.min())}, {int(target.max())}] were found. "
            )
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = output + head_logprob.gather(1, gather.unsqueeze(1)).reshape(-1)
        loss = (-output).mean()
        if not batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input, head_output):
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, : self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster_logprob + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return oneflow.cat(parts, dim=1)

    def log_prob(self, input):
        """Log-probabilities of every class: (N, n_classes), or (n_classes) for one sample."""
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        out = self._get_full_log_prob(x, self.head(x))
        return out if batched else out.squeeze(0)

    def predict(self, input):
        """The most likely class of each sample (as argmax of log_prob, computing the clusters
        only for the samples whose head prediction is a cluster)."""
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        head_output = self.head(x)
        output = oneflow.argmax(head_output, dim=1)
        rare = output >= self.shortlist_size
        if bool(rare.any()):
            if bool(rare.all()):
                output = oneflow.argmax(self._get_full_log_prob(x, head_output), dim=1)
            else:
                full = self._get_full_log_prob(x[rare], head_output[rare])
                output = output.clone()
                output[rare] = oneflow.argmax(full, dim=1)
        return output if batched else output.squeeze(0)

    def extra_repr(self):
        return ""
