# Sourced by tests/run.sh: group_outputs, what fusec does to the file system.
# Outputs are written atomically (the old artifact survives any failure),
# never through a link, never over a spec; folders are created; names the
# manifest cannot hold, duplicate fusion names and targets the runtime does
# not accept are refused with the documented exit status (2 usage, 1 the
# user's or the environment's error, never 3).

# out_expect NAME STATUS PATTERN ARGS...: fusec in the root; exit status and
# a fixed string in stderr (PATTERN empty: anything)
out_expect() {
	_n=$1 _want=$2 _pat=$3
	shift 3
	run_fusec "$ROOT" "$@"
	why=
	if sanitized "$TMP/err" || [ "$rc" -gt 128 ]; then why="crash or sanitizer report (exit $rc)"
	elif [ "$rc" != "$_want" ]; then why="exit status $rc, expected $_want"
	elif [ -n "$_pat" ] && ! grep -qF -e "$_pat" "$TMP/err"; then why="stderr lacks '$_pat'"
	fi
	[ -n "$why" ] && cat "$TMP/err" >"$TMP/details"
	check "outputs/$_n" "$why"
}

# same A B: the files are byte-identical
same() { cmp -s "$1" "$2"; }

group_outputs() {
	O=$TMP/outputs
	rm -rf "$O" && mkdir -p "$O"

	# folders are created, the depfile too, and the artifact verifies
	out_expect "creates -o and -MF folders" 0 "" -o "$O/new/a/b" -MD -MF "$O/dep/x/relu.d" specs/relu.fuse
	why=
	[ -f "$O/new/a/b/relu.manifest" ] || why="no manifest"
	grep -q "^$O/new/a/b/relu.manifest: specs/relu.fuse$" "$O/dep/x/relu.d" 2>/dev/null || why="${why:+$why; }depfile: $(cat "$O/dep/x/relu.d" 2>&1)"
	ls -a "$O/new/a/b" | grep -q '^\.relu' && why="${why:+$why; }temporary files left behind"
	check "outputs/folders created, depfile written, no temporary left" "$why"

	# --arch: only what the runtime accepts, each once
	out_expect "--arch twice the same" 2 "--arch names sm_80 twice" --arch=sm_80,sm_80 -o "$O/g" specs/relu.fuse
	out_expect "--arch=sm_aa is bad usage" 2 "bad target 'sm_aa'" --arch=sm_aa -o "$O/g" specs/relu.fuse
	out_expect "--arch=sm_75 is bad usage" 2 "bad target 'sm_75'" --arch=sm_75 -o "$O/g" specs/relu.fuse
	out_expect "--arch=sm_90a is accepted" 0 "" --arch=sm_90a -o "$O/a90" specs/relu.fuse
	grep -q '^target sm_90a relu.sm_90a.ptx ' "$O/a90/relu.manifest" 2>/dev/null
	check "outputs/sm_90a target in the manifest" "$([ $? = 0 ] || echo "no sm_90a target line")"
	grep -q '^\.target sm_90a' "$O/a90/relu.sm_90a.ptx" 2>/dev/null
	check "outputs/sm_90a PTX is for sm_90a" "$([ $? = 0 ] || echo "no .target sm_90a")"

	# -o too long; -MF naming the spec
	long=$(printf '%04090d' 0)
	out_expect "a 4090-byte -o is bad usage" 2 "longer than" -o "$O/$long" specs/relu.fuse
	cp specs/relu.fuse "$O/spec.fuse"
	out_expect "-MF naming the spec is bad usage" 2 "is an input spec" -o "$O/g" -MD -MF "$O/spec.fuse" "$O/spec.fuse"
	same specs/relu.fuse "$O/spec.fuse"
	check "outputs/-MF left the spec alone" "$([ $? = 0 ] || echo "the spec changed")"

	# an output that is the spec itself: refused, spec intact
	mkdir -p "$O/self"
	cp specs/relu.fuse "$O/self/relu.manifest"
	out_expect "an output path that is the spec" 1 "refusing to overwrite it" -o "$O/self" "$O/self/relu.manifest"
	same specs/relu.fuse "$O/self/relu.manifest"
	check "outputs/the spec survives" "$([ $? = 0 ] || echo "the spec was overwritten")"

	# a symbolic link in the output folder is neither followed nor replaced
	mkdir -p "$O/link"
	echo "precious" >"$O/victim"
	ln -s "$O/victim" "$O/link/relu.cu"
	out_expect "a link in the output folder" 1 "symbolic link" -o "$O/link" specs/relu.fuse
	why=
	[ "$(cat "$O/victim")" = precious ] || why="the link's target was written"
	[ -L "$O/link/relu.cu" ] || why="${why:+$why; }the link was replaced"
	[ -e "$O/link/relu.manifest" ] && why="${why:+$why; }a manifest was written anyway"
	check "outputs/the link and its target are untouched" "$why"

	# a failure half-way (the file-size limit) leaves the old artifact whole
	out_expect "a good artifact" 0 "" -o "$O/keep" specs/softmax.fuse
	cp -r "$O/keep" "$O/before"
	sed 's/exps/exps2/' specs/softmax.fuse >"$O/softmax.fuse"
	(trap '' XFSZ; ulimit -f 8 && cd "$ROOT" && exec "$FUSEC" -o "$O/keep" "$O/softmax.fuse") >"$TMP/out" 2>"$TMP/err"
	rc=$?
	why=
	[ "$rc" = 1 ] || why="exit $rc, expected 1"
	for f in "$O"/before/*; do same "$f" "$O/keep/$(basename "$f")" || why="${why:+$why; }$(basename "$f") changed"; done
	ls -a "$O/keep" | grep -q '^\.softmax' && why="${why:+$why; }temporary files left behind"
	[ -n "$why" ] && cat "$TMP/err" >"$TMP/details"
	check "outputs/a write failing half-way leaves the old artifact whole" "$why"

	# names the manifest cannot hold
	mkdir -p "$O/sp ace"
	cp specs/relu.fuse "$O/sp ace/relu.fuse"
	cp specs/relu.fuse "$O/sp ace/re lu.fuse"
	out_expect "a spec file name with a space" 1 "file name has a space" -o "$O/g2" "$O/sp ace/re lu.fuse"
	nl_spec="$O/$(printf 're\nlu.fuse')"
	cp specs/relu.fuse "$nl_spec"
	out_expect "a spec file name with a newline" 1 "control character" -o "$O/g2" "$nl_spec"
	[ -e "$O/g2/relu.manifest" ]
	check "outputs/nothing written for an unrepresentable name" "$([ $? != 0 ] || echo "a manifest was written")"
	# a folder with a space is fine, and escaped in the depfile
	out_expect "a folder with a space" 0 "" -o "$O/g3" -MD -MF "$O/g3.d" "$O/sp ace/relu.fuse"
	grep -qF 'sp\ ace/relu.fuse' "$O/g3.d"
	check "outputs/depfile escapes spaces" "$([ $? = 0 ] || cat "$O/g3.d")"

	# two specs, one fusion name
	sed 's/^\(.*\)$/\1/' specs/relu.fuse >"$O/relu_copy.fuse"
	out_expect "two specs defining one fusion name in a run" 1 "is also defined by" -o "$O/g4" specs/relu.fuse "$O/relu_copy.fuse"
	out_expect "the same, in two runs" 1 "another spec with this fusion name" -o "$O/g4" "$O/relu_copy.fuse"
	out_expect "regenerating from the same spec is fine" 0 "" -o "$O/g4" specs/relu.fuse

	# a FIFO given as a spec is refused at once, never waited on
	mkfifo "$O/fifo.fuse" 2>/dev/null
	if [ -p "$O/fifo.fuse" ]; then
		(cd "$ROOT" && exec timeout 20 "$FUSEC" "$O/fifo.fuse") >"$TMP/out" 2>"$TMP/err"
		rc=$?
		why=
		[ "$rc" = 1 ] || why="exit $rc, expected 1 (124: it blocked)"
		grep -q "not a regular file" "$TMP/err" || why="${why:+$why; }no 'not a regular file' message"
		check "outputs/a FIFO as a spec is refused without blocking" "$why"
	fi

	# names at the limits of the manifest (a 58-character fusion, whose
	# kernels NAME_u2 are 61; 63-character tensors and sizes), C keywords and
	# the templates' own locals as names, an index s_end beside a ragged s:
	# the PTX entries are the manifest's kernels (they were NAME_f beside
	# NAME_f0), the header compiles as C and C++, the runtime verifies it
	fn=$(repeat 58 f) tn=$(repeat 62 t) sn=$(repeat 63 S)
	cat >"$O/$fn.fuse" <<-EOF
	fusion $fn(${tn}a: f32[$sn], int: f32[$sn], total: f32[$sn], row_ptr: i32[NP1], w: f32[S]) -> (${tn}b: f32[$sn], return: f32, y: f32[$sn]) {
	    stage a { ${tn}c(i) = ${tn}a(i) * int(i) + total(i) }
	    stage b [reduction] { return +=! ${tn}c(fz_vec) }
	    stage c { ${tn}b(i) = ${tn}c(i) / return }
	    stage d [reduction] { y(n) +=! w(s) * total(s_end) for s in row_ptr(n) .. row_ptr(n + 1) }
	}
	EOF
	out_expect "names at the manifest's limits" 0 "" -o "$O/g5" --arch=sm_80,sm_90a "$O/$fn.fuse"
	why=
	kernels=$(sed -n 's/^kernel [a-z]* \([^ ]*\) .*/\1/p' "$O/g5/$fn.manifest" | sort)
	[ -n "$kernels" ] || why="no kernel lines in the manifest"
	for a in sm_80 sm_90a; do
		entries=$(sed -n 's/^\.visible \.entry \([A-Za-z0-9_]*\)(.*/\1/p' "$O/g5/$fn.$a.ptx" 2>/dev/null | sort)
		[ "$entries" = "$kernels" ] || why="${why:+$why; }$a PTX entries differ from the manifest's kernels"
	done
	printf '#include "%s.h"\nint main(void) { return 0; }\n' "$fn" >"$O/g5/h.c"
	cp "$O/g5/h.c" "$O/g5/h.cpp"
	$CC -std=c11 -Wall -Wextra -Werror -I"$O/g5" -c "$O/g5/h.c" -o "$O/g5/h.o" >"$TMP/cc" 2>&1 || why="${why:+$why; }the header does not compile as C: $(head -n 1 "$TMP/cc")"
	if command -v c++ >/dev/null 2>&1; then
		c++ -Wall -Wextra -Werror -I"$O/g5" -c "$O/g5/h.cpp" -o "$O/g5/h2.o" >"$TMP/cc" 2>&1 || why="${why:+$why; }the header does not compile as C++: $(head -n 1 "$TMP/cc")"
	fi
	$CC -std=c11 -Wall -Wextra -Werror -I"$O/g5" -c "$O/g5/${fn}_ref.c" -o "$O/g5/ref.o" >"$TMP/cc" 2>&1 || why="${why:+$why; }the reference does not compile: $(head -n 1 "$TMP/cc")"
	if [ -x "$ROOT/bin/fuserun" ]; then
		"$ROOT/bin/fuserun" list "$O/g5/$fn.manifest" >"$TMP/fr" 2>&1 || why="${why:+$why; }fuserun list refused it: $(head -n 1 "$TMP/fr")"
	fi
	check "outputs/names at the limits: PTX entries, manifest, header, reference, runtime agree" "$why"

	# a manifest line the runtime would refuse (over FZ_MAX_LINE, 4096 bytes:
	# a kernel reading 70 tensors of 60-character names at other rows, its
	# across= list) is refused, nothing written
	{
		printf 'fusion f('
		seq_lines 70 't%02d_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx: f32[N], '
		printf 'last: f32[N]) -> (y: f32[N]) {\n    stage s { y(n) = last(n)'
		seq_lines 70 ' + t%02d_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx((n + 1) %% N)'
		printf ' }\n}\n'
	} >"$O/longline.fuse"
	out_expect "a manifest line over 4096 bytes" 1 "fusion f: its manifest's 'kernel fused ...' line is too long" -o "$O/ll" "$O/longline.fuse"
	check "outputs/no manifest with a line over 4096 bytes" "$([ -e "$O/ll/f.manifest" ] && echo "f.manifest written")"

	# shared memory past what a block may declare (kmin[13] of a column
	# reduction: 32 slices x 32 points x 13 floats, 53760 bytes with the fold's;
	# ptxas refused the PTX): refused at the reduction, nothing written; 12 fit
	printf 'fusion big(x: f32[M,N]) -> (y: f32[N]) {\n    stage s [reduction] { y(i) kmin[13]=! x(j,i) }\n}\n' >"$O/smem.fuse"
	out_expect "static shared memory past 48 KB" 1 "smem.fuse:2:27: error: kernel big_f0's reductions need 53760 bytes of shared memory" \
		-o "$O/sm" --arch=sm_90 "$O/smem.fuse"
	check "outputs/no manifest past 48 KB of shared memory" "$([ -e "$O/sm/big.manifest" ] && echo "big.manifest written")"
	sed 's/kmin\[13\]/kmin[11]/' "$O/smem.fuse" >"$O/smem11.fuse"
	out_expect "static shared memory of kmin[11] fits" 0 "" -o "$O/sm11" --arch=sm_90 "$O/smem11.fuse"

	# a kernel that spills registers is named, GCC style (ptxas -v on each
	# target's PTX, issue 24): a gated RMS norm of three gates, as a user
	# writes it, spills at its 64-register launch bound: in f32, 104 bytes
	# with CUDA 13's ptxas (in f16 it spilled 68 to 88 bytes until the row
	# cache held f16 rows packed, 2026-11-27: none); relu spills nowhere and
	# gets no warning; the artifact is written either way
	if [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/ptxas" ]; then
		cat >"$O/gated.fuse" <<-'EOF'
		fusion gated(x: f32[R,C], g: f32[R,C], u: f32[R,C], w: f32[C], b: f32[C], eps: f32) -> (y: f32[R,C]) {
		    stage ss [reduction]           { ms(r) +=! x(r,c) * x(r,c) }
		    stage norm [precision = f16]   { y(r,c) = (x(r,c) * rsqrt(ms(r) / C + eps) * w(c) + b(c)) * (g(r,c) / (1.0 + exp(-g(r,c)))) * tanh(u(r,c)) }
		}
		EOF
		out_expect "a spilling kernel is named" 0 "$O/gated.fuse: warning: kernel gated_f0 spills " \
			-o "$O/sp" --arch=sm_80,sm_90,sm_90a "$O/gated.fuse"
		why=
		for a in sm_80 sm_90 sm_90a; do
			grep -Eq "^$O/gated.fuse: warning: kernel gated_f0 spills [1-9][0-9]* bytes of registers on $a \(ptxas -v: [0-9]+ bytes spill stores, [0-9]+ bytes spill loads\)\$" "$TMP/err" ||
				why="$why no warning line for $a;"
		done
		[ -f "$O/sp/gated.manifest" ] || why="$why no artifact written;"
		[ -n "$why" ] && cat "$TMP/err" >"$TMP/details"
		check "outputs/a spill warning per target, GCC style, the artifact written" "$why"
		# a row path compiled as a function of its own (kern_row.c) is
		# reported by ptxas under its mangled name: the warning names its
		# kernel and the function as NAME.cu spells it (the first such
		# warning said "kernel _ZN55_INTERNAL_..E29fz_..._args")
		run_fusec "$ROOT" -o "$O/ssm" --arch=sm_80,sm_90,sm_90a bench/corpus/softmax_scaled_masked.fuse
		why=
		grep -q '_Z' "$TMP/err" && why="a warning names a mangled function;"
		grep 'row path' "$TMP/err" | grep -Evq "warning: kernel softmax_scaled_masked_f0 spills [0-9]+ bytes of registers on sm_[0-9a]+ in its row path fz_[a-z0-9]+_softmax_scaled_masked_f0, a function of its own" &&
			why="$why a row path's warning not in the expected form;"
		[ -n "$why" ] && cat "$TMP/err" >"$TMP/details"
		check "outputs/a row path's spills named by its kernel, not by a mangled name" "$why"
		out_expect "no warning where nothing spills" 0 "" -o "$O/nsp" --arch=sm_80,sm_90,sm_90a specs/relu.fuse
		check "outputs/no warning where nothing spills: stderr empty" "$([ -s "$TMP/err" ] && head -n 3 "$TMP/err")"
	fi

	# PTX that ptxas refuses is fusec's internal error, nothing written (issue
	# 27: fusec ran ptxas -v for its spill warnings and ignored its exit
	# status, so an artifact no GPU loads was written and fusec exited 0); a
	# ptxas of the toolkit's CUDA_HOME that refuses everything stands in
	mkdir -p "$O/badcuda/bin"
	printf '#!/bin/sh\necho "ptxas error   : Entry function '"'"'relu_f0'"'"' uses too much shared data" >&2\nexit 255\n' >"$O/badcuda/bin/ptxas"
	chmod +x "$O/badcuda/bin/ptxas"
	(CUDA_HOME=$O/badcuda exec "$FUSEC" -o "$O/bad" --arch=sm_90 specs/relu.fuse) >"$TMP/out" 2>"$TMP/err"
	rc=$? why=
	[ $rc = 3 ] || why="exit status $rc, expected 3;"
	grep -q "^fusec: internal error: ptxas refused the PTX generated for relu (sm_90):" "$TMP/err" || why="$why no refusal line;"
	grep -q "uses too much shared data" "$TMP/err" || why="$why ptxas's error not shown;"
	[ -e "$O/bad/relu.manifest" ] && why="$why relu.manifest written;"
	[ -n "$why" ] && cat "$TMP/err" >"$TMP/details"
	check "outputs/PTX that ptxas refuses: exit 3, nothing written" "$why"

	# two fusec runs writing one fusion from two specs into one folder at once:
	# the folder's lock makes one of them write a whole artifact and the other
	# refuse (without it both wrote, and 2 of 30 tries left a mix)
	printf 'fusion race(x: f32[N]) -> (y: f32[N]) {\n    stage a { y(i) = x(i) + 1.0 }\n}\n' >"$O/race_a.fuse"
	printf 'fusion race(x: f32[N]) -> (y: f32[N]) {\n    stage a { y(i) = x(i) * 2.0 }\n}\n' >"$O/race_b.fuse"
	why=
	for k in 1 2 3 4 5 6; do
		d=$O/race$k
		"$FUSEC" -o "$d" --arch=sm_90 "$O/race_a.fuse" >/dev/null 2>"$O/race_a.err" & pa=$!
		"$FUSEC" -o "$d" --arch=sm_90 "$O/race_b.fuse" >/dev/null 2>"$O/race_b.err" & pb=$!
		wait $pa; ra=$? ; wait $pb; rb=$?
		if [ $((ra == 0)) = $((rb == 0)) ]; then why="try $k: exit statuses $ra and $rb, one success wanted"; break; fi
		w=a; [ $ra = 0 ] || w=b
		grep -q "^spec race_$w.fuse$" "$d/race.manifest" 2>/dev/null || { why="try $k: the manifest is not race_$w's"; break; }
		if [ -x "$ROOT/bin/fuserun" ] && ! "$ROOT/bin/fuserun" list "$d/race.manifest" >"$O/race.list" 2>&1; then
			why="try $k: fuserun refuses the artifact: $(head -n 1 "$O/race.list")"; break
		fi
	done
	check "outputs/two writers of one fusion: one whole artifact, the other refused" "$why"

	# CR-only line endings: errors on their own lines
	printf '# CR only\r# line 2\rfusion cr(x: f32[N]) -> (y: f32[N]) {\r    stage a { y(i) = nosuch(x(i)) }\r}\r' >"$O/cr.fuse"
	run_fusec "$ROOT" "$O/cr.fuse"
	why=
	grep -q "cr.fuse:4:" "$TMP/err" || why="no error on line 4: $(head -n1 "$TMP/err")"
	grep -q "cr.fuse:1:" "$TMP/err" && why="an error reported on line 1"
	check "outputs/CR-only files report the right line" "$why"
}
