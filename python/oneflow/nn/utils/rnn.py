"""Padding and packing of variable-length sequences (PyTorch's PackedSequence layout)."""

from collections import namedtuple

import numpy as np

import oneflow

PackedSequence_ = namedtuple(
    "PackedSequence", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"]
)


class PackedSequence(PackedSequence_):
    pass


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    sequences = list(sequences)
    max_len = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        n = s.shape[0]
        if n < max_len:
            fill = oneflow.full(
                (max_len - n, *s.shape[1:]), padding_value, dtype=s.dtype, device=s.device
            )
            s = oneflow.cat([s, fill] if padding_side == "right" else [fill, s], 0)
        padded.append(s)
    return oneflow.stack(padded, 0 if batch_first else 1)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    lengths = np.asarray(lengths.numpy() if hasattr(lengths, "numpy") else lengths, np.int64)
    if enforce_sorted:
        if (np.diff(lengths) > 0).any():
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True"
            )
        order = np.arange(len(lengths))
        sorted_indices = unsorted_indices = None
    else:
        order = np.argsort(-lengths, kind="stable")
        sorted_indices = oneflow.tensor(order)
        unsorted_indices = oneflow.tensor(np.argsort(order))
    if batch_first:
        input = input.transpose(0, 1)
    input = oneflow.index_select(input, 1, oneflow.tensor(order))
    lens = lengths[order]
    batch_sizes = [int((lens > t).sum()) for t in range(int(lens[0]))]
    data = oneflow.cat([input[t, :b] for t, b in enumerate(batch_sizes)], 0)
    return PackedSequence(data, oneflow.tensor(batch_sizes), sorted_indices, unsorted_indices)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    data, batch_sizes = sequence.data, sequence.batch_sizes.numpy().tolist()
    max_batch, steps = batch_sizes[0], len(batch_sizes)
    total = steps if total_length is None else total_length
    out = oneflow.full(
        (total, max_batch, *data.shape[1:]), padding_value, dtype=data.dtype, device=data.device
    )
    offset, rows = 0, []
    for _t, b in enumerate(batch_sizes):
        step = data[offset : offset + b]
        if b < max_batch:
            fill = oneflow.full((max_batch - b, *data.shape[1:]), padding_value, dtype=data.dtype)
            step = oneflow.cat([step, fill], 0)
        rows.append(step)
        offset += b
    out = oneflow.stack(rows, 0)
    if total > steps:
        fill = oneflow.full(
            (total - steps, max_batch, *data.shape[1:]), padding_value, dtype=data.dtype
        )
        out = oneflow.cat([out, fill], 0)
    lengths = np.array([sum(1 for b in batch_sizes if b > i) for i in range(max_batch)])
    if sequence.unsorted_indices is not None:
        out = oneflow.index_select(out, 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices.numpy()]
    if batch_first:
        out = out.transpose(0, 1)
    return out, oneflow.tensor(lengths)


def pack_sequence(sequences, enforce_sorted=True):
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The sequences of a padded batch, each cut to its length (a list of tensors)."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    lengths = lengths.tolist() if hasattr(lengths, "tolist") else list(lengths)
    return [padded_sequences[i, : int(n)] for i, n in enumerate(lengths)]


def unpack_sequence(packed_sequences):
    """The sequences of a PackedSequence, in their original order (a list of tensors)."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
