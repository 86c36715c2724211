#!/usr/bin/env bash
# Paper 001 (DPSGD-F): Table 2's feature-concentration statistics — diameter,
# max and mean distance to the mean of unit-normalised MNIST / Fashion-MNIST
# images (docs/dpsgdf.md#feature-concentration). No training. The diameter is exact (a disjoint-support
# certificate for √2, else a triangle-inequality-pruned blocked Gram).
# Data: --data DIR, $DPTRAIN_DATA or /usr/share/datasets (Debian's
# dataset-fashion-mnist); MNIST is reported as missing when absent.
# --quick uses 2,000 images of the Fashion-MNIST subset embedded in the binary
# and cross-checks against the O(n²d) reference.
# Writes CSV, PNG/SVG plot and diameters.md into results/diameters/.
# Usage: scripts/diameters.sh [--quick] [--gram] [--data DIR] [--out DIR]
# Runtime: see scripts/README.md (--quick ≈ 5 s).
set -euo pipefail
cd "$(dirname "$0")/.."
args=()
out="results/diameters"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) args+=(--quick); shift ;;
    --gram) args+=(--gram); shift ;;
    --data) args+=(--data "$2"); shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "usage: $0 [--quick] [--gram] [--data DIR] [--out DIR]" >&2; exit 2 ;;
  esac
done
go run ./scripts/internal/diameters "${args[@]}" --out "$out"
