# triage: a schema compiler and the runtime it generates for.
#
#   make          generate and build everything (build/triage-demo, build/triage-bench)
#   make gen      only generate build/gen/ from schema/issue.schema
#   make demo     run the demo (installs missing Debian packages first)
#   make test     every test, then the same unit tests under ASan and UBSan
#   make bench    the benchmarks
#   make clean
#
# Generated code lives in build/gen and is never committed. Objects go to
# $(BUILD) (build/ by default; build/san for the sanitizer build).

SHELL := /bin/bash
CC ?= gcc
BUILD ?= build
GEN := build/gen
SCHEMA := schema/issue.schema
PYTHON := scripts/python.sh

OPT ?= -O2
SANFLAGS ?=
CFLAGS := -std=c11 $(OPT) -g -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
          -D_GNU_SOURCE -Iruntime -I$(GEN) -Idemo $(SANFLAGS) $(EXTRA_CFLAGS)
LDFLAGS := $(SANFLAGS)
LDLIBS := -lm -lpthread
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt -lm -pthread)

# The optic scanners: one .re per optic, listed by the generator.
-include $(GEN)/optics.mk
SCAN_NAMES := $(OPTICS:%=tr_scan_%)
GEN_NAMES := tr_model tr_encode tr_decode tr_validate tr_random tr_optics_model $(SCAN_NAMES)
GEN_C := $(GEN_NAMES:%=$(GEN)/%.c)
GEN_H := $(GEN)/tr_model.h
GEN_STAMP := $(GEN)/.stamp
GENERATOR := $(wildcard gen/trgen/*.py gen/templates/*.j2)

RUNTIME_SRC := $(sort $(wildcard runtime/*.c))
DEMO_LIB_SRC := demo/issues.c
DEMO_SRC := $(filter-out $(DEMO_LIB_SRC),$(sort $(wildcard demo/*.c)))
TEST_SRC := $(sort $(wildcard tests/unit/test_*.c))
BENCH_SRC := $(sort $(wildcard bench/*.c))

RUNTIME_OBJ := $(RUNTIME_SRC:runtime/%.c=$(BUILD)/obj/runtime/%.o)
GEN_OBJ := $(GEN_NAMES:%=$(BUILD)/obj/gen/%.o)
DEMO_LIB_OBJ := $(DEMO_LIB_SRC:demo/%.c=$(BUILD)/obj/demo/%.o)
DEMO_OBJ := $(DEMO_SRC:demo/%.c=$(BUILD)/obj/demo/%.o)
LIB_OBJ := $(RUNTIME_OBJ) $(GEN_OBJ) $(DEMO_LIB_OBJ)
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
BENCH_OBJ := $(BENCH_SRC:bench/%.c=$(BUILD)/obj/bench/%.o)

.PHONY: all gen deps demo test test-unit test-gen test-san bench clean
.DELETE_ON_ERROR:
.SECONDARY:

all: deps $(BUILD)/triage-demo $(BUILD)/triage-bench

deps:
	@scripts/deps.sh

gen: $(GEN_STAMP)

# One generator run writes every file; the stamp stands for all of them. The
# generator rewrites only the files whose text changed, and writes nothing on
# a schema error.
$(GEN_STAMP): $(SCHEMA) $(GENERATOR)
	@mkdir -p $(GEN)
	PYTHONPATH=gen $(PYTHON) -m trgen $(SCHEMA) $(GEN)
	@touch $@

# A recipe, even an empty one, lets make notice optics.mk changed and re-read it.
$(GEN)/optics.mk $(GEN_H) $(filter-out $(SCAN_NAMES:%=$(GEN)/%.c),$(GEN_C)): $(GEN_STAMP)
	@:

# The first line of each .re template records this command.
RE2C_FLAGS := -W -Werror --no-generation-date --no-version -i
$(GEN)/tr_scan_%.c: $(GEN_STAMP)
	re2c $(RE2C_FLAGS) $(GEN)/tr_scan_$*.re -o $@

$(BUILD)/obj/runtime/%.o: runtime/%.c $(wildcard runtime/*.h) | $(GEN_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/gen/%.o: $(GEN)/%.c $(GEN_STAMP) $(wildcard runtime/*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/demo/%.o: demo/%.c $(wildcard demo/*.h runtime/*.h) $(GEN_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/triage-demo: $(DEMO_OBJ) $(LIB_OBJ)
	$(CC) $(LDFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/obj/bench/%.o: bench/%.c $(wildcard bench/*.h demo/*.h runtime/*.h) $(GEN_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Ibench -c $< -o $@

# Demo objects other than the command line itself (readers, issues) serve the bench too.
$(BUILD)/triage-bench: $(BENCH_OBJ) $(filter-out $(BUILD)/obj/demo/main.o,$(DEMO_OBJ)) $(LIB_OBJ)
	$(CC) $(LDFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(LIB_OBJ) $(wildcard tests/unit/*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests/unit $< $(LIB_OBJ) -o $@ $(LDFLAGS) $(CHECK_LIBS) $(LDLIBS)

demo: all
	$(BUILD)/triage-demo gen --count 20000 --size 7 | $(BUILD)/triage-demo judge --reader decode --summary

test-gen: deps
	PYTHONPATH=gen $(PYTHON) -m unittest discover -s gen/tests -q
	tests/schema/run.sh

test-unit: all $(TEST_BIN)
	@set -e; for t in $(TEST_BIN); do echo "== $$t"; $$t; done
	tests/e2e/run.sh $(BUILD)/triage-demo

test-san:
	$(MAKE) BUILD=build/san OPT=-O1 CC=clang \
	  SANFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	  test-unit

bench: all
	$(BUILD)/triage-bench

test: test-gen test-unit test-san

clean:
	rm -rf build
