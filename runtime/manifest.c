/* A manifest's lines into bounded structures, one pass, linear time: every
 * count is checked against its FZ_MAX_* limit before anything is stored,
 * every name must be a C identifier, every number is parsed strictly. The
 * checks that need the whole manifest (required lines, agreement between
 * lines, the layout fingerprint) are in verify.c. */
#include <limits.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sha256.h"

typedef struct parser {
	const char *path;
	int line;
	char *err;
	fz_artifact_info *info;
	fr_store *st;
} parser;

static int bad(parser *p, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;
static int bad(parser *p, const char *fmt, ...)
{
	if (p->err) {
		int n = snprintf(p->err, FZ_ERRMSG_SIZE, "%s:%d: ", p->path, p->line);
		if (n < 0 || n >= FZ_ERRMSG_SIZE) n = 0;
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(p->err + n, FZ_ERRMSG_SIZE - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return FZ_ERR_FORMAT;
}

static int is_ident(const char *s)
{
	size_t n = 0;
	if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_')) return 0;
	for (; *s; s++, n++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_')) return 0;
	return n <= FZ_MAX_NAME;
}

static int is_hex64(const char *s)
{
	if (strlen(s) != 64) return 0;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f'))) return 0;
	return 1;
}

/* a plain file name next to the manifest: no directories, no "..", no ".",
   no leading '-' (it would read as an option to a tool) */
static int plain_name(const char *s)
{
	return *s && *s != '-' && *s != '.' && !strchr(s, '/') && strlen(s) <= 255;
}

/* decimal digits only, no sign, no leading zero, at most max */
static int strict_count(const char *s, long long max, long long *out)
{
	long long v = 0;
	if (!*s || (*s == '0' && s[1])) return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9') return 0;
		if (v > (max - (*s - '0')) / 10) return 0; /* v * 10 + digit > max, without overflowing */
		v = v * 10 + (*s - '0');
	}
	*out = v;
	return 1;
}

/* a finite C decimal floating literal with an optional sign and no suffix:
   [+-]? (D+ [. D*] | . D+) ([eE] [+-]? D+)? */
static int decimal_literal(const char *s, const char *end, double *out)
{
	const char *q = s;
	int digits = 0;
	if (q < end && (*q == '+' || *q == '-')) q++;
	while (q < end && *q >= '0' && *q <= '9') q++, digits++;
	if (q < end && *q == '.') {
		q++;
		while (q < end && *q >= '0' && *q <= '9') q++, digits++;
	}
	if (!digits) return 0;
	if (q < end && (*q == 'e' || *q == 'E')) {
		q++;
		if (q < end && (*q == '+' || *q == '-')) q++;
		int ed = 0;
		while (q < end && *q >= '0' && *q <= '9') q++, ed++;
		if (!ed) return 0;
	}
	if (q != end || end - s > 64) return 0;
	char buf[72];
	memcpy(buf, s, (size_t)(end - s)), buf[end - s] = 0;
	*out = strtod(buf, NULL);
	return isfinite(*out);
}

static int type_bytes(const char *t)
{
	static const struct { const char *name; int bytes; } types[] = {
		{"f64", 8}, {"f32", 4}, {"bf16", 2}, {"f16", 2}, {"f8e4m3", 1}, {"f8e5m2", 1}, {"i64", 8}, {"i32", 4}};
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		if (!strcmp(t, types[i].name)) return types[i].bytes;
	return 0;
}

/* splits s at spaces into at most max tokens; returns the count, or max + 1 if more */
static int split(char *s, char **tok, int max)
{
	int n = 0;
	while (*s) {
		while (*s == ' ') *s++ = 0;
		if (!*s) break;
		if (n == max) return max + 1;
		tok[n++] = s;
		while (*s && *s != ' ') s++;
	}
	return n;
}

static int size_index(const fz_artifact_info *info, const char *s)
{
	for (int i = 0; i < info->nsizes; i++)
		if (!strcmp(info->sizes[i], s)) return i;
	return -1;
}

/* a size's name or a number from 1 to max at *s, advancing past it:
   *size the size's index or -1, *value the number */
static int dim_term(const fz_artifact_info *info, const char **s, long long max, int *size, long long *value)
{
	const char *q = *s;
	char name[FZ_MAX_NAME + 1];
	size_t n = 0;
	if (*q >= '0' && *q <= '9') {
		while (q[n] >= '0' && q[n] <= '9') n++;
		if (n > 19) return 0;
		memcpy(name, q, n), name[n] = 0;
		if (!strict_count(name, max, value) || *value == 0) return 0;
		*size = -1;
	} else {
		while ((q[n] >= 'A' && q[n] <= 'Z') || (q[n] >= 'a' && q[n] <= 'z') || (q[n] >= '0' && q[n] <= '9') || q[n] == '_') n++;
		if (!n || n > FZ_MAX_NAME) return 0;
		memcpy(name, q, n), name[n] = 0;
		if ((*size = size_index(info, name)) < 0) return 0;
		*value = 0;
	}
	*s = q + n;
	return 1;
}

/* Dimension r of x, spelt exactly as fusec's dim_write (fusec/core/ir.c) spells
   it, since the layout fingerprint hashes the text: B, B+K, B-K, B/D, B/S,
   (B+K)/D, (B-K)/D, (B+K)/S, (B-K)/S, with B a size or a number, K and D
   numbers (K != 0, D >= 2), S a size; the parentheses exactly when K is
   added before a division. Never both a /D and a /S (fusec's Dim divides
   by one of them). */
static int parse_dim(const fz_artifact_info *info, const char *d, fz_tensor_info *x, int r)
{
	const char *s = d;
	int paren = *s == '(', per = -1;
	long long k = 0, div = 1, v;
	s += paren;
	if (!dim_term(info, &s, FZ_MAX_DIM, &x->dim_size[r], &x->dim_value[r])) return 0;
	if (*s == '+' || *s == '-') {
		int neg = *s++ == '-', sz;
		if (!dim_term(info, &s, LLONG_MAX, &sz, &v) || sz >= 0) return 0;
		k = neg ? -v : v;
	}
	if (paren) {
		if (!k || s[0] != ')' || s[1] != '/') return 0;
		s++;
	} else if (k && *s) {
		return 0; /* B+K/D: fusec writes (B+K)/D */
	}
	if (*s == '/') {
		s++;
		if (!dim_term(info, &s, LLONG_MAX, &per, &v)) return 0;
		if (per < 0 && v < 2) return 0;
		if (per < 0) div = v;
	}
	if (*s) return 0;
	x->dim_add[r] = k, x->dim_div[r] = div, x->dim_per[r] = per;
	return 1;
}

/* param NAME ROLE TYPE DIMS by=HOW [domain=LO..HI], temp the same without domain */
static int parse_tensor(parser *p, char **t, int n, int temp)
{
	fz_artifact_info *info = p->info;
	if (n < 6 || n > 7) return bad(p, "malformed %s line (NAME ROLE TYPE DIMS by=HOW%s)", t[0], temp ? "" : " [domain=LO..HI]");
	if (info->ntensors == FZ_MAX_TENSORS) return bad(p, "more than %d tensors", FZ_MAX_TENSORS);
	fz_tensor_info *x = &p->st->tensors[info->ntensors];
	memset(x, 0, sizeof *x);
	x->name = t[1];
	if (!is_ident(t[1])) return bad(p, "%s '%s': not a C identifier of at most %d characters", t[0], t[1], FZ_MAX_NAME);
	if (!strcmp(t[2], "input")) x->role = FZ_INPUT;
	else if (!strcmp(t[2], "output")) x->role = FZ_OUTPUT;
	else if (!strcmp(t[2], "inout")) x->role = FZ_INOUT;
	else if (!strcmp(t[2], "temp")) x->role = FZ_TEMP;
	else return bad(p, "%s %s: unknown role '%s'", t[0], t[1], t[2]);
	if ((x->role == FZ_TEMP) != temp) return bad(p, "%s %s: role %s", t[0], t[1], t[2]);
	x->type = t[3];
	x->elem_bytes = type_bytes(t[3]);
	if (!x->elem_bytes) return bad(p, "%s %s: unknown element type '%s'", t[0], t[1], t[3]);
	if (strcmp(t[4], "-")) {
		for (char *d = t[4], *next; d; d = next) {
			next = strchr(d, ',');
			if (next) *next++ = 0;
			if (x->rank == FZ_MAX_RANK) return bad(p, "%s %s: more than %d dimensions", t[0], t[1], FZ_MAX_RANK);
			int r = x->rank++;
			x->dim[r] = d;
			if (!parse_dim(info, d, x, r))
				return bad(p, "%s %s: dimension '%s' is neither a size, a number from 1 to 2^40, nor a size derived "
				           "as fusec writes one (B+K, B-K, B/D, B/S, (B+K)/D, (B-K)/S, ...)", t[0], t[1], d);
		}
	}
	int have_by = 0;
	for (int i = 5; i < n; i++) {
		if (!strncmp(t[i], "by=", 3) && !have_by) {
			x->by = t[i] + 3, have_by = 1;
			if (!is_ident(x->by)) return bad(p, "%s %s: malformed '%s'", t[0], t[1], t[i]);
		} else if (!strncmp(t[i], "domain=", 7) && !temp && !x->has_domain) {
			const char *v = t[i] + 7, *dots = strstr(v, "..");
			if (!dots || !decimal_literal(v, dots, &x->domain_lo) || !decimal_literal(dots + 2, dots + strlen(dots), &x->domain_hi))
				return bad(p, "%s %s: malformed '%s' (domain=LO..HI, finite decimal numbers)", t[0], t[1], t[i]);
			if (!(x->domain_lo <= x->domain_hi)) return bad(p, "%s %s: empty domain %s (LO > HI)", t[0], t[1], v);
			x->has_domain = 1;
		} else {
			return bad(p, "%s %s: unexpected '%s'", t[0], t[1], t[i]);
		}
	}
	if (!have_by) return bad(p, "malformed %s line: no by=", t[0]);
	for (int i = 0; i < info->ntensors; i++)
		if (!strcmp(info->tensors[i].name, x->name)) return bad(p, "tensor %s listed twice", x->name);
	info->ntensors++;
	return FZ_OK;
}

/* A bound of a values line, the text [s, end): a number (-2^63 to 2^63-1,
   no '+', no leading zero, no "-0"), or a size's name alone or plus or
   minus a number from 1 (S, S+3, S-1), as fusec writes them
   (fusec/artifact/manifest.c, value_bound). *size: the size's index or -1;
   *c: the number, or what is added to the size. */
static int value_bound(const fz_artifact_info *info, const char *s, const char *end, int *size, long long *c)
{
	char buf[FZ_MAX_NAME + 32];
	if (end <= s || (size_t)(end - s) >= sizeof buf) return 0;
	memcpy(buf, s, (size_t)(end - s)), buf[end - s] = 0;
	char *q = buf;
	long long v;
	*size = -1;
	if ((*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') || *q == '_') {
		size_t n = strspn(q, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
		char sign = q[n];
		q[n] = 0;
		if ((*size = size_index(info, q)) < 0) return 0;
		if (!sign) return *c = 0, 1;
		if ((sign != '+' && sign != '-') || !strict_count(q + n + 1, LLONG_MAX, &v) || v == 0) return 0;
		*c = sign == '-' ? -v : v;
		return 1;
	}
	const int neg = *q == '-';
	q += neg;
	if (neg && !strcmp(q, "9223372036854775808")) return *c = LLONG_MIN, 1;
	if (!strict_count(q, LLONG_MAX, &v) || (neg && v == 0)) return 0;
	*c = neg ? -v : v;
	return 1;
}

/* values NAME LO..HI [nondecreasing] [nonzero]: what an integer input
   listed before it must hold (fusec/plan/values.c) */
static int parse_values(parser *p, char **t, int n)
{
	fz_artifact_info *info = p->info;
	if (n < 3 || n > 5) return bad(p, "malformed values line (values NAME LO..HI [nondecreasing] [nonzero])");
	int i = 0;
	while (i < info->ntensors && strcmp(info->tensors[i].name, t[1])) i++;
	if (i == info->ntensors) return bad(p, "values %s: no param line of that name before it", t[1]);
	const fz_tensor_info *x = &info->tensors[i];
	fr_values *v = &p->st->values[i];
	if (x->role != FZ_INPUT && x->role != FZ_INOUT) return bad(p, "values %s: not an input", t[1]);
	const int i32 = !strcmp(x->type, "i32");
	if (!i32 && strcmp(x->type, "i64")) return bad(p, "values %s: a %s tensor (values lines are for integer inputs)", t[1], x->type);
	if (x->has_domain) return bad(p, "values %s: its param line gives a domain too", t[1]);
	if (v->set) return bad(p, "values %s listed twice", t[1]);
	const char *dots = strstr(t[2], "..");
	if (!dots || !value_bound(info, t[2], dots, &v->lo_size, &v->lo) ||
	    !value_bound(info, dots + 2, t[2] + strlen(t[2]), &v->hi_size, &v->hi))
		return bad(p, "values %s: malformed range '%s' (LO..HI, each a number or a size plus or minus a number)", t[1], t[2]);
	const long long tlo = i32 ? INT32_MIN : LLONG_MIN, thi = i32 ? INT32_MAX : LLONG_MAX;
	if ((v->lo_size < 0 && (v->lo < tlo || v->lo > thi)) || (v->hi_size < 0 && (v->hi < tlo || v->hi > thi)))
		return bad(p, "values %s: %s is outside %s", t[1], t[2], x->type);
	for (int k = 3; k < n; k++) {
		if (!strcmp(t[k], "nondecreasing") && !v->nondecreasing) v->nondecreasing = 1;
		else if (!strcmp(t[k], "nonzero") && !v->nonzero) v->nonzero = 1;
		else return bad(p, "values %s: unexpected or repeated '%s'", t[1], t[k]);
	}
	/* empty whatever the sizes (each at least 1) */
	long long least;
	int empty = v->lo_size == v->hi_size ? v->lo > v->hi
	          : v->lo_size >= 0 && v->hi_size < 0 ? !__builtin_add_overflow(v->lo, 1, &least) && least > v->hi : 0;
	if (empty) return bad(p, "values %s: empty range %s (LO > HI)", t[1], t[2]);
	if (v->nonzero && v->lo_size < 0 && v->hi_size < 0 && !v->lo && !v->hi)
		return bad(p, "values %s: %s nonzero holds no value", t[1], t[2]);
	v->range = t[2], v->set = 1;
	return FZ_OK;
}

/* fits NAME DIM>=LEAST: input NAME (an integer input with a domain, listed
   before it) subscripts dimension DIM, spelt as a param line spells one,
   which must be at least LEAST (1 to 2^62) at a launch's sizes
   (fusec/front/sema_fits.c); once per input and dimension */
static int parse_fits(parser *p, char **t, int n)
{
	fz_artifact_info *info = p->info;
	if (n != 3) return bad(p, "malformed fits line (fits NAME DIM>=LEAST)");
	if (p->st->nfits == FZ_MAX_FITS) return bad(p, "more than %d fits lines", FZ_MAX_FITS);
	int i = 0;
	while (i < info->ntensors && strcmp(info->tensors[i].name, t[1])) i++;
	if (i == info->ntensors) return bad(p, "fits %s: no param line of that name before it", t[1]);
	const fz_tensor_info *x = &info->tensors[i];
	if (x->role != FZ_INPUT || (strcmp(x->type, "i32") && strcmp(x->type, "i64")) || !x->has_domain)
		return bad(p, "fits %s: not an integer input with a domain", t[1]);
	fr_fit *f = &p->st->fits[p->st->nfits];
	memset(f, 0, sizeof *f);
	char *ge = strstr(t[2], ">=");
	if (!ge || ge == t[2] || !strict_count(ge + 2, 1LL << 62, &f->least) || f->least == 0)
		return bad(p, "fits %s: malformed '%s' (DIM>=LEAST, LEAST from 1 to 2^62)", t[1], t[2]);
	*ge = 0;
	f->tensor = i, f->dim.name = x->name, f->dim.dim[0] = t[2], f->dim.rank = 1, f->dim.elem_bytes = 1;
	if (!parse_dim(info, t[2], &f->dim, 0))
		return bad(p, "fits %s: dimension '%s' is neither a size, a number, nor a size derived as fusec writes one", t[1], t[2]);
	for (int k = 0; k < p->st->nfits; k++)
		if (p->st->fits[k].tensor == i && !strcmp(p->st->fits[k].dim.dim[0], t[2]))
			return bad(p, "fits %s %s listed twice", t[1], t[2]);
	p->st->nfits++;
	return FZ_OK;
}

/* kernel fused|unfused NAME MODE block=B [space=...] [grid-reduction=deterministic]
   [across=T,...] [smem=B tma=A,B [tma-rows=RA,RB]] */
static int parse_kernel(parser *p, char **t, int n)
{
	fz_artifact_info *info = p->info;
	if (n < 5 || strncmp(t[4], "block=", 6)) return bad(p, "malformed kernel line");
	if (info->nkernels == FZ_MAX_KERNELS) return bad(p, "more than %d kernels", FZ_MAX_KERNELS);
	fz_kernel_info *k = &p->st->kernels[info->nkernels];
	memset(k, 0, sizeof *k);
	if (!is_ident(t[2])) return bad(p, "kernel '%s': not a C identifier of at most %d characters", t[2], FZ_MAX_NAME);
	if (!strcmp(t[1], "fused")) k->fused = 1;
	else if (strcmp(t[1], "unfused")) return bad(p, "kernel %s: variant '%s' is neither fused nor unfused", t[2], t[1]);
	if (!is_ident(t[3])) return bad(p, "kernel %s: malformed mode '%s'", t[2], t[3]);
	k->name = t[2], k->mode = t[3], k->space = "", k->across = "";
	long long b;
	if (!strict_count(t[4] + 6, 1024, &b) || b == 0) return bad(p, "kernel %s: bad %s (1 to 1024 threads)", t[2], t[4]);
	k->block = (int)b;
	k->tma[0] = k->tma[1] = -1;
	p->st->tma_rows[info->nkernels][0] = 128, p->st->tma_rows[info->nkernels][1] = 64;
	int tuned = 0, rows = 0;
	for (int i = 5; i < n; i++) {
		if (!strncmp(t[i], "space=", 6) && !*k->space && t[i][6]) k->space = t[i] + 6;
		else if (!strcmp(t[i], "grid-reduction=deterministic") && !k->grid_reduction) k->grid_reduction = 1;
		else if (!strncmp(t[i], "across=", 7) && !*k->across) { /* tensors listed before, read at other points' rows */
			k->across = t[i] + 7;
			for (const char *nm = k->across;;) {
				size_t len = strcspn(nm, ",");
				int found = 0;
				for (int x = 0; x < info->ntensors && !found; x++)
					found = strlen(info->tensors[x].name) == len && !strncmp(info->tensors[x].name, nm, len) && info->tensors[x].rank >= 1;
				if (!found) return bad(p, "kernel %s: %s names a tensor not listed before it, or one of rank 0", t[2], t[i]);
				if (!nm[len]) break;
				nm += len + 1;
			}
		}
		else if (!strncmp(t[i], "smem=", 5) && !k->smem) { /* dynamic shared memory, bytes */
			long long v;
			if (!strict_count(t[i] + 5, 1 << 20, &v) || v == 0) return bad(p, "kernel %s: bad %s (1 to 1048576 bytes)", t[2], t[i]);
			k->smem = (int)v;
		} else if (!strncmp(t[i], "tma=", 4) && k->tma[0] < 0) { /* tma=A,B: tile and attention kernels; tensors listed before,
		                                                             rank 2 (3: batched), 16-bit */
			const char *b2 = strchr(t[i] + 4, ',');
			if (!b2 || (strcmp(k->mode, "tile") && strcmp(k->mode, "attention")))
				return bad(p, "kernel %s: bad %s (tile and attention kernels: tma=A,B)", t[2], t[i]);
			for (int j = 0; j < 2; j++) {
				const char *nm = j ? b2 + 1 : t[i] + 4;
				size_t len = j ? strlen(nm) : (size_t)(b2 - nm);
				for (int x = 0; x < info->ntensors; x++)
					if (strlen(info->tensors[x].name) == len && !strncmp(info->tensors[x].name, nm, len)) k->tma[j] = x;
				/* 16-bit, or f32 (tf32 tiles) or fp8 (f8e4m3, f8e5m2: fp8 tiles) */
				const fz_tensor_info *op = k->tma[j] < 0 ? NULL : &info->tensors[k->tma[j]];
				if (!op || op->rank < 2 || op->rank > 3 ||
				    (op->elem_bytes != 2 && (strcmp(k->mode, "tile") || (strcmp(op->type, "f32") && op->elem_bytes != 1))))
					return bad(p, "kernel %s: %s names no rank-2 or rank-3 16-bit (or, tile kernels, f32 or fp8) tensor listed before it", t[2], t[i]);
			}
		} else if (!strncmp(t[i], "tma-rows=", 9) && !rows) { /* the maps' box rows (A, B) where not 128, 64: an
		                                                      m- or n-major operand's (tile_gemm.cuh) */
			long long ra, rb;
			char *comma = strchr(t[i] + 9, ',');
			if (!comma || strcmp(k->mode, "tile")) return bad(p, "kernel %s: bad %s (tile kernels: tma-rows=A,B)", t[2], t[i]);
			*comma = 0;
			int ok = strict_count(t[i] + 9, 256, &ra) && strict_count(comma + 1, 256, &rb);
			*comma = ',';
			if (!ok || ra == 0 || rb == 0) return bad(p, "kernel %s: bad %s (1 to 256 rows)", t[2], t[i]);
			p->st->tma_rows[info->nkernels][0] = (int)ra, p->st->tma_rows[info->nkernels][1] = (int)rb, rows = 1;
		} else if (!strncmp(t[i], "tuned=", 6) && t[i][6] && !tuned) { /* the tuning-table entry fusec took: said, not used */
			tuned = 1;
		} else return bad(p, "kernel %s: unknown or repeated attribute '%s'", t[2], t[i]);
	}
	for (int i = 0; i < info->nkernels; i++)
		if (!strcmp(info->kernels[i].name, k->name)) return bad(p, "kernel %s listed twice", k->name);
	info->nkernels++;
	return FZ_OK;
}

/* target ARCH FILE SHA256, ARCH one of FZ_TARGETS */
static int parse_target(parser *p, char **t, int n)
{
	fz_artifact_info *info = p->info;
	if (n != 4) return bad(p, "malformed target line");
	if (info->ntargets == FZ_MAX_TARGETS) return bad(p, "more than %d targets", FZ_MAX_TARGETS);
	size_t len = strlen(t[1]);
	int known = 0;
	for (const char *s = FZ_TARGETS; *s && !known; s += strcspn(s, " "), s += *s == ' ')
		known = strcspn(s, " ") == len && !strncmp(s, t[1], len);
	if (!known) return bad(p, "target '%s' is not one this runtime knows (%s)", t[1], FZ_TARGETS);
	fz_target_info *x = &p->st->targets[info->ntargets];
	x->arch = t[1], x->sm = atoi(t[1] + 3), x->specific = t[1][len - 1] == 'a';
	if (!plain_name(t[2])) return bad(p, "target %s: file '%s' is not a plain file name", t[1], t[2]);
	if (!is_hex64(t[3])) return bad(p, "target %s: '%s' is not a SHA-256", t[1], t[3]);
	for (int i = 0; i < info->ntargets; i++)
		if (!strcmp(info->targets[i].arch, t[1])) return bad(p, "target %s listed twice", t[1]);
	x->file = t[2], x->sha256 = t[3];
	info->ntargets++;
	return FZ_OK;
}

/* one line, NUL-terminated, in place */
static int parse_line(parser *p, char *line)
{
	fz_artifact_info *info = p->info;
	fr_store *st = p->st;
	if (!strncmp(line, "plan ", 5) || !strcmp(line, "plan")) {
		if (info->nplan == FZ_MAX_PLAN) return bad(p, "more than %d plan lines", FZ_MAX_PLAN);
		st->plan[info->nplan++] = line[4] ? line + 5 : "";
		return FZ_OK;
	}
	if (!strncmp(line, "options ", 8)) {
		if (info->options) return bad(p, "a second options line");
		info->options = line + 8;
		return FZ_OK;
	}
	char *t[10];
	int n = split(line, t, 9);
	if (n == 0) return bad(p, "empty line");
	if (n > 9) return bad(p, "too many fields");
	const char *k = t[0];
	struct { const char *key; const char **field; } single[] = {
		{"fusec-version", &info->fusec_version}, {"fusion", &info->fusion}, {"spec", &info->spec},
		{"spec-sha256", &info->spec_sha256}, {"nvrtc", &info->nvrtc}, {"layout", &info->layout}};
	for (size_t i = 0; i < sizeof single / sizeof single[0]; i++) {
		if (strcmp(k, single[i].key)) continue;
		if (n != 2) return bad(p, "malformed %s line", k);
		if (*single[i].field) return bad(p, "a second %s line", k);
		*single[i].field = t[1];
		return FZ_OK;
	}
	if (!strcmp(k, "target")) return parse_target(p, t, n);
	if (!strcmp(k, "file")) {
		if (n != 3) return bad(p, "malformed file line");
		if (info->nfiles == FZ_MAX_FILES) return bad(p, "more than %d files", FZ_MAX_FILES);
		if (!plain_name(t[1])) return bad(p, "file '%s' is not a plain file name", t[1]);
		if (!is_hex64(t[2])) return bad(p, "file %s: '%s' is not a SHA-256", t[1], t[2]);
		st->files[info->nfiles].name = t[1], st->files[info->nfiles].sha256 = t[2];
		info->nfiles++;
		return FZ_OK;
	}
	if (!strcmp(k, "size")) {
		if (n != 2) return bad(p, "malformed size line");
		if (info->nsizes == FZ_MAX_SIZES) return bad(p, "more than %d sizes", FZ_MAX_SIZES);
		if (!is_ident(t[1])) return bad(p, "size '%s': not a C identifier of at most %d characters", t[1], FZ_MAX_NAME);
		if (size_index(info, t[1]) >= 0) return bad(p, "size %s listed twice", t[1]);
		if (info->ntensors) return bad(p, "size %s after the tensors", t[1]);
		st->sizes[info->nsizes++] = t[1];
		return FZ_OK;
	}
	if (!strcmp(k, "param")) return parse_tensor(p, t, n, 0);
	if (!strcmp(k, "temp")) return parse_tensor(p, t, n, 1);
	if (!strcmp(k, "kernel")) return parse_kernel(p, t, n);
	if (!strcmp(k, "values")) return parse_values(p, t, n);
	if (!strcmp(k, "fits")) return parse_fits(p, t, n);
	if (!strcmp(k, "inexact")) { /* inexact NAME tf32|fp8: an output computed through tf32 products, or fp8 ones */
		if (n != 3 || (strcmp(t[2], "tf32") && strcmp(t[2], "fp8"))) return bad(p, "malformed inexact line (inexact NAME tf32, or fp8)");
		for (int i = 0; i < info->ntensors; i++)
			if (!strcmp(info->tensors[i].name, t[1]) && info->tensors[i].role != FZ_INPUT && info->tensors[i].role != FZ_TEMP) {
				st->inexact[i] = strcmp(t[2], "fp8") ? "tf32" : "fp8"; /* the text is not kept */
				return FZ_OK;
			}
		return bad(p, "inexact %s: no output of that name listed before it", t[1]);
	}
	if (info->format >= 2 && (!strcmp(k, "stored") || !strcmp(k, "parts") || !strcmp(k, "counter") || !strcmp(k, "op"))) {
		char why[FZ_ERRMSG_SIZE];
		return fr_recipe_line(info, st, t, n, why) ? bad(p, "%s", why) : FZ_OK;
	}
	for (const char *c = k; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-')) return bad(p, "malformed key '%s'", k);
	return FZ_OK; /* a line a later fusec 0.x added: covered by the hash, ignored */
}

int fr_manifest_parse(const char *path, char *text, char *stop, fz_artifact_info *info, fr_store *st, char *err)
{
	size_t lines = 0;
	for (char *c = text; c < stop; c++) lines += *c == '\n';
	st->plan = calloc(lines < FZ_MAX_PLAN ? lines + 1 : FZ_MAX_PLAN, sizeof *st->plan);
	if (!st->plan) return fr_err(err, FZ_ERR_NO_MEMORY, "out of memory");
	info->targets = st->targets, info->files = st->files, info->sizes = st->sizes;
	info->plan = st->plan, info->tensors = st->tensors, info->kernels = st->kernels;
	parser p = {path, 2, err, info, st};
	int rc = FZ_OK;
	for (char *line = text; !rc && line < stop; p.line++) {
		char *nl = memchr(line, '\n', (size_t)(stop - line));
		if (!nl) return bad(&p, "no newline at the end of the line");
		if (nl - line > FZ_MAX_LINE) return bad(&p, "longer than %d bytes", FZ_MAX_LINE);
		for (char *c = line; c < nl; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f) return bad(&p, "a control character (byte %d)", (unsigned char)*c);
		*nl = 0;
		rc = parse_line(&p, line);
		line = nl + 1;
	}
	return rc;
}

static void put_line(fr_sha256 *h, const char *a, const char *b)
{
	fr_sha256_update(h, a, strlen(a));
	fr_sha256_update(h, " ", 1);
	fr_sha256_update(h, b, strlen(b));
	fr_sha256_update(h, "\n", 1);
}

void fr_layout(const fz_artifact_info *info, char hex[65])
{
	static const char *const role[] = {"input", "output", "temp", "inout"};
	fr_sha256 h;
	fr_sha256_init(&h);
	put_line(&h, "fusion", info->fusion ? info->fusion : "");
	for (int i = 0; i < info->nsizes; i++) put_line(&h, "size", info->sizes[i]);
	for (int i = 0; i < info->ntensors; i++) {
		const fz_tensor_info *t = &info->tensors[i];
		char text[FZ_MAX_LINE + 64];
		int n = snprintf(text, sizeof text, "%s %s %s ", t->name, role[t->role], t->type);
		if (!t->rank) n += snprintf(text + n, sizeof text - (size_t)n, "-");
		for (int d = 0; d < t->rank; d++) n += snprintf(text + n, sizeof text - (size_t)n, "%s%s", d ? "," : "", t->dim[d]);
		put_line(&h, t->role == FZ_TEMP ? "temp" : "param", text);
	}
	unsigned char dig[32];
	fr_sha256_final(&h, dig);
	for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", dig[i]);
}
