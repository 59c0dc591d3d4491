/* The manifest's description of a fusion, printed from its plan: its
 * layout fingerprint, its tensors, every kernel of both variants (with the
 * tensors each reads across rows), its pipelines and the plan as
 * --explain gives it. */
#include <stdlib.h>
#include <string.h>

#include "artifact/artifact_impl.h"
#include "emit/emit.h"
#include "host/host.h"

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
		emit_tensor_words(m, f, t, out);
		const char *b = by[i - f->first_tensor];
		fprintf(out, " by=%s", b ? b : t->kind == TK_INPUT ? "input" : "none");
		domain_write(t, out); /* the values an input takes, for input generators */
		fputc('\n', out);
	}
	free(by);
}

/* inexact NAME tf32: an output computed from a contraction its stage lets
   read f32 operands as tf32 (precision = tf32), through any statements
   after it, so a validator compares it with tf32's tolerance (dsl/MATH.md),
   not f32's. Runtimes before it ignore the line (a key they do not know). */
/* inexact NAME fp8: the same for a contraction over fp8 operands (f8e4m3,
   f8e5m2, or one of each): the products are exact, but the tensor cores add
   them in f32 with their own rounding (dsl/MATH.md); an output through both
   says fp8. */
static int reads_kind(const Module *m, int e, const unsigned char *taint, int first)
{
	if (!e) return 0;
	const Expr *x = &m->expr[e];
	int k = (x->op == IR_LOAD || x->op == IR_SCALAR) && x->tensor >= first ? taint[x->tensor - first] : 0;
	for (int i = 0; i < x->nargs; i++) {
		int j = reads_kind(m, x->args[i], taint, first);
		if (j > k) k = j;
	}
	const int sub[3] = {reads_kind(m, x->a, taint, first), reads_kind(m, x->b, taint, first), reads_kind(m, x->c, taint, first)};
	for (int i = 0; i < 3; i++)
		if (sub[i] > k) k = sub[i];
	return k;
}

static void manifest_inexact(const Module *m, const Fusion *f, FILE *out)
{
	unsigned char *taint = xcalloc((size_t)f->ntensor + 1, 1); /* 0 exact, 1 tf32, 2 fp8 */
	for (int sg = f->first_stage; sg < f->first_stage + f->nstage; sg++)
		for (int s = m->stage[sg].first_stmt; s < m->stage[sg].first_stmt + m->stage[sg].nstmt; s++) {
			const Stmt *st = &m->stmt[s];
			int k = reads_kind(m, st->rhs, taint, f->first_tensor), km = reads_kind(m, st->mask, taint, f->first_tensor);
			if (km > k) k = km;
			if (m->stage[sg].tf32 && k < 1) k = 1;
			if (st->pattern == PAT_CONTRACT && elem_is_fp8(m->expr[st->contract_a].type)) k = 2;
			if (k > taint[st->out - f->first_tensor]) taint[st->out - f->first_tensor] = (unsigned char)k;
		}
	for (int i = f->first_tensor; i < f->first_tensor + f->ntensor; i++)
		if (taint[i - f->first_tensor] && m->tensor[i].kind == TK_OUTPUT)
			fprintf(out, "inexact %s %s\n", m->tensor[i].name, taint[i - f->first_tensor] == 2 ? "fp8" : "tf32");
	free(taint);
}

/* The tensors k reads at other rows (plan/plan_across.c): a runtime
   sharding the kernel over its first dimension must refuse it. */
static void kernel_across(const Module *m, const Kernel *k, FILE *out)
{
	for (int t = 0; t < k->nacross; t++) fprintf(out, "%s%s", t ? "," : " across=", m->tensor[k->across[t]].name);
}

static void manifest_kernels(const Module *m, const Fusion *f, const Schedule *p, FILE *out)
{
	for (int i = 0; i < p->nk; i++) {
		const Kernel *k = &p->k[i];
		for (int e = 0; e < k->at.nent; e++) { /* an attention kernel: its entry points, one a head-size bucket */
			fprintf(out, "kernel %s %s %s block=%d", p->fused ? "fused" : "unfused", k->at.entry[e], kernel_mode_name[k->mode], k->par.block);
			if (k->nspace) fputs(" space=", out), dim_write_list(m, f, k->space, k->nspace, ",", out);
			fprintf(out, " smem=%d", k->at.smem[e]);
			if (attn_tma(&k->at, e)) fprintf(out, " tma=%s,%s", m->tensor[k->at.k].name, m->tensor[k->at.v].name);
			fputc('\n', out);
		}
		if (k->mode == KM_ATTN) continue;
		fprintf(out, "kernel %s %s %s block=%d", p->fused ? "fused" : "unfused", k->name,
		        kernel_mode_name[k->mode], k->par.block);
		if (k->nspace) fputs(" space=", out), dim_write_list(m, f, k->space, k->nspace, ",", out);
		if (k->has_tail) fputs(" grid-reduction=deterministic", out);
		kernel_across(m, k, out);
		if (k->mode == KM_TILE) fprintf(out, " smem=%d tma=%s,%s", k->par.smem, m->tensor[k->tile_a].name, m->tensor[k->tile_b].name);
		if (k->mode == KM_TILE) { /* the maps' box rows where not 128 (A) and 64 (B): an m- or n-major operand's
		                             are a stage's k, 128 bytes of it (tile_gemm.cuh) */
			const int ks = 128 / (m->tensor[k->tile_a].type == ET_F32 ? 4 : 2);
			const int ra = k->par.a_mmajor ? ks : 128, rb = k->par.b_kmajor ? 64 : ks;
			if (ra != 128 || rb != 64) fprintf(out, " tma-rows=%d,%d", ra, rb);
		}
		if (k->par.tuned) fprintf(out, " tuned=%s", k->par.tuned); /* the table entry (plan_tune.c); none: built-in */
		fputc('\n', out);
	}
}

/* pipeline NAME steps=T|1 block=B phases=K [carry=IN:OUT,...]; the runtime
   ignores the line (a key it does not know), tests read it */
static void manifest_pipeline(const Module *m, const PipePlan *pp, FILE *out)
{
	const Pipeline *pl = pp->pl;
	if (pp->why) return;
	fprintf(out, "pipeline %s steps=%s block=%d phases=%d", pl->name, pl->repeat ? pl->steps : "1", pp->block, pp->s.nk);
	for (int i = 0; i < pl->ncarry; i++)
		fprintf(out, "%s%s:%s", i ? "," : " carry=", m->tensor[pl->carry_in[i]].name, m->tensor[pl->carry_out[i]].name);
	fputc('\n', out);
}

/* a bound: a size plus a number, or a number */
static void value_bound(const Fusion *f, int sym, long long c, FILE *out)
{
	if (sym < 0) fprintf(out, "%lld", c);
	else if (c) fprintf(out, "%s%+lld", f->sym[sym], c);
	else fputs(f->sym[sym], out);
}

/* values NAME LO..HI [nondecreasing] [nonzero]: what each integer input
   must hold (plan/values.c); runtimes of format 1 ignore the line */
static void manifest_values(const Module *m, int fusion, FILE *out)
{
	const Fusion *f = &m->fusion[fusion];
	for (int t = f->first_tensor; t < f->first_tensor + f->ntensor; t++) {
		const Tensor *x = &m->tensor[t];
		if (x->kind != TK_INPUT || elem_info[x->type].is_float || x->has_domain) continue;
		ValueRange v;
		plan_input_values(m, fusion, t, &v);
		if (!v.known && !v.nonzero) continue;
		fprintf(out, "values %s ", x->name);
		if (v.known) value_bound(f, v.lo_sym, v.lo, out), fputs("..", out), value_bound(f, v.hi_sym, v.hi, out);
		else fputs(x->type == ET_I64 ? "-9223372036854775808..9223372036854775807" : "-2147483648..2147483647", out);
		fprintf(out, "%s%s\n", v.nondecreasing ? " nondecreasing" : "", v.nonzero ? " nonzero" : "");
	}
}

/* fits NAME DIM>=LEAST: input NAME's domain reaches dimension DIM through a
   subscript, so DIM (as a param line spells it) must be at least LEAST at
   the sizes of a launch (front/sema_fits.c); the runtime refuses smaller
   sizes before it launches anything. Runtimes before it ignore the line. */
static void manifest_fits(const Module *m, const Fusion *f, FILE *out)
{
	for (int i = 0; i < f->nfit; i++) {
		fprintf(out, "fits %s ", m->tensor[f->fit[i].tensor].name);
		dim_write(m, f, f->fit[i].dim, out);
		fprintf(out, ">=%lld\n", (long long)f->fit[i].least);
	}
}

void manifest_body(const Module *m, const FusionPlan *fp, FILE *out)
{
	const int fusion = fp->fusion;
	const Schedule *fused = &fp->fused, *unfused = &fp->unfused;
	const Fusion *f = &m->fusion[fusion];
	char hex[65];
	emit_layout(m, fusion, hex);
	fprintf(out, "layout %s\n", hex);
	manifest_tensors(m, f, out);
	manifest_values(m, fusion, out);
	manifest_fits(m, f, out);
	manifest_inexact(m, f, out);
	manifest_kernels(m, f, fused, out);
	manifest_kernels(m, f, unfused, out);
	host_recipe(m, fused, out); /* what fz_call runs each variant by */
	host_recipe(m, unfused, out);
	for (int i = 0; i < fp->npipe; i++) manifest_pipeline(m, &fp->pipe[i], out);
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
