#!/bin/sh
# Issue 21, branch i21p2loop (nvidia-h100-x1): a point kernel's vector loop
# printed twice, with shifts where every extent the index is divided by is a
# power of two (fz_p2) and with divisions otherwise, against main's one loop
# testing each extent (session 43: bcast_mid_bf16 +4.1%, batchnorm_nchw
# +3.3% against the divisions alone; rotary_bf16 -5.1%). One call:
#   1. the 11 point chains at their headline sizes, ours and main's
#      alternately, torch.compile in the same call, every CHECK validated;
#   2. memcheck on rotary at odd and power-of-two sizes;
#   3. the shipped specs validated, the time left.
# prepare.sh first; carry bench/corpus/gen build/corpus-base lib bin.
# Keep $OUT under 8 files (the device tool brings back no more).
O=${OUT:-build/p2l}; mkdir -p $O; S=$O/summary.txt; : > $S
say() { printf '%s\n' "$*" | tee -a "$S"; }
t0=$(date +%s)
el() { say "[t=$(( $(date +%s) - t0 ))s] $*"; }
say "# $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1), $(date -u '+%Y-%m-%d %H:%M UTC')"
N="batchnorm_nchw bcast_col_f16 bcast_mid_bf16 bcast_row_f32 bias_gelu_f16 embedding_scale geglu_f16 mean_mid odd_cols_scale rotary_bf16 swiglu_f16"
C=build/p2l-corpus
OUT=$C HEADLINE=1 BASE=build/corpus-base DEADLINE=300 PJOBS=8 VJOBS=12 NO_EAGER=1 sh bench/corpus/run.sh $N > $C.log 2>&1
cp $C/table.md $C/base.txt $C/ours.txt $O/ 2>/dev/null
say "validations: $(grep -c 'PASS$' $C/validate.tsv) passed, $(grep -vc 'PASS$' $C/validate.tsv) not"
python3 - $O >> $S <<'PY'
import re, sys, math
def parse(f):
    d = {}
    for l in open(f):
        m = re.search(r'run\)\s+(\S+)\s+(\S+)\s.* fused=([0-9.]+)ms', l)
        if m: d.setdefault(m.group(1), float(m.group(3)))
    return d
o, b = parse(sys.argv[1] + '/ours.txt'), parse(sys.argv[1] + '/base.txt')
r = [o[k] / b[k] for k in sorted(o) if k in b]
for k in sorted(o):
    if k in b: print('%-18s branch %.4f main %.4f  %.3f' % (k, o[k], b[k], o[k] / b[k]))
print('geomean branch/main %.4f over %d' % (math.exp(sum(map(math.log, r)) / len(r)), len(r)))
PY
el corpus
W=build/corpus-work/bin
for a in "B=2 H=3 T=7 D=64" "B=1 H=5 T=13 D=126" "B=2 H=4 T=16 D=64"; do
	for m in "" --misalign; do
		compute-sanitizer --tool memcheck --error-exitcode 9 $W/v_rotary_bf16 $a --dir bench/corpus/gen --reps 1 $m > $O/cs.txt 2>&1
		say "memcheck rotary_bf16 $a $m: rc=$? $(tail -1 $O/cs.txt)"
	done
done
rm -f $O/cs.txt
left=$(( ${TOTAL_S:-560} - ($(date +%s) - t0) ))
JOBS=12 GPU_PHASE=validate timeout $left sh tests/gpu/run.sh > $C.gpu.txt 2>&1
say "shipped specs (rc $?): $(grep -E 'passed|failed' $C.gpu.txt | tail -1)"
grep -E '^FAIL' $C.gpu.txt | head -5 | tee -a $S
el done
