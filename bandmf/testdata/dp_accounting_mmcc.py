#!/usr/bin/env python3
"""Reference values for bandmf's TestMMCCMatchesDPAccounting, from Google's
dp_accounting 0.6.0 (the project's shared/anchors/python).

Reads dp_accounting_mmcc_rows.json, written by the Go test with
MMCC_WRITE_ROWS=1: for each point, the rows our MMCC charges (mixtures of
Gaussians, dp_accounting's MixtureOfGaussiansDpEvent, each with a count) and
the failure probability `tail` the conditional composition spends. It
composes the rows on dp_accounting's PLDAccountant (add/remove,
value_discretization_interval 1e-4) and records its epsilon at delta - tail,
which is the epsilon at the total delta by conditional composition.
Usage (from bandmf/testdata):
  PYTHONPATH=.../anchors/python /usr/bin/python3 dp_accounting_mmcc.py > dp_accounting_mmcc.json"""
import json
import dp_accounting
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant

points = json.load(open("dp_accounting_mmcc_rows.json"))
for pt in points:
    events = [dp_accounting.SelfComposedDpEvent(
        dp_event.MixtureOfGaussiansDpEvent(p["sd"], p["sensitivities"], p["probs"]), p["count"]) for p in pt["parts"]]
    pld = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    pld.compose(dp_accounting.ComposedDpEvent(events))
    pt["dp_accounting"] = pld.get_epsilon(pt["delta"] - pt["tail"])
print(json.dumps(points, indent=1))
