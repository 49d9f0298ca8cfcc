"""Strong Wolfe line search for LBFGS.

The search follows Nocedal & Wright, "Numerical Optimization" (2nd ed.): Algorithm 3.5 widens
the step until an interval bracketing acceptable steps is found, Algorithm 3.6 ("zoom") shrinks
that interval. Trial steps come from the minimizer of the cubic that interpolates the function
values and slopes at two known steps (equation 3.59), with safeguards that keep extrapolated
steps within [t + 0.01 (t - t_prev), 10 t] and zoom steps at least a tenth of the interval away
from its ends. The constants and safeguards give the same trial steps as PyTorch's
``LBFGS(line_search_fn="strong_wolfe")``.

Slopes (directional derivatives) stay 0-d tensors of the parameters' dtype, so the arithmetic on
them runs at the same precision as the parameters.
"""

import math


def _sqrt(v):
    return v.sqrt() if hasattr(v, "sqrt") else math.sqrt(v)


def cubic_minimizer(x1, f1, g1, x2, f2, g2, bounds=None):
    """Minimizer of the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2 there.

    The result is clipped to ``bounds`` (``(low, high)``), by default the interval between the two
    points. Where the cubic has no real stationary point, the middle of the bounds is returned.
    """
    # Name the points so that b lies to the right of a: equation 3.59 then needs the positive root.
    if x1 <= x2:
        a, fa, ga, b, fb, gb = x1, f1, g1, x2, f2, g2
    else:
        a, fa, ga, b, fb, gb = x2, f2, g2, x1, f1, g1
    low, high = (a, b) if bounds is None else bounds
    d1 = ga + gb - 3 * (fa - fb) / (a - b)
    disc = d1 * d1 - ga * gb
    if disc >= 0:
        d2 = _sqrt(disc)
        x = b - (b - a) * ((gb + d2 - d1) / (gb - ga + 2 * d2))
        return min(max(x, low), high)
    return (low + high) / 2.0


class _Point:
    """A trial step with its loss, flat gradient and slope along the search direction."""

    __slots__ = ("t", "f", "g", "slope")

    def __init__(self, t, f, g, slope):
        self.t, self.f, self.g, self.slope = t, f, g, slope


def strong_wolfe(evaluate, t, d, f, g, slope, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """Search along ``d`` for a step satisfying the strong Wolfe conditions.

    ``evaluate(t)`` returns the loss (a float) and the flat gradient at ``x + t * d``, leaving the
    parameters at ``x``. ``f``, ``g`` and ``slope`` are the loss, flat gradient and directional
    derivative ``g . d`` at ``t = 0``; ``t`` is the first trial step. At most ``max_ls`` trials
    follow the first one.

    Returns ``(loss, flat_grad, step, evaluations)`` for the accepted step (the lowest loss found
    when the search stops early).
    """
    d_scale = d.abs().max()
    evaluations = 0

    def trial(step):
        nonlocal evaluations
        loss, grad = evaluate(step)
        evaluations += 1
        return _Point(step, loss, grad, grad.dot(d))

    def sufficient_decrease_fails(p):
        return p.f > f + c1 * p.t * slope

    def curvature_holds(p):
        return abs(p.slope) <= -c2 * slope

    origin = _Point(0, f, g.clone(), slope)

    # Algorithm 3.5: extrapolate until [prev, cur] brackets acceptable steps.
    prev, cur = origin, trial(t)
    bracket = None
    found = False
    n = 0
    while n < max_ls:
        if sufficient_decrease_fails(cur) or (n > 1 and cur.f >= prev.f):
            bracket = [prev, cur]
            break
        if curvature_holds(cur):
            bracket = [cur]
            found = True
            break
        if cur.slope >= 0:
            bracket = [prev, cur]
            break
        bounds = (cur.t + 0.01 * (cur.t - prev.t), cur.t * 10)
        step = cubic_minimizer(prev.t, prev.f, prev.slope, cur.t, cur.f, cur.slope, bounds)
        prev, cur = cur, trial(step)
        n += 1
    if n == max_ls:
        # Out of trials: keep the better of the start and the last trial.
        bracket = [origin, cur]

    # Algorithm 3.6: shrink the bracket; bracket[lo] is the end with the lower loss.
    def order():
        return (0, 1) if bracket[0].f <= bracket[-1].f else (1, 0)

    lo, hi = order()
    stalled = False
    while not found and n < max_ls:
        left_t, right_t = bracket[0].t, bracket[1].t
        if abs(right_t - left_t) * d_scale < tolerance_change:
            break
        step = cubic_minimizer(
            left_t,
            bracket[0].f,
            bracket[0].slope,
            right_t,
            bracket[1].f,
            bracket[1].slope,
        )
        upper, lower = max(left_t, right_t), min(left_t, right_t)
        margin = 0.1 * (upper - lower)
        if min(upper - step, step - lower) < margin:
            # The step hugs an end of the interval. Accept that once, unless it lies on or
            # beyond an end; otherwise move it a tenth of the interval inside the nearer end.
            if stalled or step >= upper or step <= lower:
                if abs(step - upper) < abs(step - lower):
                    step = upper - margin
                else:
                    step = lower + margin
                stalled = False
            else:
                stalled = True
        else:
            stalled = False

        p = trial(step)
        n += 1
        if sufficient_decrease_fails(p) or p.f >= bracket[lo].f:
            bracket[hi] = p
            lo, hi = order()
        else:
            if curvature_holds(p):
                found = True
            elif p.slope * (bracket[hi].t - bracket[lo].t) >= 0:
                bracket[hi] = bracket[lo]
            bracket[lo] = p

    best = bracket[lo]
    return best.f, best.g, best.t, evaluations
