#!/bin/sh
# results/tabular/README.md's table: logreg on breast_cancer and digits at ε = 1
# and 4, seeds 1–3, raw features vs non-private standardisation (outside dptrain)
# vs --scale minmax vs --scale standardize (declared bounds, docs/tabular.md).
# Data: scripts/export_tabular.py DIR first. Usage: scripts/tabular_table.sh DIR [dptrain]
set -eu
dir=$1
bin=${2:-dptrain}
out=$(mktemp -d)
echo "dataset,method,epsilon,seed,test_acc"
for ds in breast_cancer digits; do
	case $ds in
	breast_cancer) bounds=@results/tabular/breast_cancer_bounds.txt ;;
	digits) bounds=0:16 ;; # 8x8 images, pixel counts 0..16 (the dataset's documentation)
	esac
	for eps in 1 4; do
		for seed in 1 2 3; do
			for m in raw std minmax dpstd; do
				tr=$dir/${ds}_train.csv te=$dir/${ds}_test.csv extra=""
				case $m in
				std) tr=$dir/${ds}_std_train.csv te=$dir/${ds}_std_test.csv ;;
				minmax) extra="--scale minmax --feature-bounds $bounds" ;;
				dpstd) extra="--scale standardize --feature-bounds $bounds ${SCALE_ARGS:-}" ;;
				esac
				o=$out/$ds-$m-$eps-$seed
				# shellcheck disable=SC2086
				nice "$bin" train --dataset csv --train "$tr" --test "$te" --model logreg \
					--epsilon "$eps" --batch 128 --epochs 15 --seed "$seed" --out "$o" $extra >/dev/null
				acc=$(sed -n 's/.*"test_acc": *\([0-9.]*\).*/\1/p' "$o/release/summary.json" | head -1)
				echo "$ds,$m,$eps,$seed,$acc"
			done
		done
	done
done
rm -rf "$out"
