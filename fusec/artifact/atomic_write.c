/* Writing files atomically. Each output is written to a temporary file in
 * its own folder (created with O_EXCL, so never through a link), flushed to
 * disk, then renamed over the old one: a reader sees the old file or the
 * new one, never a part, and a failure (NVRTC on a later target, a full
 * disk, a file-size limit) leaves the old artifact whole. The manifest is
 * renamed last. */
#define _DEFAULT_SOURCE /* flock */
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "artifact/artifact_impl.h"

void artifact_set_path(OutFile *o, const char *dir, const char *name)
{
	int n = snprintf(o->path, sizeof o->path, "%s/%s", dir, name);
	if (n < 0 || (size_t)n >= sizeof o->path) die("output path %.64s.../%s longer than %d bytes", dir, name, FUSEC_PATH_MAX);
}

static const char *const *spec_paths; /* every spec of this run, never to be overwritten */
static int nspec_paths;

void artifact_set_specs(const char *const *paths, int n) { spec_paths = paths, nspec_paths = n; }

/* 0, or -1 after saying why path may not be replaced: a link, not a
   regular file, or one of the specs */
static int replaceable(const char *path)
{
	struct stat st, sp;
	if (lstat(path, &st) != 0) {
		if (errno == ENOENT) return 0;
		fprintf(stderr, "fusec: error: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (S_ISLNK(st.st_mode)) {
		fprintf(stderr, "fusec: error: %s: a symbolic link: refusing to write through or replace it\n", path);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "fusec: error: %s: exists and is not a regular file\n", path);
		return -1;
	}
	for (int i = 0; i < nspec_paths; i++)
		if (stat(spec_paths[i], &sp) == 0 && sp.st_dev == st.st_dev && sp.st_ino == st.st_ino) {
			fprintf(stderr, "fusec: error: %s: is the spec %s: refusing to overwrite it with an output\n", path, spec_paths[i]);
			return -1;
		}
	return 0;
}

static int write_temp(OutFile *o, mode_t mode)
{
	const char *slash = strrchr(o->path, '/');
	int dl = slash ? (int)(slash - o->path) + 1 : 0;
	snprintf(o->tmp, sizeof o->tmp, "%.*s.%s.XXXXXX", dl, o->path, o->path + dl);
	int fd = mkstemp(o->tmp);
	if (fd < 0) {
		fprintf(stderr, "fusec: error: %s: cannot create a temporary file: %s\n", o->tmp, strerror(errno));
		return -1;
	}
	o->written = 1;
	size_t done = 0;
	int err = fchmod(fd, mode) ? errno : 0;
	while (!err && done < o->n) {
		ssize_t w = write(fd, o->data + done, o->n - done);
		if (w < 0 && errno == EINTR) continue;
		if (w <= 0) err = w < 0 ? errno : EIO;
		else done += (size_t)w;
	}
	if (!err && fsync(fd) != 0) err = errno;
	if (close(fd) != 0 && !err) err = errno;
	if (err) fprintf(stderr, "fusec: error: %s: %s\n", o->path, strerror(err));
	return err ? -1 : 0;
}

static void sync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) fsync(fd), close(fd);
}

int artifact_write_all(OutFile *out, int n, const char *dir)
{
	mode_t mask = umask(0);
	umask(mask);
	int rc = 0;
	for (int i = 0; i < n && !rc; i++) rc = replaceable(out[i].path);
	for (int i = 0; i < n && !rc; i++) rc = write_temp(&out[i], 0666 & ~mask);
	for (int i = 0; i < n && !rc; i++) {
		if (rename(out[i].tmp, out[i].path) != 0) {
			fprintf(stderr, "fusec: error: %s: %s\n", out[i].path, strerror(errno));
			rc = -1;
		} else {
			out[i].written = 0;
		}
	}
	for (int i = 0; i < n; i++)
		if (out[i].written) unlink(out[i].tmp);
	if (dir) sync_dir(dir);
	return rc;
}

int artifact_write_file(const char *path, const char *data, size_t n)
{
	OutFile o = {0};
	if (strlen(path) >= sizeof o.path) {
		fprintf(stderr, "fusec: error: %.64s...: path too long\n", path);
		return -1;
	}
	snprintf(o.path, sizeof o.path, "%s", path);
	o.data = data, o.n = n;
	return artifact_write_all(&o, 1, NULL);
}

int artifact_make_dirs(const char *path)
{
	char buf[FUSEC_PATH_MAX];
	if (strlen(path) >= sizeof buf) {
		fprintf(stderr, "fusec: error: %.64s...: path too long\n", path);
		return -1;
	}
	snprintf(buf, sizeof buf, "%s", path);
	for (char *s = buf + 1;; s++) {
		if (*s && *s != '/') continue;
		char c = *s;
		*s = 0;
		struct stat st;
		if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
			fprintf(stderr, "fusec: error: cannot create the folder %s: %s\n", buf, strerror(errno));
			return -1;
		}
		if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) {
			fprintf(stderr, "fusec: error: %s: not a folder\n", buf);
			return -1;
		}
		if (!c) return 0;
		*s = c;
	}
}

int artifact_lock_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) return -1;
	while (flock(fd, LOCK_EX) != 0)
		if (errno != EINTR) return close(fd), -1;
	return fd;
}

void artifact_unlock_dir(int fd)
{
	if (fd >= 0) close(fd); /* closing releases the lock */
}
