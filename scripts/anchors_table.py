#!/usr/bin/env python3
"""Median throughput and ratios of one scripts/anchors.sh sitting, as a Markdown table.
usage: scripts/anchors_table.py results/anchors/<sitting>"""
import json, os, re, statistics, sys

d = sys.argv[1]
MODELS = [("logreg", "Logreg", "logistic regression, B = 256"), ("mlp", "MLP", "MLP 784-256-10, B = 256"),
          ("cnn", "CNN", "MNIST CNN, B = 64"), ("resnet8", "ResNet8", "ResNet-8-GN, B = 64"),
          ("resnet20", "ResNet20", "ResNet-20-GN, B = 64")]
LINE = re.compile(r"^Benchmark(\S+?)(?:/gemm=asm)?(?:-(\d+))?\s+\d+\s+(.*)$")
BF16 = re.compile(r"^Benchmark(\S+?)/gemm=(asm|bf16)(?:-\d+)?\s+\d+\s+(.*)$")


def metric(rest, unit):
    m = re.search(r"([0-9.e+]+) " + re.escape(unit) + r"(\s|$)", rest)
    return float(m.group(1)) if m else None


def bench(path, unit="samples/s"):
    """name -> list of values of unit over the runs in the file (GOMAXPROCS sections kept apart)."""
    out, procs = {}, ""
    if not os.path.exists(path):
        return out
    for line in open(path):
        if line.startswith("GOMAXPROCS="):
            procs = line.strip()
            continue
        m = LINE.match(line)
        if m and (v := metric(m.group(3), unit)) is not None:
            out.setdefault((procs, m.group(1)), []).append(v)
    return out


def med(xs):
    return statistics.median(xs) if xs else None


def fmt(v):
    if v is None:
        return "–"
    return f"{v:,.0f}" if v >= 100 else f"{v:.3g}"


def ratio(a, b):
    return f"{a / b:.2f}×" if a and b else "–"


anchors = [json.loads(l) for l in open(os.path.join(d, "anchors.jsonl")) if l.strip()]
ours, before = bench(os.path.join(d, "ours.txt")), bench(os.path.join(d, "before.txt"))
has_before = bool(before)
print(open(os.path.join(d, "machine.txt")).read().split("\n\n")[0].replace("\n", "  \n"))
print()
print(f"Samples/s, median of {len(anchors)} rounds in alternation (wall clock; every column from this sitting).")
print()
hdr = ["workload", "PyTorch non-private", "Opacus DP", "dptrain DP", "dptrain non-private"]
if has_before:
    hdr += ["dptrain DP before"]
hdr += ["dptrain DP ÷ PyTorch non-private", "dptrain DP ÷ Opacus DP"]
if has_before:
    hdr += ["after ÷ before (DP)"]
print("| " + " | ".join(hdr) + " |")
print("|" + "---|" * len(hdr))
for key, bname, label in MODELS:
    pt = med([a[key][0] for a in anchors if key in a])
    op = med([a[key][1] for a in anchors if key in a])
    dp = med(ours.get(("", "DPStep" + bname), []))
    ndp = med(ours.get(("", "NonDPStep" + bname), []))
    row = [label, fmt(pt), fmt(op), fmt(dp), fmt(ndp)]
    b = med(before.get(("", "DPStep" + bname), []))
    if has_before:
        row += [fmt(b)]
    row += [ratio(dp, pt), ratio(dp, op)]
    if has_before:
        row += [ratio(dp, b)]
    print("| " + " | ".join(row) + " |")

for name, tag in (("scaling.txt", ""), ("scaling-before.txt", " (before)")):
    sc = bench(os.path.join(d, name))
    if not sc:
        continue
    g = bench(os.path.join(d, name), "GFLOP/s")
    print()
    print(f"Scaling{tag}: GOMAXPROCS 1 → 2, median of the runs (samples/s; the GEMM in GFLOP/s).")
    print()
    print("| workload | 1 core | 2 cores | speed-up | runs |")
    print("|---|---|---|---|---|")
    for bn, label, src in (("DPStepCNN", "MNIST CNN DP step", sc), ("DPStepResNet20", "ResNet-20-GN DP step", sc),
                           ("Roofline/gemm1024", "GEMM 1024³", g)):
        one, two = src.get(("GOMAXPROCS=1", bn), []), src.get(("GOMAXPROCS=2", bn), [])
        if not one and not two:
            continue
        print(f"| {label} | {fmt(med(one))} | {fmt(med(two))} | {ratio(med(two), med(one))} | {len(one)}, {len(two)} |")

pa, pb = bench(os.path.join(d, "pair-a.txt")), bench(os.path.join(d, "pair-b.txt"))
sc = bench(os.path.join(d, "scaling.txt"))
if pa and pb and sc:
    print()
    print("Two independent single-threaded processes at once (the machine's ceiling for a 2-core speed-up of these steps;")
    print("\"alone\" is the GOMAXPROCS=1 median of the scaling runs, taken minutes apart, so the machine's drift enters")
    print("the ratio):")
    print()
    print("| workload | one process alone, 1 core | each of two at once | together ÷ alone |")
    print("|---|---|---|---|")
    for bn, label in (("DPStepCNN", "MNIST CNN DP step"), ("DPStepResNet20", "ResNet-20-GN DP step")):
        alone = med(sc.get(("GOMAXPROCS=1", bn), []))
        each = med(pa.get(("", bn), []) + pb.get(("", bn), []))
        print(f"| {label} | {fmt(alone)} | {fmt(each)} | {ratio(2 * each, alone) if each else '–'} |")

noise = bench(os.path.join(d, "noise.txt"), "cpu-s/step")
if noise:
    print()
    print("Secure noise against float noise, whole trainer steps (BenchmarkConvStep, Poisson, flat clip, B = 64; "
          "CPU-seconds per step, median over the rounds):")
    print()
    print("| model | --noise continuous | --noise lattice | lattice ÷ continuous |")
    print("|---|---|---|---|")
    for m, label in (("logreg", "logistic regression (3072 inputs)"), ("cnn", "MNIST CNN"), ("resnet20", "ResNet-20-GN")):
        c = med(noise.get(("", f"ConvStep/{m}/dpsgd"), []))
        l = med(noise.get(("", f"ConvStep/{m}/lattice"), []))
        print(f"| {label} | {fmt(c)} | {fmt(l)} | {ratio(l, c)} |")

bf = {}
if os.path.exists(os.path.join(d, "bf16.txt")):
    for line in open(os.path.join(d, "bf16.txt")):
        m = BF16.match(line)
        if m and (v := metric(m.group(3), "samples/s")) is not None:
            bf.setdefault((m.group(1), m.group(2)), []).append(v)
if bf:
    print()
    print("bfloat16 GEMM against float32, DP steps (BenchmarkDPStep*, samples/s, median over the rounds):")
    print()
    print("| model | float32 (gemm=asm) | bf16 (gemm=bf16) | bf16 ÷ float32 |")
    print("|---|---|---|---|")
    for bn, label in (("DPStepCNN", "MNIST CNN"), ("DPStepResNet20", "ResNet-20-GN")):
        a, b16 = med(bf.get((bn, "asm"), [])), med(bf.get((bn, "bf16"), []))
        print(f"| {label} | {fmt(a)} | {fmt(b16)} | {ratio(b16, a)} |")

cs = bench(os.path.join(d, "core-scaling.txt"), "GFLOP/s")
if cs:
    one, two = med(cs.get(("", "CoreScaling/goroutines=1"), [])), med(cs.get(("", "CoreScaling/goroutines=2"), []))
    print()
    print(f"Cores together (BenchmarkCoreScaling, independent 128³ products, GFLOP/s, median of 5): "
          f"1 goroutine {fmt(one)}, 2 goroutines {fmt(two)}, {ratio(two, one)}.")

tta_o, tta_p = os.path.join(d, "tta-ours.txt"), os.path.join(d, "tta-opacus.txt")
if os.path.exists(tta_o) and os.path.exists(tta_p):
    ours_t = None
    for line in open(tta_o):
        m = re.search(r"first test accuracy >= [0-9.]+: ([0-9.]+) at step (\d+) after ([0-9.]+) s", line)
        if m:
            ours_t = (float(m.group(1)), float(m.group(3)))
    op_t, last = None, None
    for line in open(tta_p):
        m = re.match(r"epoch (\d+) test_acc ([0-9.]+) eps ([0-9.]+) wall (\d+)s", line)
        if m:
            last = (int(m.group(1)), float(m.group(2)), float(m.group(4)))
            if op_t is None and float(m.group(2)) >= 0.86:
                op_t = last
    print()
    print("Time to 86% test accuracy on Fashion-MNIST, Opacus' recipe (batch 2048, σ 2.15, clip 0.1, lr 4, momentum 0.9):")
    print()
    print(f"- dptrain: {'%.4f after %.0f s' % ours_t if ours_t else 'not reached'}")
    print(f"- Opacus: {'%.4f at epoch %d after %.0f s' % (op_t[1], op_t[0], op_t[2]) if op_t else 'not reached'}"
          + (f" (last: {last[1]:.4f} at epoch {last[0]} after {last[2]:.0f} s)" if last else ""))
    if ours_t and op_t:
        print(f"- ratio dptrain ÷ Opacus: {ours_t[1] / op_t[2]:.2f}×")
