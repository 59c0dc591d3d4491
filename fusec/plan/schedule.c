/* The schedule's names, and --emit=schedule: every decision of the
 * schedule as text, one fact a line, for people and golden tests. */
#include "plan/schedule.h"

#include <stdint.h>
#include <string.h>

static int str_same(const char *a, const char *b) { return a == b || (a && b && !strcmp(a, b)); }

const char *const target_name[TGT_N] = {
#define X(e, s) s,
	TARGETS(X)
#undef X
};
const char *const kernel_mode_name[KM_N] = {
#define X(e, s) s,
	KERNEL_MODES(X)
#undef X
};
const char *const step_op_name[STEP_N] = {
#define X(e, s) s,
	STEP_OPS(X)
#undef X
};
const char *const storage_name[ST_N] = {
#define X(e, s) s,
	STORAGES(X)
#undef X
};
const char *const barrier_name[BAR_N] = {
#define X(e, s) s,
	BARRIERS(X)
#undef X
};
const char *const split_rule_text[SPLIT_N] = {
#define X(e, s) s,
	SPLIT_RULES(X)
#undef X
};

int target_lookup(const char *s)
{
	for (int i = 0; i < TGT_N; i++)
		if (!strcmp(s, target_name[i])) return i;
	return -1;
}

static void stmt_line(const Module *m, const Schedule *s, int sid, FILE *out)
{
	const Stmt *st = &m->stmt[sid];
	fprintf(out, "stmt %d (stage %s) %s: %s", sid - s->first_stmt, m->stage[st->stage].name,
	        m->tensor[st->out].name, step_op_name[s->op[sid - s->first_stmt]]);
	if (s->op[sid - s->first_stmt] == STEP_REDUCE && s->merge[sid - s->first_stmt] > 1) fprintf(out, ", merges the next %d", s->merge[sid - s->first_stmt] - 1);
	if (s->op[sid - s->first_stmt] == STEP_REDUCE && !s->merge[sid - s->first_stmt]) fputs(", merged into the one before", out);
	if (s->remat[sid - s->first_stmt] && s->op[sid - s->first_stmt] != STEP_INLINE) fputs(", recomputable", out);
	int k = s->stmt_kernel[sid - s->first_stmt];
	const Kernel *kk = k >= 0 ? &s->k[k] : NULL;
	if ((m->stage[st->stage].attrs & ATTR(TENSOR_ELIGIBLE)) && st->pattern == PAT_CONTRACT &&
	    !(kk && ((sid == kk->first_stmt && kk->path_why) || kk->mode == KM_ATTN))) /* the kernel's path line says where it runs */
		fputs(", tensor_eligible: not a matrix tile, CUDA cores", out);
	if (s->why[sid - s->first_stmt] != SPLIT_NONE) fprintf(out, ", %s", split_rule_text[s->why[sid - s->first_stmt]]);
	else if (k >= 0 && sid != s->k[k].first_stmt) fputs(", joined", out);
	fputc('\n', out);
}

void sched_print(const Module *m, const Schedule *s, FILE *out)
{
	const Fusion *f = &m->fusion[s->fusion];
	fprintf(out, "schedule %s %s target=%s kernels=%d\n", f->name, s->fused ? "fused" : "unfused",
	        target_name[s->target], s->nk);
	for (int i = 0; i < s->nk; i++) {
		const Kernel *k = &s->k[i];
		const KernelParams *p = &k->par;
		fprintf(out, "  kernel %s %s space=", k->name, kernel_mode_name[k->mode]);
		dim_write_list(m, f, k->space, k->nspace, ",", out);
		for (int d = 0; d < k->ninner; d++) fputs(d ? "*" : " inner=", out), dim_write(m, f, k->inner[d], out);
		if (k->lead) fprintf(out, " lead=%d gap=%d", k->lead, k->gap);
		if (k->peel) fputs(" peel=1", out);
		if (k->shift_sq) fprintf(out, " shifted=%s,%s", m->tensor[m->stmt[k->shift_sum].out].name, m->tensor[m->stmt[k->shift_sq].out].name);
		if (k->online_sum) fprintf(out, " online=%s,%s", m->tensor[m->stmt[k->online_max].out].name, m->tensor[m->stmt[k->online_sum].out].name);
		if (k->argmax_idx) fprintf(out, " argmax=%s,%s", m->tensor[m->stmt[k->argmax_max].out].name, m->tensor[m->stmt[k->argmax_idx].out].name);
		fprintf(out, " grid-reductions=%d", k->ntail);
		for (int t = 0; t < k->nacross; t++) fprintf(out, "%s%s", t ? "," : " across=", m->tensor[k->across[t]].name);
		fputc('\n', out);
		fprintf(out, "    params block=%d min_blocks=%d unroll=%d vec=%d slices=%d rcache=%d warp_rows=%d", p->block,
		        p->min_blocks, p->unroll, p->vec, p->slices, p->rcache, p->warp_rows);
		if (k->mode == KM_MATMUL || k->mode == KM_TILE)
			fprintf(out, " tile=%dx%dx%d swapped=%d", p->tile_m, p->tile_n, p->tile_k, p->swapped);
		if (k->mode == KM_TILE)
			fprintf(out, " tile_n_min=%d stages=%d smem=%d%s%s%s", p->tile_n_min, p->stages, p->smem, p->b_kmajor ? " b=nk" : "",
			        p->a_mmajor ? " a=km" : "", p->c_swapped ? " c=swapped" : "");
		if (p->regs) fprintf(out, " regs=%d", p->regs);
		if (p->row_paths) fputs(" paths=1", out);
		if (p->row_stream) fputs(" stream=512", out);
		if (p->stage) fputs(" stage=1", out);
		fprintf(out, " tuned=%s red_unroll=%d sig=%s", p->tuned ? p->tuned : "built-in", p->red_unroll, k->sig);
		if (k->mode == KM_TILE) fprintf(out, " tma=%s,%s", m->tensor[k->tile_a].name, m->tensor[k->tile_b].name);
		if (k->mode == KM_ATTN) {
			fprintf(out, " q=%s k=%s v=%s head=", m->tensor[k->at.q].name, m->tensor[k->at.k].name, m->tensor[k->at.v].name);
			dim_write(m, f, k->at.dh, out);
			fprintf(out, " block_m=%d causal=%d", k->at.block_m, k->at.causal);
			if (k->at.out) fprintf(out, " rows_out=%s", m->tensor[k->at.out - 1].name);
			if (k->at.zmul) fputs(" z_factor_in_exp", out);
			for (int e = 0; e < k->at.nent; e++)
				fprintf(out, " entry=%s:d%d:n%d:st%d:q%d:min%d:smem%d", k->at.entry[e], k->at.db[e], k->at.bn[e], k->at.st[e], k->at.nq[e],
				        k->at.minb[e], k->at.smem[e]);
		}
		if (p->split) fputs(" split=", out), dim_write(m, f, k->split_range, out);
		for (int t = 0; t < k->nvec; t++) {
			fprintf(out, "%s%s", t ? "," : " vec_tensors=", m->tensor[k->vec_tensors[t]].name);
			if (kernel_vec_stride(k, k->vec_tensors[t]) > 1) fprintf(out, "*%d", kernel_vec_stride(k, k->vec_tensors[t])); /* read at a*i + b */
		}
		fputc('\n', out);
		if (k->path_why) fprintf(out, "    path %s\n", k->path_why); /* why CUDA or tensor cores */
		if (k->attn_why) fprintf(out, "    no attention kernel: %s\n", k->attn_why);
		for (int ph = 0; ph < k->nphase; ph++) {
			const Phase *q = &k->phase[ph];
			fprintf(out, "    phase %d %s, then %s\n", ph, kernel_mode_name[q->kind], barrier_name[q->after]);
			for (int sid = q->first_stmt; sid < q->first_stmt + q->nstmt; sid++)
				if (s->op[sid - s->first_stmt] != STEP_INLINE) fputs("      ", out), stmt_line(m, s, sid, out); /* listed below */
		}
		for (int t = f->first_tensor; t < f->first_tensor + f->ntensor; t++)
			if (s->reset_by[t - s->first_tensor] == i) fprintf(out, "    zeroes %s for the next run\n", m->tensor[t].name);
	}
	for (int sid = s->first_stmt; sid < s->last_stmt; sid++)
		if (s->op[sid - s->first_stmt] == STEP_INLINE) fputs("  ", out), stmt_line(m, s, sid, out);
	for (int t = f->first_tensor; t < f->first_tensor + f->ntensor; t++) {
		const Tensor *x = &m->tensor[t];
		fprintf(out, "  tensor %s %s", x->name, storage_name[s->storage[t - s->first_tensor]]);
		int counts = 0; /* the length of a compacted list */
		for (int u = f->first_tensor; u < f->first_tensor + f->ntensor; u++) counts |= m->tensor[u].list_count == t;
		if ((x->zero_init || counts) && s->reset_by[t - s->first_tensor] < 0) fputs(", zeroed by a memset before the run", out);
		fputc('\n', out);
	}
}

/* Two schedules of one fusion and variant that differ at most in their
 * target. While every target's schedule is the same, an artifact holds one
 * .cu for all of them (what differs per architecture inside a template is
 * chosen by the preprocessor when NVRTC compiles each target); artifact.c
 * and the back-end fuzzer check it. */
/* Tripwires: a field added to these structs must be compared below before
 * the size here is updated (LP64 sizes; b_kmajor was missed once). */
#if UINTPTR_MAX == 0xffffffffffffffffu
_Static_assert(sizeof(KernelParams) == 104, "KernelParams changed: compare the new field in params_same, then update 104");
_Static_assert(sizeof(Kernel) == 1048, "Kernel changed: compare the new field in kernel_same, then update 1048");
_Static_assert(sizeof(Phase) == 16, "Phase changed: compare the new field in kernel_same, then update 16");
_Static_assert(sizeof(Schedule) == 128, "Schedule changed: compare the new field in sched_same, then update 128");
#endif

static int params_same(const KernelParams *a, const KernelParams *b)
{
	return a->block == b->block && a->min_blocks == b->min_blocks && a->regs == b->regs && a->unroll == b->unroll && a->vec == b->vec &&
	       a->slices == b->slices && a->red_unroll == b->red_unroll && a->split == b->split && a->stage == b->stage && a->rcache == b->rcache && a->warp_rows == b->warp_rows && a->row_paths == b->row_paths && a->row_stream == b->row_stream && a->tile_m == b->tile_m &&
	       a->tile_n == b->tile_n && a->tile_k == b->tile_k && a->tile_n_min == b->tile_n_min && a->swapped == b->swapped && a->b_kmajor == b->b_kmajor && a->a_mmajor == b->a_mmajor && a->c_swapped == b->c_swapped &&
	       a->stages == b->stages &&
	       a->smem == b->smem && str_same(a->tuned, b->tuned);
}

static int attn_same(const AttnPlan *a, const AttnPlan *b)
{
	if (a->c1 != b->c1 || a->mx != b->mx || a->sum != b->sum || a->c2 != b->c2 || a->q != b->q || a->k != b->k ||
	    a->v != b->v || !dim_same(a->dh, b->dh) || a->block_m != b->block_m || a->causal != b->causal || a->csel != b->csel || a->out != b->out || a->nent != b->nent ||
	    a->zmul != b->zmul || a->zkeep != b->zkeep || a->zc != b->zc || a->zstmt != b->zstmt)
		return 0;
	for (int e = 0; e < a->nent; e++)
		if (a->db[e] != b->db[e] || a->bn[e] != b->bn[e] || a->st[e] != b->st[e] || a->nq[e] != b->nq[e] || a->minb[e] != b->minb[e] || a->smem[e] != b->smem[e] ||
		    !str_same(a->entry[e], b->entry[e]))
			return 0;
	return 1;
}

static int vec_strides_same(const Kernel *a, const Kernel *b)
{
	for (int i = 0; i < a->nvec; i++)
		if (kernel_vec_stride(a, a->vec_tensors[i]) != kernel_vec_stride(b, a->vec_tensors[i])) return 0;
	return 1;
}

static int kernel_same(const Kernel *a, const Kernel *b)
{
	if (strcmp(a->name, b->name) || strcmp(a->sig, b->sig) || a->mode != b->mode || a->first_stmt != b->first_stmt || a->nstmt != b->nstmt ||
	    a->fusion != b->fusion || a->nspace != b->nspace || a->ninner != b->ninner || a->lead != b->lead || a->gap != b->gap ||
	    a->shift_sum != b->shift_sum || a->shift_sq != b->shift_sq || a->online_max != b->online_max || a->online_sum != b->online_sum ||
	    a->argmax_max != b->argmax_max || a->argmax_idx != b->argmax_idx || a->argmax_sel != b->argmax_sel ||
	    a->peel != b->peel || a->has_tail != b->has_tail || a->ntail != b->ntail ||
	    a->nphase != b->nphase || !params_same(&a->par, &b->par) || !str_same(a->path_why, b->path_why) ||
	    a->tile_a != b->tile_a || a->tile_b != b->tile_b || a->nacross != b->nacross ||
	    (a->par.split && !dim_same(a->split_range, b->split_range)) || a->nvec != b->nvec ||
	    (a->nvec && memcmp(a->vec_tensors, b->vec_tensors, (size_t)a->nvec * sizeof *a->vec_tensors)) || !vec_strides_same(a, b) ||
	    (a->nacross && memcmp(a->across, b->across, (size_t)a->nacross * sizeof *a->across)) ||
	    !str_same(a->attn_why, b->attn_why) || !attn_same(&a->at, &b->at))
		return 0;
	for (int d = 0; d < a->nspace; d++)
		if (!dim_same(a->space[d], b->space[d])) return 0;
	for (int d = 0; d < a->ninner; d++)
		if (!dim_same(a->inner[d], b->inner[d])) return 0;
	for (int i = 0; i < a->nphase; i++)
		if (a->phase[i].kind != b->phase[i].kind || a->phase[i].first_stmt != b->phase[i].first_stmt ||
		    a->phase[i].nstmt != b->phase[i].nstmt || a->phase[i].after != b->phase[i].after)
			return 0;
	return 1;
}

int sched_same(const Module *m, const Schedule *a, const Schedule *b)
{
	(void)m;
	if (a->fused != b->fused || a->variant != b->variant || a->fusion != b->fusion || a->first_stmt != b->first_stmt ||
	    a->last_stmt != b->last_stmt || a->first_tensor != b->first_tensor || a->last_tensor != b->last_tensor || a->nk != b->nk)
		return 0;
	for (int i = 0; i < a->nk; i++)
		if (!kernel_same(&a->k[i], &b->k[i])) return 0;
	for (int s = 0; s < a->last_stmt - a->first_stmt; s++) /* the arrays' positions, not Module ids */
		if (a->why[s] != b->why[s] || a->stmt_kernel[s] != b->stmt_kernel[s] || a->op[s] != b->op[s] ||
		    a->merge[s] != b->merge[s] || a->remat[s] != b->remat[s])
			return 0;
	for (int t = 0; t < a->last_tensor - a->first_tensor; t++)
		if (a->storage[t] != b->storage[t] || a->writer[t] != b->writer[t] || a->reset_by[t] != b->reset_by[t] ||
		    a->prod_at[t] != b->prod_at[t] || a->prod_at[t + 1] != b->prod_at[t + 1] ||
		    memcmp(a->prod + a->prod_at[t], b->prod + b->prod_at[t], (size_t)(a->prod_at[t + 1] - a->prod_at[t]) * sizeof *a->prod))
			return 0;
	return 1;
}
