"""The transformer layers (PyTorch's torch.nn.modules.transformer classes but Transformer,
which is in extra.py): TransformerEncoderLayer, TransformerDecoderLayer and their stacks, with
the encoder's inference path that zeroes padded positions as PyTorch's nested tensors do.
Re-exported by layers.py."""

import warnings

import oneflow
from oneflow.nn import functional as F
from oneflow.nn.modules.container import ModuleList as ModuleListRef
from oneflow.nn.modules.layers import (
    GELU,
    Dropout,
    LayerNorm,
    Linear,
    MultiheadAttention,
    ReLU,
    _factory,
)
from oneflow.nn.modules.module import Module


def _activation_fn(activation):
    if callable(activation):
        return activation
    if activation not in ("relu", "gelu"):
        raise RuntimeError(f"activation should be relu/gelu, not {activation}")
    return {"relu": F.relu, "gelu": F.gelu}[activation]


def _relu_or_gelu(activation):
    """PyTorch's activation_relu_or_gelu: 1 for relu, 2 for gelu, 0 for anything else."""
    if activation is F.relu or isinstance(activation, ReLU):
        return 1
    if activation is F.gelu or isinstance(activation, GELU):
        return 2
    return 0


class TransformerEncoderLayer(Module):
    def __init__(
        self,
        d_model,
        nhead,
        dim_feedforward=2048,
        dropout=0.1,
        activation="relu",
        layer_norm_eps=1e-5,
        batch_first=False,
        norm_first=False,
        bias=True,
        device=None,
        dtype=None,
    ):
        super().__init__()
        fk = _factory(device, dtype)
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout, bias=bias, batch_first=batch_first, **fk
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **fk)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **fk)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.dropout1, self.dropout2 = Dropout(dropout), Dropout(dropout)
        self.activation = _activation_fn(activation)
        self.activation_relu_or_gelu = _relu_or_gelu(self.activation)

    def _sa(self, x, mask, key_padding_mask, is_causal):
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=mask,
            key_padding_mask=key_padding_mask,
            need_weights=False,
            is_causal=is_causal,
        )[0]
        return self.dropout1(x)

    def _ff(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._sa(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff(self.norm2(x))
        x = self.norm1(x + self._sa(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff(x))


class TransformerDecoderLayer(Module):
    def __init__(
        self,
        d_model,
        nhead,
        dim_feedforward=2048,
        dropout=0.1,
        activation="relu",
        layer_norm_eps=1e-5,
        batch_first=False,
        norm_first=False,
        bias=True,
        device=None,
        dtype=None,
    ):
        super().__init__()
        fk = _factory(device, dtype)
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout, bias=bias, batch_first=batch_first, **fk
        )
        self.multihead_attn = MultiheadAttention(
            d_model, nhead, dropout, bias=bias, batch_first=batch_first, **fk
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **fk)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **fk)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.dropout1, self.dropout2 = Dropout(dropout), Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation_fn(activation)

    def forward(
        self,
        tgt,
        memory,
        tgt_mask=None,
        memory_mask=None,
        tgt_key_padding_mask=None,
        memory_key_padding_mask=None,
        tgt_is_causal=False,
        memory_is_causal=False,
    ):
        def sa(x):
            return self.dropout1(
                self.self_attn(
                    x,
                    x,
                    x,
                    attn_mask=tgt_mask,
                    key_padding_mask=tgt_key_padding_mask,
                    need_weights=False,
                    is_causal=tgt_is_causal,
                )[0]
            )

        def mha(x):
            return self.dropout2(
                self.multihead_attn(
                    x,
                    memory,
                    memory,
                    attn_mask=memory_mask,
                    key_padding_mask=memory_key_padding_mask,
                    need_weights=False,
                )[0]
            )

        def ff(x):
            return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))

        x = tgt
        if self.norm_first:
            x = x + sa(self.norm1(x))
            x = x + mha(self.norm2(x))
            return x + ff(self.norm3(x))
        x = self.norm1(x + sa(x))
        x = self.norm2(x + mha(x))
        return self.norm3(x + ff(x))


class _Stack(Module):
    def __init__(self, layer=None, num_layers=None, norm=None, **kwargs):
        # PyTorch's keyword names: encoder_layer / decoder_layer
        layer = kwargs.pop("encoder_layer", kwargs.pop("decoder_layer", layer))
        if kwargs:
            raise TypeError(f"{type(self).__name__}: unexpected arguments {sorted(kwargs)}")
        super().__init__()
        import copy

        self.layers = ModuleListRef([copy.deepcopy(layer) for _ in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm


def _nested_tensor_blocker(layer):
    """Why PyTorch's encoder would not run `layer` on nested tensors ("" when it would)."""
    if not isinstance(layer, TransformerEncoderLayer):
        return "encoder_layer was not TransformerEncoderLayer"
    attn = layer.self_attn
    if layer.norm_first:
        return "encoder_layer.norm_first was True"
    if not attn.batch_first:
        return (
            "encoder_layer.self_attn.batch_first was not True(use batch_first for better "
            "inference performance)"
        )
    if not attn._qkv_same_embed_dim:
        return "encoder_layer.self_attn._qkv_same_embed_dim was not True"
    if attn.in_proj_bias is None:
        return "encoder_layer.self_attn was passed bias=False"
    if not getattr(layer, "activation_relu_or_gelu", 0):
        return "encoder_layer.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return "encoder_layer.norm1.eps was not equal to encoder_layer.norm2.eps"
    if attn.num_heads % 2 == 1:
        return "encoder_layer.self_attn.num_heads is odd"
    return ""


class TransformerEncoder(_Stack):
    def __init__(
        self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True
    ):
        super().__init__(encoder_layer, num_layers, norm)
        self.enable_nested_tensor = self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        blocker = _nested_tensor_blocker(encoder_layer)
        if enable_nested_tensor and blocker:
            warnings.warn(
                "enable_nested_tensor is True, but self.use_nested_tensor is False because "
                f"{blocker}",
                stacklevel=2,
            )
            self.use_nested_tensor = False

    def _padding_zeroed(self, src, mask, src_key_padding_mask):
        """Whether PyTorch would run this call on nested tensors (inference with a key padding
        mask and no other mask): its output then has zeros at the padded positions."""
        from oneflow.backends import mha

        first = self.layers[0]
        if (
            not mha.get_fastpath_enabled()
            or not getattr(self, "use_nested_tensor", False)
            or first.training
            or src.dim() != 3
            or src_key_padding_mask is None
            or mask is not None
            or oneflow.is_autocast_enabled()
        ):
            return False
        keep = src_key_padding_mask.logical_not()
        if keep.dtype != oneflow.bool or keep.dim() != 2:
            return False
        # left aligned: the kept positions of each sequence come first
        if getattr(self, "mask_check", True) and bool((keep[:, 1:] & ~keep[:, :-1]).any()):
            return False
        attn = first.self_attn
        params = [attn.in_proj_weight, attn.in_proj_bias, attn.out_proj.weight]
        params += [attn.out_proj.bias, first.linear1.weight, first.linear1.bias]
        params += [first.linear2.weight, first.linear2.bias, first.norm1.weight]
        params += [first.norm1.bias, first.norm2.weight, first.norm2.bias]
        tensors = [src] + [p for p in params if p is not None]
        return not (oneflow.is_grad_enabled() and any(t.requires_grad for t in tensors))

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        zero_padding = self._padding_zeroed(src, mask, src_key_padding_mask)
        x = src
        for layer in self.layers:
            x = layer(x, mask, src_key_padding_mask, bool(is_causal))
        if zero_padding:
            x = x.masked_fill(src_key_padding_mask.unsqueeze(-1), 0.0)
        return self.norm(x) if self.norm is not None else x


class TransformerDecoder(_Stack):
    def forward(
        self,
        tgt,
        memory,
        tgt_mask=None,
        memory_mask=None,
        tgt_key_padding_mask=None,
        memory_key_padding_mask=None,
        tgt_is_causal=None,
        memory_is_causal=False,
    ):
        x = tgt
        for layer in self.layers:
            x = layer(
                x,
                memory,
                tgt_mask,
                memory_mask,
                tgt_key_padding_mask,
                memory_key_padding_mask,
                bool(tgt_is_causal),
            )
        return self.norm(x) if self.norm is not None else x
