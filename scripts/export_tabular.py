#!/usr/bin/python3
"""Write scikit-learn's breast_cancer and digits to CSV (label last, header row)
with a fixed 80/20 split (seed 0): DIR/{breast_cancer,digits}_{train,test}.csv, and
DIR/*_std_{train,test}.csv standardised by the TRAINING mean and std (the non-private
baseline of results/tabular/: neither private nor accounted).
Needs python3-sklearn (apt-get). Usage: scripts/export_tabular.py [DIR]"""
import sys
import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.model_selection import train_test_split

out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/tabular"
for name, load in [("breast_cancer", load_breast_cancer), ("digits", load_digits)]:
    d = load()
    cols = [str(c).replace(" ", "_") for c in d.feature_names] + ["target"]
    xtr, xte, ytr, yte = train_test_split(d.data, d.target, test_size=0.2, random_state=0, stratify=d.target)
    mu, sd = xtr.mean(axis=0), xtr.std(axis=0)
    sd[sd == 0] = 1
    for tag, f in [("", lambda x: x), ("_std", lambda x: (x - mu) / sd)]:
        for split, x, y in [("train", xtr, ytr), ("test", xte, yte)]:
            rows = np.column_stack([f(x), y])
            fmt = ["%.10g"] * x.shape[1] + ["%d"]
            np.savetxt("%s/%s%s_%s.csv" % (out, name, tag, split), rows, delimiter=",", fmt=fmt, header=",".join(cols), comments="")
