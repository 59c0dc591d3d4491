/* Reads and verifies an artifact's manifest (no GPU needed): the format
 * line, the manifest's own SHA-256, the fusec version, every line, the
 * SHA-256 of every file it lists, and the .target of every PTX. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sha256.h"

enum { MAX_FILE = 256 << 20 };

typedef struct store {
	char *text, *dir, *path;
	fz_target_info *targets;
	fz_file_info *files;
	const char **sizes, **plan;
	fz_tensor_info *tensors;
	fz_kernel_info *kernels;
} store;

int fr_read_file(const char *path, const char *what, char **data, size_t *len, char *err)
{
	*data = NULL, *len = 0;
	FILE *f = fopen(path, "rb");
	if (!f) return fr_err(err, FZ_ERR_IO, "%s%s%s: %s", what, *what ? " " : "", path, strerror(errno));
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	int rc = buf ? FZ_OK : fr_err(err, FZ_ERR_NO_MEMORY, "%s: out of memory", path);
	while (!rc) {
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (n < cap) {
			if (ferror(f)) rc = fr_err(err, FZ_ERR_IO, "%s%s%s: read error", what, *what ? " " : "", path);
			break;
		}
		if (cap >= MAX_FILE) {
			rc = fr_err(err, FZ_ERR_FORMAT, "%s%s%s: larger than %d MiB", what, *what ? " " : "", path, MAX_FILE >> 20);
			break;
		}
		char *nb = realloc(buf, cap * 2 + 1);
		if (!nb) {
			rc = fr_err(err, FZ_ERR_NO_MEMORY, "%s: out of memory", path);
			break;
		}
		buf = nb, cap *= 2;
	}
	fclose(f);
	if (rc) {
		free(buf);
		return rc;
	}
	buf[n] = 0;
	*data = buf, *len = n;
	return FZ_OK;
}

static int is_hex64(const char *s)
{
	if (strlen(s) != 64) return 0;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f'))) return 0;
	return 1;
}

/* a plain file name next to the manifest: no directories, no "..", no "." */
static int plain_name(const char *s)
{
	return *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

static int type_bytes(const char *t)
{
	static const struct { const char *name; int bytes; } types[] = {
		{"f64", 8}, {"f32", 4}, {"bf16", 2}, {"f16", 2}, {"i64", 8}, {"i32", 4}};
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

typedef struct parser {
	const char *path;
	int line;
	char *err;
	fz_artifact_info *info;
	store *st;
} parser;

#define BAD(p, ...) (fr_err((p)->err, FZ_ERR_FORMAT, "%s:%d: ", (p)->path, (p)->line), \
	bad_more((p)->err, __VA_ARGS__))
static int bad_more(char *err, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;
static int bad_more(char *err, const char *fmt, ...)
{
	if (err) {
		size_t n = strlen(err);
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err + n, FZ_ERRMSG_SIZE - n, fmt, ap);
		va_end(ap);
	}
	return FZ_ERR_FORMAT;
}

static int size_index(const fz_artifact_info *info, const char *s)
{
	for (int i = 0; i < info->nsizes; i++)
		if (!strcmp(info->sizes[i], s)) return i;
	return -1;
}

static int parse_tensor(parser *p, char **t, int n, int temp)
{
	fz_artifact_info *info = p->info;
	if (n != 6 || strncmp(t[5], "by=", 3) || !t[5][3]) return BAD(p, "malformed %s line", t[0]);
	fz_tensor_info *x = &p->st->tensors[info->ntensors];
	memset(x, 0, sizeof *x);
	x->name = t[1];
	if (!strcmp(t[2], "input")) x->role = FZ_INPUT;
	else if (!strcmp(t[2], "output")) x->role = FZ_OUTPUT;
	else if (!strcmp(t[2], "temp")) x->role = FZ_TEMP;
	else return BAD(p, "%s %s: unknown role '%s'", t[0], t[1], t[2]);
	if ((x->role == FZ_TEMP) != temp) return BAD(p, "%s %s: role %s", t[0], t[1], t[2]);
	x->type = t[3];
	x->elem_bytes = type_bytes(t[3]);
	if (!x->elem_bytes) return BAD(p, "%s %s: unknown element type '%s'", t[0], t[1], t[3]);
	x->by = t[5] + 3;
	if (strcmp(t[4], "-")) {
		for (char *d = t[4], *next; d; d = next) {
			next = strchr(d, ',');
			if (next) *next++ = 0;
			if (x->rank == FZ_MAX_RANK) return BAD(p, "%s %s: more than %d dimensions", t[0], t[1], FZ_MAX_RANK);
			int r = x->rank++;
			x->dim[r] = d;
			x->dim_size[r] = size_index(info, d);
			if (x->dim_size[r] < 0) {
				char *end;
				long long v = strtoll(d, &end, 10);
				if (*end || end == d || v <= 0) return BAD(p, "%s %s: dimension '%s' is neither a size nor a number", t[0], t[1], d);
				x->dim_value[r] = v;
			}
		}
	}
	for (int i = 0; i < info->ntensors; i++)
		if (!strcmp(info->tensors[i].name, x->name)) return BAD(p, "tensor %s listed twice", x->name);
	info->ntensors++;
	return FZ_OK;
}

static int parse_kernel(parser *p, char **t, int n)
{
	fz_artifact_info *info = p->info;
	if (n < 5 || strncmp(t[4], "block=", 6)) return BAD(p, "malformed kernel line");
	fz_kernel_info *k = &p->st->kernels[info->nkernels];
	memset(k, 0, sizeof *k);
	if (!strcmp(t[1], "fused")) k->fused = 1;
	else if (strcmp(t[1], "unfused")) return BAD(p, "kernel %s: variant '%s' is neither fused nor unfused", t[2], t[1]);
	k->name = t[2], k->mode = t[3], k->space = "";
	char *end;
	long b = strtol(t[4] + 6, &end, 10);
	if (*end || b <= 0 || b > 1024) return BAD(p, "kernel %s: bad %s", t[2], t[4]);
	k->block = (int)b;
	for (int i = 5; i < n; i++) {
		if (!strncmp(t[i], "space=", 6)) k->space = t[i] + 6;
		else if (!strcmp(t[i], "grid-reduction=deterministic")) k->grid_reduction = 1;
		else return BAD(p, "kernel %s: unknown attribute '%s'", t[2], t[i]);
	}
	for (int i = 0; i < info->nkernels; i++)
		if (!strcmp(info->kernels[i].name, k->name)) return BAD(p, "kernel %s listed twice", k->name);
	info->nkernels++;
	return FZ_OK;
}

/* one line, NUL-terminated, in place */
static int parse_line(parser *p, char *line)
{
	fz_artifact_info *info = p->info;
	store *st = p->st;
	char *rest = strchr(line, ' ');
	if (!strncmp(line, "plan ", 5) || !strcmp(line, "plan")) {
		st->plan[info->nplan++] = rest ? rest + 1 : "";
		return FZ_OK;
	}
	if (!strncmp(line, "options ", 8)) {
		info->options = rest + 1;
		return FZ_OK;
	}
	char *t[10];
	int n = split(line, t, 9);
	if (n == 0) return BAD(p, "empty line");
	if (n > 9) return BAD(p, "too many fields");
	const char *k = t[0];
	struct { const char *key; const char **field; } single[] = {
		{"fusec-version", &info->fusec_version}, {"fusion", &info->fusion}, {"spec", &info->spec},
		{"spec-sha256", &info->spec_sha256}, {"nvrtc", &info->nvrtc}};
	for (size_t i = 0; i < sizeof single / sizeof single[0]; i++) {
		if (strcmp(k, single[i].key)) continue;
		if (n != 2) return BAD(p, "malformed %s line", k);
		if (*single[i].field) return BAD(p, "a second %s line", k);
		*single[i].field = t[1];
		return FZ_OK;
	}
	if (!strcmp(k, "target")) {
		if (n != 4) return BAD(p, "malformed target line");
		fz_target_info *x = &st->targets[info->ntargets];
		char *end;
		long sm = strncmp(t[1], "sm_", 3) ? 0 : strtol(t[1] + 3, &end, 10);
		if (sm <= 0 || *end || sm > 9999) return BAD(p, "target '%s' is not of the form sm_NN", t[1]);
		if (!plain_name(t[2])) return BAD(p, "target %s: file '%s' is not a plain file name", t[1], t[2]);
		if (!is_hex64(t[3])) return BAD(p, "target %s: '%s' is not a SHA-256", t[1], t[3]);
		for (int i = 0; i < info->ntargets; i++)
			if (info->targets[i].sm == sm) return BAD(p, "target %s listed twice", t[1]);
		x->arch = t[1], x->sm = (int)sm, x->file = t[2], x->sha256 = t[3];
		info->ntargets++;
		return FZ_OK;
	}
	if (!strcmp(k, "file")) {
		if (n != 3) return BAD(p, "malformed file line");
		if (!plain_name(t[1])) return BAD(p, "file '%s' is not a plain file name", t[1]);
		if (!is_hex64(t[2])) return BAD(p, "file %s: '%s' is not a SHA-256", t[1], t[2]);
		st->files[info->nfiles].name = t[1], st->files[info->nfiles].sha256 = t[2];
		info->nfiles++;
		return FZ_OK;
	}
	if (!strcmp(k, "size")) {
		if (n != 2) return BAD(p, "malformed size line");
		if (size_index(info, t[1]) >= 0) return BAD(p, "size %s listed twice", t[1]);
		if (info->ntensors) return BAD(p, "size %s after the tensors", t[1]);
		st->sizes[info->nsizes++] = t[1];
		return FZ_OK;
	}
	if (!strcmp(k, "param")) return parse_tensor(p, t, n, 0);
	if (!strcmp(k, "temp")) return parse_tensor(p, t, n, 1);
	if (!strcmp(k, "kernel")) return parse_kernel(p, t, n);
	return FZ_OK; /* a line a later fusec 0.x added: covered by the hash, ignored */
}

void fz_artifact_info_free(fz_artifact_info *info)
{
	if (!info) return;
	store *st = info->storage_;
	if (st) {
		free(st->text), free(st->dir), free(st->path), free(st->targets), free(st->files);
		free(st->sizes), free(st->plan), free(st->tensors), free(st->kernels);
		free(st);
	}
	memset(info, 0, sizeof *info);
}

/* the first line, the trailing manifest-sha256 line, the hash; *body_len: bytes hashed */
static int check_envelope(const char *path, const char *text, size_t len, size_t *body_len, const char **hash,
                          char *err)
{
	if (len == 0) return fr_err(err, FZ_ERR_FORMAT, "%s: empty file, not a fusec artifact manifest", path);
	if (strlen(text) != len) return fr_err(err, FZ_ERR_FORMAT, "%s: contains a NUL byte, not a fusec artifact manifest", path);
	const char *magic = "fusec-artifact ";
	if (strncmp(text, magic, strlen(magic)))
		return fr_err(err, FZ_ERR_FORMAT, "%s: not a fusec artifact manifest (the first line is not 'fusec-artifact %d')",
		              path, FZ_ARTIFACT_FORMAT);
	char *end;
	long fmt = strtol(text + strlen(magic), &end, 10);
	if (*end != '\n' || fmt <= 0)
		return fr_err(err, FZ_ERR_FORMAT, "%s: malformed format line (expected 'fusec-artifact %d')", path, FZ_ARTIFACT_FORMAT);
	if (fmt != FZ_ARTIFACT_FORMAT)
		return fr_err(err, FZ_ERR_VERSION, "%s: artifact format %ld; this runtime reads format %d (regenerate with a matching fusec)",
		              path, fmt, FZ_ARTIFACT_FORMAT);
	const char *key = "\nmanifest-sha256 ", *last = NULL;
	for (const char *s = strstr(text, key); s; s = strstr(s + 1, key)) last = s;
	if (!last)
		return fr_err(err, FZ_ERR_INTEGRITY, "%s: no manifest-sha256 line: the manifest is truncated or not from fusec", path);
	const char *h = last + strlen(key);
	if (len - (size_t)(h - text) != 65 || h[64] != '\n')
		return fr_err(err, FZ_ERR_INTEGRITY, "%s: the manifest-sha256 line is not the manifest's last line, or is cut short", path);
	char want[65], got[65];
	memcpy(want, h, 64), want[64] = 0;
	*body_len = (size_t)(last - text) + 1;
	fr_sha256_hex(text, *body_len, got);
	if (strcmp(want, got))
		return fr_err(err, FZ_ERR_INTEGRITY,
		              "%s: manifest-sha256 does not match the manifest's contents: the manifest was edited or damaged", path);
	*hash = h;
	return FZ_OK;
}

/* the directory of the manifest, for its files */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 1;
	char *d = malloc(n + 1);
	if (!d) return NULL;
	if (!slash) memcpy(d, ".", 2);
	else if (n == 0) memcpy(d, "/", 2);
	else memcpy(d, path, n), d[n] = 0;
	return d;
}

/* hashes dir/name against want; ptx_arch: when not NULL, the PTX's .target must be it */
static int check_file(const char *dir, const char *name, const char *want, const char *role, const char *ptx_arch, char *err)
{
	size_t plen = strlen(dir) + strlen(name) + 2;
	char *path = malloc(plen);
	if (!path) return fr_err(err, FZ_ERR_NO_MEMORY, "out of memory");
	snprintf(path, plen, "%s/%s", dir, name);
	char *data, what[96];
	size_t len;
	snprintf(what, sizeof what, "%s listed in the manifest:", role);
	int rc = fr_read_file(path, what, &data, &len, err);
	if (!rc) {
		char got[65];
		fr_sha256_hex(data, len, got);
		if (strcmp(got, want))
			rc = fr_err(err, FZ_ERR_INTEGRITY, "%s (%s): SHA-256 %.12s... differs from the manifest's %.12s...: the file was truncated or edited",
			            path, role, got, want);
	}
	if (!rc && ptx_arch) {
		const char *t = strstr(data, "\n.target ");
		char arch[32] = "";
		if (t) sscanf(t + 9, "%31[^ ,\r\n]", arch);
		if (!t || !arch[0]) rc = fr_err(err, FZ_ERR_FORMAT, "%s (%s): not PTX: no .target directive", path, role);
		else if (strcmp(arch, ptx_arch))
			rc = fr_err(err, FZ_ERR_FORMAT, "%s (%s): the PTX is for %s, not %s", path, role, arch, ptx_arch);
	}
	free(data), free(path);
	return rc;
}

static int check_contents(const fz_artifact_info *info, const char *path, char *err)
{
	const char *missing = !info->fusec_version ? "fusec-version" : !info->fusion ? "fusion" : !info->ntargets ? "target" : NULL;
	if (missing) return fr_err(err, FZ_ERR_FORMAT, "%s: no %s line", path, missing);
	int major = -1;
	char *end;
	long v = strtol(info->fusec_version, &end, 10);
	if (end != info->fusec_version && *end == '.') major = (int)v;
	if (major < 0) return fr_err(err, FZ_ERR_FORMAT, "%s: malformed fusec-version '%s'", path, info->fusec_version);
	if (major != FZ_ARTIFACT_MAJOR)
		return fr_err(err, FZ_ERR_VERSION, "%s: made by fusec %s; this runtime (%s) loads artifacts of fusec %d.x: regenerate it",
		              path, info->fusec_version, FZ_RUNTIME_VERSION, FZ_ARTIFACT_MAJOR);
	return FZ_OK;
}

int fz_artifact_verify(const char *manifest_path, fz_artifact_info *info, char *err)
{
	if (!info) return fr_err(err, FZ_ERR_INVALID, "fz_artifact_verify: info is NULL");
	memset(info, 0, sizeof *info);
	if (!manifest_path) return fr_err(err, FZ_ERR_INVALID, "fz_artifact_verify: path is NULL");
	store *st = calloc(1, sizeof *st);
	if (!st) return fr_err(err, FZ_ERR_NO_MEMORY, "out of memory");
	info->storage_ = st;
	size_t len = 0, body = 0;
	const char *hash = NULL;
	int rc = fr_read_file(manifest_path, "artifact manifest", &st->text, &len, err);
	if (!rc) rc = check_envelope(manifest_path, st->text, len, &body, &hash, err);
	size_t lines = 0;
	if (!rc) {
		for (size_t i = 0; i < body; i++) lines += st->text[i] == '\n';
		st->targets = calloc(lines, sizeof *st->targets), st->files = calloc(lines, sizeof *st->files);
		st->sizes = calloc(lines, sizeof *st->sizes), st->plan = calloc(lines, sizeof *st->plan);
		st->tensors = calloc(lines, sizeof *st->tensors), st->kernels = calloc(lines, sizeof *st->kernels);
		st->dir = dir_of(manifest_path);
		st->path = strdup(manifest_path);
		if (!st->path || !st->targets || !st->files || !st->sizes || !st->plan || !st->tensors || !st->kernels || !st->dir)
			rc = fr_err(err, FZ_ERR_NO_MEMORY, "out of memory");
	}
	if (!rc) {
		info->manifest = st->path;
		info->targets = st->targets, info->files = st->files, info->sizes = st->sizes;
		info->plan = st->plan, info->tensors = st->tensors, info->kernels = st->kernels;
		st->text[body + 64 + strlen("manifest-sha256 ")] = 0;
		info->manifest_sha256 = hash;
		parser p = {manifest_path, 1, err, info, st};
		char *line = st->text, *stop = st->text + body;
		line = strchr(line, '\n') + 1; /* the format line, checked */
		for (p.line = 2; !rc && line < stop; p.line++) {
			char *nl = strchr(line, '\n');
			*nl = 0;
			rc = parse_line(&p, line);
			line = nl + 1;
		}
	}
	if (!rc) rc = check_contents(info, manifest_path, err);
	for (int i = 0; !rc && i < info->ntargets; i++) {
		char role[64];
		snprintf(role, sizeof role, "target %s", info->targets[i].arch);
		rc = check_file(st->dir, info->targets[i].file, info->targets[i].sha256, role, info->targets[i].arch, err);
	}
	for (int i = 0; !rc && i < info->nfiles; i++)
		rc = check_file(st->dir, info->files[i].name, info->files[i].sha256, "file", NULL, err);
	if (rc) {
		fz_artifact_info_free(info);
		return rc;
	}
	info->args_size = 8 * (size_t)(info->ntensors + info->nsizes + 2);
	return FZ_OK;
}

char *fr_artifact_path(const fz_artifact_info *info, const char *name)
{
	const store *st = info->storage_;
	size_t n = strlen(st->dir) + strlen(name) + 2;
	char *p = malloc(n);
	if (p) snprintf(p, n, "%s/%s", st->dir, name);
	return p;
}
