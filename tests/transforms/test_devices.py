"""Devices: counts and indices from the backend; N CPU devices chosen by ARRAY_NAMESPACE_CPU_DEVICES, by
XLA_FLAGS' --xla_force_host_platform_device_count, or by set_cpu_device_count before first use (each in a
fresh subprocess: the count is fixed when the client is made)."""
import os
import subprocess
import sys
import textwrap

import pytest

import transforms

SRC = os.path.dirname(os.path.dirname(transforms.__file__))
REPORT = "import transforms as T; print(T.device_count(), len(T.local_devices()), T.process_index(), " \
         "T.process_count(), [d.id for d in T.devices()])"


def _run(code, **env):
    e = {k: v for k, v in os.environ.items() if k not in ("ARRAY_NAMESPACE_CPU_DEVICES", "XLA_FLAGS")}
    e.update(env, PYTHONPATH=SRC)
    r = subprocess.run([sys.executable, "-c", "import array_namespace\n" + textwrap.dedent(code)],
                       capture_output=True, text=True, timeout=120, env=e)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip().splitlines()


def test_this_process():
    n = transforms.device_count()
    assert n == len(transforms.devices()) >= 1
    assert transforms.local_device_count() == len(transforms.local_devices()) == n
    assert (transforms.process_index(), transforms.process_count()) == (0, 1)
    assert [d.id for d in transforms.devices()] == list(range(n))
    assert all(d.platform == "cpu" for d in transforms.devices())


def test_three_ways_to_ask_for_devices_and_their_order():
    assert _run(REPORT, ARRAY_NAMESPACE_CPU_DEVICES="8") == ["8 8 0 1 [0, 1, 2, 3, 4, 5, 6, 7]"]
    assert _run(REPORT, XLA_FLAGS="--xla_cpu_enable_fast_math=false --xla_force_host_platform_device_count=3") == [
        "3 3 0 1 [0, 1, 2]"]
    assert _run("import transforms as T; T.set_cpu_device_count(5)\n" + REPORT,
                ARRAY_NAMESPACE_CPU_DEVICES="2") == ["5 5 0 1 [0, 1, 2, 3, 4]"]   # the call wins
    assert _run(REPORT, ARRAY_NAMESPACE_CPU_DEVICES="2", XLA_FLAGS="--xla_force_host_platform_device_count=4") == [
        "2 2 0 1 [0, 1]"]                                                              # then our variable


def test_asking_after_first_use_is_a_clear_error():
    out = _run("""
        import transforms as T, array_namespace as xp
        x = xp.ones(3) + 1            # the client exists now
        T.set_cpu_device_count(1)     # the count it has: fine
        try:
            T.set_cpu_device_count(4)
        except RuntimeError as e:
            print("RuntimeError", e)
        for bad in (0, -2, "x", True):
            try:
                T.set_cpu_device_count(bad)
            except ValueError as e:
                print("ValueError")
    """)
    assert out[0].startswith("RuntimeError set_cpu_device_count(4): the CPU client already exists with 1 device")
    assert out[1:] == ["ValueError"] * 4


def test_bad_environment_value():
    e = dict(os.environ, ARRAY_NAMESPACE_CPU_DEVICES="zero", PYTHONPATH=SRC)
    r = subprocess.run([sys.executable, "-c", "import transforms as T, array_namespace; T.devices()"],
                       capture_output=True, text=True, timeout=120, env=e)
    assert r.returncode != 0 and "ARRAY_NAMESPACE_CPU_DEVICES" in r.stderr and "positive integer" in r.stderr
