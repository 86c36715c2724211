#!/usr/bin/env bash
# Issue 31: our training-step throughput beside PyTorch (non-private) and Opacus (DP-SGD), in one sitting.
#
# Runs, ROUNDS times in alternation (so that a change of the machine's load touches every column alike):
#   - the anchors' opacus_bench.py THREADS (PyTorch 1.13 non-private and Opacus 1.4 DP steps; see
#     $ANCHORS/README.md for its set-up: Debian's python3-torch, PYTHONPATH=$ANCHORS/python);
#   - our BenchmarkDPStep* and BenchmarkNonDPStep* (./models, gemm=asm, GOMAXPROCS=THREADS): whole steps,
#     forward to optimizer update, as the anchors time theirs;
#   - with BEFORE=path/to/models.test (a test binary built from an earlier commit: `go test -c -o F ./models`),
#     the same benchmarks of that build, for a before/after column from the same sitting.
# BEFORE_LABEL (say, "commit 5422280") names that build in machine.txt; the path itself is not recorded.
# In every round it also times our own variants beside the default, in the same sitting (issue 42):
#   - BenchmarkConvStep (./trainer) cnn and resnet20, dpsgd (continuous noise) against lattice (secure noise):
#     whole trainer steps, CPU-seconds per step (noise.txt);
#   - where the GEMM has a bf16 backend (avx512_bf16), BenchmarkDPStep(CNN|ResNet20) at gemm=bf16 (bf16.txt).
# With --scaling it also times the CNN and ResNet-20 DP steps and the 1024³ GEMM at GOMAXPROCS 1 and 2, five
# times each, and BenchmarkCoreScaling (independent cache-resident products on 1 and 2 goroutines: what the two
# cores deliver together when memory plays no part).
# With --tta it then runs Fashion-MNIST to 86% with Opacus' recipe, ours (scripts/time_to_accuracy.sh) and
# Opacus' (opacus_fmnist.py), one after the other (≈ 15 min on 2 cores; needs dataset-fashion-mnist).
#
# Writes results/anchors/<date>-<time>/: machine.txt (lscpu, topology, load averages), the raw outputs,
# and table.md, the medians and ratios (scripts/anchors_table.py).
#
# usage: scripts/anchors.sh [--rounds N] [--threads N] [--scaling] [--tta]
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=3 THREADS=2 SCALING=0 TTA=0
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) ROUNDS=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --scaling) SCALING=1; shift ;;
    --tta) TTA=1; shift ;;
    *) echo "usage: scripts/anchors.sh [--rounds N] [--threads N] [--scaling] [--tta]" >&2; exit 2 ;;
  esac
done
ANCHORS="${ANCHORS:-../shared/anchors}"
PY=/usr/bin/python3
FMNIST="${FMNIST:-/usr/share/datasets/fashion-mnist}"
[ -f "$ANCHORS/opacus_bench.py" ] || { echo "anchors: no $ANCHORS/opacus_bench.py (set ANCHORS)" >&2; exit 1; }
PYTHONPATH="$ANCHORS/python" $PY -c 'import torch, opacus' 2>/dev/null ||
  { echo "anchors: $PY cannot import torch and opacus; see $ANCHORS/README.md (apt-get install python3-torch ...)" >&2; exit 1; }
[ -z "${BEFORE:-}" ] || [ -x "$BEFORE" ] || { echo "anchors: BEFORE=$BEFORE is not an executable test binary" >&2; exit 1; }
OUT="results/anchors/$(date -u +%Y-%m-%d-%H%M)"
mkdir -p "$OUT"
go test -c -o "$OUT/models.test" ./models
go test -c -o "$OUT/trainer.test" ./trainer
[ "$SCALING" = 1 ] && go test -c -o "$OUT/gemm.test" ./internal/gemm
[ -z "${BEFORE:-}" ] || cp "$BEFORE" "$OUT/before.test"   # run from models/, like ours
BENCH='^Benchmark(NonDP|DP)Step(Logreg|MLP|CNN|ResNet8|ResNet20)$/^gemm=asm$'
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "before: ${BEFORE:+${BEFORE_LABEL:-$(basename "$BEFORE")}}"
  echo "threads: $THREADS, rounds: $ROUNDS"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo; lscpu
  echo; echo "cpu topology (/sys/devices/system/cpu):"
  for c in /sys/devices/system/cpu/cpu[0-9]*; do
    t=$c/topology
    echo "$(basename "$c"): package $(cat $t/physical_package_id 2>/dev/null) core $(cat $t/core_id 2>/dev/null) siblings $(cat $t/thread_siblings_list 2>/dev/null) L3 shared with $(cat $c/cache/index3/shared_cpu_list 2>/dev/null)"
  done
} > "$OUT/machine.txt"
ours() { # ours BINARY OUTFILE [GOMAXPROCS] [BENCH]
  (cd models && GOMAXPROCS=${3:-$THREADS} "$OLDPWD/$1" -test.run '^$' -test.bench "${4:-$BENCH}" -test.benchtime 3s) >> "$2"
}
for r in $(seq "$ROUNDS"); do
  echo "round $r of $ROUNDS: anchors" >&2
  PYTHONPATH="$ANCHORS/python" $PY "$ANCHORS/opacus_bench.py" "$THREADS" | tail -1 >> "$OUT/anchors.jsonl"
  echo "round $r of $ROUNDS: dptrain" >&2
  ours "$OUT/models.test" "$OUT/ours.txt"
  if [ -n "${BEFORE:-}" ]; then
    echo "round $r of $ROUNDS: dptrain before" >&2
    ours "$OUT/before.test" "$OUT/before.txt"
  fi
  echo "round $r of $ROUNDS: dptrain noise and precision variants" >&2
  (cd trainer && GOMAXPROCS=$THREADS "$OLDPWD/$OUT/trainer.test" -test.run '^$' \
    -test.bench '^BenchmarkConvStep$/^(logreg|cnn|resnet20)$/^(dpsgd|lattice)$' -test.benchtime 3s) >> "$OUT/noise.txt"
  if grep -q avx512_bf16 /proc/cpuinfo; then
    ours "$OUT/models.test" "$OUT/bf16.txt" "$THREADS" '^BenchmarkDPStep(CNN|ResNet20)$/^gemm=(asm|bf16)$'
  fi
  echo "load average after round $r: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/machine.txt"
done
if [ "$SCALING" = 1 ]; then
  SB='^BenchmarkDPStep(CNN|ResNet20)$/^gemm=asm$'
  GB='^BenchmarkRoofline$/^gemm1024$'
  for r in 1 2 3 4 5; do
    for p in 1 2; do
      echo "scaling run $r, GOMAXPROCS=$p" >&2
      echo "GOMAXPROCS=$p" >> "$OUT/scaling.txt"
      ours "$OUT/models.test" "$OUT/scaling.txt" "$p" "$SB"
      ours "$OUT/models.test" "$OUT/scaling.txt" "$p" "$GB"
      if [ -n "${BEFORE:-}" ]; then
        echo "GOMAXPROCS=$p" >> "$OUT/scaling-before.txt"
        ours "$OUT/before.test" "$OUT/scaling-before.txt" "$p" "$SB"
      fi
    done
  done
  # The machine's own ceiling for these steps: two independent single-threaded processes at once. If each
  # runs slower than one alone, the two cores cannot do twice the work whatever the engine does.
  for r in 1 2 3; do
    echo "scaling: two single-threaded processes at once, run $r" >&2
    ours "$OUT/models.test" "$OUT/pair-a.txt" 1 "$SB" & pa=$!
    ours "$OUT/models.test" "$OUT/pair-b.txt" 1 "$SB" & pb=$!
    wait $pa $pb
  done
  # What the two cores deliver together on cache-resident products, beside the steps' scaling.
  (cd internal/gemm && "$OLDPWD/$OUT/gemm.test" -test.run '^$' -test.bench '^BenchmarkCoreScaling$' -test.count 5) >> "$OUT/core-scaling.txt"
fi
if [ "$TTA" = 1 ]; then
  [ -f "$FMNIST/train-images-idx3-ubyte.gz" ] || { echo "anchors: no Fashion-MNIST in $FMNIST (apt-get install -y dataset-fashion-mnist)" >&2; exit 1; }
  echo "time to accuracy: dptrain" >&2
  go build -o "$OUT/dptrain" ./cmd/dptrain
  DPTRAIN="$OUT/dptrain" OUT="$OUT/tta-ours" scripts/time_to_accuracy.sh > "$OUT/tta-ours.txt"
  echo "time to accuracy: Opacus (≈ 10 min)" >&2
  PYTHONPATH="$ANCHORS/python" $PY "$ANCHORS/opacus_fmnist.py" "$FMNIST" "${TTA_EPOCHS:-40}" > "$OUT/tta-opacus.txt"
fi
rm -f "$OUT/models.test" "$OUT/trainer.test" "$OUT/gemm.test" "$OUT/before.test" "$OUT/dptrain"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/machine.txt"
$PY scripts/anchors_table.py "$OUT" | tee "$OUT/table.md"
