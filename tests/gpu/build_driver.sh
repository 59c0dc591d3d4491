#!/bin/sh
# Builds tests/gpu/validate.c for one artifact, the one recipe of every
# script that builds it (tests/gpu/run.sh, tests/gpu/tiles.sh,
# tests/gpu_run_dry.sh, bench/corpus/run.sh): the artifact's header and
# reference, fuserun's input generation (runtime/tool/tensors.c: inputs from
# the manifest's domains and values lines, never by a param's name) and
# libfuserun (lib/libfuserun.a: the manifest verified, shapes), which the
# caller builds first (make lib/libfuserun.a; builds run in parallel here).
#   sh tests/gpu/build_driver.sh NAME GENDIR OUT [LINK-ARGS...]
# LINK-ARGS: the driver library, e.g. -L$CUDA_HOME/lib64/stubs -lcuda.
# CC (cc), CUDA_HOME (/usr/local/cuda), OPT (-O2). Exit status: the compiler's.
CC=${CC:-cc}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
[ $# -ge 3 ] || { echo "usage: build_driver.sh NAME GENDIR OUT [LINK-ARGS...]" >&2; exit 2; }
n=$1 gen=$2 out=$3
shift 3
[ -f lib/libfuserun.a ] || { echo "build_driver.sh: no lib/libfuserun.a (make lib/libfuserun.a first)" >&2; exit 2; }
# shellcheck disable=SC2086 # OPT and CC may be several words
exec $CC -std=c11 -D_POSIX_C_SOURCE=200809L ${OPT:--O2} -DFZ_NAME=$n -I"$gen" -Iruntime -Iruntime/tool -I$CUDA_HOME/include \
	-include $n.h tests/gpu/validate.c runtime/tool/tensors.c "$gen/${n}_ref.c" lib/libfuserun.a "$@" -ldl -lpthread -lm -o "$out"
