#!/usr/bin/env bash
# Paper 002 (hidden-state DP-SGD, Asoodeh & Diaz): Figures 1–3 from the
# accountant alone (no training), hidden-state bound beside RDP composition
# of the same DP-SGD, plus the TV7 crossover (docs/hidden-state.md#paper-figures,
# TV7 of docs/hidden-state.md#test-vectors).
# Writes CSV, PNG/SVG plots and hidden_state.md into results/hidden_state/.
# Usage: scripts/hidden_state.sh [--quick] [--out DIR]
# Runtime: full ≈ 5 s, --quick ≈ 1 s (after the first build).
set -euo pipefail
cd "$(dirname "$0")/.."
quick=""
out="results/hidden_state"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick="--quick"; shift ;;
    --out) out="$2"; shift 2 ;;
    *) echo "usage: $0 [--quick] [--out DIR]" >&2; exit 2 ;;
  esac
done
go run ./scripts/internal/hiddenstate $quick --out "$out"
