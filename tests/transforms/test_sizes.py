"""Impossible sizes raise typed errors before anything reaches XLA (whose answer is to abort the
process): ValueError when the element count overflows int64, MemoryError when the array is larger
than the device can hold -- eagerly and at trace time under jit."""
import pytest

import array_namespace as xp
from transforms import jit
from transforms.core import ShapedArray, check_size, set_memory_limit, _memory_limit

X = None


def _x():
    return xp.ones(3)


CASES = {
    "zeros 2**62": (lambda: xp.zeros((2 ** 62,)), MemoryError),
    "ones 2**32 x 2**32": (lambda: xp.ones((2 ** 32, 2 ** 32)), ValueError),
    "eye 2**40": (lambda: xp.eye(2 ** 40), ValueError),
    "arange 2**62": (lambda: xp.arange(2 ** 62), MemoryError),
    "broadcast_to 2**62": (lambda: xp.broadcast_to(_x(), (2 ** 62, 3, 3)), ValueError),
    "fft n=1e12": (lambda: xp.fft.fft(_x(), n=10 ** 12), MemoryError),
    "full 1e11": (lambda: xp.full((10 ** 11,), 1.0), MemoryError),
    "jit linspace 1e12": (lambda: jit(lambda: xp.linspace(0, 1, 10 ** 12))(), MemoryError),
    "jit eye 1e7": (lambda: jit(lambda: xp.eye(10 ** 7))(), MemoryError),
    "jit zeros 2**62": (lambda: jit(lambda: xp.zeros((2 ** 62,)))(), MemoryError),
}


@pytest.mark.parametrize("case", list(CASES))
def test_impossible_sizes_raise_typed_errors(case):
    f, err = CASES[case]
    with pytest.raises(err) as info:
        f()
    msg = str(info.value)
    assert "shape" in msg and ("bytes" in msg or "elements" in msg)


def test_memory_error_names_bytes_asked_and_available():
    old = _memory_limit[0]
    try:
        set_memory_limit(1000)
        with pytest.raises(MemoryError, match="8,000 bytes.*1,000 bytes"):
            check_size(ShapedArray((1000,), "float64"), "f")
        check_size(ShapedArray((100,), "float64"), "f")       # 800 bytes: fits
    finally:
        set_memory_limit(old)


def test_ordinary_sizes_still_work():
    assert xp.zeros((1000, 1000)).shape == (1000, 1000)
    assert jit(lambda: xp.eye(300))().shape == (300, 300)
