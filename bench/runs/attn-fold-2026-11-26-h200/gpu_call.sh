#!/bin/sh
# call A: tune run, i22c-fold attention validation + timing beside main, SDPA peers
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a $O/log.txt; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
make -s lib/libfuserun.a >$O/make.txt 2>&1; el "lib rc=$?"
( cd build/fold && make -s lib/libfuserun.a >$O/make_fold.txt 2>&1 ); el "fold lib rc=$?"
# 1. fold: validate (incl. scale -0.7 and 0), sm_90 PTX, then time
( cd build/fold && OUT=$O/fold timeout 200 sh bench/attn.sh validate time ) > $O/fold_attn.txt 2>&1; el "fold attn rc=$?"
# 2. main attention timing in the same call
OUT=$O/main timeout 90 sh bench/attn.sh time > $O/main_attn.txt 2>&1; el "main attn rc=$?"
# 3. fold sanitizers (memcheck + racecheck via run.sh sanitize)
( cd build/fold && OUT=$O/fold timeout 150 sh bench/attn.sh sanitize ) > $O/fold_san.txt 2>&1; el "fold sanitize rc=$?"
# 4. tune run
WORK=build/tune timeout 240 python3 bench/tune.py run > $O/tune_run.txt 2>&1; el "tune rc=$?"
cp build/tune/times.jsonl $O/ 2>/dev/null
# 5. SDPA only-ish peers at the five sizes
PYTHONUNBUFFERED=1 timeout 150 python3 bench/attn_peers.py $O/peers.json 32,1024,64 256,1024,128 32,4096,128 32,4096,128,causal 32,1024,128 > $O/peers.txt 2>&1; el "peers rc=$?"
