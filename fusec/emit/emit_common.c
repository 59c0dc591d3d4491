/* Pieces every writer shares: rendering, linear offsets, argument structs. */
#include <stdlib.h>
#include <string.h>

#include "core/die.h"
#include "emit/emit.h"

/* runtime/fuserun.h's shared definitions, as text (Makefile) */
const char emit_fz_op_block[] =
#include "fz_op.inc"
	;
const char emit_row_lanes_fn[] =
#include "row_lanes.inc"
	;
const char emit_row_lanes_s_fn[] =
#include "row_lanes_s.inc"
	;
const char emit_row_s_block[] =
#include "row_s.inc"
	;

int emit_row_streamed(const FusionPlan *fp)
{
	for (int v = 0; v < 2; v++) {
		const Schedule *s = v ? &fp->unfused : &fp->fused;
		for (int i = 0; i < s->nk; i++)
			if (s->k[i].par.row_stream) return 1; /* set on cached row kernels only (plan_stream) */
	}
	return 0;
}

char *emit_render(ExprWriter *w, int e)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = xmemstream(&buf, &len);
	ir_write_expr(w, e, f);
	fclose(f);
	return buf;
}

void emit_row_width(const Fusion *f, const Kernel *k, const char *size_prefix, FILE *out)
{
	if (k->ninner > 1) fputc('(', out);
	for (int i = 0; i < k->ninner; i++) fputs(i ? " * " : "", out), dim_write_c(f, k->inner[i], size_prefix, out);
	if (k->ninner > 1) fputc(')', out);
}

void emit_linear(const Module *m, int fusion, int t, char **subs, const char *size_prefix, FILE *out)
{
	const Tensor *x = &m->tensor[t];
	const Fusion *f = &m->fusion[fusion];
	if (x->rank == 0) {
		fputc('0', out);
		return;
	}
	/* ((s0 * D1 + s1) * D2 + s2): 64-bit throughout */
	for (int i = 1; i < x->rank; i++) fputc('(', out);
	fprintf(out, "(long long)(%s)", subs[0]);
	for (int i = 1; i < x->rank; i++) {
		fputs(" * ", out);
		dim_write_c(f, x->dim[i], size_prefix, out);
		fprintf(out, " + (long long)(%s))", subs[i]);
	}
}

const char *emit_device_type(const Tensor *t)
{
	switch (t->type) {
	case ET_F64: return "double";
	case ET_F32: return "float";
	case ET_F16: case ET_BF16: return "unsigned short";
	case ET_F8E4M3: case ET_F8E5M2: return "unsigned char"; /* fp8 bytes, read by tensor-core tiles alone */
	case ET_I64: return "long long";
	case ET_I32: return "int";
	default: return "int";
	}
}

/* The argument block every kernel of a spec takes, by value: 8-byte fields
 * only, so the host's struct of CUdeviceptr/double/long long has the very
 * same layout. Scalars travel as double or long long whatever their type. */
void emit_args_struct(const Module *m, int fusion, int device, FILE *out)
{
	const Fusion *f = &m->fusion[fusion];
	fprintf(out, "typedef struct fz_%s_args {\n", f->name);
	for (int i = f->first_tensor; i < f->first_tensor + f->ntensor; i++) {
		const Tensor *t = &m->tensor[i];
		const char *role = t->kind == TK_INPUT ? "input" : t->kind == TK_OUTPUT ? "output" : "temp";
		if (t->rank == 0 && t->kind == TK_INPUT) {
			fprintf(out, "\t%s t_%s; /* %s scalar %s */\n", elem_info[t->type].is_float ? "double" : "long long",
			        t->name, role, elem_info[t->type].name);
		} else if (device) {
			fprintf(out, "\t%s%s *t_%s; /* %s %s, rank %d */\n", t->kind == TK_INPUT ? "const " : "",
			        emit_device_type(t), t->name, role, elem_info[t->type].name, t->rank);
		} else {
			fprintf(out, "\tunsigned long long t_%s; /* %s %s, rank %d (device pointer) */\n", t->name, role,
			        elem_info[t->type].name, t->rank);
		}
	}
	for (int i = 0; i < f->nsym; i++) fprintf(out, "\tlong long n_%s; /* size */\n", f->sym[i]);
	if (device) {
		fputs("\tdouble *ws_part; /* per-block partials of whole-grid reductions */\n", out);
		fputs("\tunsigned int *ws_count; /* blocks finished; the last resets it */\n", out);
	} else {
		fputs("\tunsigned long long ws_part; /* workspace (device pointer) */\n", out);
		fputs("\tunsigned long long ws_count; /* workspace (device pointer), zeroed once */\n", out);
	}
	fprintf(out, "} fz_%s_args;\n", f->name);
}
