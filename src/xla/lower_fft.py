"""Lowering of the fft primitive to stablehlo.fft (compiled natively by XLA on CPU)."""
from __future__ import annotations

from transforms.primitives import fft as F

import numpy as np
import numpy.fft  # noqa: F401  (NumPy loads it on first use: ~1-2 ms inside the first eager fft, here at import)

from ._jaxlib import hlo
from .host import host_kernels
from .lowering import lowering_rules, ttype


def _fft(c, x, *, fft_type, fft_lengths):
    return hlo.FftOp(x, hlo.FftTypeAttr.get(fft_type), list(fft_lengths),
                     results=[ttype(c.avals_out[0])]).result


lowering_rules[F.fft_p] = _fft


def _h_fft(x, *, fft_type, fft_lengths):
    """numpy.fft over the trailing axes (pocketfft; float32/complex64 stay single precision)."""
    axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
    if len(axes) == 1:   # (fftn over one axis calls exactly this, after ~4 us of argument handling)
        n = fft_lengths[0]
        if fft_type == "FFT":
            return np.fft.fft(x, n=n)
        if fft_type == "IFFT":
            return np.fft.ifft(x, n=n)
        return np.fft.rfft(x, n=n) if fft_type == "RFFT" else np.fft.irfft(x, n=n)
    if fft_type == "FFT":
        return np.fft.fftn(x, axes=axes)
    if fft_type == "IFFT":
        return np.fft.ifftn(x, axes=axes)
    if fft_type == "RFFT":
        return np.fft.rfftn(x, axes=axes)
    return np.fft.irfftn(x, s=fft_lengths, axes=axes)


host_kernels[F.fft_p] = _h_fft
