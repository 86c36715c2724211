#!/usr/bin/env python3
"""Reference values for accountant's TestMixtureOfGaussiansMatchesDPAccounting,
from Google's dp_accounting 0.6.0 (the project's shared/anchors/python).

Each point is a mixture-of-Gaussians mechanism (dp_accounting's
MixtureOfGaussiansDpEvent: on one dataset N(0, sd^2), on its neighbour
sum_i probs[i] N(sens[i], sd^2)) composed `count` times, or a composition of
several such parts. For each this prints dp_accounting's PLDAccountant epsilon
(add/remove relation, pessimistic connect-the-dots, value_discretization_interval
1e-4) at delta.
Usage: PYTHONPATH=.../anchors/python /usr/bin/python3 dp_accounting_mog.py > dp_accounting_mog.json"""
import json
import dp_accounting
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant

# Each point: a list of parts (sd, sensitivities, probs, count), and delta.
POINTS = [
    ([(1.0, [0, 1], [0.99, 0.01], 1000)], 1e-5),  # the subsampled Gaussian, q = 0.01
    ([(2.0, [1], [1], 10)], 1e-5),  # the plain Gaussian
    ([(1.0, [0, 1, 2], [0.81, 0.18, 0.01], 100)], 1e-5),  # dp_accounting's docstring example
    ([(1.5, [0.5, 1.0, 1.5], [0.2, 0.5, 0.3], 50)], 1e-6),  # no zero sensitivity
    ([(6.0, [0.5, 1.0, 1.5], [0.2, 0.5, 0.3], 50)], 1e-6),  # the same, more noise
    ([(0.8, [0, 1, 1.5], [0.9, 0.08, 0.02], 200)], 1e-5),
    ([(3.0, [0, 2, 4], [0.7, 0.2, 0.1], 20)], 1e-5),
    ([(1.2, [0, 1], [0.95, 0.05], 1)], 1e-3),  # one step
    ([(1.0, [0, 0.3, 0.7, 1.0], [0.6, 0.2, 0.15, 0.05], 500)], 1e-6),
    ([(3.0, [0, 0.3, 0.7, 1.0], [0.6, 0.2, 0.15, 0.05], 500)], 1e-6),
    ([(2.5, [0, 1.8], [0.98, 0.02], 2000)], 1e-7),
    ([(0.7, [0, 1, 2, 3], [0.7, 0.2, 0.07, 0.03], 30)], 1e-4),
    ([(2.0, [0, 1, 2, 3], [0.9, 0.07, 0.02, 0.01], 30)], 1e-4),
    ([(1.0, [1, 2], [0.5, 0.5], 5)], 1e-5),
    ([(8.0, [1, 2], [0.5, 0.5], 5)], 1e-5),
    ([(1.0, [0, 1, 2], [0.81, 0.18, 0.01], 100), (2.0, [0, 1], [0.9, 0.1], 300)], 1e-5),  # two parts
]

for parts, delta in POINTS:
    events = [dp_accounting.SelfComposedDpEvent(
        dp_event.MixtureOfGaussiansDpEvent(sd, sens, probs), count) for sd, sens, probs, count in parts]
    pld = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    pld.compose(dp_accounting.ComposedDpEvent(events))
    print(json.dumps({"parts": [{"sd": sd, "sensitivities": sens, "probs": probs, "count": count}
                                for sd, sens, probs, count in parts],
                      "delta": delta, "pld": pld.get_epsilon(delta)}), flush=True)
