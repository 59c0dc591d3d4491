/* Launch geometry: each kernel kind's grid as C expressions over the
 * header's args `a` and the SM count `sm`, for the op lists. The kernel
 * templates (cuda/kern_*.c) walk the grid these formulas give. */
#include <stdio.h>

#include "core/die.h"
#include "host/host.h"

void host_dim(const Fusion *f, Dim d, FILE *out) { dim_write_c(f, d, "a->n_", out); }

static void host_space_product(const Fusion *f, const Kernel *k, FILE *out)
{
	fputs("1LL", out);
	for (int i = 0; i < k->nspace; i++) fputs(" * ", out), host_dim(f, k->space[i], out);
}

void host_tensor_bytes(const Fusion *f, const Tensor *t, FILE *out)
{
	fprintf(out, "(unsigned long long)%d", elem_info[t->type].bytes);
	for (int d = 0; d < t->rank; d++) fputs(" * (unsigned long long)", out), host_dim(f, t->dim[d], out);
}

/* a whole-grid fold's cap: the blocks that fit on the device at once */
static void tail_cap(const Kernel *k, FILE *out)
{
	if (k->has_tail) fprintf(out, "(long long)sm * %d", k->par.min_blocks);
	else fputs("0", out);
}

static void point_x(const Fusion *f, const Kernel *k, FILE *out)
{
	fputs("fz_grid(", out), host_space_product(f, k, out);
	fprintf(out, ", %d, ", k->par.slices > 1 ? kernel_points(k) : k->par.block * k->par.unroll * (k->par.vec == 8 ? 2 : 1));
	tail_cap(k, out);
	fputc(')', out);
}

static void row_x(const Fusion *f, const Kernel *k, FILE *out)
{
	char cap[64] = "0";
	if (k->has_tail) snprintf(cap, sizeof cap, "(long long)sm * %d", k->par.min_blocks);
	if (k->par.rcache) {
		fputs("fz_row_grid(", out), host_space_product(f, k, out);
		fputs(", ", out), emit_row_width(f, k, "a->n_", out);
		fprintf(out, ", %d, %s)", k->par.rcache, cap);
		return;
	}
	if (k->par.warp_rows) {
		fputs("fz_grid(32LL * (", out), host_space_product(f, k, out);
		fprintf(out, "), %d, %s)", k->par.block, cap);
		return;
	}
	fputs("fz_rows(", out), host_space_product(f, k, out);
	fprintf(out, ", %s)", cap);
}

static void scatter_x(const Module *m, const Fusion *f, const Kernel *k, FILE *out)
{
	const Stmt *s = &m->stmt[k->first_stmt];
	int ragged = 0;
	fputs("fz_grid(1LL", out);
	for (int i = 0; i < s->nindex; i++) {
		const Index *ix = &m->index[s->first_index + i];
		if (ix->kind == IX_RAGGED) ragged = 1;
		else fputs(" * ", out), host_dim(f, ix->range, out);
	}
	fprintf(out, "%s, %d, 0)", ragged ? " * 32" : "", k->par.block);
}

/* one block an SM at most: min(tiles of the narrowest shape, sm) (batched:
   of every batch), and 1 when there are none; the kernel picks the tile
   width for that many blocks (fz_tile_bn) */
static void tile_x(const Fusion *f, const Kernel *k, FILE *out)
{
	const int bat = k->nspace == 3, tm = k->par.tile_m, tn = k->par.tile_n_min;
	fputs("fz_grid(", out);
	if (bat) host_dim(f, k->space[0], out), fputs(" * ", out);
	fputs("((", out), host_dim(f, k->space[bat], out), fprintf(out, " + %d) / %d) * ((", tm - 1, tm);
	host_dim(f, k->space[bat + 1], out), fprintf(out, " + %d) / %d), 1, sm)", tn - 1, tn);
}

/* a block a batch's 64 rows of m (attn.cuh) */
static void attn_x(const Fusion *f, const Kernel *k, FILE *out)
{
	const int bat = k->nspace == 3;
	fputs("fz_grid(", out);
	if (bat) host_dim(f, k->space[0], out), fputs(" * ", out);
	fputs("((", out), host_dim(f, k->space[bat], out), fprintf(out, " + %d) / %d), 1, 0)", k->at.block_m - 1, k->at.block_m);
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

void host_grid_x(const Module *m, const Fusion *f, const Kernel *k, FILE *out)
{
	switch (k->mode) {
	case KM_POINT: point_x(f, k, out); break;
	case KM_ROW: row_x(f, k, out); break;
	case KM_MATMUL: fputs("fz_grid(", out), host_dim(f, k->space[1], out), fprintf(out, ", %d, 0)", k->par.tile_n); break;
	case KM_TILE: tile_x(f, k, out); break;
	case KM_SCATTER: scatter_x(m, f, k, out); break;
	case KM_SCALAR: fputs("1u", out); break;
	case KM_ATTN: attn_x(f, k, out); break;
	default: die("kernel %s: no grid for mode %d", k->name, (int)k->mode);
	}
}

int host_grid_y(const Fusion *f, const Kernel *k, FILE *out)
{
	if (k->par.split) {
		fputs("fz_split(", out), host_space_product(f, k, out), fputs(", ", out);
		host_dim(f, k->split_range, out), fputs(", sm)", out);
		return 1;
	}
	if (k->mode != KM_MATMUL) return 0;
	fputs("fz_grid(", out), host_dim(f, k->space[0], out);
	fprintf(out, ", %d, 0)", k->par.tile_m);
	return 1;
}

void host_split_scratch(const Fusion *f, const Kernel *k, FILE *out)
{
	fputs("\tparts = fz_max_u64(parts, (unsigned long long)(", out), host_grid_y(f, k, out);
	fputs(") * (unsigned long long)(", out), host_space_product(f, k, out), fprintf(out, ") * %d * 8);\n", k->par.split);
	fputs("\tcnt = fz_max_u64(cnt, fz_align(64ull + 4ull * (((unsigned long long)(", out), host_space_product(f, k, out);
	fprintf(out, ") + %d) / %d)));\n", kernel_points(k) - 1, kernel_points(k));
}

const char host_split_fn[] =
	"#ifndef FZ_SPLIT_DEFINED\n"
	"#define FZ_SPLIT_DEFINED\n"
	"/* blocks along y of a reduction over rows split across blocks: with fewer\n"
	"   32-point tiles than SMs, as many shares of the rows as keep one wave of\n"
	"   blocks (each SM holds one), each share at least 1024 rows */\n"
	"static inline unsigned long long fz_split(long long points, long long rows, int sm)\n"
	"{\n"
	"\tconst unsigned long long tiles = points > 0 ? ((unsigned long long)points + 31) / 32 : 1;\n"
	"\tunsigned long long s = tiles >= (unsigned long long)(sm > 0 ? sm : 1) ? 1 : (unsigned long long)sm / tiles;\n"
	"\tconst unsigned long long most = rows > 1024 ? (unsigned long long)rows / 1024 : 1;\n"
	"\tif (s > most) s = most;\n"
	"\tif (s > 65535) s = 65535;\n"
	"\treturn s ? s : 1;\n"
	"}\n"
	"#endif\n\n";
