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
# array-api-extra chooses between a boolean-mask path and a fixed-shape xp.where path from OUR
# __array_namespace_info__().capabilities() (src/array_namespace/_info.py:13), which says
# "boolean indexing": True / "data-dependent shapes": True even while tracing. Under jit/vmap the mask
# path then raises DataDependentShapeError. Reporting False for both while a jit/vmap trace is active
# (as JAX does) would make xpx take the where path (e.g. scipy/_lib/array_api_extra/_lib/_funcs.py:156,
# array_api_extra/_agnostic/_elementwise.py:162, array_api_extra/_agnostic/_set.py:38).
_CAPS = "capabilities() reports boolean indexing / data-dependent shapes under tracing; xpx then runs {}"
_APPLY_WHERE_SCIPY = _CAPS.format("arr[cond] at scipy/_lib/array_api_extra/_lib/_funcs.py:160 (apply_where)")
_APPLY_WHERE = _CAPS.format("arr[cond] at array_api_extra/_agnostic/_elementwise.py:170 (apply_where)")
_NUNIQUE = _CAPS.format("xp.unique_counts at array_api_extra/_agnostic/_set.py:39 (nunique)")
_RESHAPE_NP_INT = ("eager: our reshape rejects NumPy integer shape entries: ValueError 'reshape: invalid shape "
                   "(np.int64(2), np.int64(1))' (src/array_namespace/_manipulation.py:21) from "
                   "scipy/stats/_axis_nan_policy.py:552 xp.reshape(sample, new_shape); shape entries should "
                   "be accepted through operator.index, as NumPy does")
_SETITEM_NP_FLOAT = ("eager: x[mask] = np.float64(...) raises TypeError '__setitem__: x2 must be an array or a "
                     "Python scalar, got float64' (src/array_namespace/_helpers.py:71 checks the exact type; "
                     "np.float64 is a float subclass) from sklearn/metrics/_classification.py:1869 "
                     "`result[mask] = zero_division_value`")

KNOWN_OURS = {
    ("special.i0", "jit"): _NO_SPECIAL.format("i0"),
    ("special.i0", "vmap"): _NO_SPECIAL.format("i0"),
    ("special.i0", "grad"): _NO_SPECIAL.format("i0"),
    ("special.i1e", "jit"): _NO_SPECIAL.format("i1e"),
    ("special.i1e", "vmap"): _NO_SPECIAL.format("i1e"),
    ("special.i1e", "grad"): _NO_SPECIAL.format("i1e"),
    ("special.gammainc", "jit"): _NO_SPECIAL.format("gammainc"),
    ("special.gammainc", "vmap"): _NO_SPECIAL.format("gammainc"),
    ("special.gammainc", "grad"): _NO_SPECIAL.format("gammainc"),
    ("stats.variation", "jit"): _APPLY_WHERE_SCIPY,
    ("stats.tmean", "jit"): _APPLY_WHERE_SCIPY,
    ("stats.tmean", "vmap"): _APPLY_WHERE_SCIPY,
    ("stats.tvar", "jit"): _APPLY_WHERE_SCIPY,
    ("stats.tvar", "vmap"): _APPLY_WHERE_SCIPY,
    ("stats.pearsonr", "jit"): _APPLY_WHERE_SCIPY,
    ("xpx.isclose", "jit"): _APPLY_WHERE,
    ("xpx.isclose", "vmap"): _APPLY_WHERE,
    ("xpx.apply_where", "jit"): _APPLY_WHERE,
    ("xpx.apply_where", "vmap"): _APPLY_WHERE,
    ("xpx.apply_where_f2", "jit"): _APPLY_WHERE,
    ("xpx.apply_where_f2", "vmap"): _APPLY_WHERE,
    ("xpx.nunique", "jit"): _NUNIQUE,
    ("xpx.nunique", "vmap"): _NUNIQUE,
    ("stats.ttest_1samp", "eager"): _RESHAPE_NP_INT,
    ("stats.ttest_1samp", "grad"): _RESHAPE_NP_INT,
    ("f1_macro", "eager"): _SETITEM_NP_FLOAT,
}
