/* --explain: the fused schedule in words, and why each stage boundary
 * was or was not fused (the planner's SplitRule). Also the manifest's
 * "plan" lines. */
#include "plan/plan.h"

void plan_explain(const Module *m, int fusion, const Schedule *p, FILE *out)
{
	const Fusion *f = &m->fusion[fusion];
	fprintf(out, "fusion %s: %d stage%s in %d kernel%s\n", f->name, f->nstage, f->nstage == 1 ? "" : "s",
	        p->nk, p->nk == 1 ? "" : "s");
	for (int i = 0; i < p->nk; i++) {
		const Kernel *k = &p->k[i];
		fprintf(out, "  kernel %s: %s", k->name, kernel_mode_name[k->mode]);
		if (k->nspace) fputs(" over ", out), dim_write_list(m, f, k->space, k->nspace, ",", out);
		for (int d = 0; d < k->ninner; d++) fputs(d ? "*" : ", rows of ", out), dim_write(m, f, k->inner[d], out);
		if (k->ninner > 1 && !k->lead) fputs(", its trailing axes walked as one", out);
		if (k->lead) fputs(", its axes walked as one in contiguous segments of the trailing ones", out);
		if (k->has_tail) fputs(", whole-grid reduction folded by the last block in a fixed order", out);
		fputc('\n', out);
		if (k->par.tuned) /* the parameters below are a measurement's, not the rules' */
			fprintf(out, "    launch parameters measured on a GPU, not the built-in rules': tuning table entry %s (its signature: "
			             "the kernel's work, whatever its spec calls it)\n", k->par.tuned);
		if (k->mode == KM_TILE)
			fprintf(out, "    tiles %d x %d x %d, narrowed at launch to %d x %d or down to %d x %d when that fills the SMs "
			             "better: the fewest waves of tiles over min(%d x %d tiles, SMs) blocks, a wave costing the tile's "
			             "width + 32 (1024^3 on 132 SMs: %d x %d, 128 tiles); mma.sync starts at %d x %d\n",
			        k->par.tile_m, k->par.tile_n, k->par.tile_k, k->par.tile_m, k->par.tile_n / 2, k->par.tile_m,
			        k->par.tile_n_min, k->par.tile_m, k->par.tile_n_min, k->par.tile_m, k->par.tile_n_min, k->par.tile_m,
			        k->par.tile_n / 2);
		if (k->mode == KM_ATTN) {
			fprintf(out, "    attention: S = Q K^T, the softmax over its rows and P V in one kernel%s, entry points by head size:",
			        k->at.causal ? " (a causal mask in z: blocks of keys wholly past a block's rows are not computed)" : "");
			for (int e = 0; e < k->at.nent; e++) fprintf(out, "%s up to %d (%d bytes of shared memory)", e ? "," : "", k->at.db[e], k->at.smem[e]);
			fputc('\n', out);
			if (k->at.out)
				fprintf(out, "    %s leaves from the accumulators' registers, two elements a store, Q's buffer free after the last S (the "
				             "only tensor O's work stores, 16-bit, at the point; through shared memory, element by element, when the "
				             "head size is not a multiple of 8 or the pointer not 16-byte aligned)\n", m->tensor[k->at.out - 1].name);
			else
				fputs("    O's work stored element by element (it stores more than one 16-bit tensor at the point, or a "
				      "row statistic)\n", out);
		}
		if (k->attn_why) fprintf(out, "    not an attention kernel with the softmax and product after it: %s\n", k->attn_why);
		if (k->par.split)
			fputs("    reduction over an outer axis: 32 points a block, its outermost loop split over as many blocks as keep "
			      "one wave on the SMs when the points are fewer (chosen at launch from the sizes); the last block of each "
			      "32 points folds the partials in block order, then runs the rest\n", out);
		if (k->mode == KM_ROW && k->par.rcache && k->peel)
			fprintf(out, "    row read once into registers: up to %d columns (%d where its tensors' rows lie at different "
			             "offsets from a vector boundary, or a row of at most %d columns is unaligned or its width not a multiple "
			             "of 4); peeled: each row's head before its first 16-byte boundary (8-byte for f16, bf16) and what follows "
			             "its last whole vector, under 4 columns each, a column a thread, the rest as vectors; wider rows are read "
			             "again on each walk (16-byte loads, %d a thread in flight)\n",
			        ROW_MAX_THREADS * 4 * row_cache_vectors(&k->par, 1), ROW_MAX_THREADS * 4 * row_cache_vectors(&k->par, 0),
			        16 * k->par.rcache, ROW_STREAM_VECS);
		else if (k->mode == KM_ROW && k->par.rcache)
			fprintf(out, "    row read once into registers: up to %d columns (%d if the width is not a multiple of 4 or a row "
			             "unaligned); wider rows are read again on each walk (16-byte loads, %d a thread in flight, where the width "
			             "is a multiple of 4 and rows aligned)\n",
			        ROW_MAX_THREADS * 4 * row_cache_vectors(&k->par, 1), ROW_MAX_THREADS * 4 * row_cache_vectors(&k->par, 0),
			        ROW_STREAM_VECS);
		if (k->mode == KM_ROW && k->par.rcache && k->par.row_paths && !k->has_tail)
			fprintf(out, "    its paths (rows streamed, rows in registers, the scalar one) each a function of its own, registers "
			             "allocated per path: a walk loads, beside the cached row, a tensor it recomputes a producer from; rows in "
			             "registers built twice, %d vectors a thread and %d for rows that need no more\n",
			        k->par.rcache, row_cache_small(&k->par));
		for (int t = 0; t < k->nvec; t++)
			if (kernel_vec_stride(k, k->vec_tensors[t]) > 1) {
				const int a = kernel_vec_stride(k, k->vec_tensors[t]);
				fprintf(out, "    %s gathered every %d elements along ", m->tensor[k->vec_tensors[t]].name, a);
				dim_write(m, f, k->space[k->nspace - 1], out);
				fprintf(out, ": %d vector loads (16 bytes; f16, bf16: 8) for a thread's 4 points, where its rows are so aligned and hold %d ", a, a);
				dim_write(m, f, k->space[k->nspace - 1], out);
				fputc('\n', out);
			}
		if (k->shift_sq)
			fprintf(out, "    %s and %s in one %s: the terms shifted by the %s first, %s's squares about its value "
			             "constant over the %s by algebra (plan_shift.c)\n",
			        m->tensor[m->stmt[k->shift_sum].out].name, m->tensor[m->stmt[k->shift_sq].out].name,
			        k->mode == KM_ROW ? "walk where the row is read again" : "loop over the outer axis, so the input is read once",
			        k->mode == KM_ROW ? "row's" : "reduction's", m->tensor[m->stmt[k->shift_sq].out].name,
			        k->mode == KM_ROW ? "row" : "reduction");
		if (k->online_sum)
			fprintf(out, "    %s and %s in one walk where the row is read again: the sum of exponentials rescaled as the "
			             "running max grows (online softmax, plan_shift.c)\n",
			        m->tensor[m->stmt[k->online_max].out].name, m->tensor[m->stmt[k->online_sum].out].name);
		if (k->argmax_idx)
			fprintf(out, "    %s and %s in one walk where the row is read again: each lane keeps its max and the first "
			             "column holding it (plan_shift.c)\n",
			        m->tensor[m->stmt[k->argmax_max].out].name, m->tensor[m->stmt[k->argmax_idx].out].name);
		const char *prev = NULL;
		for (int s = k->first_stmt; s < k->first_stmt + k->nstmt; s++) {
			if (p->op[s - p->first_stmt] == STEP_INLINE) continue; /* listed below */
			const Stage *sg = &m->stage[m->stmt[s].stage];
			if (prev != sg->name) fprintf(out, "    stage %s\n", sg->name);
			prev = sg->name;
			if (s == k->first_stmt && k->path_why) /* a contraction: matmul, tile, or a batched one left to a point kernel */
				fprintf(out, "      contraction on %s\n", k->path_why);
			else if (k->mode == KM_ATTN && s == k->at.c2)
				fputs("      second product on tensor cores: the normalised row from registers, V from shared memory\n", out);
			else if ((sg->attrs & ATTR(TENSOR_ELIGIBLE)) && m->stmt[s].pattern == PAT_CONTRACT)
				fputs("      tensor_eligible: not a matrix tile, CUDA cores\n", out);
		}
		for (int t = f->first_tensor; t < f->first_tensor + f->ntensor; t++) {
			if (m->tensor[t].kind != TK_TEMP) continue;
			int mine = 0;
			for (int s = k->first_stmt; s < k->first_stmt + k->nstmt; s++) mine |= m->stmt[s].out == t && p->op[s - p->first_stmt] != STEP_INLINE;
			if (mine) fprintf(out, "      %s: %s\n", m->tensor[t].name, sched_stored(p, t) ? "stored in device memory" : "kept on chip");
		}
	}
	for (int s = p->first_stmt; s < p->last_stmt; s++)
		if (p->op[s - p->first_stmt] == STEP_INLINE)
			fprintf(out, "  %s (stage %s): pointwise over inputs, computed where it is read; never stored\n",
			        m->tensor[m->stmt[s].out].name, m->stage[m->stmt[s].stage].name);
	fputs("  stage boundaries:\n", out);
	for (int sg = f->first_stage + 1; sg < f->first_stage + f->nstage; sg++) {
		int sid = m->stage[sg].first_stmt;
		if (!m->stage[sg].nstmt) continue;
		/* (the stages before may all be empty: then sid is the first) */
		if (p->op[sid - p->first_stmt] == STEP_INLINE || (sid > p->first_stmt && p->op[sid - 1 - p->first_stmt] == STEP_INLINE))
			fprintf(out, "    %s -> %s: fused (inlined)\n", m->stage[sg - 1].name, m->stage[sg].name);
		else
			fprintf(out, "    %s -> %s: %s%s\n", m->stage[sg - 1].name, m->stage[sg].name,
			        p->why[sid - p->first_stmt] == SPLIT_NONE ? "" : "split: ", split_rule_text[p->why[sid - p->first_stmt]]);
	}
}
