/* Launch geometry: each kernel kind's grid, block and workspace as
 * expressions over the sizes and the SM count, written in two syntaxes
 * from this one place: C over the header's args `a` and `sm` (the op lists
 * of NAME.h), and the manifest's launch recipe (runtime/fuserun.h, which
 * libfuserun evaluates for fz_call). The kernel templates (cuda/kern_*.c)
 * walk the grid these formulas give. */
#include <stdio.h>

#include "core/die.h"
#include "host/host.h"

void host_dim(const Fusion *f, Dim d, FILE *out) { dim_write_c(f, d, "a->n_", out); }

/* a dimension in the recipe: a size, a number, or dim(B,K,D) for a
   derived one: its base B plus K, clamped at 0, divided by a number or a
   size D (core/ir.c's dim_write_c, as C) */
static void dim_in(const Fusion *f, Dim d, HostSyntax s, FILE *out)
{
	if (s == HS_C) {
		host_dim(f, d, out);
		return;
	}
	const int derived = dim_derived(d);
	if (derived) fputs("dim(", out);
	if (d.sym >= 0) fputs(f->sym[d.sym], out);
	else fprintf(out, "%lld", (long long)d.value);
	if (!derived) return;
	fprintf(out, ",%lld,", (long long)d.add);
	if (d.dsym) fputs(f->sym[d.dsym - 1], out);
	else fprintf(out, "%lld", (long long)(d.div > 1 ? d.div : 1));
	fputc(')', out);
}

/* the pieces that differ between the syntaxes */
static void fn(HostSyntax s, const char *name, FILE *out) { fprintf(out, s == HS_C ? "fz_%s(" : "%s(", name); }
static void comma(HostSyntax s, FILE *out) { fputs(s == HS_C ? ", " : ",", out); }
static void times(HostSyntax s, FILE *out) { fputs(s == HS_C ? " * " : "*", out); }

static void space_product(const Fusion *f, const Kernel *k, HostSyntax s, FILE *out)
{
	fputs(s == HS_C ? "1LL" : "1", out);
	for (int i = 0; i < k->nspace; i++) times(s, out), dim_in(f, k->space[i], s, out);
}

void host_tensor_bytes(const Fusion *f, const Tensor *t, FILE *out)
{
	fprintf(out, "(unsigned long long)%d", elem_info[t->type].bytes);
	for (int d = 0; d < t->rank; d++) fputs(" * (unsigned long long)", out), host_dim(f, t->dim[d], out);
}

/* a whole-grid fold's cap: the blocks that fit on the device at once */
static void tail_cap(const Kernel *k, HostSyntax s, FILE *out)
{
	if (k->has_tail) fprintf(out, s == HS_C ? "(long long)sm * %d" : "$sm*%d", k->par.min_blocks);
	else fputs("0", out);
}

static void point_x(const Fusion *f, const Kernel *k, HostSyntax s, FILE *out)
{
	fn(s, "grid", out), space_product(f, k, s, out), comma(s, out);
	fprintf(out, "%d", k->par.slices > 1 ? kernel_points(k) : k->par.block * kernel_thread_points(k));
	comma(s, out), tail_cap(k, s, out), fputc(')', out);
}

/* the width of a row kernel's rows: the product of its inner dimensions */
void host_row_width(const Fusion *f, const Kernel *k, HostSyntax s, FILE *out)
{
	if (s == HS_C) {
		emit_row_width(f, k, "a->n_", out);
		return;
	}
	if (k->ninner > 1) fputc('(', out);
	for (int i = 0; i < k->ninner; i++) fputs(i ? "*" : "", out), dim_in(f, k->inner[i], s, out);
	if (k->ninner > 1) fputc(')', out);
}

static void row_x(const Fusion *f, const Kernel *k, HostSyntax s, FILE *out)
{
	if (k->par.rcache) {
		fn(s, "row_grid", out), space_product(f, k, s, out), comma(s, out), host_row_width(f, k, s, out);
		comma(s, out), fprintf(out, "%d", k->par.rcache), comma(s, out), tail_cap(k, s, out), fputc(')', out);
		return;
	}
	if (k->par.warp_rows) {
		fn(s, "grid", out), fputs(s == HS_C ? "32LL * (" : "32*(", out), space_product(f, k, s, out);
		fputc(')', out), comma(s, out), fprintf(out, "%d", k->par.block), comma(s, out), tail_cap(k, s, out), fputc(')', out);
		return;
	}
	fn(s, "rows", out), space_product(f, k, s, out), comma(s, out), tail_cap(k, s, out), fputc(')', out);
}

static void scatter_x(const Module *m, const Fusion *f, const Kernel *k, HostSyntax s, FILE *out)
{
	const Stmt *st = &m->stmt[k->first_stmt];
	int ragged = 0;
	fn(s, "grid", out), fputs(s == HS_C ? "1LL" : "1", out);
	for (int i = 0; i < st->nindex; i++) {
		const Index *ix = &m->index[st->first_index + i];
		if (ix->kind == IX_RAGGED) ragged = 1;
		else times(s, out), dim_in(f, ix->range, s, out);
	}
	if (ragged) times(s, out), fputs("32", out);
	comma(s, out), fprintf(out, "%d", k->par.block), comma(s, out), fputs("0)", out);
}

/* (D + b - 1) / b: the blocks of b along D */
static void ceil_div(const Fusion *f, Dim d, int b, HostSyntax s, FILE *out)
{
	fputs("((", out), dim_in(f, d, s, out), fprintf(out, s == HS_C ? " + %d) / %d)" : "+%d)/%d)", b - 1, b);
}

/* one block an SM at most: min(tiles of the narrowest shape, sm) (batched:
   of every batch), and 1 when there are none; the kernel picks the tile
   width for that many blocks (fz_tile_bn) */
static void tile_x(const Fusion *f, const Kernel *k, HostSyntax s, FILE *out)
{
	const int bat = k->nspace == 3, sw = k->par.c_swapped; /* swapped: the mainloop's tiles are C^T's */
	fn(s, "grid", out);
	if (bat) dim_in(f, k->space[0], s, out), times(s, out);
	ceil_div(f, k->space[bat + sw], k->par.tile_m, s, out), times(s, out), ceil_div(f, k->space[bat + 1 - sw], k->par.tile_n_min, s, out);
	comma(s, out), fputc('1', out), comma(s, out), fputs(s == HS_C ? "sm)" : "$sm)", out);
}

/* persistent (attn_kernel.cuh): a tile a batch's block_m rows of m, and at most
   the blocks that fit on the device at once (one an SM) */
static void attn_x(const Fusion *f, const Kernel *k, HostSyntax s, FILE *out)
{
	const int bat = k->nspace == 3;
	fn(s, "grid", out);
	if (bat) dim_in(f, k->space[0], s, out), times(s, out);
	ceil_div(f, k->space[bat], k->at.block_m, s, out);
	comma(s, out), fputc('1', out), comma(s, out);
	fprintf(out, s == HS_C ? "(long long)sm * %d)" : "$sm*%d)", k->par.min_blocks);
}

/* An attention kernel's entry point for the launch's head size: the
   smallest bucket that holds it, as a C expression; NULL past the largest */
void host_attn_entry(const Fusion *f, const Kernel *k, FILE *out)
{
	for (int e = 0; e < k->at.nent; e++) {
		if (e == k->at.nent - 1) {
			fprintf(out, "(");
			host_dim(f, k->at.dh, out);
			fprintf(out, " <= %d ? \"%s\" : (const char *)0)", k->at.db[e], k->at.entry[e]);
			break;
		}
		fputs("(", out), host_dim(f, k->at.dh, out), fprintf(out, " <= %d ? \"%s\" : ", k->at.db[e], k->at.entry[e]);
	}
	for (int e = 0; e + 1 < k->at.nent; e++) fputc(')', out);
}

/* The same in the recipe: ENTRY:BOUND,... head=HEADSIZE */
void host_attn_recipe(const Fusion *f, const Kernel *k, FILE *out)
{
	for (int e = 0; e < k->at.nent; e++) fprintf(out, "%s%s:%d", e ? "," : "", k->at.entry[e], k->at.db[e]);
	fputs(" head=", out), dim_in(f, k->at.dh, HS_RECIPE, out);
}

void host_grid_x(const Module *m, const Fusion *f, const Kernel *k, HostSyntax s, FILE *out)
{
	switch (k->mode) {
	case KM_POINT: point_x(f, k, s, out); break;
	case KM_ROW: row_x(f, k, s, out); break;
	case KM_MATMUL:
		fn(s, "grid", out), dim_in(f, k->space[1], s, out), comma(s, out);
		fprintf(out, "%d", k->par.tile_n), comma(s, out), fputs("0)", out);
		break;
	case KM_TILE: tile_x(f, k, s, out); break;
	case KM_SCATTER: scatter_x(m, f, k, s, out); break;
	case KM_SCALAR: fputs(s == HS_C ? "1u" : "1", out); break;
	case KM_ATTN: attn_x(f, k, s, out); break;
	default: die("kernel %s: no grid for mode %d", k->name, (int)k->mode);
	}
}

int host_grid_y(const Fusion *f, const Kernel *k, HostSyntax s, FILE *out)
{
	if (k->par.split) {
		fn(s, "split", out), space_product(f, k, s, out), comma(s, out);
		dim_in(f, k->split_range, s, out), comma(s, out), fputs(s == HS_C ? "sm)" : "$sm)", out);
		return 1;
	}
	if (k->mode != KM_MATMUL) return 0;
	fn(s, "grid", out), dim_in(f, k->space[0], s, out), comma(s, out);
	fprintf(out, "%d", k->par.tile_m), comma(s, out), fputs("0)", out);
	return 1;
}

void host_split_scratch(const Fusion *f, const Kernel *k, FILE *out)
{
	fputs("\tparts = fz_max_u64(parts, (unsigned long long)(", out), host_grid_y(f, k, HS_C, out);
	fputs(") * (unsigned long long)(", out), space_product(f, k, HS_C, out), fprintf(out, ") * %d * 8);\n", k->par.split);
	fputs("\tcnt = fz_max_u64(cnt, fz_align(64ull + 4ull * (((unsigned long long)(", out), space_product(f, k, HS_C, out);
	fprintf(out, ") + %d) / %d)));\n", kernel_points(k) - 1, kernel_points(k));
}

/* the same as the recipe's two lines: `parts V EXPR` and `counter V EXPR` */
void host_split_recipe(const Fusion *f, const Kernel *k, const char *variant, FILE *out)
{
	fprintf(out, "parts %s ", variant), host_grid_y(f, k, HS_RECIPE, out);
	fputs("*(", out), space_product(f, k, HS_RECIPE, out), fprintf(out, ")*%d*8\n", k->par.split);
	fprintf(out, "counter %s align(64+4*((", variant), space_product(f, k, HS_RECIPE, out);
	fprintf(out, "+%d)/%d))\n", kernel_points(k) - 1, kernel_points(k));
}

const char host_split_fn[] =
#include "fz_split.inc"
	;
