#!/bin/sh
# On a GPU machine: the newcomer chains, each validated (fused and unfused
# against the float64 reference, fresh random inputs from the declared
# domains, outputs poisoned) at three sizes with tests/gpu/validate.c.
# The artifacts come from DIR (default build/newcomers; made with bin/fusec
# when missing). Prints one line per case and a summary.
set -u
DIR=${1:-build/newcomers}
CC=${CC:-cc}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
mkdir -p "$DIR"
pass=0 fail=0
sizes() {
	case $1 in
	layernorm|row_stats|logsumexp) echo "R=1,C=1 R=37,C=1001 R=4096,C=4096" ;;
	pair_sum) echo "R=1,C=2 R=37,C=1001 R=4096,C=8192" ;;
	gelu_residual|adam) echo "N=1 N=1000003 N=16777216" ;;
	rotary) echo "R=1,H=1 R=37,H=501 R=4096,H=2048" ;;
	esac
}
for f in examples/newcomers/*.fuse; do
	s=$(basename "$f" .fuse)
	[ -f "$DIR/$s.manifest" ] || bin/fusec -o "$DIR" "$f" || { fail=$((fail + 1)); continue; }
	$CC -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -DFZ_NAME=$s -I"$DIR" -I"$CUDA_HOME/include" -include $s.h \
		tests/gpu/validate.c "$DIR/${s}_ref.c" -L"$CUDA_HOME/lib64/stubs" -lcuda -lm -o "$DIR/v_$s" ||
		{ fail=$((fail + 1)); continue; }
	for sz in $(sizes $s); do
		if "$DIR/v_$s" --dir "$DIR" $(echo $sz | tr ',' ' ') --seed $$ --reps 20; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
	done
done
echo "newcomers: $pass passed, $fail failed"
[ $fail = 0 ]
