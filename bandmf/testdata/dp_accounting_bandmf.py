#!/usr/bin/env python3
"""Reference values for bandmf's TestAmplifiedEventMatchesDPAccounting, from
Google's dp_accounting 0.6.0 (the project's ../shared/anchors/python).

Amplified BandMF over T steps with b bands, cyclic Poisson sampling with
`parts` parts at rate q within the step's part, and noise multiplier sigma
(relative to C's largest column norm) is, by the banded theorem,
ceil(T/parts) compositions of the Poisson-subsampled Gaussian. For each point
this prints dp_accounting's PLDAccountant epsilon (pessimistic estimate,
value_discretization_interval 1e-4) and its RdpAccountant epsilon for
SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(sigma)), k).
Usage: PYTHONPATH=.../anchors/python /usr/bin/python3 dp_accounting_bandmf.py > dp_accounting_bandmf.json"""
import json, math
import dp_accounting
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.rdp import rdp_privacy_accountant

# (steps, bands, parts, q, sigma, delta): Fashion-MNIST-like runs (n = 60000,
# expected batch 256 => q = 256*parts/60000) and a few small ones.
POINTS = [
    (2340, 1, 1, 256 / 60000, 1.0, 1e-5),
    (2340, 2, 2, 512 / 60000, 1.0, 1e-5),
    (2340, 4, 4, 1024 / 60000, 1.0, 1e-5),
    (2340, 8, 8, 2048 / 60000, 1.2, 1e-5),
    (2340, 16, 16, 4096 / 60000, 1.5, 1e-5),
    (2340, 64, 64, 16384 / 60000, 2.5, 1e-5),
    (1000, 10, 12, 0.05, 0.8, 1e-6),
    (500, 5, 5, 0.2, 1.5, 1e-5),
    (100, 3, 3, 1.0, 3.0, 1e-5),
    (7, 4, 4, 0.5, 1.0, 1e-3),
]

for steps, bands, parts, q, sigma, delta in POINTS:
    k = math.ceil(steps / parts)
    ev = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), k)
    pld = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    pld.compose(ev)
    rdp = rdp_privacy_accountant.RdpAccountant()
    rdp.compose(ev)
    print(json.dumps({"steps": steps, "bands": bands, "parts": parts, "q": q, "sigma": sigma, "delta": delta,
                      "count": k, "pld": pld.get_epsilon(delta), "rdp": rdp.get_epsilon(delta)}), flush=True)
