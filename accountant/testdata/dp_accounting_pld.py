#!/usr/bin/env python3
"""Reference values for the PLD tests (accountant/pld_reference_test.go), from
Google's dp_accounting 0.6.0 (../shared/anchors/python, see its README).

For each point (q, sigma, T, delta) of a Poisson-subsampled Gaussian (add/remove
relation) it prints dp_accounting's epsilon with its default settings,
value_discretization_interval 1e-4:
  pessimistic: PLDAccountant (pessimistic estimate, connect-the-dots), the value
               ours is compared with;
  optimistic:  from_gaussian_mechanism(..., pessimistic_estimate=False)
               self-composed T times, a lower bound on the true epsilon.
Usage: PYTHONPATH=.../anchors/python python3 dp_accounting_pld.py q sigma T delta [...]"""
import json, sys
import dp_accounting
from dp_accounting.pld import pld_privacy_accountant, privacy_loss_distribution as pldm

def point(q, sigma, steps, delta):
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps))
    pess = acc.get_epsilon(delta)
    opt = pldm.from_gaussian_mechanism(sigma, pessimistic_estimate=False, value_discretization_interval=1e-4,
                                       sampling_prob=q).self_compose(steps).get_epsilon_for_delta(delta)
    return {"q": q, "sigma": sigma, "steps": steps, "delta": delta, "pessimistic": pess, "optimistic": opt}

args = sys.argv[1:]
for i in range(0, len(args), 4):
    q, s, t, d = float(args[i]), float(args[i + 1]), int(float(args[i + 2])), float(args[i + 3])
    print(json.dumps(point(q, s, t, d)), flush=True)
