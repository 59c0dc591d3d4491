/* The manifest's description of a fusion: its layout fingerprint, its
 * tensors, every kernel of both variants (with the tensors each reads
 * across rows), its pipelines and the plan as --explain gives it. */
#include <stdlib.h>
#include <string.h>

#include "artifact/artifact_impl.h"
#include "emit/emit.h"
#include "plan/pipeline.h"
#include "runtime/sha256.h" /* one SHA-256 for fusec and the runtime */

/* "NAME ROLE TYPE DIMS" of a tensor, as the manifest's param/temp lines
   and the layout fingerprint both write it */
static void tensor_words(const Module *m, const Fusion *f, const Tensor *t, FILE *out)
{
	static const char *const kind[] = {"input", "output", "temp"};
	fprintf(out, "%s %s %s %s", t->kind == TK_TEMP ? "temp" : "param", t->name, t->inplace ? "inout" : kind[t->kind],
	        elem_info[t->type].name);
	if (!t->rank) fputs(" -", out);
	for (int d = 0; d < t->rank; d++) fputc(d ? ',' : ' ', out), dim_write(m, f, t->dim[d], out);
}

void artifact_layout(const Module *m, int fusion, char hex[65])
{
	const Fusion *f = &m->fusion[fusion];
	Buf b;
	buf_open(&b);
	fprintf(b.f, "fusion %s\n", f->name);
	for (int i = 0; i < f->nsym; i++) fprintf(b.f, "size %s\n", f->sym[i]);
	for (int i = f->first_tensor; i < f->first_tensor + f->ntensor; i++)
		tensor_words(m, f, &m->tensor[i], b.f), fputc('\n', b.f);
	buf_close(&b);
	fr_sha256_hex(b.p, b.n, hex);
	free(b.p);
}

static void manifest_tensors(const Module *m, const Fusion *f, FILE *out)
{
	for (int i = 0; i < f->nsym; i++) fprintf(out, "size %s\n", f->sym[i]);
	/* how each is computed, what a validator's tolerance depends on: the
	   pattern of its last producer (it, or a compaction into the list it
	   counts), in one pass over the fusion's statements (only they write
	   its tensors), by[t - first_tensor] */
	const char **by = xcalloc((size_t)f->ntensor + 1, sizeof *by);
	for (int sg = f->first_stage; sg < f->first_stage + f->nstage; sg++)
		for (int s = m->stage[sg].first_stmt; s < m->stage[sg].first_stmt + m->stage[sg].nstmt; s++) {
			const Stmt *st = &m->stmt[s];
			by[st->out - f->first_tensor] = pattern_name[st->pattern];
			if (st->pattern == PAT_COMPACT && m->tensor[st->out].list_count >= 0)
				by[m->tensor[st->out].list_count - f->first_tensor] = pattern_name[st->pattern];
		}
	for (int i = f->first_tensor; i < f->first_tensor + f->ntensor; i++) {
		const Tensor *t = &m->tensor[i];
		tensor_words(m, f, t, out);
		const char *b = by[i - f->first_tensor];
		fprintf(out, " by=%s", b ? b : t->kind == TK_INPUT ? "input" : "none");
		domain_write(t, out); /* the values an input takes, for input generators */
		fputc('\n', out);
	}
	free(by);
}

/* Marks in across[] the tensors whose first dimension is the plain size sym
 * that expression e of statement s reads at a first subscript other than the
 * statement's first index (x(j), x(i + 1), x(g(i)) at point i). */
static void scan_across(const Module *m, const Schedule *p, const Stmt *s, int e, int sym, unsigned char *across)
{
	if (!e) return;
	const Expr *x = &m->expr[e];
	if (x->op == IR_LOAD && x->nargs >= 1) {
		const Tensor *t = &m->tensor[x->tensor];
		const Expr *a0 = &m->expr[x->args[0]];
		if (t->rank >= 1 && t->dim[0].sym == sym && !dim_derived(t->dim[0]) &&
		    !(a0->op == IR_INDEX && a0->index == s->first_index))
			across[x->tensor - p->first_tensor] = 1;
		for (int i = 0; i < x->nargs; i++) scan_across(m, p, s, x->args[i], sym, across);
	}
	scan_across(m, p, s, x->a, sym, across), scan_across(m, p, s, x->b, sym, across), scan_across(m, p, s, x->c, sym, across);
}

/* A kernel's statements, and the statements inlined into the variant (they
 * are evaluated in whichever kernel reads them), read at the kernel's point
 * only what depends on its first space index? The tensors that are read at
 * other rows are listed on its manifest line (across=): a runtime sharding
 * the kernel over that size holds only each rank's rows of them, so it must
 * refuse (a reduction over the size's own index, a shifted or gathered read:
 * runtime/shard.c). */
static void kernel_across(const Module *m, const Schedule *p, const Kernel *k, FILE *out)
{
	if (!k->nspace || k->space[0].sym < 0 || dim_derived(k->space[0])) return;
	unsigned char *across = xcalloc((size_t)(p->last_tensor - p->first_tensor) + 1, 1); /* t at [t - first_tensor] */
	for (int sid = p->first_stmt; sid < p->last_stmt; sid++) {
		if (!(sid >= k->first_stmt && sid < k->first_stmt + k->nstmt) && p->op[sid - p->first_stmt] != STEP_INLINE) continue;
		const Stmt *s = &m->stmt[sid];
		scan_across(m, p, s, s->rhs, k->space[0].sym, across);
		scan_across(m, p, s, s->mask, k->space[0].sym, across);
		for (int i = 0; i < s->nlhs; i++) scan_across(m, p, s, s->lhs[i], k->space[0].sym, across);
		for (int i = 0; i < s->nindex; i++) {
			const Index *ix = &m->index[s->first_index + i];
			if (ix->kind == IX_RAGGED) scan_across(m, p, s, ix->lo, k->space[0].sym, across), scan_across(m, p, s, ix->hi, k->space[0].sym, across);
		}
	}
	int n = 0;
	for (int t = p->first_tensor; t < p->last_tensor; t++)
		if (across[t - p->first_tensor]) fprintf(out, "%s%s", n++ ? "," : " across=", m->tensor[t].name);
	free(across);
}

static void manifest_kernels(const Module *m, const Fusion *f, const Schedule *p, FILE *out)
{
	for (int i = 0; i < p->nk; i++) {
		const Kernel *k = &p->k[i];
		fprintf(out, "kernel %s %s %s block=%d", p->fused ? "fused" : "unfused", k->name,
		        kernel_mode_name[k->mode], k->par.block);
		if (k->nspace) fputs(" space=", out), dims_write(m, f, k->space, k->nspace, ",", out);
		if (k->has_tail) fputs(" grid-reduction=deterministic", out);
		kernel_across(m, p, k, out);
		if (k->mode == KM_TILE) {
			const char *a, *b;
			tile_operands(m, k, &a, &b);
			fprintf(out, " smem=%d tma=%s,%s", k->par.smem, a, b);
		}
		fputc('\n', out);
	}
}

void manifest_body(const Module *m, int fusion, const Schedule *fused, const Schedule *unfused, FILE *out)
{
	const Fusion *f = &m->fusion[fusion];
	char hex[65];
	artifact_layout(m, fusion, hex);
	fprintf(out, "layout %s\n", hex);
	manifest_tensors(m, f, out);
	manifest_kernels(m, f, fused, out);
	manifest_kernels(m, f, unfused, out);
	for (int i = 0; i < m->npipeline; i++)
		if (m->pipeline[i].fusion == fusion) manifest_pipeline(m, &m->pipeline[i], fused->target, out);
	Buf ex;
	buf_open(&ex);
	plan_explain(m, fusion, fused, ex.f);
	buf_close(&ex);
	for (char *line = ex.p, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		fprintf(out, "plan %.*s\n", nl ? (int)(nl - line) : (int)strlen(line), line);
	}
	free(ex.p);
}
