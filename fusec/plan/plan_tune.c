/* Kernel signatures and the tuning table's entries (issue 21's build-time
 * tuning). A kernel's signature names what it computes and how the built-in
 * rules shaped it, never what the spec calls things: two specs whose
 * kernels do the same work on the same types (a user's softmax and ours)
 * get the same signature, so an entry measured for one serves the other.
 * It is the kernel's mode and a hash of a canonical text: the kernel's
 * structure (space rank, row axes, vector and slicing decisions), then
 * each of its statements (what it does in the kernel, its reduction, its
 * types, where its result lives) with tensors, sizes and indices numbered
 * by first use. The parameters a table may set are not in it, or an
 * entry would change the signature that found it.
 *
 * The table (tune/table.txt, format in tune.h; fusec --tune=FILE) is read,
 * never written, here: a kernel whose signature has an entry of the
 * artifact's architecture takes its parameters, which tune_load checked
 * against their ranges. An artifact has one .cu and one header for all its
 * targets, so one set of launch parameters: the entries of its newest
 * architecture (main.c: sm_90 for --arch=sm_80,sm_90,sm_90a; the table
 * names a GPU family, sm_90a's PTX runs on the sm_90 GPUs it was measured
 * on). Without --tune, or without an entry, the built-in rules stand. */
#include "plan/plan_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/die.h"
#include "plan/tune.h"

/* may the table shape k at all? Rows with a register cache; points that
   are neither sliced nor split (their blocks are the reductions' shape) */
static int tunable_kernel(const Kernel *k)
{
	if (k->mode == KM_ROW) return k->par.rcache > 0 && !k->par.warp_rows;
	if (k->mode == KM_POINT) return k->par.slices <= 1 && !k->par.split && !k->has_tail;
	return 0;
}

/* --- the canonical text ------------------------------------------------ */

typedef struct Canon {
	FILE *f;
	const Module *m;
	int *tens, ntens; /* tensors in order of first use */
	int *syms, nsyms; /* size symbols likewise */
} Canon;

static int canon_id(int **v, int *n, int x)
{
	for (int i = 0; i < *n; i++)
		if ((*v)[i] == x) return i;
	*v = xrealloc(*v, (unsigned long)*n + 1, sizeof **v);
	(*v)[*n] = x;
	return (*n)++;
}

static void canon_dim(Canon *c, Dim d)
{
	if (d.sym < 0) fprintf(c->f, "%lld", (long long)d.value);
	else fprintf(c->f, "s%d", canon_id(&c->syms, &c->nsyms, d.sym));
	if (dim_derived(d)) fprintf(c->f, "{%lld/%lld:%d}", (long long)d.add, (long long)d.div, d.dsym ? canon_id(&c->syms, &c->nsyms, d.dsym - 1) : -1);
}

/* a tensor: its number, and at its first use its kind, type and shape */
static void canon_tensor(Canon *c, int t)
{
	const int seen = c->ntens, id = canon_id(&c->tens, &c->ntens, t);
	const Tensor *x = &c->m->tensor[t];
	fprintf(c->f, "T%d", id);
	if (id < seen) return;
	fprintf(c->f, "<%d%s%s", (int)x->kind, x->inplace ? "io" : "", elem_info[x->type].name);
	for (int i = 0; i < x->rank; i++) fputc(i ? ',' : '[', c->f), canon_dim(c, x->dim[i]);
	fputs(x->rank ? "]>" : ">", c->f);
}

static void canon_expr(Canon *c, const Stmt *s, int e)
{
	if (!e) { fputc('_', c->f); return; }
	const Expr *x = &c->m->expr[e];
	fprintf(c->f, "(%s:%s", x->op < IR_NOPS ? ir_op_name[x->op] : "?", elem_info[x->type].name);
	switch (x->op) {
	case IR_CONST: fprintf(c->f, " %.17g", x->value); break;
	case IR_INDEX: fprintf(c->f, " i%d", x->index - s->first_index); break;
	case IR_SIZE: fprintf(c->f, " s%d", canon_id(&c->syms, &c->nsyms, x->sym)); break;
	case IR_SCALAR: fputc(' ', c->f), canon_tensor(c, x->tensor); break;
	case IR_LOAD:
		fputc(' ', c->f), canon_tensor(c, x->tensor);
		for (int i = 0; i < x->nargs; i++) fputc(' ', c->f), canon_expr(c, s, x->args[i]);
		break;
	default:
		for (int i = 0; i < ir_op_arity[x->op]; i++) fputc(' ', c->f), canon_expr(c, s, i == 0 ? x->a : i == 1 ? x->b : x->c);
	}
	fputc(')', c->f);
}

static void canon_stmt(Canon *c, const Schedule *p, int sid)
{
	const Module *m = c->m;
	const Stmt *s = &m->stmt[sid];
	const int i = sid - p->first_stmt;
	fprintf(c->f, "\n%s red=%d k=%d pat=%d acc=%s prec=%s free=%d merge=%d remat=%d out=", step_op_name[p->op[i]], (int)s->red, s->kmin_k,
	        (int)s->pattern, elem_info[s->acc].name, m->stage[s->stage].tf32 ? "tf32" : elem_info[m->stage[s->stage].precision].name, s->nfree, p->merge[i], p->remat[i]);
	canon_tensor(c, s->out);
	fprintf(c->f, ":%s", storage_name[p->storage[s->out - p->first_tensor]]);
	for (int j = s->first_index; j < s->first_index + s->nindex; j++) {
		const Index *x = &m->index[j];
		fprintf(c->f, " i%d%s%s<", j - s->first_index, x->reduced ? "r" : "", x->kind == IX_RAGGED ? "g" : "");
		if (x->kind == IX_RAGGED) canon_expr(c, s, x->lo), canon_expr(c, s, x->hi);
		else canon_dim(c, x->range);
	}
	for (int j = 0; j < s->nlhs; j++) fputs(" L", c->f), canon_expr(c, s, s->lhs[j]);
	fputs(" R", c->f), canon_expr(c, s, s->rhs);
	fputs(" M", c->f), canon_expr(c, s, s->mask);
}

/* the text a signature hashes; malloc'd */
char *plan_signature_text(const Module *m, const Schedule *p, const Kernel *k)
{
	char *buf = NULL;
	size_t len = 0;
	Canon c = {xmemstream(&buf, &len), m, NULL, 0, NULL, 0};
	const KernelParams *q = &k->par;
	fprintf(c.f, "%s nspace=%d ninner=%d lead=%d gap=%d peel=%d shift=%d tail=%d vec=%d slices=%d split=%d warp_rows=%d red_unroll=%d",
	        kernel_mode_name[k->mode], k->nspace, k->ninner, k->lead, k->gap, k->peel, k->shift_sq != 0, k->ntail, q->vec, q->slices,
	        q->split, q->warp_rows, q->red_unroll);
	for (int i = 0; i < k->nspace; i++) fputs(i ? "," : " space=", c.f), canon_dim(&c, k->space[i]);
	for (int i = 0; i < k->ninner; i++) fputs(i ? "," : " inner=", c.f), canon_dim(&c, k->inner[i]);
	for (int i = 0; i < k->nvec; i++) fprintf(c.f, " v%d", kernel_vec_stride(k, k->vec_tensors[i])), canon_tensor(&c, k->vec_tensors[i]);
	for (int sid = k->first_stmt; sid < k->first_stmt + k->nstmt; sid++) canon_stmt(&c, p, sid);
	if (fclose(c.f)) die("out of memory");
	free(c.tens), free(c.syms);
	return buf;
}

void plan_signature(const Module *m, const Schedule *p, const Kernel *k, char sig[PLAN_SIG_LEN])
{
	/* FNV-1a, 64 bits, 48 of them printed: a key among a table's few
	   hundred entries, not a checksum (and the front end's library, which
	   the fuzzers link alone, has no SHA-256) */
	char *text = plan_signature_text(m, p, k);
	unsigned long long h = 0xcbf29ce484222325ull;
	for (const unsigned char *c = (const unsigned char *)text; *c; c++) h = (h ^ *c) * 0x100000001b3ull;
	free(text);
	snprintf(sig, PLAN_SIG_LEN, "%s.%012llx", kernel_mode_name[k->mode], h >> 16);
}

/* --- applying entries ---------------------------------------------------- */

static const TuneTable *active;
static char active_arch[TUNE_NAME];

void plan_tune_use(const struct TuneTable *t, const char *arch)
{
	active = t;
	snprintf(active_arch, sizeof active_arch, "%s", arch ? arch : "");
}

/* every kernel's signature; then, with a table, the entries that match */
void plan_tune(const Module *m, Schedule *p)
{
	for (int i = 0; i < p->nk; i++) {
		Kernel *k = &p->k[i];
		plan_signature(m, p, k, k->sig);
		const TuneEntry *e = active && tunable_kernel(k) ? tune_find(active, active_arch, k->sig, 99) : NULL;
		if (!e) continue;
		const int block = k->par.block;
		tune_apply(e, &k->par);
		/* a block changed, min_blocks not given: the built-in occupancy */
		if (k->par.block != block && !tune_get(e, "min_blocks", 0)) {
			k->par.min_blocks = block * k->par.min_blocks / k->par.block;
			if (k->par.min_blocks < 1) k->par.min_blocks = 1;
			if (k->par.block * k->par.min_blocks > 2048) k->par.min_blocks = 2048 / k->par.block;
		}
		k->par.tuned = e->name; /* the table outlives every schedule (main.c) */
	}
}
