/* The row walk: a ROW kernel's group of threads over a row's columns,
 * from the row's register cache (cached vectors of 4), streamed from
 * memory when the row is wider than the registers, or a column a thread
 * and step. Both the row template (kern_row.c) and the row-wide reductions
 * (cuda_reduce.c) walk rows through it; a statement's store inside a
 * cached walk may be collected into a vector store (cuda_row_store_deferred). */
#include <stdlib.h>
#include <string.h>

#include "core/die.h"
#include "cuda/cuda.h"

int cuda_row_vec_type(ElemType t) { return t == ET_F32 || t == ET_F16 || t == ET_BF16; }

void cuda_row_width(Cx *cx, FILE *out) { emit_row_width(&cx->m->fusion[cx->fusion], cx->k, "a.n_", out); }

/* A row over several axes: the walk's flat column split back into them
 * (an index read alone, gamma(g, c) of a group norm). A 64-bit division is
 * a subroutine on the GPU, whose calls inside the walk made ptxas spill the
 * row's cache (instance norm: 112 bytes): instead each divisor's reciprocal
 * in double, computed once at the kernel's top (cuda_row_recips), and the
 * quotient corrected by one either way; exact while the column is under
 * 2^52 (a row of 2^52 elements is petabytes). */
static void row_divisor(Cx *cx, int j, int later, FILE *f)
{
	const Kernel *k = cx->k;
	fputc('(', f);
	if (!later) cuda_dim(cx, k->inner[j], f);
	for (int i = j + 1; later && i < k->ninner; i++) fputs(i > j + 1 ? " * " : "", f), cuda_dim(cx, k->inner[i], f);
	fputc(')', f);
}

void cuda_row_recips(Cx *cx, int depth)
{
	const Kernel *k = cx->k;
	if (k->ninner < 2) return;
	for (int j = 0; j < k->ninner; j++)
		for (int later = 0; later < 2; later++) {
			if (later ? j + 1 == k->ninner : j == 0) continue;
			cuda_ind(cx->out, depth), fprintf(cx->out, "const double fz_r%c%d = 1.0 / (double)", later ? 'p' : 'e', j);
			row_divisor(cx, j, later, cx->out);
			fputs("; /* the row's axes from its flat column */\n", cx->out);
		}
	if (k->lead) cuda_ind(cx->out, depth), fputs("const double fz_rs = 1.0 / (double)", cx->out), cuda_row_segment(cx, cx->out), fputs("; /* its segments */\n", cx->out);
}

/* a / d for 0 <= a < 2^52, d > 0, through d's reciprocal r; small: a is
   under 2^30 (the cached steps), a 32-bit division (a divisor past 32 bits
   clamped: the quotient is 0 either way) */
static char *row_div(const char *a, const char *d, const char *r, int small)
{
	if (small) return xasprintf("(long long)((unsigned)(%s) / (unsigned)fz_imin(%s, 0xffffffffLL))", a, d);
	char *q0 = xasprintf("(long long)((double)(%s) * %s)", a, r);
	char *q = xasprintf("(%s - (%s * %s > %s) + ((%s + 1) * %s <= %s))", q0, q0, d, a, q0, d, a);
	free(q0);
	return q;
}

/* axis j of the row at flat column var: var / (the later axes' product),
   less its multiples of its own extent (the first axis needs no
   remainder, the last no quotient) */
static char *row_axis(Cx *cx, const char *var, int j)
{
	const Kernel *k = cx->k;
	if (k->ninner == 1) return xstrdup(var);
	char *later = NULL, *ext = NULL, rp[32], re[32];
	size_t len = 0;
	FILE *f = xmemstream(&later, &len);
	row_divisor(cx, j, 1, f);
	fclose(f);
	f = xmemstream(&ext, &len);
	row_divisor(cx, j, 0, f);
	fclose(f);
	snprintf(rp, sizeof rp, "fz_rp%d", j), snprintf(re, sizeof re, "fz_re%d", j);
	char *q = j + 1 < k->ninner ? row_div(var, later, rp, cx->row_small) : xstrdup(var), *r;
	if (j) {
		char *qq = row_div(q, ext, re, cx->row_small);
		r = xasprintf("(%s - %s * %s)", q, qq, ext);
		free(qq), free(q);
	} else {
		r = q;
	}
	free(later), free(ext);
	return r;
}

/* cuda_row_segment as text */
static char *segment_text(Cx *cx)
{
	char *seg = NULL;
	size_t len = 0;
	FILE *f = xmemstream(&seg, &len);
	cuda_row_segment(cx, f);
	fclose(f);
	return seg;
}

/* axis j of a row in segments (Kernel.lead) at flat column var: the
   column's quotient by the segment indexes the lead run, its remainder
   the trailing run; within a run as row_axis does (a lead run of two has
   its second axis's reciprocal in fz_re1) */
static char *row_axis_seg(Cx *cx, const char *var, int j)
{
	const Kernel *k = cx->k;
	char *seg = segment_text(cx), *ext = NULL, *later = NULL, rp[32], re[32];
	size_t len = 0;
	char *q = row_div(var, seg, "fz_rs", cx->row_small), *run, *r;
	const int first = j < k->lead ? 0 : k->lead, last = j < k->lead ? k->lead - 1 : k->ninner - 1;
	run = j < k->lead ? xstrdup(q) : xasprintf("(%s - %s * %s)", var, q, seg);
	FILE *f = xmemstream(&later, &len);
	if (j < k->lead) cuda_dim(cx, k->inner[j + 1], f); /* the lead run's later axis (it has two at most) */
	else row_divisor(cx, j, 1, f);                   /* the trailing run's later axes are the row's */
	fclose(f);
	f = xmemstream(&ext, &len);
	row_divisor(cx, j, 0, f);
	fclose(f);
	snprintf(rp, sizeof rp, j < k->lead ? "fz_re%d" : "fz_rp%d", j < k->lead ? j + 1 : j), snprintf(re, sizeof re, "fz_re%d", j);
	char *qq = j < last ? row_div(run, later, rp, cx->row_small) : xstrdup(run);
	if (j > first) {
		char *q2 = row_div(qq, ext, re, cx->row_small);
		r = xasprintf("(%s - %s * %s)", qq, q2, ext);
		free(q2), free(qq);
	} else {
		r = qq;
	}
	free(seg), free(ext), free(later), free(q), free(run);
	return r;
}

static void row_bind_group(Cx *cx, int ix0)
{
	for (int j = 0; j < cx->k->ninner; j++) {
		free(cx->bind[ix0 + j - cx->first_index]);
		cx->bind[ix0 + j - cx->first_index] = cx->k->lead ? row_axis_seg(cx, cx->row_var, j) : row_axis(cx, cx->row_var, j);
		cx->role[ix0 + j - cx->first_index] = (signed char)(j == cx->k->ninner - 1 ? CUDA_ROLE_ROW : CUDA_ROLE_ROW_HI + j);
	}
}

void cuda_row_bind(Cx *cx, int ix0, const char *var)
{
	if (cx->nrow_ix == cx->row_cap) die("too many row walks open in kernel %s", cx->k->name); /* one not closed */
	cx->row_ix[cx->nrow_ix++] = ix0;
	cx->row_var = var;
	row_bind_group(cx, ix0);
}

void cuda_row_unbind(Cx *cx, int ix0)
{
	for (int j = 0; j < cx->k->ninner; j++) {
		free(cx->bind[ix0 + j - cx->first_index]);
		cx->bind[ix0 + j - cx->first_index] = NULL;
		cx->role[ix0 + j - cx->first_index] = CUDA_ROLE_NONE;
	}
	for (int i = 0; i < cx->nrow_ix; i++)
		if (cx->row_ix[i] == ix0) cx->row_ix[i] = cx->row_ix[--cx->nrow_ix];
}

/* the open groups' bindings for the cached steps (small) or the rest */
static void row_rebind(Cx *cx, int small)
{
	cx->row_small = small;
	if (cx->k->ninner > 1)
		for (int i = 0; i < cx->nrow_ix; i++) row_bind_group(cx, cx->row_ix[i]);
}

int cuda_row_at(const Cx *cx, const Tensor *x, const int *roles, int n)
{
	const Kernel *k = cx->k;
	if (n != k->nspace + k->ninner || x->rank != n) return 0;
	for (int i = 0; i < n; i++) {
		const int at = row_axis_pos(k, i), j = i - k->nspace;
		if (roles[at] != (i < k->nspace ? i : j == k->ninner - 1 ? CUDA_ROLE_ROW : CUDA_ROLE_ROW_HI + j)) return 0;
		/* several axes: the tensor's own, so its row is contiguous (in segments: each axis) */
		if (j >= 0 && (k->lead ? 1 : j + 1 < k->ninner) && !dim_same(x->dim[at], k->inner[j])) return 0;
	}
	return 1;
}

/* A store at (s0.., var) of a row tensor, unmasked, inside a cached walk
 * of the vector path: its four values are collected (fz_ws_T[fz_j]) and
 * stored as one vector after the walk's step. */
int cuda_row_store_deferred(Cx *cx, const Stmt *s)
{
	const Kernel *k = cx->k;
	const Tensor *x = &cx->m->tensor[s->out];
	if (!cx->rc_var || !cx->rc_vec || cx->rc_edge || !k->par.rcache || s->mask || !cuda_row_vec_type(x->type)) return 0;
	int roles[MAX_RANK];
	for (int i = 0; i < s->nlhs; i++) roles[i] = cuda_role(cx, s->lhs[i]);
	if (!cuda_row_at(cx, x, roles, s->nlhs)) return 0;
	cx->rc_used[s->out - cx->first_tensor] |= 2;
	return 1;
}

/* the product of the row's trailing run of axes, a contiguous segment
   of every tensor it caches (Kernel.lead) */
void cuda_row_segment(Cx *cx, FILE *f)
{
	const Kernel *k = cx->k;
	fputc('(', f);
	for (int j = k->lead; j < k->ninner; j++) fputs(j > k->lead ? " * " : "", f), cuda_dim(cx, k->inner[j], f);
	fputc(')', f);
}

/* a.t_T at (s0.., col). A row over several axes: its leading ones at 0 and
   col running flat over them; in segments, col's quotient by the segment
   on the lead run's last axis and the remainder on the trailing run's
   (each run is contiguous; 32-bit: col is a cached column, under 2^31) */
static char *row_lin(Cx *cx, int t, const char *col)
{
	const Kernel *k = cx->k;
	const Tensor *x = &cx->m->tensor[t];
	char *subs[MAX_RANK], names[MAX_RANK][24], *q = NULL, *r = NULL;
	for (int i = 0; i < x->rank; i++) snprintf(names[i], sizeof names[i], "0"), subs[i] = names[i];
	if (k->lead) {
		char *seg = segment_text(cx);
		q = row_div(col, seg, NULL, 1), r = xasprintf("((%s) - %s * %s)", col, q, seg);
		free(seg);
		for (int i = 0; i < k->nspace; i++) snprintf(names[row_axis_pos(k, i)], sizeof names[0], "s%d", i);
		subs[row_axis_pos(k, k->nspace + k->lead - 1)] = q, subs[x->rank - 1] = r;
	} else {
		for (int i = 0; i < x->rank - k->ninner; i++) snprintf(names[i], sizeof names[i], "s%d", i);
		subs[x->rank - 1] = (char *)col;
	}
	char *lin = cuda_linear(cx, t, subs);
	free(q), free(r);
	return lin;
}

int cuda_row_cached(const Cx *cx) { return cx->rc_vec && cx->rc_slots ? cx->rc_slots : row_cache_vectors(&cx->k->par, cx->rc_vec); }

/* Where the vector path's steps start and end: the row's head and the
   end of its vectors when peeled (Kernel.peel), else 0 and the width */
static const char *step_base(const Cx *cx) { return cx->rc_vec && cx->rc_peel ? "fz_h + " : ""; }
static const char *step_end(const Cx *cx) { return cx->rc_vec && cx->rc_peel ? "fz_cb" : "fz_cn"; }

void cuda_row_residue(const Tensor *x, FILE *out)
{
	fprintf(out, "((unsigned long long)a.t_%s >> %d & 3)", x->name, x->type == ET_F32 ? 2 : 1);
}

void cuda_row_peel_bounds(Cx *cx, int ref, int cached, int depth)
{
	FILE *out = cx->out;
	cuda_ind(out, depth);
	if (ref >= 0) {
		char *lin0 = row_lin(cx, ref, "0");
		fprintf(out, "const int fz_h = fz_imin((int)((0ULL - (unsigned long long)&a.t_%s[%s]) >> %d & 3), fz_cn); /* the row's head: its columns before a vector boundary */\n",
		        cx->m->tensor[ref].name, lin0, cx->m->tensor[ref].type == ET_F32 ? 2 : 1);
		free(lin0);
	} else {
		fputs("const int fz_h = 0; /* no vector tensor */\n", out);
	}
	cuda_ind(out, depth), fputs("const int fz_cb = fz_h + ((fz_cn - fz_h) & ~3); /* the end of its vectors */\n", out);
	cuda_ind(out, depth), fputs("const long long fz_ne = fz_h + (", out), cuda_row_width(cx, out);
	fputs(" - fz_cb); /* its edge columns: the head and what follows the vectors */\n", out);
	if (cached) cuda_ind(out, depth), fputs("const int fz_ec = fz_lane < fz_h ? fz_lane : fz_cb + fz_lane - fz_h; /* this lane's edge column (fz_lane < fz_ne) */\n", out);
}

/* Steps of a walk over vectors held in fz_rc_T[count][4]: step fz_k covers
 * the 4 columns from fz_c0 = (fz_k * fz_g + fz_lane) * 4 (in the rest of a
 * row past the registers, tail: (fz_kt + fz_k) * fz_g + fz_lane); text is
 * the walk's body for the element at var (fz_c0 + fz_j). On the vector path
 * (fz_v4: the width a multiple of 4) a step is all in the row or all out,
 * and stores collected per step are written as one vector; on the scalar
 * path each column is checked. */
static void walk_steps(Cx *cx, int count, int tail, const char *text, const char *var, int depth)
{
	FILE *out = cx->out;
	const Module *m = cx->m;
	const int v = cx->rc_vec;
	cuda_ind(out, depth), fputs("#pragma unroll\n", out);
	cuda_ind(out, depth), fprintf(out, "for (int fz_k = 0; fz_k < %d; ++fz_k) {\n", count);
	cuda_ind(out, depth + 1), fprintf(out, "const int fz_c0 = %s(%s * fz_g + fz_lane) * 4;\n", step_base(cx), tail ? "(fz_kt + fz_k)" : "fz_k");
	if (v) {
		cuda_ind(out, depth + 1), fprintf(out, "if (fz_live && fz_c0 < %s) {\n", step_end(cx));
		for (int t = cx->first_tensor; t < cx->p->last_tensor; t++)
			if (cx->rc_used[t - cx->first_tensor] & 2) cuda_ind(out, depth + 1), fprintf(out, "%s fz_ws_%s[4];\n", emit_device_type(&m->tensor[t]), m->tensor[t].name);
	}
	cuda_ind(out, depth + 1), fputs("#pragma unroll\n", out);
	cuda_ind(out, depth + 1), fputs("for (int fz_j = 0; fz_j < 4; ++fz_j) {\n", out);
	cuda_ind(out, depth + 2), fprintf(out, "const long long %s = fz_c0 + fz_j;\n", var);
	if (v) cuda_ind(out, depth + 2), fputs("{\n", out);
	else cuda_ind(out, depth + 2), fprintf(out, "if (fz_live && %s < fz_cn) {\n", var);
	fputs(text, out);
	cuda_ind(out, depth + 2), fputs("}\n", out);
	cuda_ind(out, depth + 1), fputs("}\n", out);
	for (int t = cx->first_tensor; t < cx->p->last_tensor; t++) {
		if (!(cx->rc_used[t - cx->first_tensor] & 2)) continue;
		const Tensor *x = &m->tensor[t];
		char *lin0 = row_lin(cx, t, "fz_c0");
		const char *v4 = cuda_vec4_type(x->type);
		cuda_ind(out, depth + 1), fprintf(out, "*(%s *)&a.t_%s[%s] = make_%s(fz_ws_%s[0], fz_ws_%s[1], fz_ws_%s[2], fz_ws_%s[3]);\n",
		                             v4, x->name, lin0, v4, x->name, x->name, x->name, x->name);
		free(lin0);
	}
	if (v) cuda_ind(out, depth + 1), fputs("}\n", out);
	cuda_ind(out, depth), fputs("}\n", out);
}

/* The register cache of tensor t's row: cuda_row_cached() vectors of 4
 * elements, one 16-byte (f16/bf16: 8-byte, held packed) load each on the
 * vector path;
 * tail: count vectors of the rest of the row, from fz_kt. */
void cuda_row_cache_fill(Cx *cx, int t, FILE *out, int depth, int count, int tail)
{
	const Tensor *x = &cx->m->tensor[t];
	const char *ty = elem_info[x->type].is_float ? (x->type == ET_F64 ? "double" : "float") : cuda_ctype(x->type);
	char *lin0 = row_lin(cx, t, "fz_c0"), *lin = row_lin(cx, t, "fz_c0 + fz_j");
	if (cx->rc_vec && (x->type == ET_F16 || x->type == ET_BF16)) /* packed (the prelude's fz_h4, fz_b4) */
		cuda_ind(out, depth), fprintf(out, "fz_%c4 fz_rc_%s[%d];", x->type == ET_F16 ? 'h' : 'b', x->name, count);
	else
		cuda_ind(out, depth), fprintf(out, "%s fz_rc_%s[%d][4];", ty, x->name, count);
	fprintf(out, "%s\n#pragma unroll\n", tail ? " /* the next vector, in place of the registers' */" : "");
	cuda_ind(out, depth), fprintf(out, "for (int fz_k = 0; fz_k < %d; ++fz_k) {\n", count);
	cuda_ind(out, depth + 1), fprintf(out, "const int fz_c0 = %s(%s * fz_g + fz_lane) * 4;\n", step_base(cx), tail ? "(fz_kt + fz_k)" : "fz_k");
	if (cx->rc_vec && cuda_row_vec_type(x->type) && tail) {
		/* past the row's end the row's first vector, unused: a load
		   under a condition here made ptxas spill */
		char *at = xasprintf("(fz_c0 < %s ? fz_c0 : %s)", step_end(cx), cx->rc_peel ? "fz_h" : "0");
		char *linc = row_lin(cx, t, at);
		free(at);
		cuda_ind(out, depth + 1), fprintf(out, "fz_ld4%s(&a.t_%s[%s], fz_rc_%s[fz_k]);\n", x->type == ET_F32 ? "" : x->type == ET_F16 ? "h" : "b",
		                             x->name, linc, x->name);
		free(linc);
	} else if (cx->rc_vec && cuda_row_vec_type(x->type) && cx->rc_peel) {
		/* peeled: every vector loaded, those past the row's vectors at
		   its first (unused), so that ptxas issues them all before the
		   first is used; under a condition each, it converted softmax_bf16's
		   first 16-bit vector before loading the fourth (10% slower, H200) */
		char *linc = row_lin(cx, t, "(fz_c0 < fz_cb ? fz_c0 : fz_h)");
		cuda_ind(out, depth + 1), fprintf(out, "if (fz_cb > fz_h) fz_ld4%s(&a.t_%s[%s], fz_rc_%s[fz_k]);\n",
		                             x->type == ET_F32 ? "" : x->type == ET_F16 ? "h" : "b", x->name, linc, x->name);
		free(linc);
	} else if (cx->rc_vec && cuda_row_vec_type(x->type)) {
		cuda_ind(out, depth + 1), fprintf(out, "if (fz_c0 < %s) fz_ld4%s(&a.t_%s[%s], fz_rc_%s[fz_k]);\n", step_end(cx),
		                             x->type == ET_F32 ? "" : x->type == ET_F16 ? "h" : "b", x->name, lin0, x->name);
	} else {
		fputs("#pragma unroll\n", out);
		cuda_ind(out, depth + 1), fprintf(out, "for (int fz_j = 0; fz_j < 4; ++fz_j) fz_rc_%s[fz_k][fz_j] = %s < %s ? ", x->name,
		                             cx->rc_vec ? "fz_c0" : "fz_c0 + fz_j", step_end(cx));
		cuda_load(cx, t, lin, out);
		fputs(" : 0;\n", out);
	}
	cuda_ind(out, depth), fputs("}\n", out);
	free(lin0), free(lin);
	if (cx->rc_vec && cx->rc_peel && !tail) { /* this lane's edge column, if any */
		char *line = row_lin(cx, t, "fz_ec");
		cuda_ind(out, depth), fprintf(out, "const %s fz_re_%s = fz_live && fz_lane < fz_ne ? ", ty, x->name);
		cuda_load(cx, t, line, out);
		fputs(" : 0;\n", out);
		free(line);
	}
}

/* The group walks the row: var over the row's columns. With a register
 * cache, on the vector path of a row the registers hold (fz_fit), the
 * cached vectors, four consecutive columns a step; on the vector path of a
 * wider row (rc_stream) every walk reads the row from memory, ROW_STREAM_VECS
 * 16-byte vectors a thread loaded before they are used, into arrays named
 * as the cache's (the same body text); on the scalar path the cached
 * columns, then the rest of the row a column a thread and step (the body
 * written again for a column), as past 2^30 columns on the streaming path.
 * Peeled (rc_peel), the vector path's steps run from the row's head fz_h to
 * fz_cb, then its edges, a column a lane: from the cache (fz_re_T, the body
 * written again with rc_edge: its stores not collected) or, streamed, from
 * memory (the columns past 2^30 with them). */
void cuda_row_loop(Cx *cx, const char *var, RowBody *body, int sid, int n, int depth)
{
	FILE *out = cx->out;
	const Kernel *k = cx->k;
	if (k->par.rcache) {
		const int rc = cuda_row_cached(cx), v = cx->rc_vec;
		unsigned char *before = xcalloc((size_t)(cx->p->last_tensor - cx->first_tensor) + 1, 1);
		for (int t = cx->first_tensor; t < cx->p->last_tensor; t++) before[t - cx->first_tensor] = cx->rc_used[t - cx->first_tensor] & 3, cx->rc_used[t - cx->first_tensor] &= (unsigned char)~3;
		char *text = NULL;
		size_t len = 0;
		FILE *bf = xmemstream(&text, &len);
		cx->out = bf;
		cx->rc_var = var;
		row_rebind(cx, 1);
		body(cx, sid, n, depth + (cx->rc_stream ? 4 : 3)); /* inside the stream loop: one deeper */
		row_rebind(cx, 0);
		cx->rc_var = NULL;
		fclose(bf);
		cx->out = out;
		if (cx->rc_stream) { /* the whole row from memory, ROW_STREAM_VECS vectors a thread at a time */
			cuda_ind(out, depth), fputs("#pragma unroll 1\n", out);
			cuda_ind(out, depth), fprintf(out, "for (int fz_kt = 0; fz_kt * 4 * fz_g < %s; fz_kt += %d) {\n",
			                             cx->rc_peel ? "fz_cb - fz_h" : "fz_cn", ROW_STREAM_VECS);
			for (int t = cx->first_tensor; t < cx->p->last_tensor; t++)
				if (cx->rc_used[t - cx->first_tensor] & 1) cuda_row_cache_fill(cx, t, out, depth + 1, ROW_STREAM_VECS, 1);
			walk_steps(cx, ROW_STREAM_VECS, 1, text, var, depth + 1);
			cuda_ind(out, depth), fputs("}\n", out);
			for (int t = cx->first_tensor; t < cx->p->last_tensor; t++) cx->rc_used[t - cx->first_tensor] &= (unsigned char)~1; /* nothing kept across walks */
		} else {
			walk_steps(cx, rc, 0, text, var, depth);
		}
		if (v && cx->rc_peel && !cx->rc_stream) { /* the row's edges: a column a lane, its value cached */
			cuda_ind(out, depth), fputs("if (fz_live && fz_lane < fz_ne) {\n", out);
			cuda_ind(out, depth + 1), fprintf(out, "const long long %s = fz_ec;\n", var);
			cx->rc_var = var, cx->rc_edge = 1;
			row_rebind(cx, 1);
			body(cx, sid, n, depth + 1);
			row_rebind(cx, 0);
			cx->rc_var = NULL, cx->rc_edge = 0;
			cuda_ind(out, depth), fputs("}\n", out);
		}
		for (int t = cx->first_tensor; t < cx->p->last_tensor; t++) cx->rc_used[t - cx->first_tensor] |= before[t - cx->first_tensor];
		free(before), free(text);
		if (v && !cx->rc_stream) return; /* the vector path holds the whole row (fz_fit) */
		if (v && cx->rc_peel) { /* the row's edges, from memory: its head, then what follows the vectors */
			cuda_ind(out, depth), fputs("for (long long fz_e = fz_lane; fz_live && fz_e < fz_ne; fz_e += fz_g) {\n", out);
			cuda_ind(out, depth + 1), fprintf(out, "const long long %s = fz_e < fz_h ? fz_e : fz_cb + fz_e - fz_h;\n", var);
			body(cx, sid, n, depth + 1);
			cuda_ind(out, depth), fputs("}\n", out);
			return;
		}
		if (v) cuda_ind(out, depth), fprintf(out, "for (long long %s = (long long)fz_cn + fz_lane; fz_live && %s < ", var, var);
		else cuda_ind(out, depth), fprintf(out, "for (long long %s = %dLL * 4 * fz_g + fz_lane; fz_live && %s < ", var, rc, var);
	} else {
		cuda_ind(out, depth), fprintf(out, "#pragma unroll %d\n", cx->k->par.red_unroll);
		cuda_ind(out, depth), fprintf(out, "for (long long %s = %s; %s < ", var, row_tid(cx), var);
	}
	cuda_row_width(cx, out);
	fprintf(out, "; %s += %s) {\n", var, row_width(cx));
	body(cx, sid, n, depth + 1);
	cuda_ind(out, depth), fputs("}\n", out);
}
