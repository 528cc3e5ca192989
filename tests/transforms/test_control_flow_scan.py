"""scan_p (control_flow_scan.py): scan and map under eager, jit, vmap, jvp and grad (incl. second
order), against NumPy and finite differences.
"""
import numpy as np
import pytest

import array_namespace as xp
from transforms import grad, jit, jvp, map, scan, vmap
from cf_util import a, close, fd  # noqa: F401  (shared helpers)


# ------------------------------------------------------------------------------------ scan

def rnn(h0, xs, w):
    def step(h, x):
        h = xp.tanh(h * w + x)
        return h, h * h
    return scan(step, h0, xs)


def rnn_np(h0, xs, w):
    h, ys = h0, []
    for x in xs:
        h = np.tanh(h * w + x)
        ys.append(h * h)
    return h, np.stack(ys)


XS = np.array([[0.5, -1.0], [0.25, 0.3], [-0.7, 0.9], [1.2, 0.1]])
H0 = np.array([0.1, -0.2])


def test_scan_values_eager_jit_reverse():
    h, ys = rnn(a(H0), a(XS), a(0.8))
    hn, ysn = rnn_np(H0, XS, 0.8)
    close(h, hn)
    close(ys, ysn)
    h2, ys2 = jit(rnn)(a(H0), a(XS), a(0.8))
    close(h2, hn)
    close(ys2, ysn)
    c, ys = scan(lambda c, x: (c + x, c * x), 0.0, a(np.arange(5.0)), reverse=True)
    assert float(c) == 10.0 and np.asarray(ys).tolist() == [0.0, 9.0, 14.0, 12.0, 0.0]
    c, ys = jit(lambda xs: scan(lambda c, x: (c + x, c * x), 0.0, xs, reverse=True))(a(np.arange(5.0)))
    assert np.asarray(ys).tolist() == [0.0, 9.0, 14.0, 12.0, 0.0]


def test_scan_pytrees_length_and_none_xs():
    def step(c, x):
        return {"s": c["s"] + x[0], "p": c["p"] * x[1]}, (x[0] * 2.0, None)
    c, (y, none) = scan(step, {"s": a(0.0), "p": a(1.0)}, (a([1.0, 2.0, 3.0]), a([2.0, 3.0, 4.0])))
    assert float(c["s"]) == 6.0 and float(c["p"]) == 24.0 and none is None
    close(y, [2.0, 4.0, 6.0])
    c, ys = scan(lambda c, _: (c * 2.0, c), a(1.0), None, length=4)
    assert float(c) == 16.0 and np.asarray(ys).tolist() == [1.0, 2.0, 4.0, 8.0]
    c, ys = scan(lambda c, x: (c, x), a(1.0), a(np.zeros((0, 3))))
    assert ys.shape == (0, 3) and float(c) == 1.0


def test_map():
    close(map(lambda x: xp.sum(x ** 2), a(XS)), (XS ** 2).sum(1))
    close(jit(lambda xs: map(lambda x: x[::-1], xs))(a(XS)), XS[:, ::-1])


def test_scan_vmap_matches_loop():
    ws = np.array([0.5, 0.8, -1.1])
    hs, ys = vmap(rnn, in_axes=(None, None, 0))(a(H0), a(XS), a(ws))
    for k, w in enumerate(ws):
        hn, ysn = rnn_np(H0, XS, w)
        close(hs[k], hn)
        close(ys[k], ysn)
    xss = np.stack([XS, XS * 0.5, -XS])
    hs, ys = jit(vmap(rnn, in_axes=(0, 1, None)))(a(np.stack([H0] * 3)), a(np.moveaxis(xss, 0, 1)), a(0.8))
    for k in range(3):
        hn, ysn = rnn_np(H0, xss[k], 0.8)
        close(hs[k], hn)
        close(ys[k], ysn)


def rnn_loss(w, h0, xs):
    h, ys = rnn(h0, xs, w)
    return xp.sum(h) + xp.sum(ys * xs)


def test_scan_grad_and_jvp_vs_finite_differences():
    f = lambda w: rnn_loss(w, a(H0), a(XS))
    close(grad(f)(a(0.8)), fd(f, 0.8), 1e-6)
    close(jit(grad(f))(a(0.8)), fd(f, 0.8), 1e-6)
    _, t = jvp(f, (a(0.8),), (a(1.0),))
    close(t, fd(f, 0.8), 1e-6)
    # gradients w.r.t. the carry init and every xs element
    gh, gx = grad(rnn_loss, argnums=(1, 2))(a(0.8), a(H0), a(XS))
    eps = 1e-6
    for idx in [(0, 0), (2, 1), (3, 0)]:
        d = np.zeros_like(XS)
        d[idx] = eps
        num = (float(rnn_loss(a(0.8), a(H0), a(XS + d))) - float(rnn_loss(a(0.8), a(H0), a(XS - d)))) / (2 * eps)
        close(gx[idx], num, 1e-6)
    d = np.array([eps, 0.0])
    num = (float(rnn_loss(a(0.8), a(H0 + d), a(XS))) - float(rnn_loss(a(0.8), a(H0 - d), a(XS)))) / (2 * eps)
    close(gh[0], num, 1e-6)


def test_scan_grad_reverse_and_closure_weight():
    W = a(np.array([[0.3, -0.2], [0.1, 0.4]]))

    def f(s):
        c, ys = scan(lambda c, x: (xp.tanh(c @ (W * s) + x), xp.sum(c)), a(H0), a(XS), reverse=True)
        return xp.sum(c) + xp.sum(ys * ys)
    close(grad(f)(a(1.3)), fd(f, 1.3), 1e-6)


def test_scan_second_order_grad():
    f = lambda w: rnn_loss(w, a(H0), a(XS))
    close(grad(grad(f))(a(0.8)), fd(grad(f), 0.8, 1e-5), 1e-5)
    close(jit(grad(grad(f)))(a(0.8)), fd(grad(f), 0.8, 1e-5), 1e-5)


def test_scan_per_example_grads():
    ws = np.array([0.5, 0.8])
    f = lambda w: rnn_loss(w, a(H0), a(XS))
    close(vmap(grad(f))(a(ws)), [fd(f, w) for w in ws], 1e-6)


def test_scan_errors():
    with pytest.raises(ValueError, match=r"xs\[0\] has length 3, xs\[1\] has length 4"):
        scan(lambda c, x: (c, x), a(0.0), (a(np.zeros(3)), a(np.zeros(4))))
    with pytest.raises(ValueError, match="length=5 but the leaves of xs have leading length 3"):
        scan(lambda c, x: (c, x), a(0.0), a(np.zeros(3)), length=5)
    with pytest.raises(ValueError, match="pass length="):
        scan(lambda c, x: (c, x), a(0.0), None)
    with pytest.raises(TypeError, match=r"leaf init\[0\] is f64\[\] in init but f64\[2\]"):
        scan(lambda c, x: ((c[0] * x,), x), (a(0.0),), a(np.zeros((3, 2))))
    with pytest.raises(TypeError, match=r"pair \(carry, y\)"):
        scan(lambda c, x: c, a(0.0), a(np.zeros(3)))


def test_scan_transpose_dot_product_identity():
    """The reversed scan (transpose_jaxpr of the body, consts' cotangents accumulated in the carry)
    satisfies <ct, L t> = <L^T ct, t> for L linear in (init, xs, b) with w a non-linear constant."""
    from transforms import linear_transpose
    rng = np.random.default_rng(1)
    w = a(rng.normal(size=2))

    def lin(init, xs, b):
        def body(c, x):
            return c * w + x + b, 2.0 * c - b
        return scan(body, init, xs)

    t = (rng.normal(size=2), rng.normal(size=(5, 2)), rng.normal(size=2))
    ct = (rng.normal(size=2), rng.normal(size=(5, 2)))
    out = lin(*[a(v) for v in t])
    lt = linear_transpose(lin, *[a(np.zeros_like(v)) for v in t])(tuple(a(v) for v in ct))
    lhs = sum(np.vdot(c, np.asarray(o)) for c, o in zip(ct, out))
    rhs = sum(np.vdot(np.asarray(g), v) for g, v in zip(lt, t))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-12)
    # and against NumPy's loop: the carry after the scan
    c = t[0].copy()
    for x in t[1]:
        c = c * np.asarray(w) + x + t[2]
    close(out[0], c, 1e-12)
