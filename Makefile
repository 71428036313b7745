# ckbench — one build entry.
#   make            build build/ckbench
#   make test       install missing packages, build, run the tests (plain, then ASan+UBSan)
#   make bench      install missing packages, build, run `ckbench bench --resume` into results/
#   make SAN=1 ...  the same under AddressSanitizer + UBSan, in build-san/

CC      ?= cc
SAN     ?=
BUILD   ?= $(if $(SAN),build-san,build)

CFLAGS_PROJECT = -std=gnu11 -O2 -g -march=native -fopenmp -Wall -Wextra -Werror \
                 -D_GNU_SOURCE -Iinclude -Isrc -MMD -MP
# libatomic is loaded up front: a candidate's sandbox cannot open it later.
LDLIBS  = -ldnnl -ljson-c -lseccomp -lcurl -lcrypto -lmicrohttpd -lsqlite3 -lm -ldl -Wl,--no-as-needed -latomic -Wl,--as-needed
LDFLAGS = -fopenmp
ifeq ($(SAN),1)
  CFLAGS_PROJECT += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
  LDFLAGS        += -fsanitize=address,undefined
endif

LIB_SRC  := $(filter-out src/cli/main.c,$(wildcard src/*/*.c)) $(wildcard workloads/*/workload.c)
TEST_SRC := $(wildcard tests/*.c)
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/shown_data.o
SHOWN    := $(sort $(wildcard workloads/*/shown.md))
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/obj/%.o)

.PHONY: all deps test test-quick bench clean FORCE
all: $(BUILD)/ckbench $(BUILD)/ckbench-tests

# The commit `ckbench --version` reports ("unknown" outside git). The stamp
# file changes only when the commit does, so only options.o is rebuilt.
GIT_COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
$(BUILD)/git-commit: FORCE
	@mkdir -p $(dir $@)
	@echo '$(GIT_COMMIT)' | cmp -s - $@ || echo '$(GIT_COMMIT)' > $@
$(BUILD)/obj/src/cli/options.o: $(BUILD)/git-commit
$(BUILD)/obj/src/cli/options.o: CFLAGS_PROJECT += -DCKB_GIT_COMMIT='"$(GIT_COMMIT)"'

# The input sampler's arithmetic is its definition: no FMA contraction (the
# same values on every host and ISA level), sqrt as one instruction, and
# -O3 so that its fill loops vectorise (src/workloads/inputs.c).
$(BUILD)/obj/src/workloads/inputs.o: CFLAGS_PROJECT += -O3 -ffp-contract=off -fno-math-errno
# The check's fast pass compares without branches: no trap to keep in order
# (comparisons only; no value changes), so its loops vectorise.
$(BUILD)/obj/src/eval/check.o: CFLAGS_PROJECT += -fno-trapping-math

deps:
	@scripts/deps.sh

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_PROJECT) $(CFLAGS) -c $< -o $@

# What a model is shown of each workload, embedded at build time.
$(BUILD)/gen/shown_data.c: scripts/embed_shown.sh $(SHOWN)
	@mkdir -p $(dir $@)
	@echo "embed $(words $(SHOWN)) shown.md -> $@"
	@scripts/embed_shown.sh $@ $(SHOWN)

$(BUILD)/obj/gen/shown_data.o: $(BUILD)/gen/shown_data.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_PROJECT) $(CFLAGS) -c $< -o $@

$(BUILD)/ckbench: $(BUILD)/obj/src/cli/main.o $(LIB_OBJ)
	$(CC) $(LDFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/ckbench-tests: $(TEST_OBJ) $(LIB_OBJ)
	$(CC) $(LDFLAGS) $^ -o $@ $(LDLIBS)

# The test command of the README: plain build, then the sanitizer build.
test: deps
	$(MAKE) all
	CKBENCH_BIN=$(CURDIR)/build/ckbench build/ckbench-tests
	$(MAKE) SAN=1 all
	CKBENCH_BIN=$(CURDIR)/build-san/ckbench build-san/ckbench-tests --tier quick

# The main job of the README: every workload at default size, into results/.
# --resume: a second `make bench` continues a killed run or reprints a
# finished one; it never deletes results (another size or thread budget in
# results/ is refused: move it away first).
bench: deps
	$(MAKE) all
	build/ckbench bench --out results --resume

clean:
	rm -rf build build-san

-include $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(BUILD)/obj/src/cli/main.d
