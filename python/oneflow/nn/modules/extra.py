"""RReLU, Softmax2d, the multi-class margin loss modules and Transformer, with PyTorch's
constructor signatures. The activations and losses forward to oneflow.nn.functional; the
Transformer is assembled from the encoder and decoder stacks in layers.py."""

import oneflow
from oneflow.nn import functional as F
from oneflow.nn import init
from oneflow.nn.modules.layers import (
    LayerNorm,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)
from oneflow.nn.modules.loss import _LEGACY, _loss
from oneflow.nn.modules.module import Module

# ---- activations ------------------------------------------------------------------------


class RReLU(Module):
    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        inplace = ", inplace=True" if self.inplace else ""
        return f"lower={self.lower}, upper={self.upper}{inplace}"


class Softmax2d(Module):
    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D instead")
        return F.softmax(input, -3)


# ---- losses -----------------------------------------------------------------------------

_MultiMarginLoss = _loss(
    "MultiMarginLoss",
    "multi_margin_loss",
    (("p", 1), ("margin", 1.0), ("weight", None)) + _LEGACY,
)


class MultiMarginLoss(_MultiMarginLoss):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.p != 1 and self.p != 2:
            raise ValueError("only p == 1 and p == 2 supported")
        if self.weight is not None and self.weight.ndim != 1:
            raise ValueError(
                "MultiMarginLoss: expected weight to be None or 1D tensor, got "
                f"{self.weight.ndim}D instead"
            )

    # Show PyTorch's parameter list, not (*args, **kwargs).
    __init__.__signature__ = _MultiMarginLoss.__init__.__signature__


MultiLabelMarginLoss = _loss("MultiLabelMarginLoss", "multilabel_margin_loss", _LEGACY)
MultiLabelSoftMarginLoss = _loss(
    "MultiLabelSoftMarginLoss", "multilabel_soft_margin_loss", (("weight", None),) + _LEGACY
)
for _cls in (MultiMarginLoss, MultiLabelMarginLoss, MultiLabelSoftMarginLoss):
    _cls.__module__ = __name__


# ---- transformer ------------------------------------------------------------------------


class Transformer(Module):
    def __init__(
        self,
        d_model=512,
        nhead=8,
        num_encoder_layers=6,
        num_decoder_layers=6,
        dim_feedforward=2048,
        dropout=0.1,
        activation=F.relu,
        custom_encoder=None,
        custom_decoder=None,
        layer_norm_eps=1e-5,
        batch_first=False,
        norm_first=False,
        bias=True,
        device=None,
        dtype=None,
    ):
        super().__init__()
        fk = {"device": device, "dtype": dtype}
        layer_args = (
            d_model,
            nhead,
            dim_feedforward,
            dropout,
            activation,
            layer_norm_eps,
            batch_first,
            norm_first,
            bias,
        )
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(*layer_args, **fk),
                num_encoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk),
            )
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(
                TransformerDecoderLayer(*layer_args, **fk),
                num_decoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk),
            )
        self._reset_parameters()
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def forward(
        self,
        src,
        tgt,
        src_mask=None,
        tgt_mask=None,
        memory_mask=None,
        src_key_padding_mask=None,
        tgt_key_padding_mask=None,
        memory_key_padding_mask=None,
        src_is_causal=None,
        tgt_is_causal=None,
        memory_is_causal=False,
    ):
        if src.ndim == 3:
            batch_dim = 0 if self.batch_first else 1
            if src.shape[batch_dim] != tgt.shape[batch_dim]:
                raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(
            src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal
        )
        return self.decoder(
            tgt,
            memory,
            tgt_mask=tgt_mask,
            memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
            tgt_is_causal=tgt_is_causal,
            memory_is_causal=memory_is_causal,
        )

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """A float mask with -inf above the diagonal: position i attends to positions <= i."""
        if dtype is None:
            dtype = oneflow.get_default_dtype()
        mask = oneflow.full((sz, sz), float("-inf"), dtype=dtype, device=device)
        return oneflow.triu(mask, diagonal=1)

    def _reset_parameters(self):
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)


__all__ = [
    "RReLU",
    "Softmax2d",
    "MultiMarginLoss",
    "MultiLabelMarginLoss",
    "MultiLabelSoftMarginLoss",
    "Transformer",
]
