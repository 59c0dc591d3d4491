#!/bin/sh
# One GPU call: validation (vector paths under memcheck, misaligned runs),
# fast exp and row-block sizing measured beside torch, newcomer row chains.
set -u
O=${OUT:-build/batch}
mkdir -p $O
OUT=$O timeout 220 sh tests/gpu/run.sh kl_divergence prediction_error vector_add relu sigmoid tanh batchnorm_inference belief_update gemv_axpby_sum spike_burst softmax 2>&1 | grep -E "FAIL|gpu:|sanitizer memcheck (sigmoid|batch)" | head -40
B=build/gpu
: > $O/ours.txt
for a in "kl_divergence N=67108864" "prediction_error N=67108864" "relu N=67108864" "sigmoid N=67108864" "tanh N=67108864" \
	"vector_add N=67108864" "batchnorm_inference B=65536 C=1024" "softmax R=8192 C=8192" "softmax R=65536 C=1024" "belief_update M=8192 N=8192" "gemv_axpby_sum M=16384 N=16384"; do
	set -- $a; s=$1; shift
	$B/v_$s "$@" 2>&1 | grep -v '^  ' | tee -a $O/ours.txt
done
OUT=$O sh bench/chains/run.sh
PYTHONUNBUFFERED=1 timeout 150 python3 bench/peers.py --only kl_divergence,prediction_error,relu,sigmoid,tanh,vector_add,batchnorm_inference,softmax,belief_update,gemv_axpby_sum --no-variants --out $O/peers.json > $O/peers.txt 2>&1
python3 bench/table.py $O/ours.txt $O/peers.json > $O/table.md; cat $O/table.md
