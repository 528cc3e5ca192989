"""multi_device.py's report of a child that crashed: the crashing thread's stack (file and line), not only the
tail of faulthandler's report (its long "Extension modules:" list), which hid where a CI crash was."""
import pytest

from multi_device import failure_tail, run_cases_on_devices

CRASHING = '''
import faulthandler


def test_crash():
    x = 1
    faulthandler._sigsegv()
'''


def test_a_crashing_cases_file_reports_the_line_that_crashed(tmp_path):
    path = tmp_path / "crash_cases.py"
    path.write_text(CRASHING)
    with pytest.raises(AssertionError) as e:
        run_cases_on_devices(str(path), 1, timeout=120)
    msg = str(e.value)
    assert "Fatal Python error: Segmentation fault" in msg and 'crash_cases.py", line 7 in test_crash' in msg
    assert "Extension modules:" not in msg


def test_failure_tail_without_a_crash_is_the_tail():
    err = "x" * 5000 + "Traceback: the end"
    assert failure_tail(err) == err[-3000:]
    assert failure_tail("short") == "short"
