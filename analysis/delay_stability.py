#!/usr/bin/env python3
"""Why one step of staleness destabilises SGD with momentum, and what each
compensation buys (docs/convergence.md).

Heavy-ball SGD on a 1-D quadratic f(w) = h w^2 / 2 is a linear recurrence;
it converges iff the spectral radius of its matrix is below 1. With
x = lr * h, this prints the largest stable x for:
  sync       the gradient at w_t (staleness 0: ddp)
  stale      the gradient at w_(t-1) (staleness 1, no compensation)
  predict    at w_(t-1) - lr m v_(t-1): the momentum part of the missing step
  lookahead  predict, plus alpha of the missing step's gradient (alpha = 1:
             this node's gradient is the mean; the curvature-driven part of
             every node's gradient is shared, so alpha is near 1 for it)

usage: delay_stability.py   (needs numpy: Debian python3-numpy)
"""
import numpy as np


def radius(x, m, mode, alpha=1.0):
    # state [w_t, w_(t-1), u_t, u_(t-1), f_(t-1)], u = lr * v, f = forward point
    if mode == "sync":
        f = np.array([1, 0, 0, 0, 0.0])
    elif mode == "stale":
        f = np.array([0, 1, 0, 0, 0.0])
    elif mode == "predict":
        f = np.array([0, 1, 0, -m, 0.0])
    else:  # lookahead: also subtract alpha * lr * g_(t-1) = alpha * x * f_(t-1)
        f = np.array([0, 1, 0, -m, -alpha * x])
    u = m * np.array([0, 0, 1, 0, 0.0]) + x * f
    w = np.array([1, 0, 0, 0, 0.0]) - u
    a = np.array([w, [1, 0, 0, 0, 0], u, [0, 0, 1, 0, 0], f])
    return max(abs(np.linalg.eigvals(a)))


def largest_stable(m, mode, alpha=1.0):
    xs = np.linspace(0.001, 4.5, 4500)
    for x in xs:
        if radius(x, m, mode, alpha) >= 1:
            return x
    return xs[-1]


def main():
    print("momentum | sync | stale | predict | lookahead a=0.5 | lookahead a=0.75 | lookahead a=1")
    for m in (0.9, 0.8, 0.7, 0.5, 0.0):
        cells = [largest_stable(m, "sync"), largest_stable(m, "stale"), largest_stable(m, "predict"),
                 largest_stable(m, "lookahead", 0.5), largest_stable(m, "lookahead", 0.75),
                 largest_stable(m, "lookahead", 1.0)]
        print(f"{m} | " + " | ".join(f"{c:.3f}" for c in cells))


if __name__ == "__main__":
    main()
