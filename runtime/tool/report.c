/* Small helpers of fuserun's output: sizes and JSON values. */
#include <math.h>
#include <string.h>

#include "tool.h"

int sizes_resolve(const fr_opts *o, const fz_artifact_info *info, long long *sizes)
{
	int bad = 0;
	for (int j = 0; j < o->nsize; j++) {
		int known = 0;
		for (int i = 0; i < info->nsizes; i++) known |= !strcmp(info->sizes[i], o->size_name[j]);
		if (!known) fprintf(stderr, "fuserun: %s has no size %s\n", info->fusion, o->size_name[j]), bad = 1;
	}
	for (int i = 0; i < info->nsizes; i++) {
		sizes[i] = 0;
		for (int j = 0; j < o->nsize; j++)
			if (!strcmp(info->sizes[i], o->size_name[j])) sizes[i] = o->size_value[j];
		if (sizes[i] <= 0) {
			fprintf(stderr, "fuserun: size %s of %s not given or not positive (--size %s=...)\n", info->sizes[i],
			        info->fusion, info->sizes[i]);
			bad = 1;
		}
	}
	return bad;
}

void sizes_format(const fz_artifact_info *info, const long long *sizes, char *buf, size_t n)
{
	buf[0] = 0;
	for (int i = 0; i < info->nsizes; i++) {
		size_t l = strlen(buf);
		snprintf(buf + l, n - l, "%s%s=%lld", i ? "," : "", info->sizes[i], sizes[i]);
	}
}

void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
		else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
		else fputc(ch, f);
	}
	fputc('"', f);
}

void json_num(FILE *f, double v)
{
	if (isfinite(v)) fprintf(f, "%.6g", v);
	else fputs("null", f);
}
