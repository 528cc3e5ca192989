"""scikit-learn on row-sharded data under jit(in_shardings=) (issue 28 item 4): PCA.fit_transform and Ridge fit +
predict over 8 CPU devices of one process (sharded_sklearn_cases.py, in a fresh process: the device count is
fixed when the client is made) and over 2 processes x 4 devices (distributed_worker.py 'sklearn'), each against
the one-device jit and NumPy-backed scikit-learn, and the partitioned HLO: all-reduces, no gather of the whole
dataset."""
import os

from multi_device import run_cases_on_devices
from test_distributed import _ok, run_workers

HERE = os.path.dirname(__file__)


def test_sklearn_on_rows_over_8_devices():
    run_cases_on_devices(os.path.join(HERE, "sharded_sklearn_cases.py"), 8, timeout=240)


def test_sklearn_on_rows_over_2_processes_x_4_devices():
    _ok(run_workers("sklearn", n=2, timeout=240, ARRAY_NAMESPACE_CPU_DEVICES="4"), ["sharded PCA", "sharded Ridge"])
