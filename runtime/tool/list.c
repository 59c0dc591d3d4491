/* fuserun list: an artifact's contents, after verifying it (no GPU). */
#include <stdio.h>
#include <string.h>

#include "tool.h"

static const char *const role_name[] = {"input", "output", "temp", "inout"};

static void dims(const fz_tensor_info *t, char *buf, size_t n)
{
	size_t l = 0;
	buf[0] = 0;
	if (!t->rank) snprintf(buf, n, "scalar");
	for (int d = 0; d < t->rank && l < n; d++, l = strlen(buf)) snprintf(buf + l, n - l, "%s%s%s", d ? "," : "[", t->dim[d], d + 1 == t->rank ? "]" : "");
}

static void list_json(const fz_artifact_info *a)
{
	printf("{\"fusion\": "), json_str(stdout, a->fusion);
	printf(", \"manifest\": "), json_str(stdout, a->manifest);
	printf(", \"fusec_version\": "), json_str(stdout, a->fusec_version);
	printf(", \"spec\": "), json_str(stdout, a->spec);
	printf(", \"nvrtc\": "), json_str(stdout, a->nvrtc);
	printf(", \"args_size\": %zu, \"sizes\": [", a->args_size);
	for (int i = 0; i < a->nsizes; i++) printf("%s", i ? ", " : ""), json_str(stdout, a->sizes[i]);
	printf("], \"parameters\": [");
	for (int i = 0; i < a->ntensors; i++) {
		const fz_tensor_info *t = &a->tensors[i];
		printf("%s{\"name\": ", i ? ", " : ""), json_str(stdout, t->name);
		printf(", \"role\": \"%s\", \"type\": ", role_name[t->role]), json_str(stdout, t->type);
		printf(", \"dims\": [");
		for (int d = 0; d < t->rank; d++) printf("%s", d ? ", " : ""), json_str(stdout, t->dim[d]);
		printf("], \"by\": "), json_str(stdout, t->by);
		fz_values_info v;
		if (!fz_tensor_values(a, i, NULL, &v, NULL) && v.known) {
			printf(", \"values\": "), json_str(stdout, v.range);
			printf(", \"nondecreasing\": %s, \"nonzero\": %s", v.nondecreasing ? "true" : "false", v.nonzero ? "true" : "false");
		}
		printf("}");
	}
	printf("], \"fits\": [");
	for (int i = 0, n = fz_artifact_fits(a, 0, NULL, NULL, NULL); i < n; i++) {
		int t = 0;
		const char *d = "";
		long long least = 0;
		fz_artifact_fits(a, i, &t, &d, &least);
		printf("%s{\"input\": ", i ? ", " : ""), json_str(stdout, a->tensors[t].name);
		printf(", \"dim\": "), json_str(stdout, d), printf(", \"least\": %lld}", least);
	}
	printf("], \"targets\": [");
	for (int i = 0; i < a->ntargets; i++) {
		printf("%s{\"arch\": ", i ? ", " : ""), json_str(stdout, a->targets[i].arch);
		printf(", \"file\": "), json_str(stdout, a->targets[i].file);
		printf(", \"sha256\": "), json_str(stdout, a->targets[i].sha256), printf("}");
	}
	printf("], \"kernels\": [");
	for (int i = 0; i < a->nkernels; i++) {
		const fz_kernel_info *k = &a->kernels[i];
		printf("%s{\"name\": ", i ? ", " : ""), json_str(stdout, k->name);
		printf(", \"variant\": \"%s\", \"mode\": ", k->fused ? "fused" : "unfused"), json_str(stdout, k->mode);
		printf(", \"block\": %d, \"space\": ", k->block), json_str(stdout, k->space);
		printf(", \"grid_reduction\": %s, \"across\": ", k->grid_reduction ? "true" : "false"), json_str(stdout, k->across);
		fputc('}', stdout);
	}
	printf("], \"plan\": [");
	for (int i = 0; i < a->nplan; i++) printf("%s", i ? ", " : ""), json_str(stdout, a->plan[i]);
	printf("]}\n");
}

/* Names, types, roles and dimensions are identifiers or numbers (the
   manifest parser checks them); the path, the version, spec and NVRTC
   lines, file names, spaces and plan lines may hold other bytes, which
   go through text_safe so that none reaches the terminal as a control. */
static void list_text(const fz_artifact_info *a)
{
	static char t1[TEXT_SAFE_BYTES], t2[TEXT_SAFE_BYTES], t3[TEXT_SAFE_BYTES], t4[TEXT_SAFE_BYTES];
	char buf[256];
	printf("%s: fusion %s, verified (fusec %s, spec %s, NVRTC %s)\n", text_safe(a->manifest, t1, sizeof t1), a->fusion,
	       text_safe(a->fusec_version, t2, sizeof t2), text_safe(a->spec ? a->spec : "?", t3, sizeof t3),
	       text_safe(a->nvrtc ? a->nvrtc : "?", t4, sizeof t4));
	printf("sizes:");
	for (int i = 0; i < a->nsizes; i++) printf(" %s", a->sizes[i]);
	printf("\nparameters (args struct: %zu bytes):\n", a->args_size);
	for (int i = 0; i < a->ntensors; i++) {
		const fz_tensor_info *t = &a->tensors[i];
		dims(t, buf, sizeof buf);
		fz_values_info v;
		printf("  %-12s %-6s %-4s %-14s by %s", t->name, role_name[t->role], t->type, buf, t->by);
		if (!fz_tensor_values(a, i, NULL, &v, NULL) && v.known) /* identifiers and numbers (the parser checks them) */
			printf("  values %s%s%s", v.range, v.nondecreasing ? " nondecreasing" : "", v.nonzero ? " nonzero" : "");
		printf("\n");
	}
	const int nfits = fz_artifact_fits(a, 0, NULL, NULL, NULL);
	if (nfits > 0) printf("fits (an input's domain read as a subscript: the sizes fuserun and the runtime accept):\n");
	for (int i = 0; i < nfits; i++) {
		int t = 0;
		const char *d = "";
		long long least = 0;
		fz_artifact_fits(a, i, &t, &d, &least); /* an identifier or expression the parser checked */
		printf("  %s needs %s >= %lld\n", a->tensors[t].name, d, least);
	}
	printf("targets:\n");
	for (int i = 0; i < a->ntargets; i++)
		printf("  %-6s %-32s sha256 %.16s...\n", a->targets[i].arch, text_safe(a->targets[i].file, t1, sizeof t1), a->targets[i].sha256);
	printf("kernels:\n");
	for (int i = 0; i < a->nkernels; i++) {
		const fz_kernel_info *k = &a->kernels[i];
		printf("  %-7s %-28s %-7s block=%d%s%s%s%s%s\n", k->fused ? "fused" : "unfused", k->name, k->mode, k->block,
		       *k->space ? " space=" : "", text_safe(k->space, t1, sizeof t1), k->grid_reduction ? " grid-reduction" : "",
		       *k->across ? " across=" : "", k->across);
	}
	printf("plan:\n");
	for (int i = 0; i < a->nplan; i++) printf("  %s\n", text_safe(a->plan[i], t1, sizeof t1));
}

int cmd_list(const fr_opts *o)
{
	fz_artifact_info info;
	char err[FZ_ERRMSG_SIZE];
	int rc = fz_artifact_verify(o->artifact, &info, err);
	if (rc) {
		static char safe[TEXT_SAFE_BYTES]; /* the message quotes the manifest's bytes */
		fprintf(stderr, "fuserun: artifact refused: %s (%s)\n", text_safe(err, safe, sizeof safe), fz_strerror(rc));
		return rc == FZ_ERR_NO_MEMORY ? EXIT_ERROR : EXIT_MISMATCH;
	}
	if (o->json) list_json(&info);
	else list_text(&info);
	fz_artifact_info_free(&info);
	return EXIT_PASS;
}
