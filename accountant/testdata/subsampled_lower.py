#!/usr/bin/env python3
"""A lower bound on the true epsilon of T Poisson-subsampled Gaussian steps
(remove direction), for the PLD tests' points with large losses
(accountant/pld_reference_test.go).

Per step the privacy loss is L = log(1 - q + q*exp(y)) with y = (-2x-1)/(2 sigma^2):
y ~ N(-1/(2 sigma^2), 1/sigma^2) with probability 1-q, N(1/(2 sigma^2), 1/sigma^2)
with probability q. The model replaces L by log(1-q) + B*(y + log q - log(1-q))
(B the Bernoulli(q) component), which is never larger than L
(log(1-q+q e^y) >= log(1-q) and >= log q + y). Larger losses only raise
delta(eps) = E[(1 - e^{eps - S})_+], so the model's epsilon is below the
true one. Given N = sum B ~ Binomial(T, q), S is Gaussian and delta is a
closed form; epsilon by bisection at 40 digits (mpmath).
Usage: python3 subsampled_lower.py q sigma T delta"""
import sys
from mpmath import mp, mpf, binomial, ncdf, exp, log, sqrt

mp.dps = 40
q, sigma, T, d = mpf(sys.argv[1]), mpf(sys.argv[2]), int(sys.argv[3]), mpf(sys.argv[4])
m, v = 1 / (2 * sigma**2), 1 / sigma**2


def delta(eps):
    tot = mpf(0)
    for n in range(T + 1):
        pn = binomial(T, n) * q**n * (1 - q)**(T - n)
        mu = T * log(1 - q) + n * (m + log(q) - log(1 - q))
        if n == 0:
            tot += pn * max(0, 1 - exp(eps - mu))
            continue
        s2 = n * v
        s = sqrt(s2)
        tot += pn * (ncdf((mu - eps) / s) - exp(eps - mu + s2 / 2) * ncdf((mu - eps - s2) / s))
    return tot


lo, hi = mpf(0), mpf(1)
while delta(hi) > d:
    hi *= 2
for _ in range(80):
    mid = (lo + hi) / 2
    if delta(mid) > d:
        lo = mid
    else:
        hi = mid
print(mp.nstr(lo, 15))
