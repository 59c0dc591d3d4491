#!/bin/sh
# --explain's numbers (fusec/plan/explain_cost.c): the bytes each kernel of
# both variants loads and stores, as sums over the sizes and at --size's
# values; each kernel's registers when fusec compiled it (-o, ptxas -v), a
# line saying how to get them otherwise; --size's refusals.
# Prints a FAIL line per failure, then "explain_cost: P passed, F failed[, S skipped]".
# Run from the repository root; FUSEC (default bin/fusec), CUDA_HOME.
set -u
FUSEC=${FUSEC:-bin/fusec}
T=$(mktemp -d "${TMPDIR:-/tmp}/explain-cost.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
pass=0 fail=0 skip=0

# has NAME FILE LINE: FILE holds LINE exactly
has() {
	if grep -qxF -- "$3" "$2"; then pass=$((pass + 1))
	else echo "FAIL explain_cost $1: no line '$3'"; sed 's/^/    /' "$2" | tail -12; fail=$((fail + 1)); fi
}
# refused NAME ARGS...: exit 2 and an error line
refused() {
	_n=$1; shift
	"$FUSEC" "$@" >"$T/out" 2>"$T/err"
	if [ $? = 2 ] && grep -q "fusec: error: .*--size" "$T/err"; then pass=$((pass + 1))
	else echo "FAIL explain_cost $_n: not refused with exit 2 ($(head -1 "$T/err"))"; fail=$((fail + 1)); fi
}

# add_rmsnorm: one kernel fused (h written, recomputed where the norm reads
# it), three unfused (h and ms stored, then read back)
"$FUSEC" --explain --size=R=16384,C=4096 specs/add_rmsnorm.fuse >"$T/rms" 2>&1
has "add_rmsnorm fused kernel" "$T/rms" "    fused add_rmsnorm_f0: loads x, res, w; stores h, y: 8*C*R + 2*C"
has "add_rmsnorm fused total" "$T/rms" "    fused, 1 kernel: 8*C*R + 2*C = 536879104 bytes (512.0 MiB)"
has "add_rmsnorm unfused u1" "$T/rms" "    unfused add_rmsnorm_u1: loads h; stores ms: 2*C*R + 4*R"
has "add_rmsnorm unfused total" "$T/rms" "    unfused, 3 kernels: 12*C*R + 2*C + 8*R = 805445632 bytes (768.1 MiB)"
has "add_rmsnorm ratio" "$T/rms" "    unfused / fused at the sizes given: 1.50x the bytes"
has "no -o: how to get registers" "$T/rms" "    registers: counted when fusec compiles: add -o DIR (ptxas -v on the first --arch's PTX)"

# a split chain: the second kernel reads the whole-grid sum s back
"$FUSEC" --explain tests/codegen/cg_split.fuse >"$T/split" 2>&1
has "cg_split second kernel" "$T/split" "    fused cg_split_f1: loads x, A, s; stores y, z: 4*N*N + 12*N + 4"
has "cg_split no numbers without --size" "$T/split" "    fused, 2 kernels: 4*N*N + 16*N + 8"
# in place: w and mom loaded and stored; the scalars lr, mu by value
"$FUSEC" --explain tests/ref/lang/sgd_inplace.fuse >"$T/sgd" 2>&1
has "inout loaded and stored, scalars not" "$T/sgd" "    fused sgd_inplace_f0: loads w, g, mom, k; stores w, mom, cnt: 28*N"
"$FUSEC" --explain --size=R=8 specs/add_rmsnorm.fuse >"$T/part" 2>&1
has "--size without every size" "$T/part" "    (--size gives not every size of this fusion: no numbers)"

# registers, when fusec compiles with ptxas there
PTXAS=${CUDA_HOME:-/usr/local/cuda}/bin/ptxas
if [ -x "$PTXAS" ] || command -v ptxas >/dev/null 2>&1; then
	"$FUSEC" --explain --arch=sm_90 -o "$T/art" specs/add_rmsnorm.fuse >"$T/regs" 2>&1
	n=$(grep -cE '^    (fused|unfused) add_rmsnorm_[fu][0-9]: .*; [1-9][0-9]* registers$' "$T/regs")
	if [ "$n" = 4 ] && grep -q 'registers a thread (ptxas -v, sm_90):$' "$T/regs" && ! grep -q '^    registers:' "$T/regs"; then
		pass=$((pass + 1))
	else
		echo "FAIL explain_cost registers with -o: $n of 4 kernels with a count"; sed 's/^/    /' "$T/regs" | tail -10; fail=$((fail + 1))
	fi
else
	echo "SKIP explain_cost registers with -o: no ptxas"; skip=$((skip + 1))
fi

refused "--size without --explain" --size=N=4 specs/add_rmsnorm.fuse
refused "--size of no value" --explain --size=R= specs/add_rmsnorm.fuse
refused "--size of zero" --explain --size=R=0 specs/add_rmsnorm.fuse
refused "--size without a name" --explain --size==4 specs/add_rmsnorm.fuse
echo "explain_cost: $pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
