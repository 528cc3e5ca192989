"""The paper-benchmark examples (examples/newton_cg.py, hmm.py, logistic_regression.py) on reduced problems:
each converges / improves, and its gradient matches the NumPy analytic gradient or finite differences."""
import importlib.util
import os

import numpy as np
import pytest

import array_namespace as xp
import transforms as tr

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")


def _load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", os.path.join(EXAMPLES, f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def newton_cg():
    return _load("newton_cg")


@pytest.fixture(scope="module")
def hmm():
    return _load("hmm")


@pytest.fixture(scope="module")
def logistic_regression():
    return _load("logistic_regression")


def test_newton_cg_converges_and_matches_numpy(newton_cg):
    A_np, b_np = newton_cg.make_problem(80, cond=20.0)
    A, b = xp.asarray(A_np), xp.asarray(b_np)
    f, grad_f, hvp, step = newton_cg.make_newton_cg(xp, tr, cg_iters=15)
    step = tr.jit(step)
    x = xp.zeros(80)
    x1 = step(x, A, b)
    np.testing.assert_allclose(np.asarray(x1), newton_cg.numpy_step(np.zeros(80), A_np, b_np, 15),
                               rtol=1e-9, atol=1e-10)
    for _ in range(3):
        x1 = step(x1, A, b)
    np.testing.assert_allclose(np.asarray(x1), np.linalg.solve(A_np, b_np), rtol=1e-7, atol=1e-8)
    v = np.random.default_rng(3).standard_normal(80)
    np.testing.assert_allclose(np.asarray(grad_f(xp.asarray(v), A, b)), newton_cg.numpy_grad(v, A_np, b_np),
                               rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(np.asarray(hvp(x, xp.asarray(v), A, b)), A_np @ v, rtol=1e-10, atol=1e-10)


def test_newton_cg_main(newton_cg, capsys):
    assert newton_cg.main(n=60, steps=4, cg_iters=30) < 1e-8
    assert "[ok]" in capsys.readouterr().out


def test_hmm_gradient_matches_forward_backward(hmm):
    obs_np, init_np = hmm.make_data(length=40, seed=2)
    obs, params = xp.asarray(obs_np), tuple(xp.asarray(p) for p in init_np)
    loglik, step = hmm.make_hmm(xp, tr)
    ll, g = tr.jit(tr.value_and_grad(loglik))(params, obs)
    want_ll, want_g = hmm.numpy_loglik_and_grad(init_np, obs_np)
    assert abs(float(ll) - want_ll) < 1e-9
    for got, want in zip(g, want_g):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-8, atol=1e-10)
    # and the hand-written gradient itself against central differences (one transition logit)
    eps = 1e-6
    plus = [p.copy() for p in init_np]
    minus = [p.copy() for p in init_np]
    plus[1][2, 1] += eps
    minus[1][2, 1] -= eps
    fd = (hmm.numpy_loglik_and_grad(plus, obs_np)[0] - hmm.numpy_loglik_and_grad(minus, obs_np)[0]) / (2 * eps)
    assert abs(fd - want_g[1][2, 1]) < 1e-6


def test_hmm_ascent_increases_loglik(hmm):
    obs_np, init_np = hmm.make_data(length=60)
    obs, params = xp.asarray(obs_np), tuple(xp.asarray(p) for p in init_np)
    loglik, step = hmm.make_hmm(xp, tr)
    step = tr.jit(step)
    lls = []
    for _ in range(6):
        ll, params = step(params, obs)
        lls.append(float(ll))
    assert all(b > a for a, b in zip(lls, lls[1:]))
    assert float(loglik(params, obs)) > lls[-1]


def test_logistic_regression_decreases_and_gradient(logistic_regression):
    lr_mod = logistic_regression
    X_np, y_np, init_np = lr_mod.make_data(400, 8, seed=1)
    X, y = xp.asarray(X_np), xp.asarray(y_np)
    params = tuple(xp.asarray(p) for p in init_np)
    loss, accuracy, step = lr_mod.make_logreg(xp, tr)
    step = tr.jit(step)
    losses = [float(loss(params, X, y))]
    for _ in range(8):
        params = step(params, X, y)
        losses.append(float(loss(params, X, y)))
    assert all(b < a for a, b in zip(losses, losses[1:]))
    assert float(accuracy(params, X, y)) > 0.7
    p_np = tuple(np.asarray(p) for p in params)
    assert abs(losses[-1] - lr_mod.numpy_loss(p_np, X_np, y_np)) < 1e-12
    gw, gb = tr.grad(loss)(params, X, y)
    want_w, want_b = lr_mod.numpy_grad(p_np, X_np, y_np)
    np.testing.assert_allclose(np.asarray(gw), want_w, rtol=1e-9, atol=1e-12)
    assert abs(float(gb) - want_b) < 1e-12
    # central differences on one weight
    eps = 1e-6
    e = np.zeros_like(p_np[0])
    e[3] = eps
    fd = (lr_mod.numpy_loss((p_np[0] + e, p_np[1]), X_np, y_np)
          - lr_mod.numpy_loss((p_np[0] - e, p_np[1]), X_np, y_np)) / (2 * eps)
    assert abs(fd - float(gw[3])) < 1e-7


def test_examples_import_only_numpy():
    """The benchmark's JAX process imports the examples; they must not load this library at import time."""
    import subprocess
    import sys
    code = ("import sys; sys.path.insert(0, {!r}); import newton_cg, hmm, logistic_regression; "
            "assert 'array_namespace' not in sys.modules and 'transforms' not in sys.modules").format(EXAMPLES)
    subprocess.run([sys.executable, "-c", code], check=True)


def _numpy_mse(params, x, y):
    h = x
    for W, b in params[:-1]:
        h = np.tanh(h @ np.asarray(W) + np.asarray(b))
    return float(np.mean(np.sum((h @ np.asarray(params[-1][0]) + np.asarray(params[-1][1]) - y) ** 2, axis=-1)))


def test_data_parallel_in_this_process():
    """On this process's devices: both curves equal, the first loss is NumPy's, training lowers the loss."""
    dp = _load("data_parallel")
    single, parallel, n, p_single, p_parallel = dp.train(steps=6)
    assert n == tr.local_device_count()
    x0, y0 = dp.make_data(6, 16 * n)[0]
    assert abs(parallel[0] - _numpy_mse(dp.init_params(), x0, y0)) < 1e-12
    np.testing.assert_allclose(parallel, single, rtol=1e-12, atol=1e-12)
    assert parallel[-1] < parallel[0]
    for (Ws, bs), (Wp, bp) in zip(p_single, p_parallel):
        np.testing.assert_allclose(np.asarray(Wp), np.asarray(Ws), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(np.asarray(bp), np.asarray(bs), rtol=1e-12, atol=1e-12)


def test_data_parallel_script_on_four_devices():
    """The script as a user runs it: it asks for 4 CPU devices itself, splits the batch over them, prints
    both curves and checks them; its first loss is NumPy's."""
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if k not in ("ARRAY_NAMESPACE_CPU_DEVICES", "XLA_FLAGS")}
    src = os.path.join(os.path.dirname(__file__), "..", "src")
    env["PYTHONPATH"] = os.pathsep.join([src] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, "data_parallel.py"), "--steps", "12"],
                       capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    out = r.stdout
    assert "data-parallel over 4 device(s) of 4; global batch 64" in out and "[ok] same loss curve" in out
    rows = [ln.split() for ln in out.splitlines() if ln[:4].strip().isdigit()]
    assert len(rows) == 12 and all(a == b for _, a, b in rows)   # printed to 12 digits: identical
    dp = _load("data_parallel")
    x0, y0 = dp.make_data(12, 64)[0]
    assert abs(float(rows[0][2]) - _numpy_mse(dp.init_params(), x0, y0)) < 1e-9


def test_multi_process_example_on_two_local_processes():
    """examples/multi_process.py as a user runs it on two machines, here 2 processes x 2 CPU devices on
    127.0.0.1, everything from the environment: each prints the same data-parallel loss curve, equal to
    single-device training on the whole batch, with NumPy's first loss. Both are killed at a hard timeout."""
    import socket
    import subprocess
    import sys
    import time
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARRAY_NAMESPACE_") and k != "XLA_FLAGS"}
    src = os.path.join(os.path.dirname(__file__), "..", "src")
    env.update(PYTHONPATH=os.pathsep.join([src] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])),
               ARRAY_NAMESPACE_COORDINATOR_ADDRESS=f"127.0.0.1:{port}", ARRAY_NAMESPACE_NUM_PROCESSES="2",
               ARRAY_NAMESPACE_CPU_DEVICES="2", PYTHONUNBUFFERED="1")
    procs = [subprocess.Popen([sys.executable, os.path.join(EXAMPLES, "multi_process.py"), "--steps", "8",
                               "--timeout", "30", "--heartbeat", "5"], env=dict(env, ARRAY_NAMESPACE_PROCESS_ID=str(i)),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for i in (0, 1)]
    outs, t0 = [], time.monotonic()
    try:
        for p in procs:
            outs.append(p.communicate(timeout=max(1.0, 90 - (time.monotonic() - t0)))[0])
    except subprocess.TimeoutExpired:
        for p in procs:
            p.kill()
        pytest.fail("multi_process.py still ran after 90 s (a hang):\n" + "\n---\n".join(
            p.communicate()[0][-2000:] for p in procs))
    curves = []
    for i, (p, out) in enumerate(zip(procs, outs)):
        assert p.returncode == 0, out[-3000:]
        assert f"process {i} of 2: 2 local device(s) of 4" in out and f"process {i}: [ok] same loss curve" in out
        rows = [ln.split() for ln in out.splitlines() if ln.startswith(f"process {i} step")]
        assert len(rows) == 8 and all(r[6] == r[9] for r in rows), rows   # printed to 12 digits: identical
        curves.append([float(r[6]) for r in rows])
    assert curves[0] == curves[1]
    dp = _load("data_parallel")
    x0, y0 = dp.make_data(8, 16 * 4)[0]
    assert abs(curves[0][0] - _numpy_mse(dp.init_params(), x0, y0)) < 1e-9
