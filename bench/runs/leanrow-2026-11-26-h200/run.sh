#!/bin/sh
# On the device, from the repository root (build/i21row carried): validate the
# branch's artifacts (new; r40: every cached row kernel capped at 40 registers
# by a tuning entry) against their float64 references at each chain's CHECK
# sizes, one where the cache is full (1400 columns) and one misaligned, fused
# and unfused; then time base (main) / new / r40 interleaved, fused variant,
# L2 flushed, median of 30.
S=build/i21row; mkdir -p $OUT $S/jobs; rm -f $S/jobs/*
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
j=0
for f in $S/check_*; do n=${f#$S/check_}; i=0
  while read s; do i=$((i + 1)); for v in new r40; do
    j=$((j + 1)); echo "$S/bin/v_$n $s --dir $S/g$v --seed 11 --reps 2 > $S/jobs/$j.out 2>&1; echo \"$v \$(cat $S/jobs/$j.out | head -3)\"" > $S/jobs/$j.sh
    if [ $i = 2 ]; then j=$((j + 1)); echo "$S/bin/v_$n $s --dir $S/g$v --seed 12 --reps 2 --misalign > $S/jobs/$j.out 2>&1; echo \"$v misaligned \$(cat $S/jobs/$j.out | head -3)\"" > $S/jobs/$j.sh; fi
  done; done < $f
done
t0=$(date +%s)
ls $S/jobs/*.sh | xargs -P 12 -n 1 sh > $OUT/val.txt 2>&1
echo "validate: $(grep -c ' PASS ' $OUT/val.txt) PASS of $j runs, $(( $(date +%s) - t0 )) s"; grep -v ' PASS ' $OUT/val.txt | head -20
t0=$(date +%s)
: > $OUT/time.txt
for f in $S/time_*; do n=${f#$S/time_}
  while read s; do for v in base new r40; do
    $S/bin/v_$n $s --dir $S/g$v --flush --time-only --reps 30 2>&1 | grep ' fused=' | sed "s/^/$v /" >> $OUT/time.txt
  done; done < $f
done
echo "time: $(( $(date +%s) - t0 )) s"
sed -n 's/^\([a-z0-9]*\) .*) \([a-z0-9_]*\) *\([A-Z0-9=,]*\) .* fused=\([0-9.]*\)ms .*(\([0-9]*%\) of floor).*/\2 \3 \1 \4 \5/p' $OUT/time.txt | tee $OUT/table.txt
