"""xp.special: scipy.special's elementwise functions, native and differentiable.

scipy.special looks up `xp.special.<name>` for a namespace it does not know before it
falls back to NumPy (the anticipated 'special' extension, data-apis/array-api#725), so
every function here runs under jit, vmap and grad when called through scipy. Each family
lives in its own module; the primitives they bind are in transforms/primitives/special.py
with their lowerings in xla/lower_special.py.
"""
from ._elementary import *   # noqa: F401,F403
from ._elementary import __all__ as _elementary_all
from ._gamma import *        # noqa: F401,F403
from ._gamma import __all__ as _gamma_all
from ._beta import *         # noqa: F401,F403
from ._beta import __all__ as _beta_all
from ._beta_inv import *     # noqa: F401,F403
from ._beta_inv import __all__ as _beta_inv_all
from ._erf_bessel import *   # noqa: F401,F403
from ._erf_bessel import __all__ as _erf_bessel_all
from ._hyper import *        # noqa: F401,F403
from ._hyper import __all__ as _hyper_all

__all__ = sorted(set(_elementary_all + _gamma_all + _beta_all + _beta_inv_all + _erf_bessel_all + _hyper_all))
