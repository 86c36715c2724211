#!/usr/bin/env bash
set -u
date
/usr/bin/time -f "wall %e s" "${DPTRAIN:-dptrain}" sweep --dataset cifar10 --data "${CIFAR10:-cifar10}" --train-limit 5000 --test-limit 1000 --model resnet20 --batch 128 --steps 15 --epsilon 8 --delta 1e-5 --clip-norm 1 --optimizer momentum --lr 1 --momentum 0.9 --ema 0.99 --max-physical-batch 64 --seed 1 --grid weight-std=false,true --grid augmult=1,4
date
