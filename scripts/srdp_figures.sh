#!/usr/bin/env bash
# Paper 000 (smooth RDP for non-private preprocessing): Figure 2 (Theorem 2 vs
# group privacy for quantization, mean imputation and PCA) and every Table 2
# cell, from the accountant alone (docs/srdp.md#paper-figures, TV10 of
# docs/srdp.md#test-vectors). Figure 3 and
# Table 4 need DP training and are not reproduced here.
# Writes CSV, PNG/SVG plots and srdp_figures.md into results/srdp_figures/.
# Usage: scripts/srdp_figures.sh [--quick] [--out DIR]
# Runtime: full and --quick ≈ 1 s each (after the first build).
set -euo pipefail
cd "$(dirname "$0")/.."
quick=""
out="results/srdp_figures"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick="--quick"; shift ;;
    --out) out="$2"; shift 2 ;;
    *) echo "usage: $0 [--quick] [--out DIR]" >&2; exit 2 ;;
  esac
done
go run ./scripts/internal/srdpfig $quick --out "$out"
