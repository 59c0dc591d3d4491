# libfuserun (lib/libfuserun.a, lib/libfuserun.so), bin/fuserun, the
# examples and the runtime's CPU tests. Included at the end of the top
# Makefile (it uses NAMES, MANIFESTS, CC, CFLAGS, WARN, CPPFLAGS, SANFLAGS).
#
#   runtime           the libraries and bin/fuserun
#   runtime-examples  bin/active_inference, bin/spiking, bin/te_mgpu, bin/spiking_mgpu
#   check-runtime     CPU tests (sanitized; a fake libcuda): runtime/tests/run.sh
#   install-runtime   fusec, fuserun, the libraries, fuserun.h, fuserun.pc and
#                     the docs under $(DESTDIR)$(PREFIX)

CUDA_HOME ?= /usr/local/cuda
PREFIX    ?= /usr/local
AR        ?= ar
INSTALL   ?= install

# One version for fusec and fuserun: fusec's FUSEC_VERSION (fusec/version.h,
# beside fusec/main.c). The shared library is
# lib/libfuserun.so.VERSION with the SONAME libfuserun.so.MAJOR (a link of
# that name to it) and libfuserun.so, the link a program is built against.
# fuserun.h's FZ_RUNTIME_VERSION must say the same (checked when the
# library is built).
RT_VERSION_H := fusec/version.h
RT_VERSION   := $(shell sed -n 's/^\#define FUSEC_VERSION "\(.*\)"$$/\1/p' $(RT_VERSION_H) /dev/null)
RT_SONAME    := libfuserun.so.$(firstword $(subst ., ,$(RT_VERSION)))
RT_SOFILE    := libfuserun.so.$(RT_VERSION)

RT_CPPFLAGS := -Iruntime -I$(CUDA_HOME)/include
RT_LIBS     := -ldl -lpthread -lm
RT_LIB_SRC  := runtime/errors.c runtime/cuda_api.c runtime/sha256.c runtime/files.c runtime/manifest.c \
               runtime/nccl_api.c runtime/group.c runtime/join.c runtime/exchange.c runtime/shard.c \
               runtime/verify.c runtime/shape.c runtime/device.c runtime/artifact.c runtime/pipeline.c \
               runtime/recipe.c runtime/call.c
RT_TOOL_SRC := runtime/tool/fuserun.c runtime/tool/list.c runtime/tool/tensors.c runtime/tool/gpu_check.c \
               runtime/tool/report.c runtime/tool/refso.c runtime/tool/speccheck.c runtime/tool/bench_group.c
RT_PIC_OBJ  := $(RT_LIB_SRC:runtime/%.c=build/rt/pic/%.o)
RT_SAN_OBJ  := $(RT_LIB_SRC:runtime/%.c=build/rt/san/%.o)
RT_TOOL_OBJ := $(RT_TOOL_SRC:runtime/tool/%.c=build/rt/tool/%.o)
RT_SANT_OBJ := $(RT_TOOL_SRC:runtime/tool/%.c=build/rt/sant/%.o)
RT_EXAMPLES := bin/active_inference bin/spiking bin/te_mgpu bin/spiking_mgpu

.PHONY: runtime runtime-examples check-runtime install-runtime
runtime: lib/libfuserun.a lib/libfuserun.so bin/fuserun bin/fuserun-launch
runtime-examples: $(RT_EXAMPLES)

# the library: position-independent objects for both archives
build/rt/pic/%.o: runtime/%.c
	@mkdir -p $(@D)
	$(CC) $(RT_CPPFLAGS) $(CPPFLAGS) $(WARN) $(CFLAGS) -fPIC -MMD -MP -c $< -o $@
lib/libfuserun.a: $(RT_PIC_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && $(AR) rcs $@ $^
lib/$(RT_SOFILE): $(RT_PIC_OBJ) runtime/fuserun.map $(RT_VERSION_H)
	@test -n "$(RT_VERSION)" || { echo "runtime.mk: no '#define FUSEC_VERSION' in fusec/version.h (or fusec/*/version.h)" >&2; exit 1; }
	@h=$$(sed -n 's/^#define FZ_RUNTIME_VERSION "\(.*\)"$$/\1/p' runtime/fuserun.h); [ "$$h" = "$(RT_VERSION)" ] || \
	  { echo "runtime.mk: runtime/fuserun.h says FZ_RUNTIME_VERSION \"$$h\", $(RT_VERSION_H) says FUSEC_VERSION \"$(RT_VERSION)\": one version for both" >&2; exit 1; }
	@mkdir -p $(@D)
	$(CC) -shared $(CFLAGS) -Wl,-soname,$(RT_SONAME) -Wl,--version-script=runtime/fuserun.map $(RT_PIC_OBJ) $(RT_LIBS) -o $@
lib/libfuserun.so: lib/$(RT_SOFILE)
	ln -sf $(RT_SOFILE) lib/$(RT_SONAME)
	ln -sf $(RT_SONAME) $@

RT_TOOL_CPPFLAGS := -Iruntime/tool -Igenerated
build/rt/tool/%.o: runtime/tool/%.c
	@mkdir -p $(@D)
	$(CC) $(RT_TOOL_CPPFLAGS) $(RT_CPPFLAGS) $(CPPFLAGS) $(WARN) $(CFLAGS) -MMD -MP -c $< -o $@
# fuserun links no fusion: it compiles an artifact's header and reference
# when it validates or benches one (runtime/tool/refso.c)
bin/fuserun: $(RT_TOOL_OBJ) lib/libfuserun.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(RT_TOOL_OBJ) lib/libfuserun.a $(RT_LIBS) -o $@

# the launcher of one process per GPU (fuserun bench --procs runs it from
# fuserun's directory)
bin/fuserun-launch: runtime/tool/fuserun-launch.sh
	@mkdir -p $(@D)
	cp $< $@ && chmod 755 $@

# examples: applications of the library and two generated headers each
# (after the artifacts are regenerated: their headers are included; later
# builds know which from the depfiles)
build/rt/ex/%.o: examples/%.c | $(MANIFESTS)
	@mkdir -p $(@D)
	$(CC) -Igenerated $(RT_CPPFLAGS) $(CPPFLAGS) $(WARN) $(CFLAGS) -MMD -MP -c $< -o $@
# (te_mgpu, spiking_mgpu: several GPUs of one host, fz_group and fz_sharded)
$(RT_EXAMPLES): bin/%: build/rt/ex/%.o lib/libfuserun.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $^ $(RT_LIBS) -o $@

# tests: everything sanitized (LeakSanitizer fails a leak), and fake drivers
build/rt/san/%.o: runtime/%.c
	@mkdir -p $(@D)
	$(CC) $(RT_CPPFLAGS) $(CPPFLAGS) $(WARN) $(SANFLAGS) -MMD -MP -c $< -o $@
build/rt/sant/%.o: runtime/tool/%.c
	@mkdir -p $(@D)
	$(CC) $(RT_TOOL_CPPFLAGS) $(RT_CPPFLAGS) $(CPPFLAGS) $(WARN) $(SANFLAGS) -MMD -MP -c $< -o $@
build/rt/sanref/%_ref.o: generated/%_ref.c
	@mkdir -p $(@D)
	$(CC) -Igenerated $(CPPFLAGS) $(WARN) $(SANFLAGS) -MMD -MP -c $< -o $@
RT_TEST_SRC := runtime/tests/test_runtime.c runtime/tests/testutil.c runtime/tests/test_verify.c runtime/tests/test_hostile.c \
               runtime/tests/test_checks.c runtime/tests/test_driver.c runtime/tests/test_shape.c \
               runtime/tests/test_pipeline.c runtime/tests/test_fp8.c runtime/tests/test_fits.c
build/rt/sant/%.o: runtime/tests/%.c
	@mkdir -p $(@D)
	$(CC) $(RT_TOOL_CPPFLAGS) $(RT_CPPFLAGS) $(CPPFLAGS) $(WARN) $(SANFLAGS) -MMD -MP -c $< -o $@
build/rt/test_runtime: $(RT_TEST_SRC:runtime/tests/%.c=build/rt/sant/%.o) build/rt/sant/tensors.o build/rt/sant/refso.o build/rt/sant/speccheck.o \
                       build/rt/sanref/kl_divergence_ref.o build/rt/sanref/spike_burst_ref.o $(RT_SAN_OBJ)
	$(CC) $(SANFLAGS) $^ $(RT_LIBS) -o $@
build/rt/fuserun-san: $(RT_SANT_OBJ) $(RT_SAN_OBJ)
	$(CC) $(SANFLAGS) $^ $(RT_LIBS) -o $@
build/rt/libfakecuda.so: runtime/tests/fake_cuda.c
	@mkdir -p $(@D)
	$(CC) $(RT_CPPFLAGS) $(CPPFLAGS) $(WARN) $(CFLAGS) -fPIC -shared $< -o $@
build/rt/libfakenccl.so: runtime/tests/fake_nccl.c
	@mkdir -p $(@D)
	$(CC) $(WARN) $(CFLAGS) -fPIC -shared $< -o $@
# the group runtime's tests: a fake libcuda with several devices and a fake
# libnccl (runtime/tests/mgpu.sh)
build/rt/test_group: build/rt/sant/test_group.o build/rt/sant/test_shard.o build/rt/sant/test_exchange.o build/rt/sant/testutil.o $(RT_SAN_OBJ)
	$(CC) $(SANFLAGS) $^ $(RT_LIBS) -o $@
# one process per GPU: each process of a job one rank, started by
# fuserun-launch (runtime/tests/join.sh)
build/rt/test_join: build/rt/sant/test_join.o build/rt/sant/testutil.o $(RT_SAN_OBJ)
	$(CC) $(SANFLAGS) $^ $(RT_LIBS) -o $@
build/rt/libnocuda.so: runtime/tests/no_cuda.c
	@mkdir -p $(@D)
	$(CC) $(WARN) $(CFLAGS) -fPIC -shared $< -o $@

# the manifest fuzzer: libFuzzer, ASan and UBSan over the library, fuserun
# validate and three fusions' headers and references (runtime/tests/fuzz.sh)
CLANG ?= clang
RT_FUZZFLAGS := -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
RT_FUZZ_OBJ := $(RT_LIB_SRC:runtime/%.c=build/rt/fuzz/%.o) \
               $(patsubst %,build/rt/fuzz/tool_%.o,gpu_check tensors report speccheck bench_group) \
               $(patsubst %,build/rt/fuzz/ref_%.o,kl_divergence spike_burst softmax) build/rt/fuzz/fuzz_manifest.o
build/rt/fuzz/%.o: runtime/%.c
	@mkdir -p $(@D)
	$(CLANG) $(RT_CPPFLAGS) $(CPPFLAGS) $(WARN) $(RT_FUZZFLAGS) -MMD -MP -c $< -o $@
# SHA-256 sanitized but not coverage-traced: its compares are most of an
# execution's time and tell the fuzzer nothing
build/rt/fuzz/sha256.o: runtime/sha256.c
	@mkdir -p $(@D)
	$(CLANG) $(RT_CPPFLAGS) $(CPPFLAGS) $(WARN) -O2 -g -fsanitize=address,undefined -fno-sanitize-recover=all -MMD -MP -c $< -o $@
build/rt/fuzz/tool_%.o: runtime/tool/%.c
	@mkdir -p $(@D)
	$(CLANG) $(RT_TOOL_CPPFLAGS) $(RT_CPPFLAGS) $(CPPFLAGS) $(WARN) $(RT_FUZZFLAGS) -MMD -MP -c $< -o $@
build/rt/fuzz/ref_%.o: generated/%_ref.c
	@mkdir -p $(@D)
	$(CLANG) -Igenerated $(CPPFLAGS) $(WARN) $(RT_FUZZFLAGS) -MMD -MP -c $< -o $@
build/rt/fuzz/fuzz_manifest.o: runtime/tests/fuzz_manifest.c
	@mkdir -p $(@D)
	$(CLANG) $(RT_TOOL_CPPFLAGS) $(RT_CPPFLAGS) $(CPPFLAGS) $(WARN) $(RT_FUZZFLAGS) -MMD -MP -c $< -o $@
build/rt/fuzz_manifest: $(RT_FUZZ_OBJ)
	$(CLANG) -fsanitize=fuzzer,address,undefined $^ $(RT_LIBS) -o $@

# the generic call against every shipped fusion's typed launchers
# (runtime/tests/test_call.c): a table of their header functions
build/rt/call_table.c: runtime/tests/call_table.sh $(MANIFESTS)
	@mkdir -p $(@D)
	sh runtime/tests/call_table.sh $(NAMES) > $@.tmp && mv $@.tmp $@
build/rt/sant/call_table.o: build/rt/call_table.c
	@mkdir -p $(@D)
	$(CC) -Igenerated -Iruntime/tests $(RT_CPPFLAGS) $(CPPFLAGS) $(WARN) $(SANFLAGS) -c $< -o $@
build/rt/test_call: build/rt/sant/test_call.o build/rt/sant/call_table.o build/rt/sant/testutil.o $(RT_SAN_OBJ)
	$(CC) $(SANFLAGS) $^ $(RT_LIBS) -o $@

RT_TEST_BINS := build/rt/fuzz_manifest build/rt/test_runtime build/rt/fuserun-san build/rt/libfakecuda.so build/rt/libnocuda.so \
                build/rt/test_group build/rt/libfakenccl.so build/rt/test_call build/rt/test_join \
                lib/libfuserun.a lib/libfuserun.so bin/fuserun bin/fuserun-launch $(RT_EXAMPLES)
check-runtime: $(RT_TEST_BINS)
	@sh runtime/tests/run.sh

# install: fusec and fuserun, the libraries, the header, a pkg-config file
# whose Libs carry an rpath (a program built with it starts without
# LD_LIBRARY_PATH), the docs. DESTDIR stages it; PREFIX is where it runs.
RT_LIBDIR := $(PREFIX)/lib
RT_DOCDIR := $(PREFIX)/share/doc/fuserun
install-runtime: bin/fusec bin/fuserun bin/fuserun-launch lib/libfuserun.a lib/$(RT_SOFILE) runtime/fuserun.h runtime/fuserun.pc.in \
                 runtime/README.md dsl/README.md dsl/MATH.md
	$(INSTALL) -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(RT_LIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/include \
	  $(DESTDIR)$(RT_DOCDIR)/runtime $(DESTDIR)$(RT_DOCDIR)/dsl
	$(INSTALL) -m 755 bin/fusec bin/fuserun bin/fuserun-launch $(DESTDIR)$(PREFIX)/bin/
	$(INSTALL) -m 644 lib/libfuserun.a $(DESTDIR)$(RT_LIBDIR)/
	$(INSTALL) -m 755 lib/$(RT_SOFILE) $(DESTDIR)$(RT_LIBDIR)/
	ln -sf $(RT_SOFILE) $(DESTDIR)$(RT_LIBDIR)/$(RT_SONAME)
	ln -sf $(RT_SONAME) $(DESTDIR)$(RT_LIBDIR)/libfuserun.so
	$(INSTALL) -m 644 runtime/fuserun.h $(DESTDIR)$(PREFIX)/include/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(RT_LIBDIR)|g' -e 's|@VERSION@|$(RT_VERSION)|g' \
	  runtime/fuserun.pc.in > $(DESTDIR)$(RT_LIBDIR)/pkgconfig/fuserun.pc
	$(INSTALL) -m 644 runtime/README.md $(DESTDIR)$(RT_DOCDIR)/runtime/
	$(INSTALL) -m 644 dsl/README.md dsl/MATH.md $(DESTDIR)$(RT_DOCDIR)/dsl/

-include $(wildcard build/rt/*/*.d)
