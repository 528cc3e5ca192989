"""The primitive vocabulary, one module per family (a `lax`-like layer on raw values)."""
from . import elementwise, structural, reductions, linalg, lapack, fft, indexing, sorting, bits  # noqa: F401
from . import special_gamma, special_erf  # noqa: F401
