"""Run by test_threads.py in a fresh process: 8 threads make their first eager op, jit, linalg, fft,
grad and vmap calls at once; each result is checked against NumPy. Exit 0 when all agree."""
import sys, threading, numpy as np
import array_namespace as xp
from transforms import jit, grad, vmap
errs = []; res = {}
def work(k):
    try:
        a = np.random.default_rng(k).random((6, 6))
        x = xp.asarray(a)
        r = [float(xp.sum(x + 1)), float(jit(lambda v: xp.sum(v * 2.0 + k))(x)),
             float(xp.sum(xp.linalg.inv(x @ x.T + 6 * xp.eye(6)))), float(xp.sum(xp.abs(xp.fft.fft(x)))),
             float(xp.sum(grad(lambda v: xp.sum(xp.sin(v)))(x))), float(xp.sum(vmap(lambda v: v @ v)(x)))]
        w = [np.sum(a + 1), np.sum(a * 2 + k), np.sum(np.linalg.inv(a @ a.T + 6 * np.eye(6))), np.sum(np.abs(np.fft.fft(a))),
             np.sum(np.cos(a)), np.sum(np.einsum('ij,ij->i', a, a))]
        np.testing.assert_allclose(r, w, rtol=1e-9)
    except Exception as e:
        errs.append(repr(e)[:300])
ts = [threading.Thread(target=work, args=(k,)) for k in range(8)]
[t.start() for t in ts]; [t.join() for t in ts]
print("ERR" if errs else "OK", errs[:2])
sys.exit(1 if errs else 0)
