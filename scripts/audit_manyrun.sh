#!/usr/bin/env bash
# Issue 18, item 3: the many-run audit (Jagielski et al. 2020; Nasr et al. 2021)
# of DP-SGD logistic regression: R runs with one gradient canary each, a
# threshold fixed on separate runs, Clopper–Pearson bounds on FPR and FNR,
# ε_lower = ln((1 − FNR_ub − δ)/FPR_ub). Writes results/audit/manyrun_eps*.md.
# Usage: scripts/audit_manyrun.sh [--quick] [--out DIR] [--runs R] [--eps E]
# Runtime: full (500 runs) ≈ 2–4 min on a 2-core machine; --quick (50 runs) ≈ 20 s.
set -euo pipefail
cd "$(dirname "$0")/.."
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) args+=(--quick); shift ;;
    --out) args+=(--out "$2"); shift 2 ;;
    --runs) args+=(--runs "$2"); shift 2 ;;
    --eps) args+=(--eps "$2"); shift 2 ;;
    *) echo "usage: $0 [--quick] [--out DIR] [--runs R] [--eps E]" >&2; exit 2 ;;
  esac
done
go run ./scripts/internal/manyrun "${args[@]}"
