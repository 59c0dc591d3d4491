/* A fusion's compiled header against the verified manifest it is used
 * with: the same layout fingerprint and the struct sizes the manifest
 * implies (shared by refso.c and the manifest fuzzer), and every field
 * where the manifest puts it and every shape the reference assumes
 * (refso.c), or nothing runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"

int fr_spec_check(const fz_artifact_info *info, fr_spec *s, const char *layout, unsigned long long args_size,
                  unsigned long long ref_args_size, char *err)
{
	size_t ref_want = 8 * (size_t)info->nsizes; /* the reference's args: every non-temp tensor and every size */
	for (int i = 0; i < info->ntensors; i++) ref_want += 8 * (info->tensors[i].role != FZ_TEMP);
	if (strcmp(s->name, info->fusion) || strcmp(layout, info->layout) || args_size != info->args_size ||
	    ref_args_size != ref_want) {
		snprintf(err, FZ_ERRMSG_SIZE,
		         "%s: the header's layout (args %llu bytes, reference args %llu) is not the manifest's (%zu, %zu)",
		         info->fusion, args_size, ref_args_size, info->args_size, ref_want);
		return -1;
	}
	s->args_size = (size_t)args_size, s->ref_args_size = (size_t)ref_args_size;
	return 0;
}

/* ---- every field where the manifest puts it, as the compiler laid it out ---- */

/* A field's C type, as a number (_Generic in the wrapper, fr_spec_fields_source):
   what the args and reference args structs hold for each kind of parameter */
enum { K_NONE, K_PTR, K_DOUBLE, K_INT, K_CF, K_F, K_CI32, K_I32, K_CI64, K_I64 };

static const char kinds_src[] =
	"#include <stddef.h>\n"
	"#define FR_KIND(x) _Generic((x), unsigned long long: 1, double: 2, long long: 3, long: 3, const double *: 4, double *: 5, "
	"const int *: 6, int *: 7, const long *: 8, const long long *: 8, long *: 9, long long *: 9, default: 0)\n";

/* The wrapper's table, written from the manifest: a row per param (in
   manifest order, temps too) and per size, {offset in the args struct, its
   kind, offset in the reference's args (-1: none), its kind}, each number
   computed by the compiler from the header's structs. A header edited to
   agree with an edited manifest has to move the fields the reference and
   the launch lists read by name: the code then agrees too (a layout string
   alone was copied). NULL when out of memory. */
char *fr_spec_fields_source(const fz_artifact_info *info)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f) return NULL;
	const char *n = info->fusion;
	fprintf(f, "%sconst long long fr_fields[][4] = {\n", kinds_src);
	for (int i = 0; i < info->ntensors + info->nsizes; i++) {
		const int t = i < info->ntensors;
		const char *p = t ? "t_" : "n_", *name = t ? info->tensors[i].name : info->sizes[i - info->ntensors];
		fprintf(f, "\t{offsetof(fz_%s_args, %s%s), FR_KIND(((fz_%s_args *)0)->%s%s), ", n, p, name, n, p, name);
		if (t && info->tensors[i].role == FZ_TEMP) fputs("-1, 0},\n", f);
		else fprintf(f, "offsetof(fz_%s_ref_args, %s%s), FR_KIND(((fz_%s_ref_args *)0)->%s%s)},\n", n, p, name, n, p, name);
	}
	fputs("\t{0, 0, 0, 0}\n};\n", f);
	if (fclose(f)) return free(text), NULL;
	return text;
}

/* the kinds the manifest's line implies: *dev in the args, *ref in the reference's */
static void kinds_of(const fz_tensor_info *t, int *dev, int *ref)
{
	const int in = t->role == FZ_INPUT, fl = t->type[0] == 'f' || t->type[0] == 'b', i32 = !strcmp(t->type, "i32");
	if (in && t->rank == 0) { /* a scalar input, by value */
		*dev = *ref = fl ? K_DOUBLE : K_INT;
		return;
	}
	*dev = K_PTR;
	*ref = t->role == FZ_TEMP ? K_NONE : fl ? (in ? K_CF : K_F) : i32 ? (in ? K_CI32 : K_I32) : (in ? K_CI64 : K_I64);
}

int fr_spec_check_fields(const fz_artifact_info *info, const long long (*fields)[4], char *err)
{
	long long rk = 0;
	for (int i = 0; i < info->ntensors + info->nsizes; i++) {
		const int t = i < info->ntensors;
		int dev = K_INT, ref = K_INT;
		if (t) kinds_of(&info->tensors[i], &dev, &ref);
		const long long want[4] = {8ll * i, dev, ref ? 8 * rk : -1, ref};
		rk += ref != K_NONE;
		if (!memcmp(fields[i], want, sizeof want)) continue;
		snprintf(err, FZ_ERRMSG_SIZE,
		         "%s: the header's structs do not hold %s %s where the manifest puts it (args: offset %lld, kind %lld, "
		         "want %lld, %lld; reference args: offset %lld, kind %lld, want %lld, %lld): header and manifest disagree",
		         info->fusion, t ? "param" : "size", t ? info->tensors[i].name : info->sizes[i - info->ntensors],
		         fields[i][0], fields[i][1], want[0], want[1], fields[i][2], fields[i][3], want[2], want[3]);
		return -1;
	}
	return 0;
}

/* ---- every shape the reference assumes, the manifest's ---- */

/* The reference's loops and allocations were written for the shapes in
   its own table (NAME_ref.c: a file the header cannot change), and fuserun
   sizes the buffers it hands the reference and the kernels by the
   manifest's: a re-hashed manifest that changed a shape (N to M) is refused
   here, whatever the header says. */
int fr_spec_check_shapes(const fz_artifact_info *info, const char *const (*shapes)[2], char *err)
{
	int rows = 0;
	while (rows <= info->ntensors && shapes[rows][0]) rows++; /* bounded: one past the manifest's count is already wrong */
	for (int i = 0; i < info->ntensors; i++) {
		char want[FZ_MAX_LINE];
		const char *got = NULL;
		for (int r = 0; r < rows && !got; r++)
			if (!strcmp(shapes[r][0], info->tensors[i].name)) got = shapes[r][1] ? shapes[r][1] : "(none)";
		if (fz_tensor_shape_text(info, i, want, sizeof want) >= 0 && got && !strcmp(got, want)) continue;
		snprintf(err, FZ_ERRMSG_SIZE, "%s: the reference reads %s %s with shape %.200s, the manifest's is %.200s: "
		         "header and manifest disagree", info->fusion, info->tensors[i].role == FZ_TEMP ? "temp" : "param",
		         info->tensors[i].name, got ? got : "(not in its table)", want);
		return -1;
	}
	if (rows == info->ntensors) return 0;
	snprintf(err, FZ_ERRMSG_SIZE, "%s: the reference's shape table has %s rows than the manifest's %d params and temps: "
	         "header and manifest disagree", info->fusion, rows > info->ntensors ? "more" : "fewer", info->ntensors);
	return -1;
}
