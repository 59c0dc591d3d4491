/* The float64 reference: each stage in order, as written, every
 * intermediate in memory. Deliberately naive: it is what the kernels are
 * checked against, so it shares no scheduling with them. */
#include <stdlib.h>
#include <string.h>

#include "core/die.h"
#include "host/host.h"
#include "core/namer.h"

typedef struct Rx {
	const Module *m;
	int fusion;
	int first_index; /* the fusion's first index: index i's binding is bind[i - first_index] */
	char **bind;
	ExprWriter w;
} Rx;

static void dim_c(const Rx *rx, Dim d, FILE *out) { dim_write_c(&rx->m->fusion[rx->fusion], d, "n_", out); }

static const char *rtype(const Tensor *t)
{
	if (elem_info[t->type].is_float) return "double";
	return t->type == ET_I64 ? "int64_t" : "int32_t";
}

static void rleaf(ExprWriter *w, int e, void *outp)
{
	Rx *rx = w->user;
	FILE *out = outp;
	const Module *m = rx->m;
	const Expr *x = &m->expr[e];
	if (x->op == IR_INDEX) {
		fputs(rx->bind[x->index - rx->first_index], out);
		return;
	}
	const Tensor *t = &m->tensor[x->tensor];
	if (x->op == IR_SCALAR) {
		if (t->kind == TK_INPUT) fprintf(out, "t_%s", t->name);
		else fprintf(out, "t_%s[0]", t->name);
		return;
	}
	char *subs[MAX_RANK] = {0};
	for (int i = 0; i < x->nargs; i++) {
		char *s = emit_render(w, x->args[i]);
		const Expr *ax = &m->expr[x->args[i]];
		if (ax->op == IR_INDEX && m->index[ax->index].kind == IX_DENSE) {
			subs[i] = s;
		} else { /* a gather or a data-given range: checked, so bad data cannot crash the reference */
			char *buf = NULL;
			size_t len = 0;
			FILE *f = xmemstream(&buf, &len);
			fprintf(f, "fz_ix(%s, ", s);
			dim_c(rx, t->dim[i], f);
			fputs(", &bad)", f);
			fclose(f);
			free(s);
			subs[i] = buf;
		}
	}
	fprintf(out, "t_%s[", t->name);
	emit_linear(m, rx->fusion, x->tensor, subs, "n_", out);
	fputc(']', out);
	for (int i = 0; i < x->nargs; i++) free(subs[i]);
}

static void ind(FILE *out, int n)
{
	for (int i = 0; i < n; i++) fputc('\t', out);
}


/* Opens loops over indices [from, to) of s: dense ones first, ragged last. */
static int open_loops(Rx *rx, const Stmt *s, int from, int to, int depth, FILE *out)
{
	const Module *m = rx->m;
	/* loop variables i_NAME; a ragged range's end gets a name no index of
	   the statement has (an index may be called s_end beside s) */
	Namer nm;
	namer_init(&nm);
	for (int i = 0; i < s->nindex; i++) {
		char *v = xasprintf("i_%s", m->index[s->first_index + i].name);
		namer_reserve(&nm, v);
		free(v);
	}
	for (int pass = 0; pass < 2; pass++)
		for (int i = from; i < to; i++) {
			const Index *ix = &m->index[s->first_index + i];
			if ((ix->kind == IX_RAGGED) != pass) continue;
			char *v = xasprintf("i_%s", ix->name);
			free(rx->bind[s->first_index + i - rx->first_index]);
			rx->bind[s->first_index + i - rx->first_index] = xstrdup(v);
			ind(out, depth++);
			if (ix->kind == IX_DENSE) {
				fprintf(out, "for (long long %s = 0; %s < ", v, v);
				dim_c(rx, ix->range, out);
				fprintf(out, "; ++%s) {\n", v);
			} else {
				char *lo = emit_render(&rx->w, ix->lo), *hi = emit_render(&rx->w, ix->hi);
				const char *end = namer_make(&nm, "%s_end", v);
				fprintf(out, "for (long long %s = %s, %s = %s; %s < %s; ++%s) {\n", v, lo, end, hi, v, end, v);
				free(lo), free(hi);
			}
			free(v);
		}
	namer_free(&nm);
	return depth;
}

static void close_loops(int from, int to, int depth, FILE *out)
{
	for (int d = depth - 1; d >= to; d--) ind(out, d), fputs("}\n", out);
	(void)from;
}

static char *target_ref(Rx *rx, const Stmt *s)
{
	const Module *m = rx->m;
	const Tensor *t = &m->tensor[s->out];
	char *subs[MAX_RANK] = {0};
	for (int i = 0; i < s->nlhs; i++) {
		char *e = emit_render(&rx->w, s->lhs[i]);
		const Expr *lx = &m->expr[s->lhs[i]];
		if (lx->op == IR_INDEX && m->index[lx->index].kind == IX_DENSE) {
			subs[i] = e;
		} else {
			char *buf = NULL;
			size_t len = 0;
			FILE *f = xmemstream(&buf, &len);
			fprintf(f, "fz_ix(%s, ", e);
			dim_c(rx, t->dim[i], f);
			fputs(", &bad)", f);
			fclose(f);
			free(e);
			subs[i] = buf;
		}
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *f = xmemstream(&buf, &len);
	fprintf(f, "t_%s[", t->name);
	emit_linear(m, rx->fusion, s->out, subs, "n_", f);
	fputc(']', f);
	fclose(f);
	for (int i = 0; i < s->nlhs; i++) free(subs[i]);
	return buf;
}

static void emit_stmt(Rx *rx, int sid, FILE *out)
{
	const Module *m = rx->m;
	const Stmt *s = &m->stmt[sid];
	const Tensor *t = &m->tensor[s->out];
	fprintf(out, "\t{ /* %s, stage %s */\n", pattern_name[s->pattern], m->stage[s->stage].name);
	if (s->red == RED_APPEND) {
		const Tensor *c = &m->tensor[t->list_count];
		fprintf(out, "\t\tt_%s[0] = 0;\n", c->name);
		int d = open_loops(rx, s, 0, s->nindex, 2, out);
		char *v = emit_render(&rx->w, s->rhs), *mk = emit_render(&rx->w, s->mask);
		/* every selected value counted, as the kernel's atomic count: past the
		   list's room the count tells the caller it overflowed */
		ind(out, d), fprintf(out, "if (%s) {\n", mk);
		ind(out, d + 1), fprintf(out, "if (t_%s[0] < ", c->name);
		dim_c(rx, t->dim[0], out);
		fprintf(out, ") t_%s[t_%s[0]] = (%s)(%s);\n", t->name, c->name, rtype(t), v);
		ind(out, d + 1), fprintf(out, "t_%s[0]++;\n", c->name);
		ind(out, d), fputs("}\n", out);
		free(v), free(mk);
		close_loops(0, 2, d, out);
		fputs("\t}\n", out);
		return;
	}
	int reduce = s->red >= RED_SUM && s->red <= RED_KMIN;
	int d = open_loops(rx, s, 0, reduce ? s->nfree : s->nindex, 2, out);
	int outer = d;
	const char *at = elem_info[t->type].is_float ? "double" : "int64_t";
	if (reduce) {
		if (s->red == RED_KMIN) { /* an integer kmin in integers; with fewer than k terms the kernel's
		                             sentinel, its accumulator type's largest value (fz_inf) */
			const char *inf = elem_info[t->type].is_float ? "INFINITY" : s->acc == ET_I64 ? "INT64_MAX" : "INT32_MAX";
			ind(out, d), fprintf(out, "%s kb[%d];\n", at, s->kmin_k);
			ind(out, d), fprintf(out, "for (int q = 0; q < %d; ++q) kb[q] = %s;\n", s->kmin_k, inf);
		} else {
			const char *init = s->red == RED_SUM ? "0" : s->red == RED_MAX ? "-INFINITY" : "INFINITY";
			if (!elem_info[t->type].is_float && s->red != RED_SUM) init = s->red == RED_MAX ? "INT64_MIN" : "INT64_MAX";
			ind(out, d), fprintf(out, "%s acc = %s;\n", at, init);
		}
		d = open_loops(rx, s, s->nfree, s->nindex, d, out);
	}
	char *v = emit_render(&rx->w, s->rhs);
	char *mk = s->mask ? emit_render(&rx->w, s->mask) : strdup("1");
	char *tg = target_ref(rx, s);
	ind(out, d), fprintf(out, "if (%s) {\n", mk);
	ind(out, d + 1), fprintf(out, "const %s v = (%s)(%s);\n", at, at, v);
	ind(out, d + 1);
	switch (s->red) {
	case RED_NONE:
		if (elem_is_fp8(t->type)) fprintf(out, "%s = fz_sat(v, %s);\n", tg, t->type == ET_F8E4M3 ? "448.0" : "57344.0");
		else fprintf(out, "%s = (%s)v;\n", tg, rtype(t));
		break;
	case RED_ACCUM: /* the target's subscripts are checked before it is touched */
		fprintf(out, "{ int was = bad; bad = 0; %s *at = &%s; if (!bad) *at += (%s)v; bad |= was; }\n", rtype(t), tg, rtype(t));
		break;
	case RED_SUM: fputs("acc += v;\n", out); break;
	case RED_MAX: fputs("if (v > acc) acc = v;\n", out); break;
	case RED_MIN: fputs("if (v < acc) acc = v;\n", out); break;
	case RED_KMIN:
		fprintf(out, "if (v < kb[%d]) { int q = %d; while (q > 0 && kb[q - 1] > v) { kb[q] = kb[q - 1]; q--; } kb[q] = v; }\n",
		        s->kmin_k - 1, s->kmin_k - 1);
		break;
	default: break;
	}
	ind(out, d), fputs("}\n", out);
	if (reduce) {
		close_loops(0, outer, d, out);
		ind(out, outer);
		if (s->red == RED_KMIN) fprintf(out, "%s = (%s)kb[%d];\n", tg, rtype(t), s->kmin_k - 1);
		else fprintf(out, "%s = (%s)acc;\n", tg, rtype(t));
	}
	free(v), free(mk), free(tg);
	close_loops(0, 2, outer, out);
	fputs("\t}\n", out);
}

static const char ref_helpers[] =
	"static double fz_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }\n"
	"static double fz_relu(double x) { return x > 0.0 ? x : 0.0; }\n"
	"static double fz_gelu(double x) { return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }\n"
	"static double fz_rsqrt(double x) { return 1.0 / sqrt(x); }\n"
	"static int64_t fz_iabs(int64_t x) { return x < 0 ? -x : x; }\n"
	"static int64_t fz_imin(int64_t a, int64_t b) { return a < b ? a : b; }\n"
	"static int64_t fz_imax(int64_t a, int64_t b) { return a > b ? a : b; }\n"
	"static double fz_digamma(double x)\n"
	"{\n"
	"\tif (!(x > 0.0)) return NAN;\n"
	"\tdouble r = 0.0;\n"
	"\twhile (x < 6.0) { r -= 1.0 / x; x += 1.0; }\n"
	"\tconst double f = 1.0 / (x * x);\n"
	"\treturn r + log(x) - 0.5 / x - f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f / 132))));\n"
	"}\n"
	"static int64_t fz_ix(int64_t v, int64_t n, int *bad)\n"
	"{\n"
	"\tif (v < 0 || v >= n) { *bad = 1; return 0; }\n"
	"\treturn v;\n"
	"}\n";

/* i32(x) and i64(x) of a float: the GPU's conversion (ir_write_expr) */
static const char ref_f2i[] =
	"static int32_t fz_f2i32(double x) { return x != x ? 0 : x >= 2147483647.0 ? INT32_MAX : x <= -2147483648.0 ? INT32_MIN : (int32_t)x; }\n"
	"static int64_t fz_f2i64(double x)\n"
	"{\n"
	"\treturn x != x ? 0 : x >= 9223372036854775807.0 ? INT64_MAX : x <= -9223372036854775808.0 ? INT64_MIN : (int64_t)x;\n"
	"}\n";

/* an fp8 output's value: saturated at the format's largest finite value
   (an infinity too, NaN kept), as the kernel's cvt.rn.satfinite stores it;
   not rounded to fp8: the comparison's tolerance covers the rounding */
static const char ref_fp8_sat[] =
	"static double fz_sat(double x, double m) { return x > m ? m : x < -m ? -m : x; }\n";

static int fusion_fp8_out(const Module *m, const Fusion *f)
{
	for (int t = f->first_tensor; t < f->first_tensor + f->ntensor; t++)
		if (m->tensor[t].kind == TK_OUTPUT && elem_is_fp8(m->tensor[t].type)) return 1;
	return 0;
}

/* does e convert a float to an integer anywhere? */
static int float_to_int(const Module *m, int e)
{
	if (!e) return 0;
	const Expr *x = &m->expr[e];
	if (x->op == IR_CAST && !elem_info[x->type].is_float && elem_info[m->expr[x->a].type].is_float) return 1;
	for (int i = 0; x->op == IR_LOAD && i < x->nargs; i++)
		if (float_to_int(m, x->args[i])) return 1;
	return float_to_int(m, x->a) || float_to_int(m, x->b) || float_to_int(m, x->c);
}

static int fusion_float_to_int(const Module *m, const Fusion *f)
{
	for (int sg = f->first_stage; sg < f->first_stage + f->nstage; sg++)
		for (int si = m->stage[sg].first_stmt; si < m->stage[sg].first_stmt + m->stage[sg].nstmt; si++) {
			const Stmt *s = &m->stmt[si];
			if (float_to_int(m, s->rhs) || float_to_int(m, s->mask)) return 1;
			for (int i = 0; i < s->nlhs; i++)
				if (float_to_int(m, s->lhs[i])) return 1;
			for (int i = s->first_index; i < s->first_index + s->nindex; i++)
				if (m->index[i].kind == IX_RAGGED && (float_to_int(m, m->index[i].lo) || float_to_int(m, m->index[i].hi))) return 1;
		}
	return 0;
}

/* The shapes this reference's loops assume, from the tensors that wrote
   them: fuserun sizes the buffers it hands the reference by the manifest,
   and compares the manifest's shapes with these, which an edit of the
   manifest and the header together cannot change (issue 27) */
static void ref_shapes(const Module *m, const Fusion *f, FILE *out)
{
	fprintf(out, "\nconst char *const fz_%s_ref_shapes[][2] = {\n", f->name);
	for (int i = f->first_tensor; i < f->first_tensor + f->ntensor; i++) {
		fprintf(out, "\t{\"%s\", \"", m->tensor[i].name);
		emit_tensor_shape(m, f, &m->tensor[i], out);
		fputs("\"},\n", out);
	}
	fputs("\t{0, 0}\n};\n", out);
}

/* The dimensions inputs' domains reach through subscripts (the manifest's
   fits lines, front/sema_fits.c): below them some input the spec allows
   reads outside a buffer, so the reference refuses those sizes before it
   reads anything, as the runtime refuses to launch at them: 3. */
static void ref_fits(const Rx *rx, const Fusion *f, FILE *out)
{
	if (!f->nfit) return;
	fputs("	if (", out);
	for (int i = 0; i < f->nfit; i++) {
		if (i) fputs(" || ", out);
		dim_c(rx, f->fit[i].dim, out);
		fprintf(out, " < %lldLL", (long long)f->fit[i].least);
	}
	fputs(") return 3; /* sizes below what the inputs' domains reach */\n", out);
}

void host_reference(const Module *m, int fusion, FILE *out)
{
	const Fusion *f = &m->fusion[fusion];
	Rx rx = {.m = m, .fusion = fusion};
	int ni = fusion_indices(m, f, &rx.first_index);
	rx.bind = xcalloc((unsigned long)ni + 1, sizeof *rx.bind);
	rx.w = (ExprWriter){.m = m, .leaf = rleaf, .compute = ET_F64, .cuda = 0, .user = &rx};
	fputs("#include <math.h>\n#include <stdint.h>\n#include <stdlib.h>\n\n", out);
	fprintf(out, "#include \"%s.h\"\n\n", f->name);
	fputs("#if defined(__GNUC__)\n#pragma GCC diagnostic ignored \"-Wunused-function\"\n#pragma GCC diagnostic ignored \"-Wunused-variable\"\n#endif\n\n", out);
	fputs(ref_helpers, out);
	if (ir_uses_op(m, IR_SILU)) fputs("static double fz_silu(double x) { return x / (1.0 + exp(-x)); }\n", out);
	if (fusion_float_to_int(m, f)) fputs(ref_f2i, out); /* only where used: the shipped references stay as they were */
	if (fusion_fp8_out(m, f)) fputs(ref_fp8_sat, out);
	ref_shapes(m, f, out);
	fprintf(out, "\nint fz_%s_reference(const fz_%s_ref_args *a)\n{\n\tint bad = 0;\n", f->name, f->name);
	for (int i = 0; i < f->nsym; i++) fprintf(out, "\tconst long long n_%s = a->n_%s;\n", f->sym[i], f->sym[i]);
	ref_fits(&rx, f, out);
	for (int i = f->first_tensor; i < f->first_tensor + f->ntensor; i++) {
		const Tensor *t = &m->tensor[i];
		if (t->kind == TK_INPUT && t->rank == 0)
			fprintf(out, "\tconst %s t_%s = a->t_%s;\n", elem_info[t->type].is_float ? "double" : "int64_t", t->name, t->name);
		else if (t->kind == TK_INPUT)
			fprintf(out, "\tconst %s *t_%s = a->t_%s;\n", rtype(t), t->name, t->name);
		else if (t->kind == TK_OUTPUT)
			fprintf(out, "\t%s *t_%s = a->t_%s;\n", rtype(t), t->name, t->name);
		else {
			fprintf(out, "\t%s *t_%s = calloc((size_t)(1", rtype(t), t->name);
			for (int d = 0; d < t->rank; d++) fputs(" * ", out), dim_c(&rx, t->dim[d], out);
			fprintf(out, "), sizeof(%s));\n", rtype(t));
		}
	}
	fputs("\tint oom = 0;\n", out);
	for (int i = f->first_tensor; i < f->first_tensor + f->ntensor; i++)
		if (m->tensor[i].kind == TK_TEMP) fprintf(out, "\toom |= t_%s == NULL;\n", m->tensor[i].name);
	fputs("\tif (!oom) {\n", out);
	for (int sg = f->first_stage; sg < f->first_stage + f->nstage; sg++)
		for (int s = m->stage[sg].first_stmt; s < m->stage[sg].first_stmt + m->stage[sg].nstmt; s++) emit_stmt(&rx, s, out);
	fputs("\t}\n", out);
	for (int i = f->first_tensor; i < f->first_tensor + f->ntensor; i++)
		if (m->tensor[i].kind == TK_TEMP) fprintf(out, "\tfree(t_%s);\n", m->tensor[i].name);
	fputs("\treturn oom ? 2 : bad ? 1 : 0;\n}\n", out);
	for (int i = 0; i < ni; i++) free(rx.bind[i]);
	free(rx.bind);
}
