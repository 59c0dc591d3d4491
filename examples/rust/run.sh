#!/bin/sh
# The Rust example (make check's group rust): cargo builds it offline (no
# crate from the network; build.rs runs bin/fusec) and runs its tests under
# the runtime's fake driver (FUSERUN_LIBCUDA), as the Python package's are.
# Without cargo: a SKIP line, counted as skipped. Prints
# "rust: P passed, F failed, S skipped". $CARGO (default cargo on PATH, else
# ~/.cargo/bin/cargo); build outputs in $RUST_BUILD (default build/rust).
B=${RT_BUILD:-build/rt}
CARGO=${CARGO:-$(command -v cargo || echo "$HOME/.cargo/bin/cargo")}
if [ ! -x "$CARGO" ]; then
	echo "SKIP rust: no cargo (rustup.rs, or CARGO=path)"
	echo "rust: 0 passed, 0 failed, 1 skipped"
	exit 0
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/fuserun-rust.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
export CARGO_TARGET_DIR=${RUST_BUILD:-$(pwd)/build/rust} FUSERUN_LIBCUDA=$(pwd)/$B/libfakecuda.so FUSEC=$(pwd)/bin/fusec
"$CARGO" test --offline --manifest-path examples/rust/Cargo.toml -- --test-threads=1 >"$T/out" 2>&1
status=$?
pass=$(sed -n 's/^test result: .* \([0-9]*\) passed; \([0-9]*\) failed.*/\1/p' "$T/out" | awk '{s += $1} END {print s + 0}')
fail=$(sed -n 's/^test result: .* \([0-9]*\) passed; \([0-9]*\) failed.*/\2/p' "$T/out" | awk '{s += $1} END {print s + 0}')
grep -E '^test .* FAILED$' "$T/out" | sed 's/^test \(.*\) \.\.\. FAILED$/FAIL rust \1/'
if [ $status != 0 ] && [ "$fail" = 0 ]; then
	echo "FAIL rust: cargo test exited $status without a failure counted"
	tail -20 "$T/out" | sed 's/^/    /'
	fail=1
elif [ "$pass" = 0 ]; then
	echo "FAIL rust: no test ran"; tail -20 "$T/out" | sed 's/^/    /'; fail=1
elif [ "$fail" != 0 ]; then
	grep -A8 "panicked" "$T/out" | head -30 | sed 's/^/    /'
fi
echo "rust: $pass passed, $fail failed, 0 skipped"
[ "$fail" = 0 ]
