#!/usr/bin/env bash
# Issue 21, item 4: the full-length CIFAR-10 runs, each resumable (stop with Ctrl-C or a
# killed session, run the same command again: --resume continues from the checkpoint).
#   scat-cnn-60:     ScatterNet + CNN, Tramèr & Boneh's settings, 60 epochs, ε = 3
#   scat-cnn-60-ema: the same with an EMA of the iterates (d = 0.99; evaluation and model.bin use it)
#   resnet20-ws-ema: ResNet-20-GN with weight standardisation and EMA, ε = 8, 650 steps of
#                    expected batch 1024 (≈ 100 min on one core of the 2-core machine)
# Needs CIFAR-10 imported once from an image-folder copy (/tmp/cifarjpeg/{train,test}/<class>/*.jpg,
# 32×32; the committed runs used a JPEG re-encoding, see results/cifar10_import.md):
#   go run ./cmd/dptrain data import --from /tmp/cifarjpeg --to ../cifar10
# Usage: scripts/cifar10_recipes.sh [scat-cnn-60|resnet20-ws-ema]...   (default: both, one after the other;
# the committed results ran them side by side, one core each: GOMAXPROCS=1 scripts/cifar10_recipes.sh NAME &)
set -euo pipefail
cd "$(dirname "$0")/.."
D="${DPTRAIN:-go run ./cmd/dptrain}"   # or DPTRAIN=path/to/a/built/dptrain
DATA="${DATA:-../cifar10}"
OUT=results/cifar10/recipes
run() {
  local name=$1; shift
  mkdir -p "$OUT/$name"
  local start=$SECONDS
  $D train --dataset cifar10 --data "$DATA" --noise continuous "$@" --seeded --seed 1 --keep-checkpoint --out "$OUT/$name" --resume
  echo "$((SECONDS - start)) s this invocation" >> "$OUT/$name/wall_seconds.txt"
}
for name in "${@:-scat-cnn-60 resnet20-ws-ema}"; do
  for n in $name; do
    case "$n" in
      scat-cnn-60) run "$n" --features scatternet --feature-norm private --model scatcnn --batch 8192 --epochs 60 \
          --lr 4 --momentum 0.9 --clip-norm 0.1 --epsilon 3 --max-physical-batch 1024 --eval-every 20 --checkpoint-every 10 ;;
      scat-cnn-60-ema) run "$n" --features scatternet --feature-norm private --model scatcnn --batch 8192 --epochs 60 \
          --lr 4 --momentum 0.9 --clip-norm 0.1 --epsilon 3 --ema 0.99 --max-physical-batch 1024 --eval-every 20 --checkpoint-every 10 ;;
      resnet20-ws-ema) run "$n" --model resnet20 --weight-std --ema 0.995 --batch 1024 --steps 650 --lr 1 --momentum 0.9 \
          --clip-norm 1 --epsilon 8 --max-physical-batch 64 --eval-every 100 --checkpoint-every 25 ;;
      *) echo "unknown run $n (scat-cnn-60 | scat-cnn-60-ema | resnet20-ws-ema)" >&2; exit 2 ;;
    esac
  done
done
