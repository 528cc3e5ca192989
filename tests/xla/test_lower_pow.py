"""xla/lower_pow.py: integer pow under jit (a while loop over the exponent's bits; a literal exponent unrolled over
its own bits) and its host kernel against NumPy's wrapped power. Float pow's special exponents are in
test_host_specialized.py, its subnormal rule in tests/array_namespace/test_elementwise_subnormals.py, complex pow in
test_host_kernels_complex.py."""
import numpy as np
import pytest

import array_namespace as xp
from transforms import jit, vmap


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"])
def test_integer_pow_wraps_over_every_bit_of_the_exponent_as_numpy(dtype):
    """x ** y of integers is NumPy's wrapped power for every exponent, eagerly, under jit and vmap: XLA's own pow
    squares over y's low 6 bits (int64 3 ** 64 was 1, 3 ** 100 was 3 ** 36) and reads an unsigned y as signed
    (uint8 7 ** 255 was 0). A negative y gives 1 at x = 1, +-1 at x = -1 and 0 elsewhere (NumPy raises)."""
    info = np.iinfo(dtype)
    cand = [v for v in (0, 1, 2, 3, 7, 63, 64, 65, 100, 255, 1001, info.max, info.max - 1, info.min, -1, -2, -3)
            if info.min <= v <= info.max]
    rng = np.random.default_rng(0)
    x, y = (rng.choice(np.array(cand, dtype), 600) for _ in range(2))
    want = np.power(x, np.where(y < 0, 0, y).astype(dtype))
    if info.min:
        at_neg = np.where(x == 1, 1, np.where(x == -1, np.where(y % 2 == 1, -1, 1), 0))
        want = np.where(y < 0, at_neg, want).astype(dtype)
    for f in (xp.pow, jit(xp.pow), vmap(xp.pow)):
        np.testing.assert_array_equal(np.asarray(f(xp.asarray(x), xp.asarray(y))), want)
    assert int(xp.asarray(3, dtype=xp.int64) ** 64) == int(np.int64(3) ** 64) != 1


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "uint64"])
def test_integer_pow_of_a_literal_exponent_as_numpy(dtype):
    """x ** n for a Python int n under jit: unrolled over n's bits (x ** 2 is x * x) where 0 <= n < 2**31, the
    loop past that and for a negative n; every case NumPy's wrapped power (negative n: 1, +-1, 0)."""
    info = np.iinfo(dtype)
    x = np.array([v for v in (0, 1, 2, 3, 7, info.max, info.min, -1, -3) if info.min <= v <= info.max], dtype)
    for n in (0, 1, 2, 3, 5, 64, 70, 127, 2 ** 40 + 1, -1, -2):
        if not info.min <= n <= info.max:
            continue
        if n >= 0:
            want = x ** x.dtype.type(n)
        else:
            want = np.where(x == 1, 1, np.where(x == -1, (-1) ** (-n % 2), 0)).astype(dtype)
        for f in (jit(lambda a: a ** n), lambda a: a ** n):
            np.testing.assert_array_equal(np.asarray(f(xp.asarray(x))), want, err_msg=f"{dtype} ** {n}")
