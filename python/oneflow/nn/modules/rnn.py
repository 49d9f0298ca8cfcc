"""RNN, LSTM, GRU (multi-layer, bidirectional, batch_first, dropout between layers) and their
cells, with PyTorch's parameter names, gate order and initialisation. Each time step is a few
kernel calls (two matmuls and the gate math); autograd runs through the unrolled steps."""

import math

import oneflow
from oneflow._oneflow_internal import _C
from oneflow.nn import functional as F
from oneflow.nn import init
from oneflow.nn.modules.module import Module
from oneflow.nn.parameter import Parameter

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _cell(mode, x, h, c, w_ih, w_hh, b_ih, b_hh, gi=None):
    """One step; returns (h, c) (c is None except for LSTM). ``gi``: the input's projection
    ``x @ w_ih.T + b_ih`` when the caller computed it for the whole sequence at once."""
    if gi is None:
        gi = F.linear(x, w_ih, b_ih)
    gh = F.linear(h, w_hh, b_hh)
    if mode == "LSTM":  # one fused kernel on the CPU; composed ops elsewhere
        return oneflow._C._lstm_cell(gi, gh, c)
    if mode == "GRU":
        ir, iz, inn = gi.chunk(3, 1)
        hr, hz, hn = gh.chunk(3, 1)
        r = oneflow.sigmoid(ir + hr)
        z = oneflow.sigmoid(iz + hz)
        n = oneflow.tanh(inn + r * hn)
        return (1 - z) * n + z * h, None
    pre = gi + gh
    return (oneflow.tanh(pre) if mode == "RNN_TANH" else oneflow.relu(pre)), None


def _check_rnn_input(module, input, ranks):
    name = type(module).__name__
    if input.ndim not in ranks:
        raise ValueError(
            f"{name}: Expected input to be {ranks[0]}D or {ranks[1]}D, got {input.ndim}D "
            f"input of shape {tuple(input.shape)}"
        )
    if input.shape[-1] != module.input_size:
        raise RuntimeError(
            f"{name}: input.size(-1) must be equal to input_size. Expected "
            f"{module.input_size}, got {input.shape[-1]} (input of shape {tuple(input.shape)})"
        )


class RNNBase(Module):
    def __init__(
        self,
        mode,
        input_size,
        hidden_size,
        num_layers=1,
        bias=True,
        batch_first=False,
        dropout=0.0,
        bidirectional=False,
        proj_size=0,
        device=None,
        dtype=None,
    ):
        super().__init__()
        if proj_size < 0:
            raise ValueError(
                "proj_size should be a positive integer or zero to disable projections"
            )
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if proj_size and proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1]")
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        out_size = proj_size or hidden_size  # the size of h: projected when proj_size
        gates = _GATES[mode] * hidden_size
        dirs = 2 if bidirectional else 1
        self._flat_weights_names = []
        for layer in range(num_layers):
            for d in range(dirs):
                suffix = f"_l{layer}" + ("_reverse" if d else "")
                in_size = input_size if layer == 0 else out_size * dirs
                fk = {"device": device, "dtype": dtype}
                shapes = [("weight_ih", (gates, in_size)), ("weight_hh", (gates, out_size))]
                if bias:
                    shapes += [("bias_ih", (gates,)), ("bias_hh", (gates,))]
                if proj_size:
                    shapes += [("weight_hr", (proj_size, hidden_size))]
                for name, shape in shapes:
                    self.register_parameter(name + suffix, Parameter(oneflow.empty(*shape, **fk)))
                    self._flat_weights_names.append(name + suffix)
        self.reset_parameters()

    def reset_parameters(self):
        std = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for p in self.parameters():
            init.uniform_(p, -std, std)

    def _weights(self, layer, d):
        s = f"_l{layer}" + ("_reverse" if d else "")
        get = self._parameters.get
        return get("weight_ih" + s), get("weight_hh" + s), get("bias_ih" + s), get("bias_hh" + s)

    def flatten_parameters(self):
        """PyTorch's cuDNN weight compaction: nothing to do here (the weights are used as
        they are)."""

    @property
    def all_weights(self):
        dirs = 2 if self.bidirectional else 1
        return [
            [w for w in self._weights(layer, d) if w is not None]
            for layer in range(self.num_layers)
            for d in range(dirs)
        ]

    def _proj(self, layer, d):
        return self._parameters.get(f"weight_hr_l{layer}" + ("_reverse" if d else ""))

    def _initial_states(self, hx, B, like, batched=True):
        dirs = 2 if self.bidirectional else 1
        lstm = self.mode == "LSTM"
        h_size = self.proj_size or self.hidden_size
        if hx is not None:
            expected = (self.num_layers * dirs, B, h_size)
            self._check_hidden(hx, batched, expected, (expected[:2] + (self.hidden_size,)))
            if lstm:
                h0, c0 = hx
                return (h0, c0) if batched else (h0.unsqueeze(1), c0.unsqueeze(1))
            return (hx if batched else hx.unsqueeze(1)), None
        where = (
            {"placement": like.placement, "sbp": oneflow.sbp.broadcast}
            if like.is_global
            else {"device": like.device}
        )
        zeros = oneflow.zeros(self.num_layers * dirs, B, h_size, dtype=like.dtype, **where)
        if not lstm:
            return zeros, None
        if self.proj_size:
            c0 = oneflow.zeros(
                self.num_layers * dirs, B, self.hidden_size, dtype=like.dtype, **where
            )
            return zeros, c0
        return zeros, zeros

    def _forward_packed(self, packed, hx):
        """A PackedSequence: at step t only the first batch_sizes[t] sequences (sorted longest
        first) take a step, so each sequence's output stops and its final state is taken at its
        own length; the reverse direction starts each sequence at its own last element."""
        from oneflow.nn.utils.rnn import PackedSequence

        data, batch_sizes = packed.data, packed.batch_sizes
        sizes = [int(b) for b in batch_sizes.tolist()]
        B, T = sizes[0], len(sizes)
        offsets = [0]
        for b in sizes:
            offsets.append(offsets[-1] + b)
        if data.ndim != 2 or data.shape[-1] != self.input_size:
            raise RuntimeError(
                f"{type(self).__name__}: input.size(-1) must be equal to input_size. Expected "
                f"{self.input_size}, got {data.shape[-1]}"
            )
        sort, unsort = packed.sorted_indices, packed.unsorted_indices
        lstm = self.mode == "LSTM"
        if hx is not None and sort is not None:  # hx is in the caller's batch order
            hx = tuple(h.index_select(1, sort) for h in hx) if lstm else hx.index_select(1, sort)
        h0, c0 = self._initial_states(hx, B, data)
        dirs = 2 if self.bidirectional else 1
        layer_in = data
        h_out, c_out = [], []
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                k = layer * dirs + d
                h, c = h0[k], (c0[k] if lstm else None)
                w = self._weights(layer, d)
                w_hr = self._proj(layer, d)
                gi = F.linear(layer_in, w[0], w[2])
                seq = [None] * T
                for t in range(T - 1, -1, -1) if d else range(T):
                    b = sizes[t]
                    hb, cb = _cell(
                        self.mode,
                        None,
                        h[:b],
                        c[:b] if lstm else None,
                        *w,
                        gi=gi[offsets[t] : offsets[t + 1]],
                    )
                    if w_hr is not None:
                        hb = F.linear(hb, w_hr)
                    seq[t] = hb
                    # rows past b: sequences that ended (forward) or have not started (reverse)
                    h = hb if b == B else oneflow.cat([hb, h[b:]], 0)
                    if lstm:
                        c = cb if b == B else oneflow.cat([cb, c[b:]], 0)
                outs.append(oneflow.cat(seq, 0))
                h_out.append(h)
                if lstm:
                    c_out.append(c)
            layer_in = outs[0] if dirs == 1 else oneflow.cat(outs, 1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_in = F.dropout(layer_in, self.dropout, True)
        h_n = oneflow.stack(h_out, 0)
        c_n = oneflow.stack(c_out, 0) if lstm else None
        if unsort is not None:
            h_n = h_n.index_select(1, unsort)
            c_n = c_n.index_select(1, unsort) if lstm else None
        output = PackedSequence(layer_in, batch_sizes, sort, unsort)
        return output, ((h_n, c_n) if lstm else h_n)

    def forward(self, input, hx=None):
        if self.mode == "LSTM" and isinstance(input, oneflow.Tensor):
            lowered = _C._autocast_lower(input)
            if lowered.dtype != input.dtype:
                # PyTorch's CPU autocast runs LSTM in its lower dtype (GRU and RNN not): here
                # the layer runs in float32 and its results take that dtype.
                kind = "cuda" if input.is_cuda else "cpu"
                enabled, dtype = _C._autocast_get(kind)
                _C._autocast_set(kind, False, dtype)
                try:
                    out, (h, c) = self._forward(input, hx)
                finally:
                    _C._autocast_set(kind, enabled, dtype)
                return out.to(lowered.dtype), (h.to(lowered.dtype), c.to(lowered.dtype))
        return self._forward(input, hx)

    def _forward(self, input, hx=None):
        from oneflow.nn.utils.rnn import PackedSequence

        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        _check_rnn_input(self, input, (2, 3))
        batched = input.ndim == 3
        if not batched:
            input = input.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        T, B = input.shape[0], input.shape[1]
        dirs = 2 if self.bidirectional else 1
        lstm = self.mode == "LSTM"
        if T == 0:
            raise RuntimeError(
                f"{type(self).__name__}: Expected sequence length to be larger than 0 in RNN, "
                f"got input of shape {tuple(input.shape)}"
            )
        h0, c0 = self._initial_states(hx, B, input, batched)
        layer_in = input
        h_out, c_out = [], []
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                k = layer * dirs + d
                h, c = h0[k], (c0[k] if lstm else None)
                w = self._weights(layer, d)
                # the input's projection for every step in one product (its weight's gradient
                # is then one product too); the steps read slices of it
                gi = F.linear(layer_in, w[0], w[2])
                w_hr = self._proj(layer, d)
                if w_hr is not None:  # projected LSTM: step by step, h = W_hr (o * tanh(c))
                    gis = gi.unbind(0)
                    seq = [None] * T
                    for t in range(T - 1, -1, -1) if d else range(T):
                        h, c = _cell(self.mode, None, h, c, *w, gi=gis[t])
                        h = F.linear(h, w_hr)
                        seq[t] = h
                    outs.append(oneflow.stack(seq, 0))
                elif lstm:  # the whole recurrence in one kernel on the CPU
                    out, h, c = oneflow._C._lstm_layer(gi, h, c, w[1], w[3], bool(d))
                    outs.append(out)
                elif self.mode == "GRU":
                    out, h = oneflow._C._gru_layer(gi, h, w[1], w[3], bool(d))
                    outs.append(out)
                else:
                    gis = gi.unbind(0)
                    seq = [None] * T
                    for t in range(T - 1, -1, -1) if d else range(T):
                        h, c = _cell(self.mode, None, h, c, *w, gi=gis[t])
                        seq[t] = h
                    outs.append(oneflow.stack(seq, 0))
                h_out.append(h)
                if lstm:
                    c_out.append(c)
            layer_in = outs[0] if dirs == 1 else oneflow.cat(outs, 2)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_in = F.dropout(layer_in, self.dropout, True)
        output = layer_in
        h_n = oneflow.stack(h_out, 0)
        c_n = oneflow.stack(c_out, 0) if lstm else None
        if not batched:
            output, h_n = output.squeeze(1), h_n.squeeze(1)
            c_n = c_n.squeeze(1) if lstm else None
        elif self.batch_first:
            output = output.transpose(0, 1)
        return output, ((h_n, c_n) if lstm else h_n)

    def _check_hidden(self, hx, batched, expected, c_expected=None):
        name, lstm = type(self).__name__, self.mode == "LSTM"
        states = tuple(hx) if lstm else (hx,)
        rank = 3 if batched else 2
        if any(s.ndim != rank for s in states):
            ranks = ", ".join(f"{s.ndim}-D" for s in states)
            what = "hx and cx should" if lstm else "hx should"
            raise RuntimeError(
                f"{name}: For {'batched 3' if batched else 'unbatched 2'}-D input, {what} also "
                f"be {rank}-D but got ({ranks}) tensor(s)"
            )
        for i, s in enumerate(states):
            want = c_expected if (i == 1 and c_expected is not None) else expected
            if not batched:
                want = (want[0],) + tuple(want[2:])
            if tuple(s.shape) != tuple(want):
                label = f"hidden[{i}]" if lstm else "hidden"
                raise RuntimeError(
                    f"{name}: Expected {label} size {tuple(want)}, got {list(s.shape)}"
                )

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.mode == "RNN_RELU":
            s += ", nonlinearity='relu'"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s


class RNN(RNNBase):
    def __init__(self, *args, nonlinearity="tanh", **kwargs):
        if len(args) > 3:
            nonlinearity, args = args[3], args[:3] + args[4:]
        mode = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}.get(nonlinearity)
        if mode is None:
            raise ValueError(
                f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        super().__init__(mode, *args, **kwargs)


class LSTM(RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__("GRU", *args, **kwargs)


class RNNCellBase(Module):
    def __init__(self, mode, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__()
        self.mode, self.input_size, self.hidden_size, self.bias = (
            mode,
            input_size,
            hidden_size,
            bias,
        )
        gates = _GATES[mode] * hidden_size
        fk = {"device": device, "dtype": dtype}
        self.weight_ih = Parameter(oneflow.empty(gates, input_size, **fk))
        self.weight_hh = Parameter(oneflow.empty(gates, hidden_size, **fk))
        if bias:
            self.bias_ih = Parameter(oneflow.empty(gates, **fk))
            self.bias_hh = Parameter(oneflow.empty(gates, **fk))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        std = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0
        for p in self.parameters():
            init.uniform_(p, -std, std)

    def _run(self, input, h, c):
        _check_rnn_input(self, input, (1, 2))
        batched = input.ndim == 2
        if not batched:
            input = input.unsqueeze(0)
            h = h.unsqueeze(0) if h is not None else None
            c = c.unsqueeze(0) if c is not None else None
        zeros = oneflow.zeros(
            input.shape[0], self.hidden_size, dtype=input.dtype, device=input.device
        )
        h = zeros if h is None else h
        c = zeros if (c is None and self.mode == "LSTM") else c
        h, c = _cell(
            self.mode, input, h, c, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh
        )
        if not batched:
            h = h.squeeze(0)
            c = c.squeeze(0) if c is not None else None
        return h, c

    def extra_repr(self):
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")


class RNNCell(RNNCellBase):
    def __init__(
        self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None
    ):
        mode = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}[nonlinearity]
        super().__init__(mode, input_size, hidden_size, bias, device, dtype)

    def forward(self, input, hx=None):
        return self._run(input, hx, None)[0]


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, bias, device, dtype)

    def forward(self, input, hx=None):
        h, c = (None, None) if hx is None else hx
        return self._run(input, h, c)


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__("GRU", input_size, hidden_size, bias, device, dtype)

    def forward(self, input, hx=None):
        return self._run(input, hx, None)[0]
