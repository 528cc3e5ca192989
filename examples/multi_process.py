"""Data-parallel training over several processes (or machines): one pmap spans every process's devices.

Each process runs this same script. It joins the run with `distributed.initialize()`, which reads the
coordinator's address, the number of processes and this process's id from the environment (as
`jax.distributed.initialize` does on a cluster); process 0 serves the coordinator. Every process builds
the same global batches (same seed), feeds its own devices their slices of each batch, and the step of
examples/data_parallel.py averages the gradients with `pmean` over every device of every process (gloo
over TCP between the processes), so all replicas take the same step. Each process then checks its loss
curve and parameters against single-device training on the whole batch in this process.

Run on two machines (host A serves the coordinator on port 12355, reachable from host B):

    # on host A                                        # on host B
    export ARRAY_NAMESPACE_COORDINATOR_ADDRESS=A:12355   export ARRAY_NAMESPACE_COORDINATOR_ADDRESS=A:12355
    export ARRAY_NAMESPACE_NUM_PROCESSES=2               export ARRAY_NAMESPACE_NUM_PROCESSES=2
    export ARRAY_NAMESPACE_PROCESS_ID=0                  export ARRAY_NAMESPACE_PROCESS_ID=1
    PYTHONPATH=src python examples/multi_process.py      PYTHONPATH=src python examples/multi_process.py

Optionally ARRAY_NAMESPACE_CPU_DEVICES=n gives each process n CPU devices (the same n everywhere). To try
it on one machine, start both with ARRAY_NAMESPACE_COORDINATOR_ADDRESS=127.0.0.1:12355:

    for i in 0 1; do ARRAY_NAMESPACE_PROCESS_ID=$i PYTHONPATH=src python examples/multi_process.py & done; wait

A process that cannot reach the coordinator stops with an error naming the address after --timeout
seconds; one whose peer dies stops within --heartbeat seconds (the runtime's heartbeat).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import data_parallel as dp  # noqa: E402  (imports array_namespace: no client made yet)
import transforms as tr  # noqa: E402
from transforms import distributed  # noqa: E402


def train(steps, lr=0.1, per_device_batch=16):
    """(data-parallel losses, single-device losses, replica-0 params, single-device params) in this process."""
    n_local, n_global, pid = tr.local_device_count(), tr.device_count(), tr.process_index()
    batches = dp.make_data(steps, per_device_batch * n_global)   # the same in every process
    mine = slice(pid * n_local * per_device_batch, (pid + 1) * n_local * per_device_batch)
    single_step, parallel_step = dp.make_steps(lr)

    replicas, parallel = dp.replicate(dp.init_params(), n_local), []
    for x, y in batches:   # this process's devices get its slice of every global batch
        replicas, loss = parallel_step(replicas, dp.split(x[mine], n_local), dp.split(y[mine], n_local))
        parallel.append(float(loss[0]))

    params, single = dp.init_params(), []
    for x, y in batches:   # the reference: the whole batch on this process's default device
        params, loss = single_step(params, dp.xp.asarray(x), dp.xp.asarray(y))
        single.append(float(loss))
    return parallel, single, [(W[0], b[0]) for W, b in replicas], params


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--timeout", type=int, default=60, help="seconds to wait for every process to join")
    ap.add_argument("--heartbeat", type=int, default=10, help="seconds without a heartbeat before a peer counts "
                                                               "as dead")
    args = ap.parse_args(argv)
    distributed.initialize(initialization_timeout=args.timeout, heartbeat_timeout=args.heartbeat)
    pid, nproc = tr.process_index(), tr.process_count()
    print(f"process {pid} of {nproc}: {tr.local_device_count()} local device(s) of {tr.device_count()}", flush=True)
    parallel, single, p_parallel, p_single = train(args.steps)
    for k, (a, b) in enumerate(zip(parallel, single)):
        print(f"process {pid} step {k:3d}  data-parallel loss {a:.12f}  single-device loss {b:.12f}")
    ok, gap, pgap = dp.agree(single, parallel, p_single, p_parallel)
    print(f"process {pid}: [{'ok' if ok else 'FAIL'}] same loss curve as one device on the whole batch (max "
          f"difference {gap:.2e}), same parameters ({pgap:.2e}), loss {parallel[0]:.4f} -> {parallel[-1]:.4f}",
          flush=True)
    distributed.barrier("done", timeout=args.timeout)
    distributed.shutdown()
    if not ok:
        raise SystemExit(f"process {pid}: data-parallel training over {nproc} processes does not match "
                         "single-device training")


if __name__ == "__main__":
    main()
