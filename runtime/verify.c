/* fz_artifact_verify: an artifact checked without a GPU. The envelope
 * (format line, the manifest's own SHA-256 as its last line), the lines
 * (manifest.c), then what only the whole manifest can say: the required
 * lines are there, names agree with each other, the layout fingerprint is
 * the one its size/param/temp lines give and the one its header carries,
 * and every listed file has its SHA-256 (and every PTX its .target).
 *
 * The SHA-256 lines detect accidents (truncation, a bad merge, an edit
 * that forgot to re-hash); they are not a signature. Agreement checks are
 * what keep a re-hashed, edited manifest from describing buffers that the
 * generated code does not use (see the README's security section). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sha256.h"

/* the first line, the trailing manifest-sha256 line, the hash; *body_len: bytes hashed */
static int check_envelope(const char *path, const char *text, size_t len, size_t *body_len, const char **hash,
                          int *format, char *err)
{
	if (len == 0) return fr_err(err, FZ_ERR_FORMAT, "%s: empty file, not a fusec artifact manifest", path);
	if (strlen(text) != len) return fr_err(err, FZ_ERR_FORMAT, "%s: contains a NUL byte, not a fusec artifact manifest", path);
	const char *magic = "fusec-artifact ";
	if (strncmp(text, magic, strlen(magic)))
		return fr_err(err, FZ_ERR_FORMAT, "%s: not a fusec artifact manifest (the first line is not 'fusec-artifact %d')",
		              path, FZ_ARTIFACT_FORMAT);
	const char *v = text + strlen(magic);
	size_t digits = strspn(v, "0123456789");
	if (!digits || digits > 6 || v[digits] != '\n')
		return fr_err(err, FZ_ERR_FORMAT, "%s: malformed format line (expected 'fusec-artifact %d')", path, FZ_ARTIFACT_FORMAT);
	long fmt = strtol(v, NULL, 10);
	if (fmt < FZ_ARTIFACT_FORMAT_MIN || fmt > FZ_ARTIFACT_FORMAT)
		return fr_err(err, FZ_ERR_VERSION, "%s: artifact format %ld; this runtime reads formats %d to %d (regenerate with a matching fusec)",
		              path, fmt, FZ_ARTIFACT_FORMAT_MIN, FZ_ARTIFACT_FORMAT);
	*format = (int)fmt;
	/* the hash line is the last one: look for it from the end, in constant time */
	const char *key = "\nmanifest-sha256 ";
	size_t klen = strlen(key);
	if (len < klen + 65 || text[len - 1] != '\n') {
		if (!strstr(text, key))
			return fr_err(err, FZ_ERR_INTEGRITY, "%s: no manifest-sha256 line: the manifest is truncated or not from fusec", path);
		return fr_err(err, FZ_ERR_INTEGRITY, "%s: the manifest-sha256 line is not the manifest's last line, or is cut short", path);
	}
	const char *last = text + len - 65 - klen;
	if (memcmp(last, key, klen)) {
		if (!strstr(text, key))
			return fr_err(err, FZ_ERR_INTEGRITY, "%s: no manifest-sha256 line: the manifest is truncated or not from fusec", path);
		return fr_err(err, FZ_ERR_INTEGRITY, "%s: the manifest-sha256 line is not the manifest's last line, or is cut short", path);
	}
	const char *h = last + klen;
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

static int has_file(const fz_artifact_info *info, const char *name)
{
	for (int i = 0; i < info->nfiles; i++)
		if (!strcmp(info->files[i].name, name)) return 1;
	return 0;
}

/* what the manifest must say, and say consistently */
static int check_contents(const fz_artifact_info *info, const fr_store *st, const char *path, char *err)
{
	const char *missing = !info->fusec_version ? "fusec-version" : !info->fusion ? "fusion" : !info->spec ? "spec"
	                    : !info->spec_sha256 ? "spec-sha256" : !info->nvrtc ? "nvrtc" : !info->options ? "options"
	                    : !info->ntargets ? "target" : !info->layout ? "layout" : NULL;
	if (missing) return fr_err(err, FZ_ERR_FORMAT, "%s: no %s line", path, missing);
	int major = -1;
	char *end;
	long v = strtol(info->fusec_version, &end, 10);
	if (end != info->fusec_version && *end == '.' && info->fusec_version[0] != '-' && v < 1000) major = (int)v;
	if (major < 0) return fr_err(err, FZ_ERR_FORMAT, "%s: malformed fusec-version '%s'", path, info->fusec_version);
	if (major != FZ_ARTIFACT_MAJOR)
		return fr_err(err, FZ_ERR_VERSION, "%s: made by fusec %s; this runtime (%s) loads artifacts of fusec %d.x: regenerate it",
		              path, info->fusec_version, FZ_RUNTIME_VERSION, FZ_ARTIFACT_MAJOR);
	const char *f = info->fusion;
	size_t fl = strlen(f);
	int ident = fl && fl <= FZ_MAX_NAME && !(f[0] >= '0' && f[0] <= '9');
	for (size_t i = 0; i < fl; i++)
		ident &= (f[i] >= 'a' && f[i] <= 'z') || (f[i] >= 'A' && f[i] <= 'Z') || (f[i] >= '0' && f[i] <= '9') || f[i] == '_';
	if (!ident) return fr_err(err, FZ_ERR_FORMAT, "%s: fusion '%s' is not a C identifier of at most %d characters", path, f, FZ_MAX_NAME);
	if (strlen(info->spec_sha256) != 64 || strspn(info->spec_sha256, "0123456789abcdef") != 64 ||
	    strlen(info->layout) != 64 || strspn(info->layout, "0123456789abcdef") != 64)
		return fr_err(err, FZ_ERR_FORMAT, "%s: spec-sha256 or layout is not a SHA-256", path);

	/* files: NAME.ARCH.ptx per target, NAME.h and NAME_ref.c among the files, no name twice */
	char want[FZ_MAX_NAME + 32];
	for (int i = 0; i < info->ntargets; i++) {
		snprintf(want, sizeof want, "%s.%s.ptx", f, info->targets[i].arch);
		if (strcmp(info->targets[i].file, want))
			return fr_err(err, FZ_ERR_FORMAT, "%s: target %s is file '%s', not %s", path, info->targets[i].arch,
			              info->targets[i].file, want);
	}
	for (int i = 0; i < info->nfiles; i++) {
		for (int j = 0; j < i; j++)
			if (!strcmp(info->files[i].name, info->files[j].name))
				return fr_err(err, FZ_ERR_FORMAT, "%s: file %s listed twice", path, info->files[i].name);
		for (int j = 0; j < info->ntargets; j++)
			if (!strcmp(info->files[i].name, info->targets[j].file))
				return fr_err(err, FZ_ERR_FORMAT, "%s: file %s is also a target's", path, info->files[i].name);
		const char *base = strrchr(path, '/');
		if (!strcmp(info->files[i].name, base ? base + 1 : path))
			return fr_err(err, FZ_ERR_FORMAT, "%s: lists itself as a file", path);
	}
	const char *suffix[] = {".h", "_ref.c"};
	for (int i = 0; i < 2; i++) {
		snprintf(want, sizeof want, "%s%s", f, suffix[i]);
		if (!has_file(info, want)) return fr_err(err, FZ_ERR_FORMAT, "%s: no file line for %s", path, want);
	}
	/* fusec names the manifest after its fusion: one under another name was
	   renamed, or copied over another fusion's, and is not what its name says */
	const char *base = strrchr(path, '/');
	snprintf(want, sizeof want, "%s.manifest", f);
	if (strcmp(base ? base + 1 : path, want))
		return fr_err(err, FZ_ERR_FORMAT, "%s: the manifest of fusion %s, whose name is %s: renamed, or copied over another "
		              "fusion's", path, f, want);

	/* tensors and kernels: something to compute, both variants */
	int outputs = 0, fused = 0, unfused = 0;
	for (int i = 0; i < info->ntensors; i++) outputs += info->tensors[i].role == FZ_OUTPUT || info->tensors[i].role == FZ_INOUT;
	for (int i = 0; i < info->nkernels; i++) fused += info->kernels[i].fused, unfused += !info->kernels[i].fused;
	if (!outputs) return fr_err(err, FZ_ERR_FORMAT, "%s: no output parameter", path);
	if (!fused || !unfused) return fr_err(err, FZ_ERR_FORMAT, "%s: no %s kernel", path, fused ? "unfused" : "fused");
	for (int i = 0; i < info->nkernels; i++)
		for (int j = 0; j < info->ntensors; j++)
			if (!strcmp(info->kernels[i].name, info->tensors[j].name))
				return fr_err(err, FZ_ERR_FORMAT, "%s: kernel %s has a tensor's name", path, info->kernels[i].name);

	if (strcmp(info->layout, st->layout))
		return fr_err(err, FZ_ERR_LAYOUT,
		              "%s: the layout line (%.12s...) is not the fingerprint of its size/param/temp lines (%.12s...): "
		              "the manifest was edited", path, info->layout, st->layout);
	return FZ_OK;
}

/* the header's `#define FZ_NAME_LAYOUT "HEX"`, which must be the manifest's */
static int check_header_layout(const fz_artifact_info *info, const char *path, const char *data, char *err)
{
	char key[FZ_MAX_NAME + 32];
	snprintf(key, sizeof key, "\n#define FZ_%s_LAYOUT \"", info->fusion);
	const char *s = strstr(data, key);
	if (!s) return fr_err(err, FZ_ERR_LAYOUT, "%s: no FZ_%s_LAYOUT: a header from an older fusec", path, info->fusion);
	s += strlen(key);
	if (strncmp(s, info->layout, 64) || s[64] != '"')
		return fr_err(err, FZ_ERR_LAYOUT, "%s: FZ_%s_LAYOUT is not the manifest's layout: header and manifest disagree", path,
		              info->fusion);
	return FZ_OK;
}

/* hashes dir/name against want; ptx_arch: when not NULL, the PTX's .target must be it */
static int check_file(const fz_artifact_info *info, const char *dir, const char *name, const char *want, const char *role,
                      const char *ptx_arch, char *err)
{
	char *path = fr_path_join(dir, name);
	if (!path) return fr_err(err, FZ_ERR_NO_MEMORY, "out of memory");
	char *data, what[96];
	size_t len;
	snprintf(what, sizeof what, "%s listed in the manifest:", role);
	int rc = fr_read_file(path, what, FZ_MAX_FILE_BYTES, &data, &len, err);
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
	char hdr[FZ_MAX_NAME + 8];
	snprintf(hdr, sizeof hdr, "%s.h", info->fusion);
	if (!rc && !ptx_arch && !strcmp(name, hdr)) rc = check_header_layout(info, path, data, err);
	free(data), free(path);
	return rc;
}

void fz_artifact_info_free(fz_artifact_info *info)
{
	if (!info) return;
	fr_store *st = info->storage_;
	if (st) {
		free(st->text), free(st->dir), free(st->path), free(st->plan), free(st->recipe.node);
		free(st);
	}
	memset(info, 0, sizeof *info);
}

int fz_artifact_verify(const char *manifest_path, fz_artifact_info *info, char *err)
{
	if (!info) return fr_err(err, FZ_ERR_INVALID, "fz_artifact_verify: info is NULL");
	memset(info, 0, sizeof *info);
	if (!manifest_path) return fr_err(err, FZ_ERR_INVALID, "fz_artifact_verify: path is NULL");
	fr_store *st = calloc(1, sizeof *st);
	if (!st) return fr_err(err, FZ_ERR_NO_MEMORY, "out of memory");
	info->storage_ = st;
	size_t len = 0, body = 0;
	const char *hash = NULL;
	int rc = fr_read_file(manifest_path, "artifact manifest", FZ_MAX_MANIFEST_BYTES, &st->text, &len, err);
	if (!rc) rc = check_envelope(manifest_path, st->text, len, &body, &hash, &info->format, err);
	if (!rc) {
		st->dir = fr_dir_of(manifest_path);
		st->path = strdup(manifest_path);
		if (!st->path || !st->dir) rc = fr_err(err, FZ_ERR_NO_MEMORY, "out of memory");
	}
	if (!rc) {
		info->manifest = st->path;
		st->text[len - 1] = 0; /* the hash line's newline: hash is a string */
		info->manifest_sha256 = hash;
		char *first = strchr(st->text, '\n') + 1; /* the format line, checked */
		rc = fr_manifest_parse(manifest_path, first, st->text + body, info, st, err);
	}
	if (!rc) {
		fr_layout(info, st->layout);
		rc = check_contents(info, st, manifest_path, err);
	}
	if (!rc) rc = fr_recipe_check(info, st, manifest_path, err);
	for (int i = 0; !rc && i < info->ntargets; i++) {
		char role[64];
		snprintf(role, sizeof role, "target %s", info->targets[i].arch);
		rc = check_file(info, st->dir, info->targets[i].file, info->targets[i].sha256, role, info->targets[i].arch, err);
	}
	for (int i = 0; !rc && i < info->nfiles; i++)
		rc = check_file(info, st->dir, info->files[i].name, info->files[i].sha256, "file", NULL, err);
	if (rc) {
		fz_artifact_info_free(info);
		return rc;
	}
	info->args_size = 8 * (size_t)(info->ntensors + info->nsizes + 2);
	return FZ_OK;
}

char *fr_artifact_path(const fz_artifact_info *info, const char *name)
{
	const fr_store *st = info->storage_;
	return fr_path_join(st->dir, name);
}
