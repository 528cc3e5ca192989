"""The fft extension of the standard: its functions only (the implementation is in _fft)."""
from ._fft import (  # noqa: F401
    fft, fftfreq, fftn, fftshift, hfft, ifft, ifftn, ifftshift, ihfft, irfft, irfftn, rfft, rfftfreq, rfftn,
)

__all__ = [
    "fft", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifftn", "ifftshift", "ihfft", "irfft", "irfftn",
    "rfft", "rfftfreq", "rfftn",
]
