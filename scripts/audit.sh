#!/usr/bin/env bash
# Issue 18: one-run privacy audits (Steinke, Nasr & Jagielski 2023) of the
# MNIST CNN on Fashion-MNIST at ε ∈ {1, 2, 4, 8} with 1,000 gradient canaries:
# the accounted ε beside the empirical lower bound from release/ alone.
# Writes audit.md, audit.csv and the score histograms into results/audit/.
# Usage: scripts/audit.sh [--quick] [--out DIR] [--epochs E]
# Runtime: full ≈ 1–2 min per ε on an idle 2-core machine (5 epochs each);
# --quick ≈ 5 s (logistic regression on the embedded subset).
set -euo pipefail
cd "$(dirname "$0")/.."
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) args+=(--quick); shift ;;
    --out) args+=(--out "$2"); shift 2 ;;
    --epochs) args+=(--epochs "$2"); shift 2 ;;
    *) echo "usage: $0 [--quick] [--out DIR] [--epochs E]" >&2; exit 2 ;;
  esac
done
go run ./scripts/internal/auditruns "${args[@]}"
