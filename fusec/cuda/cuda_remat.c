/* A statement's value with the producers it reads recomputed in place:
 * pointwise producers the schedule marks recomputable (Schedule.remat) are
 * substituted into their readers, rendered once per value and tuple of
 * subscripts (the memo): in place if used once, else a local, or a local
 * function where only a condition makes the read valid. */
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda.h"
#include "core/die.h"

/* Does e read memory at a computed subscript (a gather, or i + 1)? */
static int gathers(const Module *m, int e)
{
	if (!e) return 0;
	const Expr *x = &m->expr[e];
	if (x->op == IR_LOAD)
		for (int i = 0; i < x->nargs; i++)
			if (m->expr[x->args[i]].op != IR_INDEX || gathers(m, x->args[i])) return 1;
	return gathers(m, x->a) || gathers(m, x->b) || gathers(m, x->c);
}

/* Are the subscripts all bare variables (loop or space variables, or a
 * local function's parameters), so in range wherever the reader is? */
static int plain_subs(char **subs, int n)
{
	for (int i = 0; i < n; i++)
		if (!*subs[i] || strspn(subs[i], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != strlen(subs[i]))
			return 0;
	return 1;
}

static int memo_new(Cx *cx, Memo e)
{
	if (cx->nmemo == cx->cmemo)
		cx->cmemo = cx->cmemo ? 2 * cx->cmemo : 16, cx->memo = xrealloc(cx->memo, (size_t)cx->cmemo, sizeof *cx->memo);
	cx->memo[cx->nmemo] = e;
	return cx->nmemo++;
}

/* Renders producer P's value with its free indices bound to vars, of these
 * roles (NULL: none) */
static char *render_producer(Cx *cx, const Stmt *P, char **vars, const int *roles)
{
	char *saved[MAX_RANK];
	signed char saved_role[MAX_RANK];
	for (int i = 0; i < P->nfree; i++) {
		const int b = P->first_index + i - cx->first_index;
		saved[i] = cx->bind[b], saved_role[i] = cx->role[b];
		cx->bind[b] = vars[i], cx->role[b] = (signed char)(roles ? roles[i] : CUDA_ROLE_NONE);
	}
	ElemType keep = cx->w.compute;
	int keep_half = cx->w.half;
	cuda_stmt_math(&cx->w, cx->m, P);
	char *text = emit_render(&cx->w, P->rhs);
	cx->w.compute = keep, cx->w.half = keep_half;
	for (int i = 0; i < P->nfree; i++)
		cx->bind[P->first_index + i - cx->first_index] = saved[i], cx->role[P->first_index + i - cx->first_index] = saved_role[i];
	return text;
}

/* Producer wr's local function (made on first use): a lambda of its free
 * indices, for a value read where only a condition makes the read valid
 * (evaluated only where called, rendered once however often read). Only
 * for producers recomputable anywhere: they read no local of the kernel.
 * Returns its memo id, or -1. */
static int fn_of(Cx *cx, int wr)
{
	const Stmt *P = &cx->m->stmt[wr];
	if (cx->p->remat[wr - cx->p->first_stmt] < 2) return -1;
	for (int i = 0; i < cx->nmemo; i++)
		if (cx->memo[i].stmt == wr && cx->memo[i].fn) return i;
	int id = memo_new(cx, (Memo){.stmt = wr, .key = xstrdup(""), .order = -1, .fn = 1, .scope = -1});
	char *vars[MAX_RANK];
	for (int i = 0; i < P->nfree; i++) vars[i] = xasprintf("fz_p%d", i);
	int scope = cx->scope, cond = cx->w.cond;
	cx->scope = id, cx->w.cond = 0;
	char *text = render_producer(cx, P, vars, NULL);
	cx->scope = scope, cx->w.cond = cond;
	for (int i = 0; i < P->nfree; i++) free(vars[i]);
	cx->memo[id].text = text;
	cx->memo[id].order = cx->memo_done++;
	return id;
}

static void write_call(int fn, char **subs, int n, FILE *out)
{
	fprintf(out, "\x01%d\x02(", fn);
	for (int i = 0; i < n; i++) fprintf(out, "%s%s", i ? ", " : "", subs[i]);
	fputc(')', out);
}

/* Producer wr read at subs, written as a placeholder for the memo entry
 * of that value (made on first use): in place if used once, else a local
 * declared at the top of the value (or of the local function being
 * rendered). A value may be hoisted out of a condition that guards it only
 * if it cannot read out of bounds (plain subscripts, no gathers inside);
 * otherwise it is a call of the producer's local function. Returns 0,
 * writing nothing, where neither applies (the caller writes it in place). */
int cuda_memo_use(Cx *cx, int wr, char **subs, const int *roles, int n, ElemType c, FILE *out)
{
	const Module *m = cx->m;
	const Stmt *P = &m->stmt[wr];
	int safe = plain_subs(subs, n) && !gathers(m, P->rhs);
	if ((cx->w.cond || cx->scope >= 0) && !safe) {
		int fn = fn_of(cx, wr);
		if (fn < 0) return 0;
		cx->memo[fn].uses++;
		fprintf(out, "((%s)", cuda_ctype(c)), write_call(fn, subs, n, out), fputc(')', out);
		return 1;
	}
	size_t klen = 1;
	for (int i = 0; i < n; i++) klen += strlen(subs[i]) + 1;
	char *key = xcalloc(klen, 1);
	for (int i = 0; i < n; i++) strcat(key, subs[i]), strcat(key, "\x1f");
	int id = -1;
	for (int i = 0; i < cx->nmemo && id < 0; i++)
		if (cx->memo[i].stmt == wr && !cx->memo[i].fn && cx->memo[i].scope == cx->scope && !strcmp(cx->memo[i].key, key)) id = i;
	if (id >= 0) {
		free(key);
	} else if (cx->scope >= 0) {
		/* in a local function: a local holding a call of the producer's own */
		int fn = fn_of(cx, wr);
		if (fn < 0) return free(key), 0;
		id = memo_new(cx, (Memo){.stmt = wr, .key = key, .order = -1, .scope = cx->scope});
		char *buf = NULL;
		size_t len = 0;
		FILE *f = xmemstream(&buf, &len);
		write_call(fn, subs, n, f);
		fclose(f);
		cx->memo[fn].uses++;
		cx->memo[id].text = buf;
		cx->memo[id].order = cx->memo_done++;
	} else {
		/* rendered under the same condition state: what it reads in turn
		   passes the same test before it is hoisted */
		id = memo_new(cx, (Memo){.stmt = wr, .key = key, .order = -1, .scope = cx->scope});
		char *text = render_producer(cx, P, subs, roles);
		cx->memo[id].text = text;
		cx->memo[id].order = cx->memo_done++;
	}
	cx->memo[id].uses++;
	fprintf(out, "((%s)\x01%d\x02)", cuda_ctype(c), id);
	return 1;
}

static void expand(Cx *cx, const char *s, FILE *out);

/* The declaration of entry id: a value, or a local function whose body
 * declares its own locals first. */
static void write_decl(Cx *cx, const int *by_order, int id, FILE *d, int nested)
{
	const Memo *me = &cx->memo[id];
	const Stmt *P = &cx->m->stmt[me->stmt];
	fprintf(d, "const auto %s = ", me->name);
	if (me->fn) {
		fputs("[&](", d);
		for (int q = 0; q < P->nfree; q++) fprintf(d, "%slong long fz_p%d", q ? ", " : "", q);
		fputs(") { ", d);
		for (int i = 0; i < cx->nmemo; i++) {
			const Memo *in = &cx->memo[by_order[i]];
			if (in->name && in->scope == id) write_decl(cx, by_order, by_order[i], d, 1), fputc(' ', d);
		}
		fputs("return ", d);
	}
	expand(cx, me->text, d);
	fputs(me->fn ? "; };" : ";", d);
	if (!nested) fputc('\n', d); /* a body's locals stay on its line */
}

/* Writes s with the memo's placeholders replaced: a value used once in
 * place, one used more by its local. */
static void expand(Cx *cx, const char *s, FILE *out)
{
	for (; *s; s++) {
		if (*s != '\x01') {
			fputc(*s, out);
			continue;
		}
		char *end;
		long id = strtol(s + 1, &end, 10);
		if (*end != '\x02' || id < 0 || id >= cx->nmemo) die("bad placeholder in kernel %s", cx->k->name);
		s = end;
		const Memo *e = &cx->memo[id];
		if (e->uses > 1 || e->fn) fputs(e->name, out);
		else expand(cx, e->text, out);
	}
}

char *cuda_value_of(Cx *cx, const Stmt *s, int e, char **decls)
{
	cuda_stmt_math(&cx->w, cx->m, s);
	cx->cur = (int)(s - cx->m->stmt);
	cx->memo_on = 1, cx->nmemo = 0, cx->memo_done = 0;
	char *raw = emit_render(&cx->w, e);
	cx->memo_on = 0;
	/* locals for the values used more than once, dependencies first */
	char *dbuf = NULL, *vbuf = NULL;
	size_t dlen = 0, vlen = 0;
	FILE *d = xmemstream(&dbuf, &dlen), *v = xmemstream(&vbuf, &vlen);
	int *by_order = xcalloc((size_t)cx->nmemo + 1, sizeof *by_order);
	for (int i = 0; i < cx->nmemo; i++) by_order[cx->memo[i].order] = i;
	for (int i = 0; i < cx->nmemo; i++) {
		Memo *me = &cx->memo[by_order[i]];
		if (me->uses < 2 && !me->fn) continue;
		me->name = xasprintf("fz_%c%d_%s", me->fn ? 'f' : 's', cx->nssa++, cx->m->tensor[cx->m->stmt[me->stmt].out].name);
	}
	for (int i = 0; i < cx->nmemo; i++) {
		const Memo *me = &cx->memo[by_order[i]];
		if (me->name && me->scope < 0) write_decl(cx, by_order, by_order[i], d, 0);
	}
	expand(cx, raw, v);
	fclose(d), fclose(v);
	for (int i = 0; i < cx->nmemo; i++) free(cx->memo[i].key), free(cx->memo[i].text), free(cx->memo[i].name);
	cx->nmemo = 0;
	free(by_order), free(raw);
	if (!dlen) free(dbuf), dbuf = NULL;
	if (dbuf && !decls) die("kernel %s: a value needs locals where none can be declared", cx->k->name);
	if (decls) *decls = dbuf;
	return vbuf;
}
