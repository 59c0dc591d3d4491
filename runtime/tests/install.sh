#!/bin/sh
# The README's install-and-link route, taken as a user takes it, into a
# temporary prefix (no GPU, no root):
#   make install PREFIX=<prefix>
#   cc app.c $(pkg-config --cflags --libs fuserun)   (PKG_CONFIG_PATH=<prefix>/lib/pkgconfig)
#   ./app    -> starts; without a driver it exits with the runtime's "no CUDA
#               driver" error (FZ_ERR_NO_DRIVER), not the loader's (exit 127)
# Also: the installed layout (versioned SONAME, one version for fusec and
# fuserun, the docs), an application of a generated header run through the
# installed library on the fake driver, and one including NAME.h before
# fuserun.h. Run from the repository root after `make` (tests/run.sh's group
# install runs it in make check). MAKE (default make), CC (cc). Prints a line
# per failure (all with -v), xfail lines for known bugs, and
# "install: P passed, F failed"; exits 1 on failures.
ROOT=$(pwd)
B=${RT_BUILD:-build/rt}
FAKE=$ROOT/$B/libfakecuda.so
CC=${CC:-cc}
VERBOSE=0
[ "$1" = -v ] && VERBOSE=1
pass=0 fail=0
unset FUSERUN_LIBCUDA FAKECUDA_CC FAKECUDA_FAIL FAKECUDA_FAIL_AT FAKECUDA_FAIL_CODE FAKECUDA_DEVICES FAKECUDA_STUB
. "$(dirname "$0")/lib.sh" # ok, bad, expect, known

T=$(mktemp -d "${TMPDIR:-/tmp}/fuserun-install.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM
P=$T/prefix
# the version fusec and fuserun share: FUSEC_VERSION (fusec/version.h, or
# wherever under fusec/ it lives)
vh=$(find fusec -name version.h | head -n 1)
V=$(sed -n 's/^#define FUSEC_VERSION "\(.*\)"$/\1/p' "$vh" 2>/dev/null)
[ -n "$V" ] || bad "FUSEC_VERSION found under fusec/" "no '#define FUSEC_VERSION' in ${vh:-fusec/**/version.h}"
major=${V%%.*}

if ! ${MAKE:-make} -s install PREFIX="$P" >"$T/install.log" 2>&1; then
	bad "make install PREFIX=$P" "$(cat "$T/install.log")"
	echo "install: $pass passed, $fail failed"
	exit 1
fi
ok "make install PREFIX=<prefix>"

# 1. what was installed
L=$P/lib
if [ -f "$L/libfuserun.so.$V" ] && [ ! -L "$L/libfuserun.so.$V" ] &&
	[ "$(readlink "$L/libfuserun.so.$major")" = "libfuserun.so.$V" ] && [ "$(readlink "$L/libfuserun.so")" = "libfuserun.so.$major" ]
then ok "lib: libfuserun.so.$V, and the links libfuserun.so.$major and libfuserun.so"
else bad "lib: libfuserun.so.$V, and the links libfuserun.so.$major and libfuserun.so" "$(ls -l "$L" 2>&1)"; fi
if command -v readelf >/dev/null 2>&1; then
	so=$(readelf -d "$L/libfuserun.so" 2>&1 | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
	[ "$so" = "libfuserun.so.$major" ] && ok "SONAME libfuserun.so.$major" || bad "SONAME libfuserun.so.$major, not '$so'"
fi
for f in include/fuserun.h lib/libfuserun.a share/doc/fuserun/runtime/README.md share/doc/fuserun/dsl/README.md share/doc/fuserun/dsl/MATH.md; do
	[ -s "$P/$f" ] && ok "installed $f" || bad "installed $f"
done
expect "the installed fusec is version $V" 0 "^fusec $V\$" -- "$P/bin/fusec" --version
expect "the installed fuserun is version $V, fusec's" 0 "^fuserun $V " -- "$P/bin/fuserun" --version

# 2. pkg-config: the README's link line
if ! command -v pkg-config >/dev/null 2>&1; then
	bad "pkg-config is installed (apt-get install pkg-config): the README's link line uses it"
	echo "install: $pass passed, $fail failed"
	exit 1
fi
PKG_CONFIG_PATH=$L/pkgconfig
export PKG_CONFIG_PATH
expect "pkg-config --modversion fuserun: fusec's version" 0 "^$V\$" -- pkg-config --modversion fuserun
cflags=$(pkg-config --cflags fuserun) libs=$(pkg-config --libs fuserun)

cat >"$T/app.c" <<'EOF'
/* the smallest application: open device 0 */
#include <stdio.h>
#include <fuserun.h>

int main(void)
{
	char err[FZ_ERRMSG_SIZE] = "";
	fz_device *dev = NULL;
	const int rc = fz_device_open(0, &dev, err);
	if (rc != FZ_OK) {
		fprintf(stderr, "app: %s: %s\n", fz_strerror(rc), err);
		return rc == FZ_ERR_NO_DRIVER ? 3 : 1;
	}
	fz_device_props props;
	if (fz_device_query(dev, &props) == FZ_OK) printf("app: %s\n", props.name);
	fz_device_close(dev);
	return 0;
}
EOF
# the build a user makes, from another directory
# shellcheck disable=SC2086
if (cd "$T" && $CC -std=c11 -Wall -Wextra app.c $cflags $libs -o app) >"$T/cc.log" 2>&1 && [ ! -s "$T/cc.log" ]
then ok "cc app.c \$(pkg-config --cflags --libs fuserun): builds, no diagnostics"
else bad "cc app.c \$(pkg-config --cflags --libs fuserun): builds, no diagnostics" "$cflags $libs: $(cat "$T/cc.log")"; fi
# it starts: no LD_LIBRARY_PATH; the driver absent (as on a machine without a GPU)
expect "the app starts and, without a driver, exits with the runtime's no-driver error (not the loader's)" 3 \
	"^app: the CUDA driver (libcuda) is missing or unusable: cannot load the CUDA driver library /nonexistent" -- \
	env -u LD_LIBRARY_PATH FUSERUN_LIBCUDA=/nonexistent "$T/app"
# and exactly as a user runs it, nothing set, where this machine has no
# driver to load (CI: the toolkit, no GPU): the default libcuda.so.1 is missing
if command -v ldconfig >/dev/null 2>&1 && ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 ' &&
	! ls /usr/lib*/libcuda.so.1 /usr/lib/*/libcuda.so.1 >/dev/null 2>&1; then
	expect "the app, run with nothing set on this machine without a driver, says no driver (libcuda.so.1)" 3 \
		"^app: the CUDA driver (libcuda) is missing or unusable: cannot load the CUDA driver library libcuda.so.1: " -- \
		env -u LD_LIBRARY_PATH -u FUSERUN_LIBCUDA "$T/app"
fi
# (the library it loaded is the installed one: the rpath, not a copy in the tree)
if command -v ldd >/dev/null 2>&1; then
	expect "the app loads the installed libfuserun.so.$major" 0 "libfuserun.so.$major => $L/libfuserun.so.$major" -- env -u LD_LIBRARY_PATH ldd "$T/app"
fi
expect "the app runs on the fake driver" 0 "^app: Fake GPU" -- env -u LD_LIBRARY_PATH FUSERUN_LIBCUDA="$FAKE" "$T/app"
# the static route the README gives
if (cd "$T" && $CC -std=c11 -Wall -Wextra app.c -I"$P/include" "$L/libfuserun.a" -ldl -lpthread -lm -o app_static) >"$T/cc.log" 2>&1
then expect "the app linked with libfuserun.a starts, and says no driver" 3 "^app: the CUDA driver (libcuda) is missing or unusable" -- \
	env FUSERUN_LIBCUDA=/nonexistent "$T/app_static"
else bad "cc app.c -I<prefix>/include <prefix>/lib/libfuserun.a -ldl -lpthread -lm" "$(cat "$T/cc.log")"; fi

# 3. a generated header's typed launcher through the installed library (the
# fake driver runs no kernel, but loads the artifact and takes the launches),
# with fuserun.h first, and with NAME.h first
cat >"$T/relu_app.c" <<'EOF'
#include <stdio.h>
#ifdef NAME_H_FIRST
#include "relu.h"
#include <fuserun.h>
#else
#include <fuserun.h>
#include "relu.h"
#endif

#define CHECK(call) do { const int rc_ = (call); if (rc_) { \
	fprintf(stderr, "relu_app: %s: %s\n", #call, dev ? fz_device_error(dev) : err); return 1; } } while (0)

int main(int argc, char **argv)
{
	char err[FZ_ERRMSG_SIZE] = "";
	fz_device *dev = NULL;
	fz_artifact *art;
	fz_device_props props;
	fz_ptr x, y, scratch;
	if (argc != 2) return 2;
	CHECK(fz_device_open(0, &dev, err));
	CHECK(fz_device_query(dev, &props));
	CHECK(fz_artifact_load(dev, argv[1], &art));
	fz_relu_args a = {0};
	a.n_N = 1000;
	CHECK(fz_alloc(dev, 4000, &x));
	CHECK(fz_alloc(dev, 4000, &y));
	a.t_x = x, a.t_y = y;
	const unsigned long long need = fz_relu_fused_scratch(&a, 0, props.sm_count);
	CHECK(fz_alloc(dev, need, &scratch));
	CHECK(fz_memset(dev, scratch, 0, need, NULL));
	fz_relu_fused_scratch(&a, scratch, props.sm_count);
	CHECK(fz_relu_fused_run(art, &a, props.sm_count, NULL));
	CHECK(fz_device_sync(dev));
	printf("relu_app: fused run on %s (%s)\n", props.name, fz_artifact_target(art));
	fz_free(dev, scratch), fz_free(dev, y), fz_free(dev, x);
	fz_artifact_unload(art);
	fz_device_close(dev);
	return 0;
}
EOF
# relu_run NAME DEFINES: builds relu_app with DEFINES and runs it on the fake
# driver; WHY is empty when it built without diagnostics and ran
relu_run() {
	why=
	# shellcheck disable=SC2086
	if ! (cd "$T" && $CC -std=c11 -Wall -Wextra $2 -I"$ROOT/generated" relu_app.c $cflags $libs -o relu_app) >"$T/cc.log" 2>&1; then
		why="does not build: $(grep -m 3 -e 'error' -e 'warning' "$T/cc.log" | tr '\n' ' ')"
	elif [ -s "$T/cc.log" ]; then
		why="diagnostics: $(head -n 3 "$T/cc.log" | tr '\n' ' ')"
	elif ! out=$(env -u LD_LIBRARY_PATH FUSERUN_LIBCUDA="$FAKE" "$T/relu_app" "$ROOT/generated/relu.manifest" 2>&1) ||
		! printf '%s' "$out" | grep -q '^relu_app: fused run on Fake GPU'; then
		why="does not run: $out"
	fi
	rm -f "$T/relu_app"
}
relu_run "fuserun.h, then relu.h" ""
[ -z "$why" ] && ok "an app including fuserun.h then relu.h builds and runs relu's typed launcher" ||
	bad "an app including fuserun.h then relu.h builds and runs relu's typed launcher" "$why"
relu_run "relu.h, then fuserun.h" "-DNAME_H_FIRST"
[ -z "$why" ] && ok "an app including relu.h before fuserun.h builds and runs relu's typed launcher" ||
	bad "an app including relu.h before fuserun.h builds and runs relu's typed launcher" "$why"

# 4. a staged install (DESTDIR): files under DESTDIR, paths without it
D=$T/stage
if ${MAKE:-make} -s install DESTDIR="$D" PREFIX=/opt/fz >"$T/install.log" 2>&1 &&
	[ -f "$D/opt/fz/lib/libfuserun.so.$V" ] && grep -q '^prefix=/opt/fz$' "$D/opt/fz/lib/pkgconfig/fuserun.pc" &&
	grep -q -e '-Wl,-rpath,${libdir}' "$D/opt/fz/lib/pkgconfig/fuserun.pc"
then ok "make install DESTDIR=... PREFIX=/opt/fz: staged files, fuserun.pc for /opt/fz with its rpath"
else bad "make install DESTDIR=... PREFIX=/opt/fz: staged files, fuserun.pc for /opt/fz with its rpath" \
	"$(cat "$T/install.log"; cat "$D/opt/fz/lib/pkgconfig/fuserun.pc" 2>&1)"; fi

echo "install: $pass passed, $fail failed"
[ $fail = 0 ]
