#!/usr/bin/env bash
# Paper 003 (twice sampling, hybrid clipping): Tables 1–2's accuracy comparison at reduced scale —
# DP-SGD vs twice Poisson sampling + hybrid L2/L∞ clipping vs hybrid subspace clipping, at equal ε and steps.
# Writes twice_accuracy.csv/.md/.png/.svg into results/twice_accuracy/.
# Usage: scripts/twice_accuracy.sh [--quick] [--out DIR] [--dataset D --data DIR --model M --steps T --eps 4,8]
# Runtime: full ≈ 23 min on an idle 2-core machine (MNIST CNN, Fashion-MNIST, 10 runs of 200 steps), --quick ≈ 20 s.
set -euo pipefail
cd "$(dirname "$0")/.."
go run ./scripts/internal/twiceacc "$@"
