"""All downstream cases, and the (case, transform) pairs that fail because of OUR engine.

KNOWN_OURS entries are asserted correctly by their case row but are not yet run by the test module;
each has its cause (our error, and the library line that meets it). `python3 tests/downstream/survey.py`
runs everything and marks which of them now pass: then delete the entry to enable it.
"""
from ds_cases_scipy import CASES as SCIPY_CASES
from ds_cases_sklearn import CASES as SKLEARN_CASES
from ds_cases_xpx import CASES as XPX_CASES

ALL_CASES = SCIPY_CASES + SKLEARN_CASES + XPX_CASES

KNOWN_OURS = {}   # empty: every engine failure the suite found is fixed
