"""Host access for functions whose output *shape* depends on input *values*.

nonzero, unique_*, boolean-mask reads and the like compute their output size on the
host, so they work eagerly (and under grad, whose primal values are concrete) but not
under jit or vmap, where values are abstract. They raise `DataDependentShapeError` there.
"""
from __future__ import annotations

import numpy as np

from transforms.backend import backend
from transforms.batching import BatchDisagreementError
from transforms.core import ConcretizationTypeError, Tracer


class DataDependentShapeError(ConcretizationTypeError):
    """The output shape of `fname` depends on the values of an abstract (traced) array."""

    def __init__(self, tracer, fname, hint):
        super().__init__(tracer, fname)
        self.fname, self.hint = fname, hint

    def __str__(self):
        t = self.tracer
        return (f"{self.fname}: the shape of the result depends on the values of the input, but here the input "
                f"is abstract ({t.aval.str_short()} traced by {t._trace.kind_name()}), so its size cannot be "
                f"known.{self._where()} {self.hint}")


DEFAULT_HINT = ("Call it outside jit/vmap (eagerly), or restructure with a fixed-size formulation such as "
                "xp.where(mask, x, fill) or a sum over a mask.")


def host_value(v, guard=False, why=""):
    """The NumPy value of a raw value, or None if it is abstract (traced). With `guard`, a jit called with
    concrete values answers with this call's value and guards all of it (transforms/jit_guards.py), and
    vmap answers with the value all batch elements share (else BatchDisagreementError naming them)."""
    if isinstance(v, Tracer):
        try:
            v = v.concrete(why, guard)
        except BatchDisagreementError:
            raise
        except ConcretizationTypeError:
            return None
        if isinstance(v, Tracer):
            return None
    if hasattr(v, "aval") and not isinstance(v, np.ndarray):
        return np.asarray(backend.to_numpy(v))
    return np.asarray(v)


def require_host(v, fname, hint=DEFAULT_HINT):
    out = host_value(v, True, fname)   # (under jit with concrete values: the program is specialised to this value)
    if out is None:
        raise DataDependentShapeError(v, fname, hint)
    return out


MASK_READ_HINT = ("Reading x[mask] is only available eagerly. Under jit/vmap use a fixed-shape form: "
                  "xp.where(mask, x, fill) to keep x's shape, x.at[mask].set(v) (or x[mask] = v) with a scalar v "
                  "to update, or a reduction over the mask such as xp.sum(xp.where(mask, x, 0)); or do the "
                  "masking outside the jitted function.")
MASK_UPDATE_HINT = ("A masked update is traceable when its value needs no count of the True entries: a "
                    "scalar (Python scalar, 0-d or size-1 array), or a value that broadcasts along x's other "
                    "dims, with a key made of one mask and ints/slices/None/Ellipsis. Here the value (or a "
                    "key pairing the mask with integer arrays) needs the count; use "
                    "xp.where(mask, new_values, x) with full-shape new_values instead.")


def mask_hint(fname):
    """The hint for a boolean mask that is abstract: reads and updates have different remedies."""
    return MASK_READ_HINT if fname == "__getitem__" else MASK_UPDATE_HINT
