#!/bin/sh
# Stage the GPU run of issue 21's lean row template: artifacts of base (main),
# new (this tree's bin/fusec, built-in rules) and r40 (every cached row kernel
# capped at 40 registers by a tuning entry), drivers, size lists, into S (an
# ignored folder of the checkout the device tool sends; carry it), then on the
# device: sh $S/run.sh. BASE_FUSEC: main's fusec; RC_DIR: the output of
# python3 bench/corpus/randchain.py --seed 1 --count 40 --out RC_DIR.
# Needs lib/libfuserun.a (make lib/libfuserun.a).
set -e
W=$(cd "$(dirname "$0")/../../.." && pwd); S=${S:-/work/main/build/i21row}; CU=${CUDA_HOME:-/usr/local/cuda}
BASE_FUSEC=${BASE_FUSEC:?the fusec of main}; RC_DIR=${RC_DIR:?randchain.py --seed 1 output}
rm -rf $S; mkdir -p $S/bin $S/gbase $S/gnew $S/gr40 $S/fuse
CH="logsumexp_8192 row_stats_8192 cross_entropy row_argmax rmsnorm_bf16 add_rmsnorm_bf16 softmax_bf16 layernorm_affine rmsnorm_f32 softmax_wide row_meanvar_1024 log_softmax softmax_scaled_masked"
RC="rc_1_7 rc_1_8 rc_1_24"
for n in $CH; do cp $W/bench/corpus/$n.fuse $W/bench/corpus/$n.py $S/fuse/; done
for n in $RC; do cp $RC_DIR/$n.fuse $RC_DIR/$n.py $S/fuse/; done
for n in softmax add_rmsnorm groupnorm; do cp $W/specs/$n.fuse $S/fuse/; done
cd $W
: > $S/r40.txt
for f in $S/fuse/*.fuse; do
  bin/fusec --emit=schedule --arch=sm_90a $f | awk '/ row space=/{r=1} /rcache=[1-9]/{if(r){match($0,/sig=[^ ]*/); print "sm_90 " substr($0,RSTART+4,RLENGTH-4) " 99 regs=40"}} /^  kernel/{if(!/ row space=/)r=0}' >> $S/r40.txt
done
sort -u $S/r40.txt -o $S/r40.txt
for f in $S/fuse/*.fuse; do
  $BASE_FUSEC -o $S/gbase --arch=sm_90,sm_90a --tune=tune/table.txt $f
  bin/fusec -o $S/gnew --arch=sm_90,sm_90a --tune=tune/table.txt $f
  bin/fusec -o $S/gr40 --arch=sm_90,sm_90a --tune=$S/r40.txt $f
done
for f in $S/fuse/*.fuse; do n=$(basename $f .fuse)
  cmp -s $S/gbase/$n.h $S/gnew/$n.h && cmp -s $S/gnew/$n.h $S/gr40/$n.h || echo "header differs: $n"
  sh tests/gpu/build_driver.sh $n $S/gnew $S/bin/v_$n -L$CU/lib64/stubs -lcuda &
done; wait
# sizes: CHECK entries, one where the cache is full (1400 columns), the timed ones
sz() { python3 -c "
import ast
t=ast.parse(open('$S/fuse/$1.py').read())
for n in t.body:
    if isinstance(n, ast.Assign) and n.targets[0].id == '$2':
        L=[{k.arg: ast.literal_eval(k.value) for k in d.keywords} for d in n.value.elts]
for d in (L if '$3'=='all' else L[:1]): print(' '.join('%s=%d'%kv for kv in d.items()))"; }
for f in $S/fuse/*.py; do n=$(basename $f .py)
  sz $n CHECK all > $S/check_$n
  if grep -q "S=" $S/check_$n; then echo "B=2 T=19 S=1400" >> $S/check_$n; else echo "R=37 C=1400" >> $S/check_$n; fi
  sz $n SIZES 1 > $S/time_$n
done
for n in rmsnorm_bf16 add_rmsnorm_bf16; do sz $n SIZES all | sed -n 2p >> $S/time_$n; done
echo "R=1 C=1
R=37 C=1001
R=5 C=40000
R=37 C=1400" > $S/check_softmax; cp $S/check_softmax $S/check_add_rmsnorm
echo "N=1 G=1 CG=1 HW=1
N=3 G=5 CG=7 HW=33
N=2 G=4 CG=16 HW=4096
N=2 G=3 CG=3 HW=50001" > $S/check_groupnorm
cp $W/bench/runs/leanrow-2026-11-26-h200/run.sh $S/
du -sh $S; ls $S/bin | wc -l
