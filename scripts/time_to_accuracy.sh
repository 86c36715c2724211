#!/usr/bin/env bash
# Issue 23, time to accuracy: configs/fmnist-cnn-eps3.json with Opacus' settings (σ = 2.15, batch 2048
# Poisson, lr 4, momentum 0.9, clip 0.1, 40 epochs, evaluation every epoch ≈ 29 steps), timing each
# released record as it is printed, and reporting the wall time at which the test accuracy first reaches
# TARGET (default 0.86). Needs the full Fashion-MNIST (apt-get install dataset-fashion-mnist).
# Output: results/training/time_to_accuracy/ (timed.jsonl: "seconds record" per line; the run's
# release/ files; result.txt). Usage: scripts/time_to_accuracy.sh   (≈ 5–10 min on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
D="${DPTRAIN:-go run ./cmd/dptrain}"   # or DPTRAIN=path/to/a/built/dptrain
$D --version > /dev/null # compile before the clock starts (go run caches the build)
OUT="${OUT:-results/training/time_to_accuracy}"   # or OUT=DIR
TARGET="${TARGET:-0.86}"
mkdir -p "$OUT"
start=$(date +%s.%N)
$D train --config configs/fmnist-cnn-eps3.json --sigma 2.15 --eval-every 29 --seed 1 --quiet --json \
  --out "$OUT/run" --overwrite |
  while IFS= read -r line; do printf '%s %s\n' "$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { printf "%.2f", a - b }')" "$line"; done > "$OUT/timed.jsonl"
awk -v t="$TARGET" '
  /\{"step":/ && match($0, /"test_acc":[0-9.]+/) { a = substr($0, RSTART + 11, RLENGTH - 11) + 0;
    match($0, /"step":[0-9]+/); s = substr($0, RSTART + 7, RLENGTH - 7);
    if (!hit && a >= t) { printf "first test accuracy >= %s: %.4f at step %s after %.1f s\n", t, a, s, $1; hit = 1 }
    last = a; lt = $1; ls = s }
  END { printf "final: %.4f at step %s after %.1f s\n", last, ls, lt; if (!hit) printf "target %s not reached\n", t }
' "$OUT/timed.jsonl" | tee "$OUT/result.txt"
