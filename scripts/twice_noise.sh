#!/usr/bin/env bash
# Paper 003 (twice sampling, hybrid clipping): Table 1's noise-variance ratios,
# every cell, from the accountant alone (no training), beside the paper's
# brackets with the swapped ε=4 cells explained; plus the Section 6 hybrid
# example (Theorem 4.6, "5.5×") and its twice-sampled version (docs/twice-sampling.md#paper-tables).
# Writes CSV, PNG/SVG plot and twice_noise.md into results/twice_noise/.
# Usage: scripts/twice_noise.sh [--quick] [--out DIR]
# Runtime: full ≈ 10 s (adds the Balle et al. conversion column and the
# numerical problem (9) optimum), --quick ≈ 1 s (after the first build).
set -euo pipefail
cd "$(dirname "$0")/.."
quick=""
out="results/twice_noise"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick="--quick"; shift ;;
    --out) out="$2"; shift 2 ;;
    *) echo "usage: $0 [--quick] [--out DIR]" >&2; exit 2 ;;
  esac
done
go run ./scripts/internal/twicenoise $quick --out "$out"
