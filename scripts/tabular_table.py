#!/usr/bin/python3
"""results/tabular/'s table: logreg on breast_cancer and digits at eps = 1 and 4,
seeds 1-3: raw features, non-private standardisation (outside dptrain),
--scale minmax and --scale standardize (declared bounds, docs/tabular.md).
Data: scripts/export_tabular.py DIR first. Run from the repository root:
    scripts/tabular_table.py DIR [DPTRAIN] > results/tabular/runs.csv
The per-run CSV goes to stdout, the mean/std table to stderr."""
import json, os, statistics, subprocess, sys, tempfile

data = sys.argv[1]
binary = sys.argv[2] if len(sys.argv) > 2 else "dptrain"
bounds = {"breast_cancer": "@results/tabular/breast_cancer_bounds.txt",
          "digits": "0:16"}  # 8x8 blocks counting set pixels: 0..16 (the dataset's documentation)
methods = ["raw", "std", "minmax", "dpstd"]
acc = {}
print("dataset,method,epsilon,seed,test_acc")
with tempfile.TemporaryDirectory() as tmp:
    for ds in bounds:
        for eps in ["1", "4"]:
            for seed in ["1", "2", "3"]:
                for m in methods:
                    tag = "_std" if m == "std" else ""
                    out = os.path.join(tmp, "-".join([ds, m, eps, seed]))
                    cmd = ["nice", binary, "train", "--dataset", "csv",
                           "--train", "%s/%s%s_train.csv" % (data, ds, tag),
                           "--test", "%s/%s%s_test.csv" % (data, ds, tag),
                           "--model", "logreg", "--epsilon", eps, "--batch", "128",
                           "--epochs", "15", "--seed", seed, "--out", out, "--quiet"]
                    if m in ("minmax", "dpstd"):
                        cmd += ["--scale", "minmax" if m == "minmax" else "standardize",
                                "--feature-bounds", bounds[ds]]
                    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
                    with open(os.path.join(out, "release", "summary.json")) as f:
                        a = json.load(f)["test_acc"]
                    acc.setdefault((ds, eps, m), []).append(100 * a)
                    print("%s,%s,%s,%s,%.4f" % (ds, m, eps, seed, a), flush=True)
for (ds, eps, m), v in sorted(acc.items()):
    print("%s eps=%s %-6s %.1f ± %.1f" % (ds, eps, m, statistics.mean(v), statistics.pstdev(v)), file=sys.stderr)
