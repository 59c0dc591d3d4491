#!/bin/sh
# One GPU call for the point-kernel vector path: validation (with
# misaligned pointers and sanitizers), our timings beside torch's, the
# prototype sweep. Writes $OUT.
set -u
O=${OUT:-build/batch}
mkdir -p $O
OUT=$O timeout 200 sh tests/gpu/run.sh kl_divergence prediction_error vector_add relu sigmoid tanh batchnorm_inference belief_update gemv_axpby_sum spike_burst softmax matmul_bias_relu 2>&1 | grep -E "FAIL|gpu:|misalign|N=1000004|C=1004" | head -60
B=build/gpu
: > $O/ours.txt
for a in "kl_divergence N=67108864" "prediction_error N=67108864" "relu N=67108864" "sigmoid N=67108864" "tanh N=67108864" \
	"vector_add N=67108864" "batchnorm_inference B=65536 C=1024" "softmax R=8192 C=8192" "belief_update M=8192 N=8192" "gemv_axpby_sum M=16384 N=16384"; do
	set -- $a; s=$1; shift
	$B/v_$s "$@" 2>&1 | grep -v '^  ' | tee -a $O/ours.txt
done
PYTHONUNBUFFERED=1 timeout 150 python3 bench/peers.py --only kl_divergence,prediction_error,relu,sigmoid,tanh,vector_add,batchnorm_inference,softmax,belief_update,gemv_axpby_sum --no-variants --out $O/peers.json > $O/peers.txt 2>&1
python3 bench/table.py $O/ours.txt $O/peers.json > $O/table.md; cat $O/table.md
NO_NCU=1 OUT=$O timeout 150 sh bench/proto/run.sh 2>&1 | grep -E "^softmax|^kl|^sigmoid|^bn" | grep -E "x8192|x16384|x32768|x65536|2\^26|65536x1024"
