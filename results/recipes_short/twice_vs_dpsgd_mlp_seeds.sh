#!/usr/bin/env bash
set -u
D="${DPTRAIN:-dptrain}"   # go build -o dptrain ./cmd/dptrain
COMMON="--dataset fashion-mnist --train-limit 10000 --test-limit 2000 --model mlp --hidden 512 --steps 80 --epsilon 4 --delta 1e-5 --clip-norm 1 --optimizer momentum --momentum 0.9 --max-physical-batch 128 --lr 0.5"
/usr/bin/time -f "wall %e s" $D sweep $COMMON --sampler poisson --clip flat --batch 200 --grid seed=2,3
/usr/bin/time -f "wall %e s" $D sweep $COMMON --sampler twice --q2 0.5 --clip hybrid --d0 100 --batch 400 --grid seed=2
date
