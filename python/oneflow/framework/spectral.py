"""The short-time Fourier transform and its inverse with PyTorch's signatures: oneflow.stft,
oneflow.istft and the Tensor methods of the same names (methods() and functions() below list
them for oneflow/__init__.py and tensor_methods.install).

stft cuts the (optionally centre-padded) signal into frames of n_fft samples every hop_length,
multiplies them by the window (zero-padded to n_fft in the middle) and transforms each frame
with oneflow._C.fft_r2c (real frames, one-sided by default) or fft_c2c (complex ones). istft
inverts each frame (fft_c2r or fft_c2c), multiplies by the window again, overlap-adds the frames
and divides by the overlap-added squared window (Griffin and Lim's least-squares estimate).

Complex tensors take only the ops the core lists for them: framing and overlap-adding a complex
signal run on its real view (oneflow.view_as_real), whose trailing dim of 2 rides along.
The transforms themselves are in oneflow/fft/__init__.py's primitives.
"""

import warnings

import numpy as np

import oneflow
from oneflow._oneflow_internal import _C, Tensor

# PyTorch's legacy tensor type names, which its stft and istft messages print.
_TYPE_NAMES = {
    "float32": "FloatTensor",
    "float64": "DoubleTensor",
    "float16": "HalfTensor",
    "bfloat16": "BFloat16Tensor",
    "complex64": "ComplexFloatTensor",
    "complex128": "ComplexDoubleTensor",
    "int64": "LongTensor",
    "int32": "IntTensor",
    "int16": "ShortTensor",
    "int8": "CharTensor",
    "uint8": "ByteTensor",
    "bool": "BoolTensor",
}


def _type_name(t):
    name = str(t.dtype).rsplit(".", 1)[-1]
    prefix = "oneflow.cuda." if t.device.type == "cuda" else "oneflow."
    return prefix + _TYPE_NAMES.get(name, name)


def _opt(value):
    return "None" if value is None else str(int(value))


def _window_repr(window):
    if window is None:
        return "None"
    return f"{_type_name(window)}{{{list(window.shape)}}}"


def _real_dtype(dtype):
    if dtype == oneflow.complex64:
        return oneflow.float32
    if dtype == oneflow.complex128:
        return oneflow.float64
    return dtype


def _pad_window(window, n_fft, win_length, dtype, device):
    """The window zero-padded on both sides to n_fft (the left pad (n_fft - win_length) // 2);
    None stays None when no padding is needed (a rectangular window is no multiplication)."""
    if win_length == n_fft:
        return window
    if window is None:
        window = oneflow.ones(win_length, dtype=dtype, device=device)
    left = (n_fft - win_length) // 2
    parts = [
        oneflow.zeros(left, dtype=window.dtype, device=window.device),
        window,
        oneflow.zeros(n_fft - win_length - left, dtype=window.dtype, device=window.device),
    ]
    return oneflow.cat(parts, 0)


def _pad_last(x, left, right, mode):
    """x (real or complex, (B, L)) padded along its last dim with nn.functional.pad's mode."""
    if not x.dtype.is_complex:
        return oneflow.nn.functional.pad(x, [left, right], mode)
    r = oneflow.view_as_real(x).transpose(-1, -2)  # (B, 2, L): the signal dim last
    r = oneflow.nn.functional.pad(r, [left, right], mode)
    return oneflow.view_as_complex(r.transpose(-1, -2).contiguous())


def _frames(x, n_fft, hop_length):
    """(B, L) -> (B, n_frames, n_fft): the frames starting every hop_length samples."""
    if not x.dtype.is_complex:
        return x.unfold(-1, n_fft, hop_length)
    r = oneflow.view_as_real(x).transpose(-1, -2).unfold(-1, n_fft, hop_length)
    return oneflow.view_as_complex(r.permute(0, 2, 3, 1).contiguous())


def _overlap_add(frames, hop_length, length):
    """(B, n_frames, n) -> (B, length): frame f added at offset f * hop_length (the adjoint of
    _frames), one index_add over the flattened frames."""
    batch, n_frames, n = frames.shape
    positions = np.arange(n_frames)[:, None] * hop_length + np.arange(n)[None, :]
    index = oneflow.tensor(positions.reshape(-1), dtype=oneflow.int64, device=frames.device)
    if not frames.dtype.is_complex:
        out = oneflow.zeros(batch, length, dtype=frames.dtype, device=frames.device)
        return oneflow.index_add(out, 1, index, frames.reshape(batch, n_frames * n))
    src = oneflow.view_as_real(frames).reshape(batch, n_frames * n, 2)
    out = oneflow.zeros(batch, length, 2, dtype=src.dtype, device=src.device)
    return oneflow.view_as_complex(oneflow.index_add(out, 1, index, src))


def _check_fft_dtype(name, dtype):
    if dtype not in (oneflow.float32, oneflow.float64, oneflow.complex64, oneflow.complex128):
        raise RuntimeError(
            f"{name}: FFT doesn't support tensors of type: {str(dtype).rsplit('.', 1)[-1]}"
        )


def stft(
    input,
    n_fft,
    hop_length=None,
    win_length=None,
    window=None,
    center=True,
    pad_mode="reflect",
    normalized=False,
    onesided=None,
    return_complex=None,
    align_to_window=None,
):
    """The short-time Fourier transform of a 1-D signal or a 2-D batch of signals (B?, L):
    a complex tensor (B?, N, T) of N = n_fft // 2 + 1 frequencies (onesided, the default for a
    real input and window) or n_fft, for T frames. hop_length defaults to n_fft // 4, win_length
    to n_fft; window (win_length samples, default rectangular) is zero-padded to n_fft in the
    middle. center pads the signal by n_fft // 2 on both sides with pad_mode so that frame t is
    centred at t * hop_length; without it, align_to_window starts each window (rather than each
    n_fft frame) at t * hop_length. normalized scales by 1 / sqrt(n_fft). return_complex must be
    given for a real input and window; False returns the real view (B?, N, T, 2), deprecated."""
    if not isinstance(input, Tensor):
        raise TypeError(f"stft(): argument 'input' must be Tensor, not {type(input).__name__}")
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length

    def message(x, text):
        return (
            f"stft({_type_name(x)}{list(x.shape)}, n_fft={n_fft}, hop_length={hop_length}, "
            f"win_length={win_length}, window={_window_repr(window)}, "
            f"normalized={int(normalized)}, onesided={_opt(onesided)}, "
            f"return_complex={_opt(return_complex)}, align_to_window={_opt(align_to_window)}) "
            f": {text}"
        )

    if window is None:
        warnings.warn(
            "A window was not provided. A rectangular window will be applied,which is known to "
            "cause spectral leakage. Other windows such as oneflow.hann_window or "
            "oneflow.hamming_window are recommended to reduce spectral leakage.To suppress this "
            "warning and use a rectangular window, explicitly set "
            "`window=oneflow.ones(n_fft, device=<device>)`.",
            UserWarning,
            stacklevel=2,
        )
    elif window.device != input.device:
        raise RuntimeError(
            "stft input and window must be on the same device but got self on "
            f"{input.device} and window on {window.device}"
        )
    complex_input = input.dtype.is_complex or (window is not None and window.dtype.is_complex)
    if return_complex is None:
        if not complex_input:
            raise RuntimeError(
                "stft requires the return_complex parameter be given for real inputs, and will "
                "further require that return_complex=True in a future PyTorch release."
            )
        return_complex = True
    elif not return_complex:
        warnings.warn(
            "stft with return_complex=False is deprecated. In a future pytorch release, stft "
            "will return complex tensors for all inputs, and return_complex=False will raise an "
            "error.\nNote: you can still call oneflow.view_as_real on the complex output to "
            "recover the old return format.",
            UserWarning,
            stacklevel=2,
        )
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(message(input, "expected a tensor of floating point or complex values"))
    if input.ndim not in (1, 2):
        raise RuntimeError(message(input, "expected a 1D or 2D tensor"))

    x = input if input.ndim == 2 else input.unsqueeze(0)
    if center:
        pad = n_fft // 2
        x = _pad_last(x, pad, pad, pad_mode)
    length = x.shape[1]
    shown = x if input.ndim == 2 else x.squeeze(0)  # the padded signal, as PyTorch shows it
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(message(shown, f"expected 0 < n_fft < {length}, but got n_fft={n_fft}"))
    if hop_length <= 0:
        raise RuntimeError(
            message(shown, f"expected hop_length > 0, but got hop_length={hop_length}")
        )
    if win_length <= 0 or win_length > n_fft:
        raise RuntimeError(
            message(shown, f"expected 0 < win_length <= n_fft, but got win_length={win_length}")
        )
    if window is not None and (window.ndim != 1 or window.shape[0] != win_length):
        raise RuntimeError(
            message(
                shown,
                f"expected a 1D window tensor of size equal to win_length={win_length}, but got "
                f"window with size {list(window.shape)}",
            )
        )
    full_window = _pad_window(window, n_fft, win_length, _real_dtype(input.dtype), input.device)
    if not center and align_to_window:
        # Each window (not each n_fft frame) starts at t * hop_length: the frames reach
        # (n_fft - win_length) // 2 samples before it and the rest after it, zero there.
        left = (n_fft - win_length) // 2
        x = _pad_last(x, left, n_fft - win_length - left, "constant")
    frames = _frames(x, n_fft, hop_length)  # (B, T, n_fft)
    if full_window is not None:
        frames = frames * full_window
    _check_fft_dtype("stft", frames.dtype)
    complex_fft = frames.dtype.is_complex
    onesided = not complex_fft if onesided is None else onesided
    normalization = 1 if normalized else 0
    if complex_fft:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = _C.fft_c2c(frames, [2], normalization, True)
    else:
        out = _C.fft_r2c(frames, [2], normalization, bool(onesided))
    out = out.transpose(1, 2)  # (B, N, T)
    if input.ndim == 1:
        out = out.squeeze(0)
    return out if return_complex else oneflow.view_as_real(out)


def istft(
    input,
    n_fft,
    hop_length=None,
    win_length=None,
    window=None,
    center=True,
    normalized=False,
    onesided=None,
    length=None,
    return_complex=False,
):
    """stft's inverse: the least-squares signal (B?, length) whose stft is input, a complex
    (B?, N, T) tensor as stft returns it. The arguments are stft's (the same window); onesided
    defaults to N != n_fft. length defaults to the signal stft saw without its centre padding
    ((T - 1) * hop_length when centred, else n_fft + (T - 1) * hop_length); a longer length is
    zero-filled. return_complex returns a complex signal (a two-sided input). Raises when the
    overlap-added squared window vanishes somewhere (the NOLA condition fails)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"istft(): argument 'input' must be Tensor, not {type(input).__name__}")
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length

    def message(text, sep=" : "):
        return (
            f"istft({_type_name(input)}{list(input.shape)}, n_fft={n_fft}, "
            f"hop_length={hop_length}, win_length={win_length}, window={_window_repr(window)}, "
            f"center={int(center)}, normalized={int(normalized)}, onesided={_opt(onesided)}, "
            f"length={'None' if length is None else length}, "
            f"return_complex={int(return_complex)}){sep}{text}"
        )

    if window is None:
        warnings.warn(
            "A window was not provided. A rectangular window will be applied.Please provide the "
            "same window used by stft to make the inversion lossless.To suppress this warning "
            "and use a rectangular window, explicitly set "
            "`window=oneflow.ones(n_fft, device=<device>)`.",
            UserWarning,
            stacklevel=2,
        )
    elif window.device != input.device:
        raise RuntimeError(
            "istft input and window must be on the same device but got self on "
            f"{input.device} and window on {window.device}"
        )
    if not input.dtype.is_complex:
        raise RuntimeError(
            "istft requires a complex-valued input tensor matching the output from stft with "
            "return_complex=True."
        )
    real_dims = input.ndim + 1  # PyTorch checks the dims of the real view
    if real_dims < 3:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-real_dims}, "
            f"{real_dims - 1}], but got -3)"
        )
    n_frames, fft_size = input.shape[-1], input.shape[-2]
    expected_length = n_fft + hop_length * (n_frames - 1)
    if input.numel() == 0:
        raise RuntimeError(message("input tensor cannot be empty."))
    if real_dims not in (3, 4):
        raise RuntimeError(
            message(f"expected a tensor with 3 or 4 dimensions, but got {real_dims}")
        )
    onesided = fft_size != n_fft if onesided is None else onesided
    if onesided and n_fft // 2 + 1 != fft_size:
        raise RuntimeError(
            message(
                "expected the frequency dimension (3rd to the last) of the input tensor to match "
                f"n_fft / 2 + 1 when onesided=True, but got {fft_size}"
            )
        )
    if not onesided and n_fft != fft_size:
        raise RuntimeError(
            message(
                "expected the frequency dimension (3rd to the last) of the input tensor to match "
                f"n_fft when onesided=False, but got {fft_size}"
            )
        )
    if not 0 < hop_length <= win_length:
        raise RuntimeError(message("expected 0 < hop_length <= win_length"))
    if not 0 < win_length <= n_fft:
        raise RuntimeError(message("expected 0 < win_length <= n_fft"))
    if window is not None and (window.ndim != 1 or window.shape[0] != win_length):
        raise RuntimeError(
            message("Invalid window shape. window has to be 1D and length of `win_length`")
        )

    real_dtype = _real_dtype(input.dtype)
    if window is None:
        window = oneflow.ones(win_length, dtype=real_dtype, device=input.device)
    full_window = _pad_window(window, n_fft, win_length, real_dtype, input.device)

    x = input if input.ndim == 3 else input.unsqueeze(0)
    x = x.transpose(1, 2)  # (B, T, N)
    normalization = 1 if normalized else 2
    if return_complex:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = _C.fft_c2c(x, [2], normalization, False)
    else:
        if full_window.dtype.is_complex:
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not onesided:
            x = _C.narrow(x, 2, 0, n_fft // 2 + 1)
        frames = _C.fft_c2r(x, [2], normalization, n_fft)  # (B, T, n_fft)
    frames = frames * full_window

    y = _overlap_add(frames, hop_length, expected_length)
    squared = (full_window * full_window).reshape(1, 1, n_fft).expand(1, n_frames, n_fft)
    envelope = _overlap_add(squared, hop_length, expected_length)

    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    elif center:
        end = expected_length - n_fft // 2
    else:
        end = expected_length
    stop = min(max(end, start), expected_length)
    y = _C.narrow(y, 1, start, max(stop - start, 0))
    envelope = _C.narrow(envelope, 1, start, max(stop - start, 0))
    if envelope.numel():
        smallest = envelope.abs().min().item()
        if smallest < 1e-11:
            raise RuntimeError(message(f"window overlap add min: {smallest}", sep=" "))
    y = y / envelope
    if input.ndim == 2:
        y = y.squeeze(0)
    if end > expected_length:
        warnings.warn(
            "The length of signal is shorter than the length parameter. Result is being padded "
            "with zeros in the tail. Please check your center and hop_length settings.",
            UserWarning,
            stacklevel=2,
        )
        tail = list(y.shape)
        tail[-1] = end - expected_length
        y = oneflow.cat([y, oneflow.zeros(tail, dtype=y.dtype, device=y.device)], -1)
    return y


def functions():
    """The names this module adds to oneflow."""
    return {"stft": stft, "istft": istft}


def methods():
    """The Tensor methods (self is the signal)."""
    return {"stft": stft, "istft": istft}
