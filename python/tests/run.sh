#!/bin/sh
# The Python package's CPU tests (make check's group python): fuserun over
# libfuserun and the fake libcuda, with a fake torch (no GPU, no torch
# needed); the reference on NumPy arrays when NumPy is installed; a pip
# install from a copy of python/ when pip, setuptools and wheel are. What
# cannot run is a SKIP line, counted as skipped, never as passed.
# Prints "python: P passed, F failed, S skipped". $PYTHON (default python3).
PY=${PYTHON:-python3}
B=${RT_BUILD:-build/rt}
pass=0 fail=0 skip=0
if ! command -v "$PY" >/dev/null 2>&1; then
	echo "SKIP python: no $PY"
	echo "python: 0 passed, 0 failed, 1 skipped"
	exit 0
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/fuserun-py.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
export FUSERUN_LIB=$(pwd)/lib/libfuserun.so FUSERUN_LIBCUDA=$(pwd)/$B/libfakecuda.so FUSERUN_GENERATED=generated
unset FAKECUDA_FAIL FAKECUDA_FAIL_AT FAKECUDA_CC FAKECUDA_DEVICES FAKECUDA_STUB

# 1. the package's tests (PASS/FAIL/SKIP lines)
PYTHONPATH=python "$PY" python/tests/test_fake.py >"$T/out" 2>&1
status=$?
grep -E '^(FAIL|SKIP)' "$T/out"
p=$(grep -c '^PASS' "$T/out") f=$(grep -c '^FAIL' "$T/out") s=$(grep -c '^SKIP' "$T/out")
pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
if [ $status != 0 ] && [ $f = 0 ] || ! grep -q '^python: ' "$T/out"; then
	echo "FAIL python/tests/test_fake.py exited $status without a failure counted"
	tail -20 "$T/out" | sed 's/^/    /'
	fail=$((fail + 1))
fi

# 2. pip-installable from a clone: a copy of python/ (the build writes
# beside its sources), no network, imported from where it went
if "$PY" -c 'import setuptools, wheel' 2>/dev/null && "$PY" -m pip --version >/dev/null 2>&1; then
	cp -r python "$T/src" && rm -rf "$T/src/tests"
	if "$PY" -m pip install -q --no-deps --no-build-isolation --no-index --target "$T/site" "$T/src" >"$T/pip.log" 2>&1 &&
	   (cd "$T" && PYTHONPATH="$T/site" "$PY" -c 'import fuserun, sys; assert fuserun.__file__.startswith(sys.argv[1]); print(fuserun.__version__)' "$T/site") >>"$T/pip.log" 2>&1
	then pass=$((pass + 1))
	else echo "FAIL pip install python/ (no network) and import it"; sed 's/^/    /' "$T/pip.log" | tail -20; fail=$((fail + 1)); fi
else
	echo "SKIP pip install python/: $PY lacks pip, setuptools or wheel (python3-pip, python3-setuptools, python3-wheel)"
	skip=$((skip + 1))
fi
echo "python: $pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
