#!/usr/bin/env bash
# Paper 001 (DPSGD-F): Table 1 on a reduced grid — logistic regression on Fashion-MNIST
# (and MNIST when present), DP-SGD vs DPSGD-F at ε ∈ {1,2}, δ = 1e-5, and non-private SGD.
# Writes runs.csv, dpsgdf_table1.md and dpsgdf_table1.png/svg into results/dpsgdf_table1/.
# Usage: scripts/dpsgdf_table1.sh [--quick] [--out DIR] [--data DIR]
# Runtime: full ≈ 4 min on an idle 2-core machine (45 runs on Fashion-MNIST; ≈ 15 min loaded), --quick ≈ 10 s.
set -euo pipefail
cd "$(dirname "$0")/.."
go run ./scripts/internal/dpsgdftable "$@"
