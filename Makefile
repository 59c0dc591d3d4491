# fusec: build, regenerate artifacts, test. See README.md.
# `make` builds everything and runs the demo; `make check` runs the tests.

CC       ?= cc
CLANG    ?= clang
CFLAGS   ?= -O2 -g
WARN     := -std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes
CPPFLAGS += -D_POSIX_C_SOURCE=200809L -I. -Ifusec -Ibuild/gen
SANFLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LEMPAR   ?= /usr/share/lemon/lempar.c
# Lemon's template declares things each parser may not use.
GENWARN  := -Wno-unused-parameter -Wno-unused-variable -Wno-unused-but-set-variable
FUZZTIME ?= 60

# fusec's folders, one per stage of its pipeline, each calling only those
# before it (tests/layering.sh checks it on the objects): core, then the
# front end, the planner, the text pieces every writer shares, the CUDA and
# host writers, the artifact writer; main.c drives them.
FUSEC_DIRS := core front plan emit cuda host artifact
stage_src   = $(sort $(wildcard $(1:%=fusec/%/*.c)))
# front end and planner: what the front-end fuzzer and the unit tests link
FRONT_SRC := $(call stage_src,core front plan)
GEN_SRC   := build/gen/lexer.c build/gen/grammar.c
# the writers: everything after the planner but NVRTC and the files written
EMIT_SRC  := $(call stage_src,emit cuda host)
BACK_SRC  := $(EMIT_SRC) $(call stage_src,artifact) runtime/sha256.c
FUSEC_SRC := $(FRONT_SRC) $(BACK_SRC) fusec/main.c
CUDA_HOME ?= /usr/local/cuda
CPPFLAGS  += -I$(CUDA_HOME)/include
NVRTC_LIB := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lnvrtc

# build/rel/core/ir.o for fusec/core/ir.c; generated and runtime sources at the top
obj = $(addprefix build/$(1)/,$(patsubst fusec/%,%,$(notdir $(filter-out fusec/%,$(2:.c=.o))) $(filter fusec/%,$(2:.c=.o))))

.PHONY: all tools check check-generated generate fuzz clean demo install gpu-check tune
# (DEMO_STAMP: where the demo's last pass is recorded; make check's group
# `make` points it at a temporary file to ask make whether a no-op make is one)
DEMO_STAMP ?= build/demo.stamp
all: bin/fusec generate runtime runtime-examples $(DEMO_STAMP)

# Build tools from Debian's packages, installed when missing and possible.
tools: build/.tools
build/.tools:
	@mkdir -p build
	@for t in re2c lemon; do \
	  if ! command -v $$t >/dev/null 2>&1; then \
	    echo "installing $$t (apt-get)"; \
	    if [ "$$(id -u)" = 0 ]; then apt-get install -y $$t >/dev/null || { apt-get update >/dev/null && apt-get install -y $$t >/dev/null; }; \
	    elif command -v sudo >/dev/null 2>&1; then sudo apt-get install -y $$t >/dev/null; fi; \
	    command -v $$t >/dev/null 2>&1 || { echo "error: $$t is required (apt-get install $$t)"; exit 1; }; \
	  fi; \
	done
	@touch $@

build/gen/grammar.c build/gen/grammar.h &: dsl/grammar.y | build/.tools
	@mkdir -p build/gen
	lemon -q -T$(LEMPAR) -dbuild/gen $<
	@touch build/gen/grammar.h # lemon leaves an unchanged header as it was: older than grammar.y, remade every time

build/gen/lexer.c: dsl/lexer.re build/gen/grammar.h | build/.tools
	@mkdir -p build/gen
	re2c -W --no-generation-date --no-version -o $@ $<

# Text fusec prints, as C string lines (build/gen/*.inc, #included).
CSTRING := sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/'
# The tensor-core mainloops and their shared helpers (CUDA text that
# kern_tile.c and kern_attn.c print) as C string lines.
build/gen/%.inc: fusec/cuda/%.cuh
	@mkdir -p build/gen
	$(CSTRING) $< > $@
build/rel/cuda/kern_tile.o build/san/cuda/kern_tile.o build/fuzz/cuda/kern_tile.o: build/gen/tile_gemm.inc build/gen/mma_common.inc
build/rel/cuda/kern_attn.o build/san/cuda/kern_attn.o build/fuzz/cuda/kern_attn.o: build/gen/attn.inc build/gen/attn_warps.inc build/gen/attn_kernel.inc

# What the generated code shares with runtime/fuserun.h, made from it as C
# string lines: the op list's block that every header repeats, and
# fz_row_lanes for the row kernels (emit/emit_common.c prints both).
build/gen/fz_op.inc: runtime/fuserun.h
	@mkdir -p build/gen
	sed -n '/^\#ifndef FZ_OP_DEFINED/,/^\#endif/p' $< | $(CSTRING) > $@.tmp && test -s $@.tmp && mv $@.tmp $@
build/gen/row_lanes.inc: runtime/fuserun.h
	@mkdir -p build/gen
	sed -n '/^static inline int fz_row_lanes(/,/^}/p' $< | sed '1s/^static inline //' | $(CSTRING) > $@.tmp && test -s $@.tmp && mv $@.tmp $@
# the streamed rows' lanes: the function for the kernels, the guarded block
# for the headers of artifacts with such kernels
build/gen/row_lanes_s.inc: runtime/fuserun.h
	@mkdir -p build/gen
	sed -n '/^static inline int fz_row_lanes_s/,/^}/p' $< | sed '1s/^static inline //' | $(CSTRING) > $@.tmp && test -s $@.tmp && mv $@.tmp $@
build/gen/row_s.inc: runtime/fuserun.h
	@mkdir -p build/gen
	sed -n '/^\#ifndef FZ_ROW_S_DEFINED/,/^\#endif/p' $< | $(CSTRING) > $@.tmp && test -s $@.tmp && mv $@.tmp $@
build/rel/emit/emit_common.o build/san/emit/emit_common.o build/fuzz/emit/emit_common.o: build/gen/fz_op.inc build/gen/row_lanes.inc build/gen/row_lanes_s.inc build/gen/row_s.inc
# fz_split, for headers with a reduction split across blocks (host/grid.c)
build/gen/fz_split.inc: runtime/fuserun.h
	@mkdir -p build/gen
	sed -n '/^\#ifndef FZ_SPLIT_DEFINED/,/^\#endif/p' $< | $(CSTRING) > $@.tmp && test -s $@.tmp && mv $@.tmp $@
build/rel/host/grid.o build/san/host/grid.o build/fuzz/host/grid.o: build/gen/fz_split.inc

# SHA-256: one source (runtime/sha256.c) for the runtime and for fusec.
build/rel/sha256.o: runtime/sha256.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -MMD -MP -c $< -o $@
build/san/sha256.o: runtime/sha256.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(SANFLAGS) -MMD -MP -c $< -o $@
build/fuzz/sha256.o: runtime/sha256.c
	@mkdir -p $(@D)
	$(CLANG) $(CPPFLAGS) $(WARN) -O1 -g -fsanitize=fuzzer-no-link,address,undefined -MMD -MP -c $< -o $@
# the copy fusec had; depfiles of earlier builds still name it
fusec/sha256.c fusec/sha256.h:

# Three builds of the same sources: release, sanitized (tests), fuzzing.
build/rel/%.o: fusec/%.c build/gen/grammar.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -MMD -MP -c $< -o $@
build/rel/%.o: build/gen/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(GENWARN) $(CFLAGS) -MMD -MP -c $< -o $@
build/san/%.o: fusec/%.c build/gen/grammar.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(SANFLAGS) -MMD -MP -c $< -o $@
build/san/%.o: build/gen/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(GENWARN) $(SANFLAGS) -MMD -MP -c $< -o $@
build/fuzz/%.o: fusec/%.c build/gen/grammar.h
	@mkdir -p $(@D)
	$(CLANG) $(CPPFLAGS) $(WARN) -O1 -g -fsanitize=fuzzer-no-link,address,undefined -MMD -MP -c $< -o $@
build/fuzz/%.o: build/gen/%.c
	@mkdir -p $(@D)
	$(CLANG) $(CPPFLAGS) $(WARN) $(GENWARN) -Wno-unknown-warning-option -O1 -g -fsanitize=fuzzer-no-link,address,undefined -MMD -MP -c $< -o $@
build/fuzz/%.o: tests/%.c build/gen/grammar.h
	@mkdir -p $(@D)
	$(CLANG) $(CPPFLAGS) $(WARN) -O1 -g -fsanitize=fuzzer-no-link,address,undefined -MMD -MP -c $< -o $@

bin/fusec: $(call obj,rel,$(FUSEC_SRC) $(GEN_SRC))
	@mkdir -p bin
	$(CC) $(CFLAGS) $^ $(NVRTC_LIB) -lm -o $@
build/san/fusec: $(call obj,san,$(FUSEC_SRC) $(GEN_SRC))
	$(CC) $(SANFLAGS) $^ $(NVRTC_LIB) -lm -o $@
build/fuzz/fuzz_frontend: $(call obj,fuzz,$(FRONT_SRC) $(GEN_SRC) tests/fuzz_frontend.c)
	$(CLANG) -fsanitize=fuzzer,address,undefined $^ -lm -o $@
# front end, planner and every emitter (not NVRTC): what make check and make fuzz run
# (it links NVRTC, as the header's layout fingerprint lives beside it, but never calls it)
build/fuzz/fuzz_backend: $(call obj,fuzz,$(FRONT_SRC) $(BACK_SRC) $(GEN_SRC) tests/fuzz_backend.c)
	$(CLANG) -fsanitize=fuzzer,address,undefined $^ $(NVRTC_LIB) -lm -o $@

# fuzz_specs: generated valid specs through fusec's artifact writer (NVRTC
# stubbed), their headers and references compiled and run under ASan and
# UBSan, a sample through NVRTC and ptxas (tests/fuzz_specs.c)
SPECFUZZ_SRC := $(FRONT_SRC) $(EMIT_SRC) fusec/artifact/artifact.c fusec/artifact/atomic_write.c fusec/artifact/manifest.c \
                runtime/sha256.c $(GEN_SRC)
build/san/fuzz_specs.o: tests/fuzz_specs.c build/gen/grammar.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(SANFLAGS) -MMD -MP -c $< -o $@
build/san/fuzz_specs: $(call obj,san,$(SPECFUZZ_SRC)) build/san/fuzz_specs.o
	$(CC) $(SANFLAGS) $^ -lm -o $@

# Artifacts: one fusion per spec, named as its file. fusec writes them all
# at once (a grouped pattern rule) and a depfile of what the spec read.
SPECS     := $(wildcard specs/*.fuse)
NAMES     := $(basename $(notdir $(SPECS)))
ARCHS     := sm_80 sm_90 sm_90a
# the measured kernel parameters fusec takes (make tune writes them)
TUNE      := tune/table.txt
MANIFESTS := $(NAMES:%=generated/%.manifest)
GENERATED := $(foreach n,$(NAMES),generated/$(n).manifest generated/$(n).cu generated/$(n).h \
               generated/$(n)_ref.c $(ARCHS:%=generated/$(n).%.ptx))

generated/%.manifest generated/%.cu generated/%.h generated/%_ref.c generated/%.sm_80.ptx generated/%.sm_90.ptx generated/%.sm_90a.ptx: specs/%.fuse bin/fusec
	@mkdir -p build/dep
	bin/fusec -o generated --arch=$(subst $(eval) ,$(comma),$(ARCHS)) --tune=$(TUNE) -MD -MF build/dep/$*.d $<

comma := ,
generate: $(MANIFESTS)

# The runtime library, fuserun, the examples and their tests (reads NAMES;
# included here so that check's prerequisites below see RT_TEST_BINS).
include runtime/runtime.mk

# Regenerates into build/regen and compares byte for byte with generated/.
check-generated: bin/fusec
	@rm -rf build/regen && mkdir -p build/regen
	@bin/fusec -o build/regen --arch=$(subst $(eval) ,$(comma),$(ARCHS)) --tune=$(TUNE) $(SPECS)
	@status=0; for f in $(GENERATED:generated/%=%); do \
	  if ! cmp -s generated/$$f build/regen/$$f; then echo "check-generated: generated/$$f differs from a fresh regeneration"; status=1; fi; \
	done; \
	for f in $$(ls generated); do [ -e build/regen/$$f ] || { echo "check-generated: generated/$$f is stale (no spec makes it)"; status=1; }; done; \
	[ $$status = 0 ] && echo "check-generated: $(words $(GENERATED)) files identical"; exit $$status

demo: bin/fusec $(MANIFESTS) runtime
	@sh tests/demo.sh
# `make` runs the demo when something it checks changed since it last passed
# (a make after no change returns in seconds); `make demo` runs it always
$(DEMO_STAMP): bin/fusec $(SPECS) $(GENERATED) bin/fuserun lib/libfuserun.so runtime/fuserun.h tests/demo.sh \
                  tests/cpu_artifacts.sh $(wildcard tests/ref/*.c tests/ref/lang/* tests/codegen/*.fuse tune/table.txt) \
                  $(wildcard $(CUDA_HOME)/bin/ptxas)
	@sh tests/demo.sh
	@mkdir -p $(@D) && touch $@

check: bin/fusec build/san/fusec build/fuzz/fuzz_backend build/san/fuzz_specs $(MANIFESTS) $(RT_TEST_BINS) runtime runtime-examples
	@FUSEC=build/san/fusec FUSEC_REL=bin/fusec FUZZER=build/fuzz/fuzz_backend MANIFEST_FUZZER=build/rt/fuzz_manifest \
	  SPEC_FUZZER=build/san/fuzz_specs \
	  LAYER_OBJS="$(call obj,rel,$(FUSEC_SRC) $(GEN_SRC))" sh tests/run.sh

# make fuzz's generated specs: FUZZ_SPECS of them from seed FUZZ_SEED, NVRTC
# and ptxas on 1 in FUZZ_SPECS_SAMPLE, FUZZ_JOBS processes (tests/fuzz_specs.c)
FUZZ_SPECS ?= 100000
FUZZ_SPECS_SAMPLE ?= 500
FUZZ_SEED ?= 1
FUZZ_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
fuzz: build/fuzz/fuzz_backend build/rt/fuzz_manifest build/rt/libfakecuda.so build/san/fuzz_specs build/san/fusec
	@mkdir -p build/corpus
	build/fuzz/fuzz_backend -entropic=0 -max_total_time=$(FUZZTIME) -max_len=4096 -timeout=10 \
	  -dict=tests/fuzz.dict build/corpus specs tests/fuzz-seeds
	sh runtime/tests/fuzz.sh $(FUZZTIME)
	build/san/fuzz_specs --seed $(FUZZ_SEED) --count $(FUZZ_SPECS) --jobs $(FUZZ_JOBS) --sample $(FUZZ_SPECS_SAMPLE) \
	  --fusec build/san/fusec

clean:
	rm -rf build bin lib

-include $(wildcard build/*/*.d build/*/*/*.d build/dep/*.d)

install: install-runtime

# On a GPU machine: validate every artifact (the per-spec drivers, then
# fuserun), run the examples, compute-sanitizer over the validations. It
# needs only a C compiler and the committed generated/: no re2c, lemon or
# NVRTC, which a GPU machine may lack (the scripts build what they run).
gpu-check: lib/libfuserun.a
	sh tests/gpu/run.sh
	sh runtime/tests/gpu.sh
	sh runtime/tests/gpu_sizes.sh

# On a machine with fusec's tools and a GPU: candidate parameters for each
# tunable kernel of the corpus's chains (or TUNE_CHAINS), validated and
# timed there, the winners merged into tune/table.txt (tune/README.md; the
# two halves run apart too: build where NVRTC is, run where the GPU is).
# fusec never measures anything itself.
tune: bin/fusec
	python3 bench/tune.py build $(TUNE_CHAINS)
	python3 bench/tune.py run
	python3 bench/tune.py table --merge $(TUNE) --tools "$$(sh bench/tune_tools.sh)" >build/tune/table.txt
	mv build/tune/table.txt $(TUNE)
