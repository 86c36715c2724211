#!/usr/bin/env bash
# Paper 000 (smooth RDP for non-private preprocessing): Figure 3 and Table 4
# (docs/srdp.md#paper-figures). Private logistic regression on a
# make_classification-like approximately-rank-50 dataset (n = 1000,
# d = 6000): (a) non-private PCA to k = 50 + DP-SGD calibrated by the SRDP
# account (Theorem 2), (b) DP-SGD on the raw data (RDP), (c) DP-PCA (Gaussian
# noisy covariance, ε/2) + DP-SGD (ε/2), at ε ∈ {0.5, 1, 2, 5}, δ = 1e-5,
# 5 seeds; excess empirical loss mean ± sd. Table 4: raw rows clipped to
# {0.1, 0.7, 0.99}·R before the projection, accuracy at ε ∈ {1, 2, 5}.
# Writes fig3.csv, table4.csv, runs.csv, fig3.png/svg and srdp_fig3.md into
# results/srdp_fig3/.
# Usage: scripts/srdp_fig3.sh [--quick] [--out DIR] [--seeds N] [--clip C]
# Runtime (2 cores shared with two training jobs, after the first build):
# --quick ≈ 3 s; full ≈ 70 s (Gram SVD 4 s, then ≈ 16 s per ε for 5 seeds:
# DP-PCA subspace iteration, DP-SGD runs at 5 learning rates, calibrations).
set -euo pipefail
cd "$(dirname "$0")/.."
args=()
out="results/srdp_fig3"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) args+=(--quick); shift ;;
    --out) out="$2"; shift 2 ;;
    --seeds) args+=(--seeds "$2"); shift 2 ;;
    --clip) args+=(--clip "$2"); shift 2 ;;
    *) echo "usage: $0 [--quick] [--out DIR] [--seeds N] [--clip C]" >&2; exit 2 ;;
  esac
done
go run ./scripts/internal/srdpfig3 "${args[@]}" --out "$out"
