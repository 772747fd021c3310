# floe build.  Modules are the folders under src/; every .c there goes into
# libfloe.a except src/cmd, which makes the floe binary.  Tests are found by
# name: tests/unit/test_*.c (one binary each), tests/integration/test_*
# (executables), tests/fuzz/fuzz_*.c (libFuzzer targets).

CC      ?= cc
BUILD   ?= build
OPT     ?= -O2
SAN     ?=
CFLAGS_ALL = -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -g $(OPT) $(SAN) \
             -Isrc -Itests -MMD -MP $(CFLAGS)
# Each library is linked once some source uses it (libcurl finds its TLS
# library itself at run time).
LIBS    = -lrdkafka -lzstd -lsnappy -llz4 -lz -ljansson -lcurl -lcrypto -lmicrohttpd -lpthread -lm
LDFLAGS_ALL = $(SAN) $(LDFLAGS)

LIB_SRC   := $(sort $(filter-out src/cmd/%,$(wildcard src/*/*.c)))
CMD_SRC   := $(sort $(wildcard src/cmd/*.c))
TEST_SRC  := $(sort $(wildcard tests/unit/test_*.c))
TEST_HELP := $(sort $(filter-out tests/unit/test_%,$(wildcard tests/unit/*.c)))
BENCH_SRC := $(sort $(wildcard bench/*/*.c))
FUZZ_SRC  := $(sort $(wildcard tests/fuzz/fuzz_*.c))

LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/%.o)
CMD_OBJ   := $(CMD_SRC:%.c=$(BUILD)/%.o)
HELP_OBJ  := $(TEST_HELP:%.c=$(BUILD)/%.o)
TEST_BIN  := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

ASAN_SAN  := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
NPROC     := $(shell nproc 2>/dev/null || echo 2)

.PHONY: layers all test asan check valgrind fuzz fuzz-smoke bench clean gen gen-check format format-check \
        config-check
# keep object files of tests and benchmarks (make would delete them as intermediates)
.SECONDARY:
all: $(BUILD)/libfloe.a $(BUILD)/floe $(TEST_BIN) $(BENCH_BIN)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/libfloe.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

# libyaml: floe sink's configuration only (src/cmd/sink_config.c)
$(BUILD)/floe: $(CMD_OBJ) $(BUILD)/libfloe.a
	$(CC) $(LDFLAGS_ALL) -o $@ $(CMD_OBJ) $(BUILD)/libfloe.a $(LIBS) -lyaml

$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(HELP_OBJ) $(BUILD)/libfloe.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $< $(HELP_OBJ) $(BUILD)/libfloe.a $(LIBS)

# (benchmarks that run `floe serve` or the S3 server start them through the
# tests' harness; those that write tables by hand use ice_files)
BENCH_HELP := $(BUILD)/tests/unit/floe_proc.o $(BUILD)/tests/unit/s3_server.o \
              $(BUILD)/tests/unit/ice_files.o
$(BUILD)/bench/%: $(BUILD)/bench/%.o $(BENCH_HELP) $(BUILD)/libfloe.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $< $(BENCH_HELP) $(BUILD)/libfloe.a $(LIBS)

# The whole suite: unit tests, then integration tests against this build.
test: all
	tests/run $(BUILD)

# The same suite under AddressSanitizer + UndefinedBehaviorSanitizer
# (LeakSanitizer included), in its own build folder.
asan:
	$(MAKE) -j$(NPROC) BUILD=build-asan OPT=-O1 SAN="$(ASAN_SAN)" all
	tests/run build-asan

# What CI runs (README.md's test command): the quick guards first (C format,
# generated sources current), then both builds, every fuzz target for
# CHECK_FUZZ_SECONDS each, and the whole suite against both builds, whose
# closing line is the last line.
CHECK_FUZZ_SECONDS ?= 5
check: format-check gen-check
	$(MAKE) -j$(NPROC) all
	$(MAKE) -j$(NPROC) BUILD=build-asan OPT=-O1 SAN="$(ASAN_SAN)" all
	python3 tools/layers.py $(BUILD) table --check
	$(MAKE) -j$(NPROC) fuzz-smoke FUZZ_SECONDS=$(CHECK_FUZZ_SECONDS)
	tests/run $(BUILD) build-asan

# The files of src/table from the top layer down, with what each includes
# and calls; `make check` fails on an include or call cycle among them.
layers: all
	python3 tools/layers.py $(BUILD) table

# Unit tests under valgrind's leak checker.
valgrind: all
	FLOE_TEST_WRAPPER="valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99" \
	  FLOE_TEST_ONLY=unit tests/run $(BUILD)

# libFuzzer targets, built with clang in their own folder.
FUZZ_BUILD := build-fuzz
FUZZ_SAN   := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
FUZZ_BIN   := $(FUZZ_SRC:tests/fuzz/%.c=$(FUZZ_BUILD)/%)
fuzz:
	$(MAKE) BUILD=$(FUZZ_BUILD) CC=clang OPT=-O1 SAN="$(FUZZ_SAN)" $(FUZZ_BUILD)/libfloe.a
	$(MAKE) CC=clang $(FUZZ_BIN)
$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_BUILD)/libfloe.a
	clang -std=c11 -D_GNU_SOURCE -g -O1 -Isrc -MMD -MP -fsanitize=fuzzer,address,undefined \
	  -o $@ $< $(FUZZ_BUILD)/libfloe.a $(LIBS)
# a target also depends on the headers (and .c files) it includes
-include $(wildcard $(FUZZ_BUILD)/fuzz_*.d)

FUZZ_SECONDS ?= 60
fuzz-smoke: fuzz
	tests/fuzz/smoke $(FUZZ_BUILD) $(FUZZ_SECONDS)

bench: all
	@for b in $(BENCH_BIN); do echo "== $$b"; $$b || exit 1; done

clean:
	rm -rf build build-asan build-fuzz

# ---- generated sources --------------------------------------------------
# Generated files are committed (the Redis way) and no rule builds them, so a
# build never runs a generator, whatever the timestamps of a fresh clone say
# (git does not keep them).  `make gen` regenerates every one on purpose after
# its inputs changed; `make gen-check` regenerates them into a temporary folder
# and fails when a file in the tree differs (`make check` runs it).
#
# A generator is a name in GEN and two variables:
#   GEN_<name>_FILES  the files it writes, relative to the root
#   GEN_<name>_RUN    a command that reads its inputs from the tree and writes
#                     those files under the folder $(1) ("." is the tree)
# and, when it runs something that is built first, GEN_<name>_NEEDS (targets).
GEN :=

# Kafka codecs: src/kafka/messages.def -> typed structs and field tables.
GEN += kafka
GEN_kafka_FILES = src/kafka/proto_gen.h src/kafka/proto_gen.c
GEN_kafka_RUN   = python3 tools/kafka_gen.py src/kafka/messages.def \
                    $(1)/src/kafka/proto_gen.h $(1)/src/kafka/proto_gen.c

# README.md's configuration reference: `floe config --markdown`, made from
# the config key tables, between its <!-- config:begin/end --> lines.
GEN += config
GEN_config_FILES = README.md
GEN_config_RUN   = tools/readme_config.sh README.md $(BUILD)/floe $(1)/README.md
GEN_config_NEEDS = $(BUILD)/floe

GEN_FILES = $(foreach g,$(GEN),$(GEN_$(g)_FILES))
GEN_NEEDS = $(foreach g,$(GEN),$(GEN_$(g)_NEEDS))

gen: $(GEN_NEEDS)
	@$(foreach g,$(GEN),echo "gen: $(g) -> $(GEN_$(g)_FILES)"; ( $(call GEN_$(g)_RUN,.) ) || exit 1;)

gen-check: $(GEN_NEEDS)
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	for f in $(GEN_FILES); do mkdir -p "$$tmp/$$(dirname "$$f")"; done && \
	$(foreach g,$(GEN),( $(call GEN_$(g)_RUN,"$$tmp") ) || exit 1;) \
	stale=; \
	for f in $(GEN_FILES); do \
	  cmp -s "$$f" "$$tmp/$$f" || { diff -u "$$f" "$$tmp/$$f" | head -n 20; stale="$$stale $$f"; }; \
	done; \
	if [ -n "$$stale" ]; then \
	  echo "gen-check: stale generated files:$$stale (not what their inputs give: run make gen and commit the result)" >&2; \
	  exit 1; \
	fi; \
	echo "gen-check: $(words $(GEN_FILES)) generated files match their inputs"

# The configuration reference alone (gen-check covers it with the rest).
config-check: $(GEN_config_NEEDS)
	tools/readme_config.sh --check README.md $(BUILD)/floe

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# One C style for the tree (.clang-format; clang-format 14 from Debian).
# Generated sources keep their generator's layout.
FORMAT_SRC = $(filter-out $(GEN_FILES),$(shell git ls-files '*.c' '*.h' 2>/dev/null))
format:
	clang-format -i $(FORMAT_SRC)
format-check:
	@test -n "$(FORMAT_SRC)" || { echo "format-check: no C sources listed (needs a git checkout)" >&2; exit 1; }
	@clang-format --dry-run --Werror $(FORMAT_SRC) && echo "format-check: every file follows .clang-format"
