#!/usr/bin/env bash
# Paper 004 (per-instance privacy reports) synthetic logistic-regression
# experiments (docs/per-instance.md#paper-experiments):
#   - sweep over n at d=50 (Fig 4) and over d at n=1000 (Figs 3, 5), 5 seeds,
#     worst/median exact ex-post pDP vs. the data-independent, data-dependent
#     and adaptive report bounds: CSV + PNG + markdown table;
#   - one histogram of exact pDP vs. the report bounds (Fig 2) via `dptrain report`.
# Usage: scripts/pdp_synthetic.sh [--quick] [--out DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
quick=""
out="results/pdp_synthetic"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick="--quick"; shift ;;
    --out) out="$2"; shift 2 ;;
    *) echo "usage: $0 [--quick] [--out DIR]" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
go run ./scripts/internal/pdpsynth $quick --out "$out"
n=1000; d=10
if [ -n "$quick" ]; then n=300; d=5; fi
go run ./cmd/dptrain report --synthetic --n "$n" --d "$d" --seed 1 --epsilon 0.5 --delta 1e-3 \
  --mode dep --out "$out/fig2_n${n}_d${d}" | tee "$out/fig2_n${n}_d${d}.txt"
