#!/bin/sh
# Run here (no GPU) before the device call, on branch i21p2loop: the corpus
# chains whose fused kernel is a point kernel over several axes, built by
# the branch's fusec into bench/corpus/gen and by main's (BASE, default
# main) into build/corpus-base, through a worktree of BASE.
#   sh bench/runs/i21p2loop/prepare.sh [BASE]
set -e
N="batchnorm_nchw bcast_col_f16 bcast_mid_bf16 bcast_row_f32 bias_gelu_f16 embedding_scale geglu_f16 mean_mid odd_cols_scale rotary_bf16 swiglu_f16"
make -s bin/fusec lib/libfuserun.a
rm -rf bench/corpus/gen && sh bench/corpus/build.sh $N
W=build/basewt; rm -rf $W; git worktree prune
git worktree add -q --detach $W "${1:-main}"
(cd $W && make -s bin/fusec && sh bench/corpus/build.sh $N)
rm -rf build/corpus-base && cp -r $W/bench/corpus/gen build/corpus-base
git worktree remove --force $W
ls bench/corpus/gen build/corpus-base | wc -l
