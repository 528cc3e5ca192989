"""scipy reads SCIPY_ARRAY_API once, when it is first imported: set it before anything imports scipy.

The top-level tests/conftest.py sets it too (other test modules import scipy before this directory
is collected); this file checks that the scipy actually loaded has array-API support switched on.
"""
import os

os.environ["SCIPY_ARRAY_API"] = "1"

import scipy._lib._array_api as _scipy_xp  # noqa: E402

if not _scipy_xp.SCIPY_ARRAY_API:
    raise RuntimeError("scipy was imported before SCIPY_ARRAY_API=1 was set; set it in tests/conftest.py "
                       "before anything imports scipy")
