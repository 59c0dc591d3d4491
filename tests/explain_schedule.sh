#!/bin/sh
# --emit=schedule shows everything --explain explains: for every spec in
# specs/, tests/codegen/ and tests/emit/ that checks, each fact of the
# explanation is found in the fused schedule:
#   "fusion F: N stages in K kernels"      K kernel lines in F's schedule
#   "kernel NAME: MODE over [D], rows of X, whole-grid reduction ..."
#                                          kernel NAME MODE space=[D] inner=X grid-reductions>0
#   "stage S" under a kernel               a statement of stage S in that kernel
#   "contraction on WHY"                   path WHY under that kernel
#   "row read once into registers: up to N columns ..."
#                                          a row kernel with params rcache=R, N = 4096 R;
#                                          "...; peeled: ..." in it exactly where the kernel has peel=1
#   "S and Q in one walk where the row is read again ..." (or "in one loop over the outer axis")
#                                          a row kernel with shifted=S,Q
#   "M and S in one walk where the row is read again: the sum of exponentials ..."
#                                          a row kernel with online=M,S
#   "M and I in one walk where the row is read again: each lane keeps its max ..."
#                                          a row kernel with argmax=M,I
#   "its paths (...) each a function of its own ...; ... built twice, R vectors a thread and S ..."
#                                          a row kernel with params rcache=R paths=1
#   "T gathered every A elements along ..."
#                                          a kernel with T*A among its vec_tensors
#   "reduction over an outer axis: ... split over as many blocks ..."
#                                          a point kernel with params split=EXTENT
#   "tiles M x N x K, narrowed ... down to M x D ..."
#                                          a tile kernel with params tile=MxNxK tile_n_min=D
#   "tensor_eligible: not a matrix tile"   that note on a statement of the kernel
#   "attention: ... up to D (B bytes ...)" an attention kernel with params entry=...:dD:...:smemB
#   "second product on tensor cores"       an attention kernel with two contractions
#   "X leaves from the accumulators"       an attention kernel with rows_out=X
#   "O.s work stored element by element"   an attention kernel without rows_out
#   "not an attention kernel ...: WHY"     "no attention kernel: WHY" under that kernel
#   "T: stored in device memory"           tensor T stored
#   "T: kept on chip"                      tensor T registers (or recomputed: a row element)
#   "T (stage S): ... never stored"        stmt (stage S) T: inline, tensor T recomputed
#   "A -> B: split: RULE"                  B's first statement ends with ", RULE"
#   "A -> B: fused"                        B's first statement joined (or first of its kernel)
#   "A -> B: fused (inlined)"              a statement of A or B inline
#   "hint: A -> B is split, ..."           B's first statement ends with a rule (tests/explain_hint.sh
#                                          checks what the hint says)
# A self-test first: a doctored explanation must fail.
# A test per spec: a FAIL line per missing fact, then "explain_schedule: P passed, F failed".
# Run from the repository root; FUSEC (default bin/fusec).
set -u
FUSEC=${FUSEC:-bin/fusec}
T=$(mktemp -d "${TMPDIR:-/tmp}/explain-schedule.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
pass=0 fail=0

# compare SCHEDULE EXPLAIN LABEL: prints "ok" per fact found, "FAIL ..." per fact missing
compare() {
	awk -v label="$3" '
	function fact(ok, what) {
		if (ok) print "ok"
		else print "FAIL explain_schedule " label ": " what
	}
	FNR == 1 { file++ }
	# ---- the schedule (fused sections only)
	file == 1 && /^schedule / { fu = $2; in_fused = ($3 == "fused"); kern = ""; next }
	file == 1 && !in_fused { next }
	file == 1 && /^  kernel / {
		kern = $2; nk[fu]++
		mode[fu, kern] = $3
		sp = $0; sub(/.* space=/, "", sp); sub(/ .*/, "", sp); space[fu, kern] = sp
		inner[fu, kern] = ""
		if (match($0, / inner=[^ ]*/)) inner[fu, kern] = substr($0, RSTART + 7, RLENGTH - 7)
		peel[fu, kern] = ($0 ~ / peel=1( |$)/)
		shifted[fu, kern] = ""
		if (match($0, / shifted=[^ ]*/)) shifted[fu, kern] = substr($0, RSTART + 9, RLENGTH - 9)
		online[fu, kern] = ""
		if (match($0, / online=[^ ]*/)) online[fu, kern] = substr($0, RSTART + 8, RLENGTH - 8)
		argmax[fu, kern] = ""
		if (match($0, / argmax=[^ ]*/)) argmax[fu, kern] = substr($0, RSTART + 8, RLENGTH - 8)
		g = $0; sub(/.*grid-reductions=/, "", g); grid[fu, kern] = g + 0
		next
	}
	file == 1 && /^    path / { path[fu, kern] = substr($0, 10); next }
	file == 1 && /^    params / {
		r = $0; sub(/.* rcache=/, "", r); sub(/ .*/, "", r); rcache[fu, kern] = r + 0
		paths[fu, kern] = ($0 ~ / paths=1( |$)/)
		tile[fu, kern] = tnmin[fu, kern] = ""
		if (match($0, / tile=[^ ]*/)) tile[fu, kern] = substr($0, RSTART + 6, RLENGTH - 6)
		if (match($0, / tile_n_min=[^ ]*/)) tnmin[fu, kern] = substr($0, RSTART + 12, RLENGTH - 12)
		splitk[fu, kern] = match($0, / split=[^ ]+/) ? 1 : 0
		rowsout[fu, kern] = match($0, / rows_out=[^ ]+/) ? substr($0, RSTART + 10, RLENGTH - 10) : ""
		vecs[fu, kern] = match($0, / vec_tensors=[^ ]+/) ? "," substr($0, RSTART + 13, RLENGTH - 13) "," : ""
		ent[fu, kern] = "" # the entry points of an attention kernel, as "DB:SMEM,..."
		pr = $0
		while (match(pr, / entry=[^ ]+/)) {
			nf = split(substr(pr, RSTART + 7, RLENGTH - 7), q, ":") # name:dD:nN:stS:qQ:minM:smemB
			ent[fu, kern] = ent[fu, kern] substr(q[2], 2) ":" substr(q[nf], 5) ","
			pr = substr(pr, RSTART + RLENGTH)
		}
		next
	}
	file == 1 && /^    no attention kernel: / { noattn[fu, kern] = substr($0, 26); next }
	file == 1 && /^ *stmt [0-9]+ \(stage / {
		top = ($0 ~ /^  stmt/)
		n = $2 + 0; st = $4; sub(/\)$/, "", st)
		t = $5; sub(/:$/, "", t)
		rest = $0; sub(/^[^:]*: /, "", rest)
		if (!top) in_kern[fu, st, kern] = 1
		if (rest ~ /^inline/) { inl[fu, st] = 1; inl_t[fu, st, t] = 1 }
		if (rest ~ /tensor_eligible: not a matrix tile/) tel[fu, kern] = 1
		if (!top && rest ~ /^contract/) ncon[fu, kern]++
		if (!((fu, st) in first) || n < first[fu, st]) { first[fu, st] = n; firstrest[fu, st] = rest }
		next
	}
	file == 1 && /^  tensor / { stor[fu, $2] = $3; sub(/,$/, "", stor[fu, $2]); next }
	# ---- the explanation
	# the bytes and registers at the end of a fusion: tests/explain_cost.sh
	file == 2 && /^  bytes moved through device memory/ { in_cost = 1; next }
	file == 2 && in_cost && /^    / { next }
	file == 2 { in_cost = 0 }
	file == 2 && /^fusion / {
		fe = $2; sub(/:$/, "", fe)
		fact(nk[fe] == $(NF - 1), "fusion " fe ": " $(NF - 1) " kernels explained, " nk[fe] + 0 " in the schedule")
		next
	}
	file == 2 && /^  kernel / {
		ke = $2; sub(/:$/, "", ke)
		line = $0
		m = $3; sub(/,$/, "", m)
		sp = "[]"
		if (match(line, / over \[[^]]*\]/)) sp = substr(line, RSTART + 6, RLENGTH - 6)
		rows = ""
		if (match(line, /, rows of [^,]*/)) rows = substr(line, RSTART + 10, RLENGTH - 10)
		wg = (line ~ /whole-grid reduction/)
		fact((fe, ke) in mode, "kernel " ke " is not in the schedule")
		fact(mode[fe, ke] == m, "kernel " ke ": mode " m " explained, " mode[fe, ke] " in the schedule")
		fact(space[fe, ke] == sp, "kernel " ke ": space " sp " explained, " space[fe, ke] " in the schedule")
		fact(inner[fe, ke] == rows, "kernel " ke ": rows of \"" rows "\" explained, inner=\"" inner[fe, ke] "\" in the schedule")
		fact((grid[fe, ke] > 0) == wg, "kernel " ke ": whole-grid reduction " (wg ? "explained" : "not explained") ", grid-reductions=" grid[fe, ke] + 0)
		next
	}
	file == 2 && /^    stage / { fact(in_kern[fe, $2, ke], "stage " $2 " in kernel " ke ": no statement of it there in the schedule"); next }
	file == 2 && /^      contraction on / {
		w = substr($0, 22)
		fact(path[fe, ke] == w, "kernel " ke ": contraction on \"" w "\" explained, path \"" path[fe, ke] "\" in the schedule")
		next
	}
	file == 2 && /^    row read once into registers: up to [0-9]+ columns/ {
		c = $0; sub(/.*up to /, "", c); sub(/ .*/, "", c)
		fact(mode[fe, ke] == "row" && rcache[fe, ke] > 0 && c == 4096 * rcache[fe, ke],
		     "kernel " ke ": no row cache of " c " columns in the schedule (rcache=" rcache[fe, ke] ")")
		fact(($0 ~ /; peeled: /) == peel[fe, ke], "kernel " ke ": rows " ($0 ~ /; peeled: / ? "" : "not ") "peeled explained, peel=" peel[fe, ke] " in the schedule"); next
	}
	file == 2 && /^    its paths \(.*\) each a function of its own/ {
		c = $0; sub(/.*built twice, /, "", c); sub(/ .*/, "", c)
		fact(mode[fe, ke] == "row" && paths[fe, ke] && c == rcache[fe, ke], "kernel " ke ": paths as functions of " c " vectors explained, paths=" paths[fe, ke] " rcache=" rcache[fe, ke] " in the schedule"); next
	}
	file == 2 && /^    [^ ]+ and [^ ]+ in one walk where the row is read again: the sum of exponentials/ {
		fact(online[fe, ke] == $1 "," $3, "kernel " ke ": " $1 " and " $3 " online explained, online=\"" online[fe, ke] "\" in the schedule"); next
	}
	file == 2 && /^    [^ ]+ and [^ ]+ in one walk where the row is read again: each lane keeps its max/ {
		fact(argmax[fe, ke] == $1 "," $3, "kernel " ke ": " $1 " and " $3 " argmax explained, argmax=\"" argmax[fe, ke] "\" in the schedule"); next
	}
	file == 2 && /^    [^ ]+ and [^ ]+ in one (walk where the row is read again|loop over the outer axis)/ {
		fact(shifted[fe, ke] == $1 "," $3, "kernel " ke ": " $1 " and " $3 " in one walk explained, shifted=\"" shifted[fe, ke] "\" in the schedule"); next
	}
	file == 2 && /^    [^ ]+ gathered every [0-9]+ elements along / {
		fact(index(vecs[fe, ke], "," $1 "*" $4 ","), "kernel " ke ": " $1 " gathered every " $4 " explained, vec_tensors=\"" vecs[fe, ke] "\" in the schedule"); next
	}
	file == 2 && /^    reduction over an outer axis: .* split over as many blocks/ {
		fact(splitk[fe, ke], "kernel " ke ": a split over blocks explained, no split= in the schedule"); next
	}
	file == 2 && /^    tiles [0-9]+ x [0-9]+ x [0-9]+, narrowed at launch .* down to [0-9]+ x [0-9]+ / {
		t = $2 "x" $4 "x" $6; sub(/,$/, "", t)
		d = $0; sub(/.* down to [0-9]+ x /, "", d); sub(/ .*/, "", d)
		fact(mode[fe, ke] == "tile" && tile[fe, ke] == t && tnmin[fe, ke] == d,
		     "kernel " ke ": tiles " t " down to width " d " explained, mode " mode[fe, ke] " tile=" tile[fe, ke] " tile_n_min=" tnmin[fe, ke] " in the schedule"); next
	}
	file == 2 && /^    attention: .*entry points by head size: / {
		x = $0; sub(/.*entry points by head size:/, "", x); got = ""
		while (match(x, /up to [0-9]+ \([0-9]+ bytes/)) {
			split(substr(x, RSTART, RLENGTH), q, " ")
			got = got q[3] ":" substr(q[4], 2) ","
			x = substr(x, RSTART + RLENGTH)
		}
		fact(mode[fe, ke] == "attention" && ent[fe, ke] == got,
		     "kernel " ke ": entry points " got " explained, mode " mode[fe, ke] " entries " ent[fe, ke] " in the schedule"); next
	}
	file == 2 && /^    [A-Za-z_][A-Za-z_0-9]* leaves from the accumulators. / {
		x = $1
		fact(mode[fe, ke] == "attention" && rowsout[fe, ke] == x, "kernel " ke ": " x " from the accumulators explained, mode " mode[fe, ke] " rows_out=" rowsout[fe, ke] " in the schedule"); next
	}
	file == 2 && /^    O.s work stored element by element/ {
		fact(mode[fe, ke] == "attention" && rowsout[fe, ke] == "", "kernel " ke ": O element by element explained, mode " mode[fe, ke] " rows_out=" rowsout[fe, ke] " in the schedule"); next
	}
	file == 2 && /^      second product on tensor cores/ {
		fact(mode[fe, ke] == "attention" && ncon[fe, ke] == 2, "kernel " ke ": a second product explained, mode " mode[fe, ke] " with " ncon[fe, ke] + 0 " contractions in the schedule"); next
	}
	file == 2 && /^    not an attention kernel with the softmax and product after it: / {
		w = $0; sub(/^[^:]*: /, "", w)
		fact(noattn[fe, ke] == w, "kernel " ke ": \"" w "\" explained, \"" noattn[fe, ke] "\" in the schedule"); next
	}
	file == 2 && /^      tensor_eligible: not a matrix tile/ { fact(tel[fe, ke], "kernel " ke ": the tensor_eligible note is not in the schedule"); next }
	file == 2 && /^      [^ ]+: stored in device memory$/ {
		t = $1; sub(/:$/, "", t)
		fact(stor[fe, t] == "stored", t " stored in device memory explained, " stor[fe, t] " in the schedule")
		next
	}
	file == 2 && /^      [^ ]+: kept on chip$/ {
		t = $1; sub(/:$/, "", t)
		fact(stor[fe, t] == "registers" || stor[fe, t] == "recomputed", t " kept on chip explained, " stor[fe, t] " in the schedule")
		next
	}
	file == 2 && /^  [^ ]+ \(stage [^)]*\): .*never stored$/ {
		t = $1; st = $3; sub(/\):$/, "", st)
		fact(inl_t[fe, st, t] && stor[fe, t] == "recomputed", t " (stage " st ") inlined explained; the schedule has " (inl_t[fe, st, t] ? "" : "no inline statement, ") "storage " stor[fe, t])
		next
	}
	file == 2 && /^    [^ ]+ -> [^ ]+: / {
		a = $1; b = $3; sub(/:$/, "", b)
		r = $0; sub(/^[^:]*: /, "", r)
		if (r == "fused (inlined)") fact(inl[fe, a] || inl[fe, b], a " -> " b ": inlined explained, no inline statement of either in the schedule")
		else if (r == "fused") fact(firstrest[fe, b] ~ /, joined$/ || firstrest[fe, b] !~ /, /, a " -> " b ": fused explained, the schedule has \"" firstrest[fe, b] "\"")
		else {
			sub(/^split: /, "", r)
			fact(substr(firstrest[fe, b], length(firstrest[fe, b]) - length(r) + 1) == r, a " -> " b ": \"" r "\" explained, the schedule has \"" firstrest[fe, b] "\"")
		}
		next
	}
	file == 2 && /^  hint: [^ ]+ -> [^ ]+ is split, / {
		b = $4
		fact(firstrest[fe, b] ~ /, / && firstrest[fe, b] !~ /, joined$/, "hint at " $2 " -> " b ": a split explained, the schedule has \"" firstrest[fe, b] "\"")
		next
	}
	file == 2 && /^  stage boundaries:$/ { next }
	file == 2 { fact(0, "a line the test does not know: " $0) }
	' "$1" "$2"
}

# one test a spec: every fact of its explanation found
count() {
	if grep '^FAIL' "$1"; then fail=$((fail + 1))
	elif grep -q '^ok$' "$1"; then pass=$((pass + 1))
	else fail=$((fail + 1)); echo "FAIL explain_schedule $2: no fact compared"; fi
}

# self-test: facts found in a real pair; a doctored explanation is caught
# selftest SPEC DOCTOR...
selftest() {
	s=$1; shift
	if "$FUSEC" --emit=schedule "$s" >"$T/s" 2>/dev/null && "$FUSEC" --explain "$s" >"$T/e" 2>/dev/null; then
		compare "$T/s" "$T/e" self >"$T/r"
		if grep -q '^ok$' "$T/r" && ! grep -q FAIL "$T/r"; then pass=$((pass + 1))
		else fail=$((fail + 1)); echo "FAIL explain_schedule self-test: $s's real pair does not agree"; fi
		for doctor in "$@"; do
			sed "$doctor" "$T/e" >"$T/e2"
			if cmp -s "$T/e" "$T/e2"; then fail=$((fail + 1)); echo "FAIL explain_schedule self-test: '$doctor' changed nothing"; continue; fi
			compare "$T/s" "$T/e2" self >"$T/r"
			if grep -q FAIL "$T/r"; then pass=$((pass + 1))
			else fail=$((fail + 1)); echo "FAIL explain_schedule self-test: a doctored explanation ($doctor) passed"; fi
		done
	else
		fail=$((fail + 1)); echo "FAIL explain_schedule self-test: fusec failed on $s"
	fi
}
selftest specs/softmax.fuse 's/: row over/: point over/' 's/kept on chip/stored in device memory/' \
	's/: fused$/: split: different iteration spaces/' 's/^  kernel softmax_f0/  kernel softmax_f9/' 's/; peeled: /; /'
selftest specs/attention.fuse 's/up to 64 (132352 bytes/up to 64 (115000 bytes/' 's/: attention over/: tile over/' \
	's/^      second product on/      second contraction on/' 's/^    O leaves from the accumulators/    Q leaves from the accumulators/'
selftest tests/codegen/cg_gather_stride.fuse 's/X gathered every 2/X gathered every 3/'
selftest tests/codegen/cg_row_paths.fuse 's/built twice, 6 vectors/built twice, 5 vectors/'
selftest tests/codegen/cg_attn_refused.fuse 's/exp(z - max) of the max/exp(s - max) of the max/'
selftest specs/matmul_bias_relu.fuse 's/down to 128 x 64 /down to 128 x 32 /' 's/^    tiles 128 x 256 x 64/    tiles 128 x 128 x 64/'

n=0
for s in specs/*.fuse tests/codegen/*.fuse tests/emit/*.fuse; do
	[ -e "$s" ] || continue
	"$FUSEC" --check "$s" >/dev/null 2>&1 || continue
	if ! "$FUSEC" --emit=schedule "$s" >"$T/s" 2>"$T/err" || ! "$FUSEC" --explain "$s" >"$T/e" 2>>"$T/err"; then
		fail=$((fail + 1)); echo "FAIL explain_schedule $s: fusec failed: $(head -n 1 "$T/err")"
		continue
	fi
	compare "$T/s" "$T/e" "$s" >"$T/r"
	count "$T/r" "$s"
	n=$((n + 1))
done
[ $n -ge 20 ] || { fail=$((fail + 1)); echo "FAIL explain_schedule: only $n specs compared"; }
echo "explain_schedule: $pass passed, $fail failed"
[ $fail = 0 ]
