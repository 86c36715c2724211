#!/usr/bin/env bash
# Issue 21, item 4: twice sampling + hybrid clipping against DP-SGD, tested fairly.
# Same ε (RDP, δ = 1e-5) and steps; each method gets its own learning rate, the best of
# the same small grid (LRS) at reduced steps (GRID_STEPS), then runs at full length
# (STEPS) with two seeds. A wide MLP (784-512-10) on Fashion-MNIST where noise
# dominates: small expected batch (300 for DP-SGD; twice samples q1 = 2q and keeps
# each coordinate with q2 = 1/2), ε = 4.
# DP-SGD is calibrated by RDP like twice sampling's accountant (its PLD bound, also
# printed, is tighter). Selection uses the public test set (Fashion-MNIST's), so it
# says nothing about the training records.
# Output: results/twice_fair/grid_METHOD*.out (one file per run of the grid;
# a grid value already present in any of them is not run again) and full_METHOD.out.
# Usage: scripts/twice_fair.sh                          (Fashion-MNIST; ≈ 15 min on one core)
#        DATASET=cifar10 DATA=../cifar10 scripts/twice_fair.sh   (CIFAR-10, MLP 3072-512-10; output in cifar10/)
# The CIFAR-10 copy is the imported JPEG tree (results/cifar10_import.md).
set -euo pipefail
cd "$(dirname "$0")/.."
D="${DPTRAIN:-go run ./cmd/dptrain}"   # or DPTRAIN=path/to/a/built/dptrain
DATASET="${DATASET:-fashion-mnist}"
OUT=results/twice_fair
B=300 # DP-SGD's expected batch: q = 300/60000
DATAFLAG=""
if [ "$DATASET" != fashion-mnist ]; then
  OUT="$OUT/$DATASET"; B=250 # q = 250/50000 on CIFAR-10
  DATAFLAG="--data ${DATA:?set DATA to the imported $DATASET directory}"
fi
mkdir -p "$OUT"
STEPS="${STEPS:-400}"; GRID_STEPS="${GRID_STEPS:-100}"; LRS="${LRS:-0.25,0.5,1,2}"
COMMON="--noise continuous --dataset $DATASET $DATAFLAG --model mlp --hidden 512 --epsilon 4 --delta 1e-5 --clip-norm 1 --optimizer momentum --momentum 0.9 --max-physical-batch 128 --eval-every 0"
declare -A METHOD=(
  [dpsgd]="--sampler poisson --accountant rdp --clip flat --batch $B"
  [twice_hybrid]="--sampler twice --q2 0.5 --clip hybrid --d0 100 --batch $((2 * B))"
)
# rows prints "test_acc lr" for every grid row of METHOD at GRID_STEPS.
rows() { cat "$OUT"/grid_"$1"*.out 2>/dev/null | awk '$2=="'"$GRID_STEPS"'" && $1+0==$1 {print $7, $1}'; }
for m in dpsgd twice_hybrid; do
  todo=()
  for lr in ${LRS//,/ }; do
    rows "$m" | awk -v lr="$lr" '$2+0==lr+0 {found=1} END {exit !found}' || todo+=("$lr")
  done
  if [ ${#todo[@]} -gt 0 ]; then
    lrs=$(IFS=,; echo "${todo[*]}")
    f="$OUT/grid_${m}_lr${lrs//,/_}.out"
    echo "== grid $m: $COMMON ${METHOD[$m]} --steps $GRID_STEPS --seed 1 --grid lr=$lrs" | tee "$f.tmp"
    /usr/bin/time -f "wall %e s" $D sweep $COMMON ${METHOD[$m]} --steps "$GRID_STEPS" --seed 1 --grid "lr=$lrs" 2>&1 | tee -a "$f.tmp"
    mv "$f.tmp" "$f"
  fi
  lr=$(rows "$m" | sort -gr | head -1 | cut -d' ' -f2)
  f="$OUT/full_${m}_lr$lr.out"
  if [ ! -s "$f" ]; then
    echo "== full $m: $COMMON ${METHOD[$m]} --steps $STEPS --lr $lr --grid seed=1,2" | tee "$f.tmp"
    /usr/bin/time -f "wall %e s" $D sweep $COMMON ${METHOD[$m]} --steps "$STEPS" --lr "$lr" --grid seed=1,2 2>&1 | tee -a "$f.tmp"
    mv "$f.tmp" "$f"
  fi
done
