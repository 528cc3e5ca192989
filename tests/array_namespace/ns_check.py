"""A namespace function against its NumPy oracle eagerly, under jit, and under vmap (vs a Python loop)."""
import numpy as np

import array_namespace as xp
from transforms import jit, vmap


def agree(fn, np_fn, *args, rtol=1e-13, atol=0.0, batch=True):
    want = np.asarray(np_fn(*args))
    arrs = [xp.asarray(a) for a in args]
    for mode, got in (("eager", fn(*arrs)), ("jit", jit(fn)(*arrs))):
        got = np.asarray(got)
        assert got.dtype == want.dtype, f"{mode}: dtype {got.dtype} != NumPy's {want.dtype}"
        assert got.shape == want.shape, f"{mode}: shape {got.shape} != NumPy's {want.shape}"
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=mode)
    if batch:   # a batch of two: the inputs and their reverses along the first axis
        stacks = [np.stack([a, np.flip(a, 0) if np.ndim(a) else a]) for a in args]
        got = np.asarray(vmap(fn)(*[xp.asarray(s) for s in stacks]))
        loop = np.stack([np.asarray(np_fn(*[s[i] for s in stacks])) for i in range(2)])
        np.testing.assert_allclose(got, loop, rtol=rtol, atol=atol, equal_nan=True, err_msg="vmap")
