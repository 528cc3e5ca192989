"""Every name of the Array API standard 2025.12 exists, in the namespace and on the Array.

The lists are the standard's (its API stubs), written out here because CI cannot fetch them.
"""
import pytest

import array_namespace as xp

MAIN = """
e inf nan newaxis pi
arange asarray empty empty_like eye from_dlpack full full_like linspace meshgrid ones ones_like tril triu
zeros zeros_like
astype can_cast finfo iinfo isdtype result_type
bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float32 float64 complex64 complex128
abs acos acosh add asin asinh atan atan2 atanh bitwise_and bitwise_left_shift bitwise_invert bitwise_or
bitwise_right_shift bitwise_xor ceil clip conj copysign cos cosh divide equal exp expm1 floor floor_divide
greater greater_equal hypot imag isfinite isinf isnan less less_equal log log1p log2 log10 logaddexp
logical_and logical_not logical_or logical_xor maximum minimum multiply negative nextafter not_equal
positive pow real reciprocal remainder round sign signbit sin sinh square sqrt subtract tan tanh trunc
take take_along_axis
__array_namespace_info__ __array_api_version__
matmul matrix_transpose tensordot vecdot
broadcast_arrays broadcast_shapes broadcast_to concat expand_dims flip moveaxis permute_dims repeat reshape
roll squeeze stack tile unstack
argmax argmin count_nonzero nonzero searchsorted where
isin unique_all unique_counts unique_inverse unique_values
argsort sort
cumulative_sum cumulative_prod max mean min prod std sum var
all any diff
linalg fft
""".split()

LINALG = """cholesky cross det diagonal eig eigh eigvals eigvalsh inv matmul matrix_norm matrix_power matrix_rank
matrix_transpose outer pinv qr slogdet solve svd svdvals tensordot trace vecdot vector_norm""".split()

FFT = """fft ifft fftn ifftn rfft irfft rfftn irfftn hfft ihfft fftfreq rfftfreq fftshift ifftshift""".split()

INFO = "capabilities default_device default_dtypes devices dtypes".split()

ARRAY = """T __abs__ __add__ __and__ __array_namespace__ __bool__ __complex__ __dlpack__ __dlpack_device__
__eq__ __float__ __floordiv__ __ge__ __getitem__ __gt__ __index__ __int__ __invert__ __le__ __lshift__ __lt__
__matmul__ __mod__ __mul__ __ne__ __neg__ __or__ __pos__ __pow__ __rshift__ __setitem__ __sub__
__truediv__ __xor__ device dtype mT ndim shape size to_device
__radd__ __rsub__ __rmul__ __rtruediv__ __rfloordiv__ __rmod__ __rpow__ __rmatmul__ __rand__ __ror__
__rxor__ __rlshift__ __rrshift__ __iadd__ __isub__ __imul__ __itruediv__ __ifloordiv__ __imod__ __ipow__
__imatmul__ __iand__ __ior__ __ixor__ __ilshift__ __irshift__""".split()


@pytest.mark.parametrize("name", MAIN)
def test_main_namespace(name):
    assert hasattr(xp, name), f"array_namespace.{name} is missing"


@pytest.mark.parametrize("name", LINALG)
def test_linalg(name):
    assert callable(getattr(xp.linalg, name, None)), f"linalg.{name} is missing"


@pytest.mark.parametrize("name", FFT)
def test_fft(name):
    assert callable(getattr(xp.fft, name, None)), f"fft.{name} is missing"


@pytest.mark.parametrize("name", INFO)
def test_info(name):
    assert callable(getattr(xp.__array_namespace_info__(), name, None))


@pytest.mark.parametrize("name", ARRAY)
def test_array_attribute(name):
    a = xp.ones((2, 2))
    assert hasattr(a, name), f"Array.{name} is missing"


def test_version_and_negotiation():
    assert xp.__array_api_version__ == "2025.12"
    a = xp.ones(2)
    for v in ("2023.12", "2024.12", "2025.12", None):
        assert a.__array_namespace__(api_version=v) is xp
    with pytest.raises(ValueError):
        a.__array_namespace__(api_version="2019.01")


def test_array_api_compat_recognises_us():
    import array_api_compat
    a = xp.ones(2)
    assert array_api_compat.is_array_api_obj(a)
    assert array_api_compat.array_namespace(a) is xp


def test_extensions_export_only_their_functions():
    """xp.linalg and xp.fft show the standard's functions and nothing of their implementation."""
    import array_namespace as xp
    for mod in (xp.linalg, xp.fft):
        public = sorted(n for n in dir(mod) if not n.startswith("_"))
        assert public == sorted(mod.__all__), set(public) ^ set(mod.__all__)
        assert all(callable(getattr(mod, n)) for n in mod.__all__)
    assert "svdvals" in xp.linalg.__all__ and "np" not in dir(xp.linalg) and "jit" not in dir(xp.linalg)
    assert "rfftfreq" in xp.fft.__all__ and "bind" not in dir(xp.fft)
