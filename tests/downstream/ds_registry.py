"""All downstream cases, and the (case, transform) pairs that fail because of OUR engine.

KNOWN_OURS entries are asserted correctly by their case row but are not yet run by the test module;
each has its cause (our error, and the library line that meets it). `python3 tests/downstream/survey.py`
runs everything and marks which of them now pass: then delete the entry to enable it.
"""
from ds_cases_scipy import CASES as SCIPY_CASES
from ds_cases_sklearn import CASES as SKLEARN_CASES
from ds_cases_xpx import CASES as XPX_CASES

ALL_CASES = SCIPY_CASES + SKLEARN_CASES + XPX_CASES

_NO_SPECIAL = ("xp.special.{} is missing, so scipy/special/_support_alternative_backends.py:168 falls back "
               "to np.asarray(arg) -> TracerArrayConversionError (correct refusal; needs the native function)")
KNOWN_OURS = {
    ("special.gammainc", "jit"): _NO_SPECIAL.format("gammainc"),
    ("special.gammainc", "vmap"): _NO_SPECIAL.format("gammainc"),
    ("special.gammainc", "grad"): _NO_SPECIAL.format("gammainc"),
}
