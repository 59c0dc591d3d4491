/* The launch recipe of a format-2 manifest: how to place a variant's
 * scratch and which launches and memsets it makes, as expressions over the
 * sizes and the SM count (fusec/host/recipe.c writes them; fuserun.h gives
 * the syntax). Parsed once at verification into a node pool, evaluated at
 * each fz_call: no text is read on the launch path.
 *
 * Expressions have no spaces: numbers, size names, $sm, + - * / (C's
 * 64-bit integer arithmetic, division truncating), parentheses, and the
 * functions of fuserun.h without their fz_ (grid, rows, row_grid,
 * row_threads, split, align) and dim(B,K,D), a derived dimension. An
 * overflow or a division by zero is an error, never a wrapped value. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

enum { N_NUM, N_SIZE, N_SM, N_NEG, N_ADD, N_SUB, N_MUL, N_DIV, N_GRID, N_ROWS, N_ROW_GRID, N_ROW_THREADS, N_ROW_THREADS_S, N_SPLIT,
       N_DIM, N_ALIGN };
static const struct { const char *name; int op, nargs; } funcs[] = {
	{"grid", N_GRID, 3}, {"rows", N_ROWS, 2}, {"row_grid", N_ROW_GRID, 4}, {"row_threads", N_ROW_THREADS, 2}, {"row_threads_s", N_ROW_THREADS_S, 2},
	{"split", N_SPLIT, 3}, {"dim", N_DIM, 3}, {"align", N_ALIGN, 1}};

typedef struct px {
	const fz_artifact_info *info;
	fr_recipe *r;
	const char *s;
	int depth;
	char *err;
} px;

static int node(px *p, int op, long long v, int nkid, const int *kid)
{
	fr_recipe *r = p->r;
	if (r->nnodes == r->cap) {
		int cap = r->cap ? 2 * r->cap : 256;
		fr_node *n = realloc(r->node, (size_t)cap * sizeof *n);
		if (!n) return fr_err(p->err, FZ_ERR_NO_MEMORY, "out of memory"), -1;
		r->node = n, r->cap = cap;
	}
	fr_node *n = &r->node[r->nnodes];
	n->op = op, n->v = v, n->nkid = nkid;
	for (int i = 0; i < nkid; i++) n->kid[i] = kid[i];
	return r->nnodes++;
}

static int expr(px *p);

static int is_name_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

/* a call's arguments after its '(' */
static int call(px *p, int op, int nargs, const char *name)
{
	int kid[4];
	for (int i = 0; i < nargs; i++) {
		if (i && *p->s++ != ',') return fr_err(p->err, FZ_ERR_FORMAT, "%s() takes %d arguments", name, nargs), -1;
		if ((kid[i] = expr(p)) < 0) return -1;
	}
	if (*p->s++ != ')') return fr_err(p->err, FZ_ERR_FORMAT, "%s() takes %d arguments", name, nargs), -1;
	return node(p, op, 0, nargs, kid);
}

static int unary(px *p)
{
	const char *s = p->s;
	if (*s == '-') {
		p->s++;
		int k = unary(p);
		return k < 0 ? -1 : node(p, N_NEG, 0, 1, &k);
	}
	if (*s == '(') {
		p->s++;
		int k = expr(p);
		if (k >= 0 && *p->s++ != ')') return fr_err(p->err, FZ_ERR_FORMAT, "a '(' without its ')'"), -1;
		return k;
	}
	if (!strncmp(s, "$sm", 3) && !is_name_char(s[3])) return p->s += 3, node(p, N_SM, 0, 0, NULL);
	if (*s >= '0' && *s <= '9') {
		long long v = 0;
		for (; *s >= '0' && *s <= '9'; s++) {
			if (v > (LLONG_MAX - (*s - '0')) / 10) return fr_err(p->err, FZ_ERR_FORMAT, "a number past 2^63"), -1;
			v = v * 10 + (*s - '0');
		}
		if ((p->s[0] == '0' && s - p->s > 1) || is_name_char(*s))
			return fr_err(p->err, FZ_ERR_FORMAT, "a malformed number"), -1;
		p->s = s;
		return node(p, N_NUM, v, 0, NULL);
	}
	size_t n = 0;
	while (is_name_char(s[n])) n++;
	if (!n || n > FZ_MAX_NAME) return fr_err(p->err, FZ_ERR_FORMAT, "expected a number, a size, $sm, a call or '(' at '%.16s'", s), -1;
	if (s[n] == '(') {
		for (size_t i = 0; i < sizeof funcs / sizeof funcs[0]; i++)
			if (strlen(funcs[i].name) == n && !strncmp(funcs[i].name, s, n)) {
				p->s = s + n + 1;
				return call(p, funcs[i].op, funcs[i].nargs, funcs[i].name);
			}
		return fr_err(p->err, FZ_ERR_FORMAT, "unknown function '%.*s'", (int)n, s), -1;
	}
	for (int i = 0; i < p->info->nsizes; i++)
		if (strlen(p->info->sizes[i]) == n && !strncmp(p->info->sizes[i], s, n)) {
			p->s = s + n;
			return node(p, N_SIZE, i, 0, NULL);
		}
	return fr_err(p->err, FZ_ERR_FORMAT, "'%.*s' is no size of the fusion", (int)n, s), -1;
}

static int binary(px *p, int (*operand)(px *), char a, char b, int op_a, int op_b)
{
	int l = operand(p);
	while (l >= 0 && (*p->s == a || *p->s == b)) {
		int op = *p->s++ == a ? op_a : op_b, kid[2] = {l, operand(p)};
		if (kid[1] < 0) return -1;
		l = node(p, op, 0, 2, kid);
	}
	return l;
}

static int term(px *p) { return binary(p, unary, '*', '/', N_MUL, N_DIV); }

static int expr(px *p)
{
	if (++p->depth > FZ_MAX_NESTING) return fr_err(p->err, FZ_ERR_FORMAT, "nested deeper than %d", FZ_MAX_NESTING), -1;
	int k = binary(p, term, '+', '-', N_ADD, N_SUB);
	p->depth--;
	return k;
}

/* the whole of s as one expression: its node, or -1 with err */
static int parse(const fz_artifact_info *info, fr_recipe *r, const char *s, const char *what, char *err)
{
	char why[FZ_ERRMSG_SIZE] = "";
	px p = {info, r, s, 0, why};
	int k = expr(&p);
	if (k >= 0 && *p.s) fr_err(why, FZ_ERR_FORMAT, "unexpected '%.16s'", p.s), k = -1;
	if (k < 0) fr_err(err, FZ_ERR_FORMAT, "%s '%.200s': %s", what, s, why);
	return k;
}

static int tensor_index(const fz_artifact_info *info, const char *name)
{
	for (int i = 0; i < info->ntensors; i++)
		if (!strcmp(info->tensors[i].name, name)) return i;
	return -1;
}

/* a launch's kernel field: NAME, or NAME:BOUND,... (attention entry
   points, the head-size bounds increasing) */
static int launch_kernels(const fz_artifact_info *info, fr_op *op, int fused, char *list, char *err)
{
	int with = 0;
	for (char *e = list, *next; e; e = next) {
		next = strchr(e, ',');
		if (next) *next++ = 0;
		char *colon = strchr(e, ':');
		if (colon) *colon++ = 0, with++;
		if (op->nent == FZ_MAX_ENTRY_POINTS) return fr_err(err, FZ_ERR_FORMAT, "more than %d entry points", FZ_MAX_ENTRY_POINTS);
		int k = -1;
		for (int i = 0; i < info->nkernels && k < 0; i++)
			if (!strcmp(info->kernels[i].name, e)) k = i;
		if (k < 0) return fr_err(err, FZ_ERR_FORMAT, "op launches '%.100s', no kernel line before it", e);
		if (info->kernels[k].fused != fused) return fr_err(err, FZ_ERR_FORMAT, "op launches %s, a kernel of the other variant", e);
		long long b = 0;
		if (colon) {
			char *end;
			b = strtoll(colon, &end, 10);
			if (*end || b < 1 || b > 1 << 20 || *colon == '0' || *colon == '+')
				return fr_err(err, FZ_ERR_FORMAT, "entry point %s: bad head-size bound '%.40s'", e, colon);
			if (op->nent && b <= op->bound[op->nent - 1]) return fr_err(err, FZ_ERR_FORMAT, "entry point %s: bounds must increase", e);
		}
		op->kernel[op->nent] = k, op->bound[op->nent++] = b;
	}
	if ((with && with != op->nent) || (!with && op->nent > 1))
		return fr_err(err, FZ_ERR_FORMAT, "entry points NAME:BOUND,... each with its bound, or one kernel without");
	return FZ_OK;
}

/* op V launch KERNEL[S] [head=D] grid=X,Y block=B [always] */
static int launch_line(const fz_artifact_info *info, fr_recipe *r, fr_op *op, int fused, char **t, int n, char *err)
{
	op->kind = FZ_OP_LAUNCH, op->head = op->gx = op->gy = op->block = -1;
	int rc = launch_kernels(info, op, fused, t[3], err);
	for (int i = 4; !rc && i < n; i++) {
		if (!strncmp(t[i], "head=", 5) && op->head < 0) {
			if ((op->head = parse(info, r, t[i] + 5, "head", err)) < 0) rc = FZ_ERR_FORMAT;
		} else if (!strncmp(t[i], "grid=", 5) && op->gx < 0) {
			/* the comma between X and Y: the first at depth 0 */
			char *g = t[i] + 5, *c = g;
			for (int depth = 0; *c && (depth || *c != ','); c++) depth += (*c == '(') - (*c == ')');
			if (!*c) return fr_err(err, FZ_ERR_FORMAT, "grid=X,Y expected, not '%.200s'", t[i]);
			*c = 0;
			if ((op->gx = parse(info, r, g, "grid x", err)) < 0 || (op->gy = parse(info, r, c + 1, "grid y", err)) < 0) rc = FZ_ERR_FORMAT;
		} else if (!strncmp(t[i], "block=", 6) && op->block < 0) {
			if ((op->block = parse(info, r, t[i] + 6, "block", err)) < 0) rc = FZ_ERR_FORMAT;
		} else if (!strcmp(t[i], "always") && !op->always) {
			op->always = 1;
		} else {
			rc = fr_err(err, FZ_ERR_FORMAT, "op: unknown or repeated '%.100s'", t[i]);
		}
	}
	if (!rc && (op->gx < 0 || op->block < 0)) rc = fr_err(err, FZ_ERR_FORMAT, "op launch without grid= or block=");
	if (!rc && (op->head >= 0) != (op->bound[0] > 0)) rc = fr_err(err, FZ_ERR_FORMAT, "head= goes with entry points NAME:BOUND, and only with them");
	return rc;
}

int fr_recipe_line(fz_artifact_info *info, fr_store *st, char **t, int n, char *err)
{
	fr_recipe *r = &st->recipe;
	if (n < 3) return fr_err(err, FZ_ERR_FORMAT, "malformed %s line", t[0]);
	int fused = !strcmp(t[1], "fused");
	if (!fused && strcmp(t[1], "unfused")) return fr_err(err, FZ_ERR_FORMAT, "%s: variant '%s' is neither fused nor unfused", t[0], t[1]);
	fr_variant *v = &r->v[fused];
	if (!strcmp(t[0], "stored")) {
		int x = n == 3 ? tensor_index(info, t[2]) : -1;
		if (x < 0 || info->tensors[x].role != FZ_TEMP) return fr_err(err, FZ_ERR_FORMAT, "stored %s: names no temp line before it", t[1]);
		for (int i = 0; i < v->nstored; i++)
			if (v->stored[i] == x) return fr_err(err, FZ_ERR_FORMAT, "stored %s %s listed twice", t[1], t[2]);
		v->stored[v->nstored++] = x; /* at most one a temp: bounded by FZ_MAX_TENSORS */
		return FZ_OK;
	}
	if (!strcmp(t[0], "parts") || !strcmp(t[0], "counter")) {
		int parts = t[0][0] == 'p', *count = parts ? &v->nparts : &v->ncounters;
		if (n != 3) return fr_err(err, FZ_ERR_FORMAT, "malformed %s line", t[0]);
		if (*count == FZ_MAX_KERNELS) return fr_err(err, FZ_ERR_FORMAT, "more than %d %s lines", FZ_MAX_KERNELS, t[0]);
		int k = parse(info, r, t[2], t[0], err);
		if (k < 0) return FZ_ERR_FORMAT;
		(parts ? v->parts : v->counters)[(*count)++] = k;
		return FZ_OK;
	}
	if (v->nops == FZ_MAX_OPS) return fr_err(err, FZ_ERR_FORMAT, "more than %d op lines", FZ_MAX_OPS);
	fr_op *op = &v->ops[v->nops];
	memset(op, 0, sizeof *op);
	if (!strcmp(t[2], "memset")) {
		int x = n == 4 ? tensor_index(info, t[3]) : -1;
		if (x < 0 || info->tensors[x].role == FZ_INPUT)
			return fr_err(err, FZ_ERR_FORMAT, "op %s memset: names no output or temp listed before it", t[1]);
		op->kind = FZ_OP_MEMSET, op->tensor = x;
	} else if (!strcmp(t[2], "launch") && n >= 6) {
		int rc = launch_line(info, r, op, fused, t, n, err);
		if (rc) return rc;
	} else {
		return fr_err(err, FZ_ERR_FORMAT, "malformed op line (op V memset TENSOR, op V launch KERNEL grid=X,Y block=B)");
	}
	v->nops++;
	return FZ_OK;
}

int fr_recipe_check(const fz_artifact_info *info, const fr_store *st, const char *path, char *err)
{
	if (info->format < 2) return FZ_OK; /* no recipe: fz_call refuses it */
	for (int f = 0; f < 2; f++) {
		const fr_variant *v = &st->recipe.v[f];
		/* every kernel of the variant launched by some op */
		for (int k = 0; k < info->nkernels; k++) {
			if (info->kernels[k].fused != f) continue;
			int found = 0;
			for (int i = 0; i < v->nops && !found; i++)
				for (int e = 0; v->ops[i].kind == FZ_OP_LAUNCH && e < v->ops[i].nent; e++) found |= v->ops[i].kernel[e] == k;
			if (!found)
				return fr_err(err, FZ_ERR_FORMAT, "%s: the %s variant's recipe launches no kernel %s (no op line)", path,
				              f ? "fused" : "unfused", info->kernels[k].name);
		}
	}
	return FZ_OK;
}

/* a + b, a - b, a * b without overflow */
static int arith(int op, long long a, long long b, long long *out)
{
	switch (op) {
	case N_ADD: return __builtin_add_overflow(a, b, out);
	case N_SUB: return __builtin_sub_overflow(a, b, out);
	default: return __builtin_mul_overflow(a, b, out);
	}
}

/* a function's value, as fuserun.h's static inline functions compute it */
static int apply(int op, const long long *a, long long sm, long long *out, char *err)
{
	(void)sm;
	switch (op) {
	case N_GRID:
		if (a[1] < 1 || a[1] > INT_MAX) return fr_err(err, FZ_ERR_BAD_SIZE, "grid(): points a block %lld", a[1]);
		return *out = (long long)fz_grid(a[0], (int)a[1], a[2]), FZ_OK;
	case N_ROWS: return *out = (long long)fz_rows(a[0], a[1]), FZ_OK;
	case N_ROW_GRID:
	case N_ROW_THREADS:
	case N_ROW_THREADS_S: {
		const long long per = a[op == N_ROW_GRID ? 2 : 1], cols = a[op == N_ROW_GRID ? 1 : 0];
		if (per < 1 || per > INT_MAX || cols < 0 || cols > LLONG_MAX - 3)
			return fr_err(err, FZ_ERR_BAD_SIZE, "row_threads(): row %lld, vectors a thread %lld", cols, per);
		*out = op == N_ROW_GRID ? (long long)fz_row_grid(a[0], cols, (int)per, a[3])
		     : op == N_ROW_THREADS ? (long long)fz_row_threads(cols, (int)per) : (long long)fz_row_threads_s(cols, (int)per);
		return FZ_OK;
	}
	case N_SPLIT:
		if (a[2] < INT_MIN || a[2] > INT_MAX) return fr_err(err, FZ_ERR_BAD_SIZE, "split(): SM count %lld", a[2]);
		return *out = (long long)fz_split(a[0], a[1], (int)a[2]), FZ_OK;
	case N_DIM: {
		long long s;
		if (__builtin_add_overflow(a[0], a[1], &s)) return fr_err(err, FZ_ERR_BAD_SIZE, "dim(): overflow");
		return *out = s > 0 ? s / (a[2] > 0 ? a[2] : 1) : 0, FZ_OK;
	}
	case N_ALIGN:
		if (a[0] < 0 || a[0] > LLONG_MAX - 255) return fr_err(err, FZ_ERR_BAD_SIZE, "align(): %lld", a[0]);
		return *out = (long long)fz_align((unsigned long long)a[0]), FZ_OK;
	}
	return fr_err(err, FZ_ERR_INVALID, "a recipe node of unknown kind %d", op);
}

int fr_eval(const fr_recipe *r, int i, const long long *sizes, long long sm, long long *out, char *err)
{
	const fr_node *n = &r->node[i];
	long long a[4];
	for (int k = 0; k < n->nkid; k++) {
		int rc = fr_eval(r, n->kid[k], sizes, sm, &a[k], err);
		if (rc) return rc;
	}
	switch (n->op) {
	case N_NUM: return *out = n->v, FZ_OK;
	case N_SIZE: return *out = sizes[n->v], FZ_OK;
	case N_SM: return *out = sm, FZ_OK;
	case N_NEG:
		if (a[0] == LLONG_MIN) break;
		return *out = -a[0], FZ_OK;
	case N_ADD: case N_SUB: case N_MUL:
		if (arith(n->op, a[0], a[1], out)) break;
		return FZ_OK;
	case N_DIV:
		if (a[1] == 0) return fr_err(err, FZ_ERR_BAD_SIZE, "a launch formula divides by zero at these sizes");
		if (a[0] == LLONG_MIN && a[1] == -1) break;
		return *out = a[0] / a[1], FZ_OK;
	default: return apply(n->op, a, sm, out, err);
	}
	return fr_err(err, FZ_ERR_BAD_SIZE, "a launch formula overflows 64 bits at these sizes");
}
