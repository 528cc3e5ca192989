"""xp.special: scipy.special's elementwise functions, native and differentiable.

scipy.special looks up `xp.special.<name>` for a namespace it does not know before it
falls back to NumPy (the anticipated 'special' extension, data-apis/array-api#725), so
every function here runs under jit, vmap and grad when called through scipy. Each family
lives in its own module; the primitives they bind are in transforms/primitives/special_*.py
with their lowerings in xla/lower_special_*.py.

float32 in, float32 out. Compositions whose float32 arithmetic would lose digits to cancellation or to an
amplifying parameter (poch, binom, betaln, kl_div, Riemann zeta, hyp1f1, lpmv, betaincinv and the distribution
inverses built on it) compute in float64 and round, as scipy's float32 loops do (_promote.in_float64). Functions
bound as one primitive with a float32 kernel of its own (gammaln, digamma, erf, the Bessel functions, ...) compute
in float32, for speed under jit: a few to tens of ulps, more relative error near their zeros.
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
