#!/usr/bin/env bash
# Issue 21, item 4, second leg: twice sampling + hybrid clipping against DP-SGD on ResNet-20-GN,
# CIFAR-10, tested as scripts/twice_fair.sh tests the MLP: the same ε (8, RDP for both, δ = 1e-5)
# and steps; each method's learning rate is the best of the same grid (LRS) at GRID_STEPS,
# selected on the public test set; then the best at STEPS with seeds 1 and 2.
# DP-SGD: Poisson q = B/n, flat clip 1. Twice: q1 = 2q, q2 = 1/2, hybrid clip 1 with d0 = 100.
# Every run is a resumable `train` run: stop the script (Ctrl-C, a killed session) and run it
# again; finished runs are skipped and unfinished ones continue from their checkpoints.
# JOBS runs go side by side, one core each (GOMAXPROCS=1).
# Output: results/twice_fair/resnet20/RUN/ (release/ only is committed) and table.md.
# Usage: DATA=../cifar10 scripts/twice_fair_resnet.sh      (≈ 90 min on the 2-core machine)
# The CIFAR-10 copy is the imported JPEG tree (results/cifar10_import.md).
set -euo pipefail
cd "$(dirname "$0")/.."
D="${DPTRAIN:-go run ./cmd/dptrain}" # or DPTRAIN=path/to/a/built/dptrain
DATA="${DATA:-../cifar10}"
OUT=results/twice_fair/resnet20
B="${B:-512}" # DP-SGD's expected batch: q = 512/50000
STEPS="${STEPS:-200}"; GRID_STEPS="${GRID_STEPS:-60}"; LRS="${LRS:-0.25,0.5,1,2}"; JOBS="${JOBS:-2}"
COMMON="--noise continuous --dataset cifar10 --data $DATA --model resnet20 --epsilon 8 --delta 1e-5 --accountant rdp --clip-norm 1
  --optimizer momentum --momentum 0.9 --max-physical-batch 64 --eval-every 0 --checkpoint-every 10 --plots=false"
declare -A METHOD=(
  [dpsgd]="--sampler poisson --clip flat --batch $B"
  [twice_hybrid]="--sampler twice --q2 0.5 --clip hybrid --d0 100 --batch $((2 * B))"
)
# field NAME FILE prints a number field of a summary.json.
field() { sed -n 's/^  "'"$1"'": \([-0-9.e+]*\),*$/\1/p' "$2" | head -1; }
done_run() { [ -s "$OUT/$1/release/summary.json" ] && ! grep -q '"stopped"' "$OUT/$1/release/summary.json"; }
# run NAME METHOD STEPS LR SEED trains one run (or continues it, or skips it when finished).
run() {
  local name=$1 m=$2 steps=$3 lr=$4 seed=$5
  done_run "$name" && return 0
  mkdir -p "$OUT/$name"
  local start=$SECONDS
  local rc=0
  GOMAXPROCS="${GOMAXPROCS:-1}" $D train $COMMON ${METHOD[$m]} --steps "$steps" --lr "$lr" --seeded --seed "$seed" \
    --out "$OUT/$name" --resume >> "$OUT/$name/train.log" 2>&1 || rc=$?
  echo "$((SECONDS - start)) s this invocation" >> "$OUT/$name/wall_seconds.txt"
  [ $rc -eq 0 ] || { echo "run $name stopped (exit $rc): see $OUT/$name/train.log" >&2; return 1; }
  echo "done $name: $(grep '^result' "$OUT/$name/train.log" | tail -1)"
}
# pool runs each line "NAME METHOD STEPS LR SEED" of stdin, JOBS at a time.
pool() {
  local fail=0
  while read -r line; do
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || fail=1; done
    run $line &
  done
  while [ "$(jobs -rp | wc -l)" -gt 0 ]; do wait -n || fail=1; done
  return $fail
}
# best METHOD prints the grid learning rate with the highest test accuracy.
best() {
  for lr in ${LRS//,/ }; do echo "$(field test_acc "$OUT/grid_$1_lr$lr/release/summary.json") $lr"; done | sort -gr | head -1 | cut -d' ' -f2
}
for m in twice_hybrid dpsgd; do for lr in ${LRS//,/ }; do echo "grid_${m}_lr$lr $m $GRID_STEPS $lr 1"; done; done | pool
for seed in 1 2; do for m in twice_hybrid dpsgd; do echo "full_${m}_s$seed $m $STEPS $(best $m) $seed"; done; done | pool
{
  echo "| run | steps | lr | seed | σ | q | ε (best accountant) | noise variance | test accuracy | wall (s, one core) |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  for d in "$OUT"/grid_* "$OUT"/full_*; do
    s="$d/release/summary.json"
    printf '| %s | %s | %s | %s | %.4f | %s | %.4f | %.1f | %.2f%% | %s |\n' "$(basename "$d")" "$(field steps "$s")" \
      "$(sed -n 's/.*"lr": \([0-9.e+-]*\).*/\1/p' "$s" | head -1)" "$(sed -n 's/.*"seed": \([0-9]*\).*/\1/p' "$s" | head -1)" \
      "$(field sigma "$s")" "$(field q "$s")" "$(sed -n '/"best": {/,/}/s/.*"epsilon": \([0-9.e+-]*\),*/\1/p' "$s" | head -1)" \
      "$(field noise_variance "$s")" "$(awk '{print $1*100}' <<< "$(field test_acc "$s")")" "$(awk '{s+=$1} END {print s}' "$d/wall_seconds.txt")"
  done
} > "$OUT/table.md"
cat "$OUT/table.md"
