"""The finite-difference oracle every gradient test compares against."""
import numpy as np


def central_diff(f, x, eps=1e-6):
    """d f / d x by central differences; f maps a float64 ndarray shaped like x to a float."""
    x = np.asarray(x, np.float64)
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        p, m = x.copy(), x.copy()
        p[idx] += eps
        m[idx] -= eps
        g[idx] = (f(p) - f(m)) / (2 * eps)
    return g


def central_diff_args(f, vals, eps=1e-6):
    """Central-difference gradients of f(*vals) with respect to each argument."""
    def one(i):
        return central_diff(lambda v: f(*vals[:i], v, *vals[i + 1:]), vals[i], eps)
    return [one(i) for i in range(len(vals))]


def fd_grad(f, x, eps=1e-6):
    """Central differences of an array function f (jitted once, then evaluated cheaply)."""
    import array_namespace as xp
    from transforms import jit
    jf = jit(f)
    return central_diff(lambda v: float(jf(xp.asarray(v))), x, eps)


def second_diff_hvp(f, vals, ts, eps=1e-4):
    """The Hessian of a scalar NumPy function f(*vals) applied to the direction ts, by mixed central
    second differences of f itself: entry i of argument k is
    [f(x + h e_ki + h t) - f(x + h e_ki - h t) - f(x - h e_ki + h t) + f(x - h e_ki - h t)] / 4h^2.
    An oracle for forward-over-reverse that never evaluates a derivative rule of ours."""
    vals = [np.asarray(v, np.float64) for v in vals]
    ts = [np.asarray(t, np.float64) for t in ts]

    def at(k, idx, si, st):
        args = [v + st * eps * t for v, t in zip(vals, ts)]
        args[k] = args[k].copy()
        args[k][idx] += si * eps
        return f(*args)
    out = []
    for k, v in enumerate(vals):
        h = np.zeros_like(v)
        for idx in np.ndindex(v.shape):
            h[idx] = (at(k, idx, 1, 1) - at(k, idx, 1, -1) - at(k, idx, -1, 1) + at(k, idx, -1, -1)) / (4 * eps * eps)
        out.append(h)
    return out
