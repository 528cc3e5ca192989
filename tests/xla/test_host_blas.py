"""LAPACK kernels, eager and jitted, run their BLAS on one OpenBLAS thread up to host_parallel.MIN_ELEMENTS elements
(xla/host_blas.py): their bits do not depend on the thread count; the count is put back after each call, also
when calls overlap in several threads; larger matrices keep OpenBLAS's threads."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import array_namespace as xp
from transforms import jit
from xla import _blas_threads, host_blas
from xla.host_parallel import MIN_ELEMENTS

_SCRIPT = r"""
import hashlib, numpy as np, array_namespace as xp
h = lambda *r: hashlib.sha256(b"".join(np.asarray(x).tobytes() for x in r)).hexdigest()[:16]
A = xp.asarray(np.random.default_rng(0).standard_normal((2028, 78)))
B = xp.asarray(np.random.default_rng(1).standard_normal((300, 300)))
Bn = np.asarray(B)
S = xp.asarray(np.einsum("ki,kj->ij", Bn, Bn, optimize=False) + 300 * np.eye(300))   # (no BLAS in the input)
J = {JIT}
print(" ".join([h(*J(lambda a: xp.linalg.svd(a, full_matrices=False))(A)), h(*J(xp.linalg.qr)(B)),
                h(*J(xp.linalg.eigh)(S)), h(J(xp.linalg.cholesky)(S)), h(J(xp.linalg.solve)(B, B[:, :3])),
                h(J(xp.linalg.det)(B)), h(J(xp.linalg.inv)(B))]))
"""


needs_openblas = pytest.mark.skipif(sys.platform != "linux" or not host_blas.libraries(),
                                    reason="OpenBLAS's thread count is set only where NumPy or scipy links OpenBLAS")


@needs_openblas
@pytest.mark.parametrize("how", ["eager", "jit"])
def test_factorizations_do_not_depend_on_the_openblas_thread_count(how):
    """svd of 2028x78, qr, solve, det and inv of 300x300 differ between one OpenBLAS thread and two in NumPy
    itself (and did here, eagerly and jitted: jaxlib's kernels call scipy's OpenBLAS); eigh and cholesky of an
    SPD matrix made without BLAS."""
    script = _SCRIPT.replace("{JIT}", "jit" if how == "jit" else "lambda f: f")
    script = ("from transforms import jit\n" if how == "jit" else "") + script
    outs = []
    for n in ("1", "2"):
        env = dict(os.environ, OPENBLAS_NUM_THREADS=n)
        outs.append(subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                                   check=True, timeout=300).stdout.split())
    assert len(outs[0]) == 7 and outs[0] == outs[1]


@needs_openblas
def test_the_libraries_found_are_numpys_and_scipys_openblas():
    """Found through the modules' handles (dlsym searches what they loaded); the oracle is /proc/self/maps, which
    lists the OpenBLAS libraries this process loaded (NumPy's and scipy's: no other package here ships one)."""
    import ctypes
    import importlib
    importlib.import_module("scipy.linalg.cython_lapack")   # (scipy's OpenBLAS loaded)
    with open("/proc/self/maps") as f:
        paths = {line.split(None, 5)[5].strip() for line in f if "openblas" in line and len(line.split(None, 5)) == 6}
    want = set()
    for path in paths:
        lib = ctypes.CDLL(path)
        name = next(s for s, _ in host_blas._NAMES if hasattr(lib, s))
        want.add(ctypes.cast(getattr(lib, name), ctypes.c_void_p).value)
    got = {ctypes.cast(s, ctypes.c_void_p).value for s, _ in host_blas.libraries()}
    assert len(paths) == 2 and got == want


@needs_openblas
def test_the_count_is_one_inside_a_kernel_and_put_back_after(monkeypatch):
    before = [get() for _, get in host_blas.libraries()]
    if max(before) < 2:
        pytest.skip("OpenBLAS runs on one thread here already")
    seen = []
    svd = np.linalg.svd

    def spy(*a, **k):
        seen.append([get() for _, get in host_blas.libraries()])
        return svd(*a, **k)
    monkeypatch.setattr(np.linalg, "svd", spy)
    small = xp.asarray(np.random.default_rng(2).standard_normal((200, 30)))
    big = xp.asarray(np.random.default_rng(3).standard_normal((MIN_ELEMENTS // 64 + 1, 64)))
    xp.linalg.svd(small)[0].block_until_ready()
    xp.linalg.svd(big, full_matrices=False)[0].block_until_ready()
    assert seen == [[1] * len(before), before]
    assert [get() for _, get in host_blas.libraries()] == before


@needs_openblas
def test_overlapping_calls_in_threads_give_the_serial_bits_and_put_the_count_back():
    """Eager and jitted kernels (these on XLA's threads, without the GIL) overlapping in 4 threads."""
    before = [get() for _, get in host_blas.libraries()]
    a = xp.asarray(np.random.default_rng(4).standard_normal((600, 70)))
    svds = {"eager": lambda a: xp.linalg.svd(a, full_matrices=False),
            "jit": jit(lambda a: xp.linalg.svd(a, full_matrices=False))}
    want = {k: [np.asarray(v).tobytes() for v in f(a)] for k, f in svds.items()}
    bad = []

    def work(k):
        for _ in range(15):
            got = [np.asarray(v).tobytes() for v in svds[k](a)]
            if got != want[k]:
                bad.append((k, got))
    threads = [threading.Thread(target=work, args=(k,)) for k in ("eager", "jit", "eager", "jit")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad
    assert _blas_threads.held() == 0 and [get() for _, get in host_blas.libraries()] == before


@needs_openblas
def test_jitted_kernels_put_the_count_back_and_large_ones_keep_the_threads():
    """A jitted factorization holds one thread only while its kernel runs (the C trampoline); past the bound it
    calls jaxlib's kernel directly (its target in the compiled program)."""
    before = [get() for _, get in host_blas.libraries()]
    small = xp.asarray(np.random.default_rng(5).standard_normal((200, 30)))
    big = xp.asarray(np.random.default_rng(6).standard_normal((MIN_ELEMENTS // 64 + 1, 64)))
    f = jit(lambda a: xp.linalg.svd(a, full_matrices=False)[1])
    assert np.allclose(np.asarray(f(small)), np.linalg.svd(np.asarray(small), compute_uv=False))
    assert np.allclose(np.asarray(f(big)), np.linalg.svd(np.asarray(big), compute_uv=False))
    assert _blas_threads.held() == 0 and [get() for _, get in host_blas.libraries()] == before
    texts = [f.lower(a).as_text() for a in (small, big)]
    assert "gesdd_ffi_one_thread" in texts[0] and "gesdd_ffi_one_thread" not in texts[1]
