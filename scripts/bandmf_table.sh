#!/usr/bin/env bash
# Issue 43: DP-SGD against BandMF (noise bandmf) on the Fashion-MNIST CNN, same recipe and ε:
# configs/fmnist-cnn-eps3.json (batch 2048 Poisson, momentum 0.9, lr 4, clip 0.1) at EPOCHS epochs,
# σ calibrated to each ε for each mechanism (BandMF: cyclic Poisson over BANDS parts, the amplified
# banded account), for every seed in SEEDS. Needs the full Fashion-MNIST
# (apt-get install dataset-fashion-mnist).
# Output: OUT/runs/<noise>-eps<e>-seed<s>/ (each run's release/ and private/), OUT/rows.tsv and
# OUT/table.md (mean ± sd of test accuracy over the seeds, σ, ε, seconds per step).
# Usage: scripts/bandmf_table.sh   (EPOCHS=10 BANDS=4 SEEDS="1 2 3" EPS="1 3 8"; ≈ 2–4 min a run on 2 cores)
# TASK=cifar10-scatter: CIFAR-10 instead, ScatterNet features (group normalisation, no privacy cost) and a
# linear model, Tramèr & Boneh's recipe (batch 8192, momentum 0.9, lr 4, clip 0.1); CIFAR=DIR is the image-folder
# tree (train/, test/; e.g. ../shared/data/cifar10-jpeg/cifar10-jpeg.tar.gz unpacked), OUT defaults to
# results/bandmf-cifar10 and EPS to 3. The ScatterNet features are computed once and cached (--feature-cache).
set -euo pipefail
cd "$(dirname "$0")/.."
D="${DPTRAIN:-go run ./cmd/dptrain}"   # or DPTRAIN=path/to/a/built/dptrain
$D --version > /dev/null               # compile before the clock starts
TASK="${TASK:-fmnist-cnn}"
case $TASK in
  fmnist-cnn)
    OUT="${OUT:-results/bandmf}"; EPS="${EPS:-1 3 8}"
    recipe=(--config configs/fmnist-cnn-eps3.json) ;;
  cifar10-scatter)
    [ -d "${CIFAR:-}/train" ] || { echo "bandmf_table: set CIFAR to the CIFAR-10 image-folder tree (train/, test/)" >&2; exit 2; }
    OUT="${OUT:-results/bandmf-cifar10}"; EPS="${EPS:-3}"
    recipe=(--dataset folder --data "$CIFAR" --features scatternet --feature-cache "${FEATURE_CACHE:-$OUT/features}"
      --model logreg --batch 8192 --optimizer momentum --lr 4 --momentum 0.9 --clip-norm 0.1) ;;
  *) echo "bandmf_table: TASK is fmnist-cnn or cifar10-scatter, got $TASK" >&2; exit 2 ;;
esac
EPOCHS="${EPOCHS:-10}"; BANDS="${BANDS:-4}"; SEEDS="${SEEDS:-1 2 3}"
mkdir -p "$OUT/runs"
[ -f "$OUT/rows.tsv" ] || printf 'noise\tbands\tepsilon_target\tseed\tsigma\tepsilon\tsteps\ttest_acc\tseconds_per_step\n' > "$OUT/rows.tsv"
for e in $EPS; do
  for s in $SEEDS; do
    for noise in continuous bandmf; do
      dir="$OUT/runs/$noise-eps$e-seed$s"
      if grep -q "^$noise	[0-9]*	$e	$s	" "$OUT/rows.tsv"; then continue; fi  # done in an earlier sitting
      extra=(); b=1
      if [ "$noise" = bandmf ]; then extra=(--bands "$BANDS" --sampler cyclic); b="$BANDS"; fi
      start=$(date +%s.%N)
      $D train "${recipe[@]}" --epsilon "$e" --epochs "$EPOCHS" --seed "$s" \
        --noise "$noise" "${extra[@]}" --eval-every 0 --quiet --out "$dir" --overwrite > "$dir.log" 2>&1
      end=$(date +%s.%N)
      python3 - "$dir/release/summary.json" "$noise" "$b" "$e" "$s" "$start" "$end" >> "$OUT/rows.tsv" <<'PY'
import json, sys
p, noise, b, e, s, t0, t1 = sys.argv[1:]
m = json.load(open(p))
steps = m["steps"]
print(f'{noise}\t{b}\t{e}\t{s}\t{m["sigma"]:.4f}\t{m["best"]["epsilon"]:.4f}\t{steps}\t{m["test_acc"]:.4f}\t{(float(t1) - float(t0)) / steps:.3f}')
PY
    done
  done
done
python3 - "$OUT/rows.tsv" > "$OUT/table.md" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
print("| ε (target) | noise | bands | σ | ε (reported) | test accuracy (mean ± sd) | seeds | s/step (mean) |")
print("|---|---|---|---|---|---|---|---|")
keys = sorted({(float(r["epsilon_target"]), r["noise"], r["bands"]) for r in rows})
for e, noise, b in keys:
    g = [r for r in rows if float(r["epsilon_target"]) == e and r["noise"] == noise and r["bands"] == b]
    acc = [float(r["test_acc"]) for r in g]
    sd = statistics.stdev(acc) if len(acc) > 1 else 0.0
    sps = statistics.mean(float(r["seconds_per_step"]) for r in g)
    print(f'| {e:g} | {noise} | {b} | {g[0]["sigma"]} | {g[0]["epsilon"]} | {100*statistics.mean(acc):.2f}% ± {100*sd:.2f} | {len(g)} | {sps:.3f} |')
PY
cat "$OUT/table.md"
