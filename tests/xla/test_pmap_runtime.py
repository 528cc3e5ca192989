"""xla/pmap_runtime.py: the cases in pmap_runtime_cases.py need 4 CPU devices (fixed when the client is made), so
they run in a fresh process with ARRAY_NAMESPACE_CPU_DEVICES=4."""
import os
from multi_device import run_cases_on_devices

HERE = os.path.dirname(__file__)


def test_pmap_runtime_on_four_devices_in_a_subprocess():
    run_cases_on_devices(os.path.join(HERE, "pmap_runtime_cases.py"), 4)
