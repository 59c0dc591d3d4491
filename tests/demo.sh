#!/bin/sh
# The default `make` ends here: on a GPU machine, validate and time a shipped
# chain; without one, say so and run the CPU-side checks instead.
set -e
echo "== every shipped spec checks"
bin/fusec --check specs/*.fuse
echo "== the plan of the main demo chain"
bin/fusec --explain specs/kl_divergence.fuse
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
	echo "== GPU found: validating and timing kl_divergence (N = 2^26)"
	bin/fuserun validate generated/kl_divergence.manifest --size N=67108864
	bin/fuserun bench generated/kl_divergence.manifest --size N=67108864
else
	echo "== no GPU on this machine: running the CPU-side checks (reference, ptxas) instead"
	sh tests/cpu_artifacts.sh
fi
