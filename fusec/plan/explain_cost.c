/* --explain's numbers: the bytes each kernel moves through device memory,
 * fused against unfused, and each kernel's registers where fusec compiled
 * it. Bytes come from the schedule alone: a kernel reads each tensor it
 * loads from device memory once (an input, or a temp or output another
 * kernel stored) and writes each tensor it stores once; values kept on
 * chip or recomputed move nothing. It is the floor a kernel's traffic
 * approaches, not a measurement (a row read again on each walk, the
 * reduction workspace and memsets are not counted). Sums are printed over
 * the sizes (4*R*C + 2*C), and as numbers at --size's values. */
#include <stdlib.h>
#include <string.h>

#include "core/die.h"
#include "plan/plan_impl.h"

#define MAX_TERMS 64
#define KEY_CAP 96

/* a sum of terms coef * factors, the factors a '*'-joined sorted text */
typedef struct Poly {
	int n;
	long long coef[MAX_TERMS];
	int degree[MAX_TERMS];
	char key[MAX_TERMS][KEY_CAP];
} Poly;

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* tensor t's bytes as one term: its element size times its constant
   dimensions, its other dimensions as sorted factors; their count */
static int tensor_term(const Module *m, const Fusion *f, int t, long long *coef, char *key)
{
	const Tensor *x = &m->tensor[t];
	char names[MAX_RANK][40], *sorted[MAX_RANK];
	int nf = 0;
	*coef = elem_info[x->type].bytes;
	for (int d = 0; d < x->rank; d++) {
		const Dim dd = x->dim[d];
		if (dd.sym < 0 && !dim_derived(dd)) {
			*coef *= dd.value;
			continue;
		}
		char *buf = NULL;
		size_t len = 0;
		FILE *s = xmemstream(&buf, &len);
		dim_write(m, f, dd, s);
		if (fclose(s)) die("out of memory");
		snprintf(names[nf], sizeof names[nf], dim_derived(dd) ? "(%s)" : "%s", buf);
		free(buf);
		sorted[nf] = names[nf], nf++;
	}
	qsort(sorted, (size_t)nf, sizeof *sorted, cmp_str);
	key[0] = 0;
	for (int i = 0; i < nf; i++) snprintf(key + strlen(key), KEY_CAP - strlen(key), "%s%s", i ? "*" : "", sorted[i]);
	return nf;
}

static void poly_add_tensor(const Module *m, const Fusion *f, Poly *p, int t)
{
	long long coef;
	char key[KEY_CAP];
	const int deg = tensor_term(m, f, t, &coef, key);
	for (int i = 0; i < p->n; i++)
		if (!strcmp(p->key[i], key)) {
			p->coef[i] += coef;
			return;
		}
	if (p->n == MAX_TERMS) return; /* a fusion's tensors are far fewer */
	p->coef[p->n] = coef, p->degree[p->n] = deg;
	memcpy(p->key[p->n++], key, KEY_CAP);
}

/* the terms, the most factors first, then by name: 8*R*C + 2*C + 4 */
static void poly_write(const Poly *p, FILE *out)
{
	int done[MAX_TERMS] = {0}, any = 0;
	for (int k = 0; k < p->n; k++) {
		int best = -1;
		for (int i = 0; i < p->n; i++)
			if (!done[i] && (best < 0 || p->degree[i] > p->degree[best] ||
			                 (p->degree[i] == p->degree[best] && strcmp(p->key[i], p->key[best]) < 0)))
				best = i;
		done[best] = 1;
		if (!p->coef[best]) continue;
		fprintf(out, "%s%lld%s%s", any ? " + " : "", p->coef[best], *p->key[best] ? "*" : "", p->key[best]);
		any = 1;
	}
	if (!any) fputc('0', out);
}

/* kernel k's traffic: rd[t'] the tensors it reads from device memory,
   wr[t'] those it stores (t' = t - first_tensor) */
static void kernel_traffic(const Module *m, const Schedule *p, int k, unsigned char *rd, unsigned char *wr)
{
	const int first = p->first_tensor, nt = p->last_tensor - first;
	unsigned char *reads = calloc((size_t)nt, 1), *seen = calloc((size_t)nt, 1);
	if (!reads || !seen) die("out of memory");
	for (int s = p->first_stmt; s < p->last_stmt; s++) {
		if (p->stmt_kernel[s - p->first_stmt] != k || p->op[s - p->first_stmt] == STEP_INLINE) continue;
		const Stmt *st = &m->stmt[s];
		plan_mark_reads(m, st, reads, first);
		if (sched_stored(p, st->out)) wr[st->out - first] = 1;
		if (p->op[s - p->first_stmt] == STEP_ACCUM) reads[st->out - first] = 1; /* read-modify-write */
	}
	/* a temp computed where it is read (inlined) reads what its statement reads */
	for (int again = 1; again;) {
		again = 0;
		for (int i = 0; i < nt; i++) {
			const int w = p->writer[i];
			if (!reads[i] || seen[i] || w < 0 || p->op[w - p->first_stmt] != STEP_INLINE) continue;
			seen[i] = again = 1;
			plan_mark_reads(m, &m->stmt[w], reads, first);
		}
	}
	for (int i = 0; i < nt; i++) {
		const Tensor *x = &m->tensor[first + i];
		if (x->kind == TK_INPUT && x->rank == 0) continue; /* a scalar input: by value */
		const int from_caller = x->kind == TK_INPUT || x->inplace, elsewhere = sched_stored(p, first + i) && !wr[i];
		rd[i] = reads[i] && (from_caller || elsewhere) && p->storage[i] != ST_RECOMPUTED;
	}
	free(reads), free(seen);
}

/* dimension d at the sizes given; -1 when one is missing */
static long long dim_value(const Fusion *f, Dim d, const ExplainCost *c)
{
	long long v[2] = {d.value, 0};
	const int sym[2] = {d.sym, d.dsym - 1};
	for (int j = 0; j < 2; j++) {
		if (sym[j] < 0) continue;
		v[j] = -1;
		for (int i = 0; i < c->nsize; i++)
			if (!strcmp(c->size_name[i], f->sym[sym[j]])) v[j] = c->size_value[i];
		if (v[j] < 0) return -1;
	}
	long long x = v[0] + d.add > 0 ? v[0] + d.add : 0;
	if (d.div > 1) x /= d.div;
	if (d.dsym) x = v[1] ? x / v[1] : 0;
	return x;
}

/* the bytes of the tensors marked, at the sizes given; -1 when one is missing */
static double bytes_at(const Module *m, const Fusion *f, const Schedule *p, const unsigned char *mark, const ExplainCost *c)
{
	double total = 0;
	for (int i = 0; i < p->last_tensor - p->first_tensor; i++) {
		if (!mark[i]) continue;
		const Tensor *x = &m->tensor[p->first_tensor + i];
		double b = elem_info[x->type].bytes;
		for (int d = 0; d < x->rank; d++) {
			const long long v = dim_value(f, x->dim[d], c);
			if (v < 0) return -1;
			b *= (double)v;
		}
		total += b;
	}
	return total;
}

static void names_write(const Module *m, const Schedule *p, const unsigned char *mark, FILE *out)
{
	int any = 0;
	for (int i = 0; i < p->last_tensor - p->first_tensor; i++)
		if (mark[i]) fprintf(out, "%s%s", any++ ? ", " : "", m->tensor[p->first_tensor + i].name);
	if (!any) fputs("nothing", out);
}

/* one variant: a line per kernel, its total as a sum and at the sizes; *at the total there */
static void variant_cost(const Module *m, const Fusion *f, const Schedule *p, int v, const ExplainCost *c, double *at, FILE *out)
{
	const int nt = p->last_tensor - p->first_tensor;
	unsigned char *rd = calloc((size_t)nt, 1), *wr = calloc((size_t)nt, 1);
	if (!rd || !wr) die("out of memory");
	Poly total = {0};
	*at = 0;
	for (int k = 0; k < p->nk; k++) {
		memset(rd, 0, (size_t)nt), memset(wr, 0, (size_t)nt);
		kernel_traffic(m, p, k, rd, wr);
		Poly one = {0};
		for (int i = 0; i < nt; i++) {
			if (rd[i]) poly_add_tensor(m, f, &one, p->first_tensor + i), poly_add_tensor(m, f, &total, p->first_tensor + i);
			if (wr[i]) poly_add_tensor(m, f, &one, p->first_tensor + i), poly_add_tensor(m, f, &total, p->first_tensor + i);
		}
		const double b = bytes_at(m, f, p, rd, c), w = bytes_at(m, f, p, wr, c);
		*at = *at < 0 || b < 0 || w < 0 ? -1 : *at + b + w;
		fprintf(out, "    %s %s: loads ", p->fused ? "fused" : "unfused", p->k[k].name);
		names_write(m, p, rd, out);
		fputs("; stores ", out);
		names_write(m, p, wr, out);
		fputs(": ", out);
		poly_write(&one, out);
		if (c->regs[v] && c->regs[v][k] >= 0) fprintf(out, "; %d registers", c->regs[v][k]);
		if (c->spill[v] && c->spill[v][k] > 0) fprintf(out, ", %d bytes spilled", c->spill[v][k]);
		fputc('\n', out);
	}
	fprintf(out, "    %s, %d kernel%s: ", p->fused ? "fused" : "unfused", p->nk, p->nk == 1 ? "" : "s");
	poly_write(&total, out);
	if (*at >= 0 && c->nsize) fprintf(out, " = %.0f bytes (%.1f MiB)", *at, *at / 1048576.0);
	fputc('\n', out);
	free(rd), free(wr);
}

void plan_explain_cost(const Module *m, const FusionPlan *fp, const ExplainCost *c, FILE *out)
{
	const Fusion *f = &m->fusion[fp->fusion];
	double fused, unfused;
	fputs("  bytes moved through device memory (each tensor a kernel loads or stores, once; a floor, not counting "
	      "rows read again, reduction workspace or memsets)", out);
	if (c->arch && (c->regs[0] || c->regs[1])) fprintf(out, ", registers a thread (ptxas -v, %s)", c->arch);
	fputs(":\n", out);
	variant_cost(m, f, &fp->fused, 0, c, &fused, out);
	variant_cost(m, f, &fp->unfused, 1, c, &unfused, out);
	if (c->nsize && fused > 0 && unfused >= 0)
		fprintf(out, "    unfused / fused at the sizes given: %.2fx the bytes\n", unfused / fused);
	else if (c->nsize)
		fputs("    (--size gives not every size of this fusion: no numbers)\n", out);
	if (c->no_regs) fprintf(out, "    registers: %s\n", c->no_regs);
}
