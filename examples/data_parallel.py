"""Data-parallel training with pmap: the seed MLP, its batch split over the devices.

Each device holds a replica of the parameters and one slice of every batch; it computes the
gradient of the loss on its slice, `pmean` averages the gradients over the devices, and every
replica takes the same SGD step, so the replicas stay equal. Because the loss is a mean over
equally sized slices, the averaged gradient is the full-batch gradient: the loss curve is the
one single-device training gives (the script trains both ways, prints both curves and checks
that they agree to rounding).

Run:  PYTHONPATH=src python examples/data_parallel.py [--devices N] [--steps S]

Without ARRAY_NAMESPACE_CPU_DEVICES (or XLA's --xla_force_host_platform_device_count in XLA_FLAGS)
the script asks for 4 CPU devices before the namespace is imported; with any device count it
splits the batch over all local devices. Finishes in a few seconds.
"""
import argparse
import os
import sys

if __name__ == "__main__" and "ARRAY_NAMESPACE_CPU_DEVICES" not in os.environ and \
        "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    _n = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--devices=")), None)
    if _n is None and "--devices" in sys.argv[:-1]:
        _n = sys.argv[sys.argv.index("--devices") + 1]
    os.environ["ARRAY_NAMESPACE_CPU_DEVICES"] = _n or "4"   # fixed when the first array is made

import numpy as np  # noqa: E402

import array_namespace as xp  # noqa: E402
from transforms import grad, jit, pmap, pmean, local_device_count  # noqa: E402

SIZES = [8, 32, 32, 1]   # the seed MLP: tanh hidden layers, a linear output, mean squared error


def init_params(sizes=SIZES, seed=0):
    rng = np.random.default_rng(seed)
    return [(xp.asarray(rng.standard_normal((m, n)) / np.sqrt(m)), xp.asarray(rng.standard_normal(n) * 0.1))
            for m, n in zip(sizes[:-1], sizes[1:])]


def predict(params, inputs):
    for W, b in params[:-1]:
        inputs = xp.tanh(inputs @ W + b)
    W, b = params[-1]
    return inputs @ W + b


def mse_loss(params, inputs, targets):
    preds = predict(params, inputs)
    return xp.mean(xp.sum((preds - targets) ** 2, axis=-1))


def make_data(n_batches, batch, sizes=SIZES, seed=1):
    """n_batches batches (inputs (batch, d_in), targets (batch, d_out)) from a fixed random teacher net, NumPy."""
    rng = np.random.default_rng(seed)
    teacher = [(2 * rng.standard_normal((m, n)) / np.sqrt(m), rng.standard_normal(n))
               for m, n in zip(sizes[:-1], sizes[1:])]
    out = []
    for _ in range(n_batches):
        x = rng.standard_normal((batch, sizes[0]))
        h = x
        for W, b in teacher[:-1]:
            h = np.tanh(h @ W + b)
        y = h @ teacher[-1][0] + teacher[-1][1] + 0.1 * rng.standard_normal((batch, sizes[-1]))
        out.append((x, y))
    return out


def sgd(params, grads, lr):
    return [(W - lr * gW, b - lr * gb) for (W, b), (gW, gb) in zip(params, grads)]


def make_steps(lr):
    """(single-device step, data-parallel step); both map (params, inputs, targets) -> (params, loss)."""
    @jit
    def single_step(params, inputs, targets):
        loss = mse_loss(params, inputs, targets)
        return sgd(params, grad(mse_loss)(params, inputs, targets), lr), loss

    def replica_step(params, inputs, targets):   # one device: its replica, its slice of the batch
        g = grad(mse_loss)(params, inputs, targets)
        g = pmean(g, axis_name="batch")            # the full batch's gradient, on every device
        loss = pmean(mse_loss(params, inputs, targets), axis_name="batch")
        return sgd(params, g, lr), loss

    return single_step, pmap(replica_step, axis_name="batch")


def replicate(params, n):
    """A copy of each parameter per device (a leading axis of size n): the replicas pmap keeps on the devices."""
    return [(xp.stack([W] * n), xp.stack([b] * n)) for W, b in params]


def split(a, n):
    """(batch, ...) -> (n, batch // n, ...): slice k of the batch goes to device k."""
    return xp.reshape(xp.asarray(a), (n, a.shape[0] // n) + tuple(a.shape[1:]))


def train(steps=30, lr=0.1, per_device_batch=16, n_devices=None):
    """Train both ways on the same batches; returns (single-device losses, data-parallel losses, n_devices,
    final single-device params, final replica-0 params)."""
    n = n_devices or local_device_count()
    batches = make_data(steps, per_device_batch * n)
    single_step, parallel_step = make_steps(lr)

    params = init_params()
    single = []
    for x, y in batches:
        params, loss = single_step(params, xp.asarray(x), xp.asarray(y))
        single.append(float(loss))

    replicas = replicate(init_params(), n)
    parallel = []
    for x, y in batches:
        replicas, loss = parallel_step(replicas, split(x, n), split(y, n))
        parallel.append(float(loss[0]))   # the same on every device (pmean); read device 0's
    first = [(W[0], b[0]) for W, b in replicas]   # replica 0, read from its device alone
    return single, parallel, n, params, first


def agree(single, parallel, p_single, p_parallel):
    """(ok, largest loss difference, largest parameter difference): the data-parallel run matches the
    single-device one to 1e-10 and its loss at least halves."""
    gap = max(abs(a - b) for a, b in zip(single, parallel))
    pgap = max(float(np.max(np.abs(np.asarray(u) - np.asarray(v))))
               for pu, pv in zip(p_single, p_parallel) for u, v in zip(pu, pv))
    return gap < 1e-10 and pgap < 1e-10 and parallel[-1] < 0.5 * parallel[0], gap, pgap


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--devices", type=int, default=None, help="how many local devices to use (default: all)")
    ap.add_argument("--steps", type=int, default=30)
    args = ap.parse_args(argv)
    per_device_batch = 16
    single, parallel, n, p_single, p_parallel = train(steps=args.steps, per_device_batch=per_device_batch,
                                                      n_devices=args.devices)
    print(f"data-parallel over {n} device(s) of {local_device_count()}; global batch {per_device_batch * n}")
    print(f"{'step':>4}  {'single-device loss':>20}  {'data-parallel loss':>20}")
    for k, (a, b) in enumerate(zip(single, parallel)):
        print(f"{k:4d}  {a:20.12f}  {b:20.12f}")
    ok, gap, pgap = agree(single, parallel, p_single, p_parallel)
    print(f"[{'ok' if ok else 'FAIL'}] same loss curve (max difference {gap:.2e}), same parameters "
          f"(max difference {pgap:.2e}), loss {parallel[0]:.4f} -> {parallel[-1]:.4f}")
    if not ok:
        raise SystemExit("data-parallel training does not match single-device training")
    return gap


if __name__ == "__main__":
    main()
