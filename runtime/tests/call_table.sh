#!/bin/sh
# Writes the C of a table of every fusion's header functions (call_table.h)
# to stdout: call_table.sh NAME... (each generated/NAME.h on the include path).
echo '/* Written by runtime/tests/call_table.sh: do not edit. */'
echo '#include "fuserun.h"'
echo '#include "call_table.h"'
for n in "$@"; do
	echo "#include \"$n.h\""
	for v in fused unfused; do
		echo "FZ_SHARD_VARIANT($n, $v)"
		echo "static int ${n}_${v}_run_v(fz_artifact *art, const void *a, int sm, fz_stream *s) { return fz_${n}_${v}_run(art, (const fz_${n}_args *)a, sm, s); }"
	done
done
echo 'const call_spec call_specs[] = {'
for n in "$@"; do
	echo "	{\"$n\", sizeof(fz_${n}_args), {fz_${n}_unfused_scratch_v, fz_${n}_fused_scratch_v}, {fz_${n}_unfused_ops_v, fz_${n}_fused_ops_v}, {${n}_unfused_run_v, ${n}_fused_run_v}},"
done
echo '};'
echo "const int ncall_specs = $#;"
