#!/usr/bin/env bash
# compare_behaviour.sh BEFORE [AFTER [RUNS]]: runs every line of RUNS
# (default scripts/behaviour_runs.txt) with two dptrain builds and compares
# the released model's parameters bit for bit and every reported ε exactly.
# BEFORE and AFTER are each a dptrain binary or a git revision of this
# repository (built from `git archive` in a temporary directory); AFTER
# defaults to the working tree. Prints one line per run and
# "N passed, M failed"; exits 1 if any differs. Both builds get the same
# flags, a fixed --seed (reproducible streams) and --noise continuous, so a
# refactoring must reproduce every run exactly.
set -euo pipefail
if [ $# -lt 1 ]; then
	echo "usage: $0 BEFORE_BINARY_OR_REVISION [AFTER_BINARY_OR_REVISION [RUNS_FILE]]" >&2
	exit 2
fi
repo=$(cd "$(dirname "$0")/.." && pwd)
runs=${3:-$repo/scripts/behaviour_runs.txt}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# build NAME SPEC prints the path of a dptrain binary for SPEC: SPEC itself
# when it is a file, else the working tree ("") or a git revision, built.
build() {
	if [ -n "$2" ] && [ -f "$2" ]; then
		realpath "$2"
		return
	fi
	local src=$repo
	if [ -n "$2" ]; then
		src=$work/src-$1
		mkdir -p "$src"
		git -C "$repo" archive "$2" | tar -x -C "$src"
	fi
	(cd "$src" && go build -o "$work/$1" ./cmd/dptrain)
	echo "$work/$1"
}
before=$(build before "$1")
after=$(build after "${2:-}")

# params prints model.bin's parameter bytes as hex (the header, metadata and
# group table are skipped: the file format is models/save.go's WriteParams).
params() {
	python3 - "$1" <<'PY'
import hashlib, struct, sys
b = open(sys.argv[1], "rb").read()
assert b[:8] == b"DPTRAINP", "not a dptrain parameter file"
o = 12
def u32():
    global o
    v = struct.unpack_from("<I", b, o)[0]; o += 4; return v
def u64():
    global o
    v = struct.unpack_from("<Q", b, o)[0]; o += 8; return v
def skip():          # a length-prefixed string (u32 length, then bytes)
    global o
    n = u32(); o += n
skip()               # architecture name
skip()               # metadata (JSON)
for _ in range(u32()):
    skip(); u64(); u64()
n = u64()
print(n, hashlib.sha256(b[o:o + 4 * n]).hexdigest())
PY
}

# eps prints summary.json's ε per accountant and the best bound, exactly.
eps() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps({"epsilon": d["epsilon"], "best": d["best"].get("epsilon")}, sort_keys=True))' "$1"
}

pass=0
fail=0
while read -r name args; do
	case "$name" in '' | '#'*) continue ;; esac
	row=""
	ok=1
	for which in before after; do
		bin=$before
		[ "$which" = after ] && bin=$after
		out="$work/$name-$which"
		# shellcheck disable=SC2086 # args is a list of flags
		if ! "$bin" train $args --seed 11 --noise continuous --quiet --plots=false --eval-every 0 --out "$out" >"$out.log" 2>&1; then
			echo "$name: $which failed: $(tail -n 1 "$out.log")"
			ok=0
			continue
		fi
		eval "p_$which=\"\$(params \"\$out/release/model.bin\")\""
		eval "e_$which=\"\$(eps \"\$out/release/summary.json\")\""
	done
	if [ $ok = 1 ]; then
		if [ "$p_before" != "$p_after" ]; then
			row="parameters differ ($p_before vs $p_after)"
			ok=0
		fi
		if [ "$e_before" != "$e_after" ]; then
			row="$row ε differs ($e_before vs $e_after)"
			ok=0
		fi
	fi
	if [ $ok = 1 ]; then
		pass=$((pass + 1))
		echo "$name: identical: ${p_after%% *} parameters, $e_after"
	else
		fail=$((fail + 1))
		[ -n "$row" ] && echo "$name: $row"
	fi
done <"$runs"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
