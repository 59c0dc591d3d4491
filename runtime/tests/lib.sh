# Sourced by runtime/tests/run.sh, mgpu.sh and install.sh: their tally of
# passes and failures. The sourcing script sets pass=0 fail=0 and VERBOSE.

ok() { pass=$((pass + 1)); [ "$VERBOSE" = 1 ] && echo "PASS $1"; return 0; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -n "$2" ] && printf '%s\n' "$2" | head -20 | sed 's/^/    /'; return 0; }

# expect NAME STATUSES PATTERN -- command...: an exit status among STATUSES
# (one, or several separated by spaces) and a pattern in the output
expect() {
	name=$1 want=$2 pat=$3
	shift 4
	out=$("$@" 2>&1)
	got=$?
	case " $want " in *" $got "*) st=1 ;; *) st=0 ;; esac
	if [ $st = 1 ] && printf '%s' "$out" | grep -q -e "$pat"; then ok "$name"
	else bad "$name (exit $got, want $want; want output matching '$pat')" "$out"; fi
}

# tally PROGRAM ARGS...: a C test program printing PASS and FAIL lines; its
# lines are counted, its failures printed, and an exit status other than 0
# without a FAIL line (a sanitizer's report) is a failure of its own
tally() {
	out=$("$@" 2>&1)
	status=$?
	p=$(printf '%s\n' "$out" | grep -c '^PASS')
	f=$(printf '%s\n' "$out" | grep -c '^FAIL')
	pass=$((pass + p)) fail=$((fail + f))
	[ "$VERBOSE" = 1 ] && printf '%s\n' "$out" | grep '^PASS'
	printf '%s\n' "$out" | grep '^FAIL'
	if [ $status != 0 ] && [ $f = 0 ]; then
		bad "$(basename "$1") exited $status (a sanitizer report?)" "$(printf '%s\n' "$out" | grep -v '^PASS' | tail -30)"
	fi
	return 0
}

# known NAME REASON WHY: a known bug (tests/run.sh's XFAIL convention): a
# non-empty WHY (the check fails) is expected and counts as a pass, printed
# "xfail NAME: REASON"; an empty WHY (it passes now) is a failure, "XPASS",
# so that the mark is removed together with the bug
known() {
	if [ -n "$3" ]; then
		pass=$((pass + 1))
		echo "xfail $1: $2"
		[ "$VERBOSE" = 1 ] && printf '%s\n' "$3" | head -20 | sed 's/^/    /'
	else
		fail=$((fail + 1))
		echo "FAIL $1: XPASS: passes now, but is marked as a known bug ($2); make it a plain check"
	fi
	return 0
}
