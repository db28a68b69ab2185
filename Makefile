# triage: a schema compiler and the runtime it generates for.
#
#   make          generate and build everything (build/triage-demo, build/triage-bench,
#                 build/libtriage.a)
#   make gen      only generate build/gen/ from schema/issue.schema (SCHEMA=FILE: another)
#   make demo     run the demo (installs missing Debian packages first)
#   make test     every test, then the same unit tests under ASan and UBSan
#   make bench    the benchmarks, their page and plots, into build/bench
#   make bench-publish  that run becomes the tracked page bench/RESULTS.md
#   make install  PREFIX=DIR [DESTDIR=D]: the library, its headers, triage.pc and the
#                 programs (mk/install.mk, docs/library.md); make test-install tries it
#   make scale-demo  proxies behind HAProxy under load (mk/scale.mk); make test-scale checks it
#   make clean
#
# Generated code lives in $(BUILD)/gen and is never committed. Objects go to
# $(BUILD) (build/ by default; build/san for the sanitizer build).

SHELL := /bin/bash
# `make` alone builds everything, whichever rule comes first below (the
# included makefiles' rules, demo.mk's say, come before all's)
.DEFAULT_GOAL := all
CC ?= gcc
BUILD ?= build
GEN := $(BUILD)/gen
SCHEMA ?= schema/issue.schema
PYTHON := scripts/python.sh

OPT ?= -O2
SANFLAGS ?=
# Debug information: full in the plain build; the clang builds (sanitizers,
# fuzzing, other schemas) take line tables only, which is what their reports
# print (file:line), for a fifth less compile time.
DEBUG ?= -g
# -MMD -MP: each object's .d beside it lists the headers it included, so an
# object is rebuilt when one of them changes, and only then.
CFLAGS := -std=c11 $(OPT) $(DEBUG) -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
          -D_GNU_SOURCE -MMD -MP $(SANFLAGS) $(EXTRA_CFLAGS)
# Each layer compiles with the include paths of what it uses, and no more:
# the runtime sees itself; the generated code the runtime and itself; the
# filter layer (filter/) both and itself; the demo the filter layer and
# itself; the bench the filter layer and itself.
RUNTIME_INC := -Iruntime
GEN_INC := $(RUNTIME_INC) -I$(GEN)
FILTER_INC := $(GEN_INC) -Ifilter
DEMO_INC := $(FILTER_INC) -Idemo
BENCH_INC := $(FILTER_INC) -Ibench -Idemo
LDFLAGS := $(SANFLAGS)
LDLIBS := -lm -lpthread -ldeflate $(shell pkg-config --libs libnghttp2 2>/dev/null || echo -lnghttp2)
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt -lm -pthread)

# Quiet by default: a line per file built ("  CC  build/obj/runtime/json.o");
# make V=1 shows the commands.
V ?= 0
ifeq ($(V),1)
Q :=
say = @:
else
Q := @
say = @printf '  %-4s %s\n' $(1) $(2)
endif

# The optic scanners: one .re per optic, listed by the generator. Made
# first when missing or older than the schema, for every goal but those
# that read no generated file; a schema with errors stops make there, once.
NO_GEN_GOALS := clean deps uninstall
GEN_NEEDED := $(if $(MAKECMDGOALS),$(filter-out $(NO_GEN_GOALS),$(MAKECMDGOALS)),all)
ifneq ($(GEN_NEEDED),)
include $(GEN)/optics.mk
endif
# Whether the schema declares the demo's model (scripts/demo_model.py: the
# same types as tests/support/demo/issue.schema, and its optics among
# others). The suites, bench rows, harnesses and example written for the
# demo's names and messages are built and run only then; any schema builds
# and runs the rest (RUNTIME_TESTS, MODEL_TESTS, the model's harnesses).
DEMO_REF := tests/support/demo/issue.schema
ifneq ($(GEN_NEEDED),)
-include $(GEN)/demo.mk
endif
$(GEN)/demo.mk: $(SCHEMA) $(DEMO_REF) scripts/demo_model.py gen/trgen/schema.py | deps
	@mkdir -p $(@D)
	$(Q)$(PYTHON) scripts/demo_model.py $(SCHEMA) $(DEMO_REF) > $@.tmp && mv $@.tmp $@
# The recipe of a target written for the demo, with another schema.
demo_skip = @echo "$@: left out: $(SCHEMA) does not declare the demo's model (scripts/demo_model.py)"
SCAN_NAMES := $(OPTICS:%=tr_scan_%)
GEN_NAMES := tr_model tr_encode tr_decode tr_validate tr_random tr_optics_model tr_levels \
             $(GEN_EXTRA) $(SCAN_NAMES)
GEN_C := $(GEN_NAMES:%=$(GEN)/%.c)
GEN_STAMP := $(GEN)/.stamp

RUNTIME_SRC := $(sort $(wildcard runtime/*.c))
FILTER_SRC := $(sort $(wildcard filter/*.c))
DEMO_SRC := $(sort $(wildcard demo/*.c))
# The suites of the runtime alone (no generated header, no demo name), and
# the generic suites (MODEL_TESTS, below): with a schema other than the
# demo's, these are the unit suites.
RUNTIME_TESTS := test_frames test_h2proxy test_json test_net test_ringbuf test_skip test_tally
MODEL_TEST_NAMES := test_model test_level test_rules_model
TEST_SRC := $(if $(DEMO_MODEL),$(sort $(wildcard tests/unit/test_*.c)),$(patsubst %,tests/unit/%.c,\
              $(RUNTIME_TESTS) $(MODEL_TEST_NAMES)))
# The benchmark of the peers times the demo's messages (bench/peers*.c):
# with another schema, triage-bench has the others (bench/triage.c leaves out
# its rows written for the demo's names: -DTRIAGE_DEMO_MODEL, BENCH_DEFS).
BENCH_SRC := $(if $(DEMO_MODEL),$(sort $(wildcard bench/*.c)),$(filter-out bench/peers%,$(sort \
               $(wildcard bench/*.c))))

# The runtime includes no generated header, so the builds of other schemas
# (test-models) link the runtime objects of the build with the same flags
# (RT_BUILD) instead of compiling their own.
RT_BUILD ?= $(BUILD)
RUNTIME_OBJ := $(RUNTIME_SRC:runtime/%.c=$(RT_BUILD)/obj/runtime/%.o)
GEN_OBJ := $(GEN_NAMES:%=$(BUILD)/obj/gen/%.o)
# The runtime and the generated code (what libtriage.a holds), and the
# filter layer over them with the default rules built in: what every
# program links.
MODEL_OBJ := $(RUNTIME_OBJ) $(GEN_OBJ)
FILTER_OBJ := $(FILTER_SRC:filter/%.c=$(BUILD)/obj/filter/%.o) $(BUILD)/obj/gen/tr_default_rules.o \
              $(BUILD)/obj/gen/tr_default_compiled.o
SHARED_OBJ := $(MODEL_OBJ) $(FILTER_OBJ)
DEMO_OBJ := $(DEMO_SRC:demo/%.c=$(BUILD)/obj/demo/%.o)
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%) $(BUILD)/tests/test_rules_model_c
BENCH_OBJ := $(BENCH_SRC:bench/%.c=$(BUILD)/obj/bench/%.o)

# The bench's peers (bench/peers*.c: the libraries a user would pick
# instead), each built in when its Debian package is there (scripts/deps.sh
# --bench installs them); a case a build lacks is left out of the figures.
# simdjson is C++: compiled with the C++ compiler matching $(CC), and then
# the link goes through it too.
BENCH_CXX ?= $(if $(findstring clang,$(CC)),clang++,g++)
BENCH_DEFS := $(if $(DEMO_MODEL),-DTRIAGE_DEMO_MODEL)
BENCH_LIBS :=
BENCH_CXX_OBJ :=
BENCH_LD := $(CC)
ifneq ($(and $(DEMO_MODEL),$(shell pkg-config --exists simdjson && command -v $(BENCH_CXX) && echo yes)),)
BENCH_DEFS += -DTRIAGE_HAVE_SIMDJSON
BENCH_CXX_OBJ := $(BUILD)/obj/bench/peers_simdjson.o
BENCH_LIBS += $(shell pkg-config --libs simdjson)
BENCH_LD := $(BENCH_CXX)
endif
ifneq ($(shell pkg-config --exists libcjson && echo yes),)
BENCH_DEFS += -DTRIAGE_HAVE_CJSON
BENCH_LIBS += $(shell pkg-config --libs libcjson)
endif

# No built-in rules: every file is made by a rule written here.
MAKEFLAGS += --no-builtin-rules
.SUFFIXES:

.PHONY: all gen deps demo test test-unit test-gen test-san bench bench-publish bench-quick clean
.DELETE_ON_ERROR:
.SECONDARY:

all: deps $(BUILD)/triage-demo $(BUILD)/triage-bench

deps:
	@scripts/deps.sh

gen: $(GEN_STAMP)

# One generator run writes every file. Each generated file depends on what
# it is written from: the schema, the generator's Python, base.j2 and
# dispatch.j2, and its own template. So after one template is touched, make
# (and make -n) rebuilds only what that template's files feed. The first
# out-of-date file runs the generator; the others see it ran after their
# prerequisites changed ($(GEN)/.ran); each is then touched. The generator
# writes nothing on a schema error. $(GEN_STAMP): every file is up to date.
GEN_COMMON := $(SCHEMA) $(wildcard gen/trgen/*.py) gen/templates/base.j2 gen/templates/dispatch.j2
GEN_FILES := optics.mk tr_model.h tr_model.c tr_encode.c tr_decode.c tr_validate.c tr_random.c \
             tr_optics.h tr_optics_thunks.h tr_optics_model.c $(GEN_EXTRA:%=%.c) \
             tr_levels.re $(SCAN_NAMES:%=%.re)
$(GEN)/tr_model.h: gen/templates/model.h.j2
$(GEN)/tr_model.c: gen/templates/model.c.j2
$(GEN)/tr_encode.c: gen/templates/encode.c.j2
$(GEN)/tr_decode.c $(GEN)/tr_validate.c: gen/templates/decode.c.j2
$(GEN)/tr_random.c: gen/templates/random.c.j2
$(GEN)/tr_optics.h: gen/templates/optics.h.j2
$(GEN)/tr_optics_thunks.h: gen/templates/optics_thunks.h.j2
$(GEN)/tr_optics_model.c: gen/templates/optics_model.c.j2
$(GEN)/tr_optics_table.c: gen/templates/optics_table.c.j2
$(GEN)/tr_levels.re: gen/templates/levels.re.j2 gen/templates/matchers.j2
$(GEN)/tr_scan_%.re: gen/templates/scan.re.j2 gen/templates/matchers.j2 $(GEN_COMMON) | deps
	$(run_generator)
$(filter-out $(GEN)/tr_scan_%.re,$(GEN_FILES:%=$(GEN)/%)): $(GEN_COMMON) | deps
	$(run_generator)
define run_generator
	@mkdir -p $(GEN)
	@if [ ! -e $(GEN)/.ran ] || [ -n "$$(find $? -newer $(GEN)/.ran 2>/dev/null)" ]; then \
	  $(if $(Q),printf '  %-4s %s\n' GEN $(GEN);) \
	  PYTHONPATH=gen $(PYTHON) -m trgen $(SCHEMA) $(GEN) && touch $(GEN)/.ran; fi
	@touch $@
endef

$(GEN_STAMP): $(GEN_FILES:%=$(GEN)/%)
	@touch $@

# The rules the demo judges with when given none, built into it.
DEFAULT_RULES ?= schema/default.rules
$(GEN)/tr_default_rules.c: $(DEFAULT_RULES) scripts/embed.py | $(GEN_STAMP)
	$(call say,GEN,$@)
	$(Q)$(PYTHON) scripts/embed.py tr_default_rules $(DEFAULT_RULES) $@

# The same rules written as C (rules.h: ru_emit_c) by triage-rulesc, a
# program of the runtime and the generated code: the filter runs them so
# when it is given no rules, or rules of the same text.
$(GEN)/tr_default_compiled.c: $(DEFAULT_RULES) $(BUILD)/triage-rulesc
	$(call say,GEN,$@)
	$(Q)$(BUILD)/triage-rulesc $(DEFAULT_RULES) tr_default_compiled $@

$(BUILD)/obj/tools/%.o: tools/%.c | $(GEN_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(GEN_INC) -c $< -o $@

$(BUILD)/triage-rulesc: $(BUILD)/obj/tools/rulesc.o $(MODEL_OBJ)
	$(call say,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(LDLIBS)

# The first line of each .re template records this command.
RE2C_FLAGS := -W -Werror --no-generation-date --no-version -i
$(SCAN_NAMES:%=$(GEN)/%.c) $(GEN)/tr_levels.c: $(GEN)/%.c: $(GEN)/%.re
	$(call say,RE2C,$@)
	$(Q)re2c $(RE2C_FLAGS) $< -o $@

# Objects wait for the generator (order only: the generated headers must
# exist); what they depend on is in their .d files.
$(RT_BUILD)/obj/runtime/%.o: runtime/%.c | $(GEN_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(RUNTIME_INC) -c $< -o $@

$(BUILD)/obj/gen/%.o: $(GEN)/%.c | $(GEN_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(GEN_INC) -c $< -o $@

$(BUILD)/obj/filter/%.o: filter/%.c | $(GEN_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(FILTER_INC) -c $< -o $@

$(BUILD)/obj/demo/%.o: demo/%.c | $(GEN_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(DEMO_INC) -c $< -o $@

$(BUILD)/triage-demo: $(DEMO_OBJ) $(SHARED_OBJ)
	$(call say,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/obj/bench/%.o: bench/%.c | $(GEN_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(BENCH_DEFS) $(BENCH_INC) -c $< -o $@

$(BUILD)/obj/bench/%.o: bench/%.cpp | deps
	@mkdir -p $(@D)
	$(call say,CXX,$@)
	$(Q)$(BENCH_CXX) -std=c++17 $(OPT) $(DEBUG) -Wall -Wextra -Werror -MMD -MP $(SANFLAGS) $(BENCH_DEFS) \
	  -Ibench $(shell pkg-config --cflags simdjson) -c $< -o $@

# (demo/out.c: stdout's failures reported as the demo's commands report them)
$(BUILD)/triage-bench: $(BENCH_OBJ) $(BENCH_CXX_OBJ) $(SHARED_OBJ) $(BUILD)/obj/demo/out.o
	$(call say,LINK,$@)
	$(Q)$(BENCH_LD) $(LDFLAGS) $^ -o $@ $(BENCH_LIBS) $(LDLIBS)

# ---- the unit suites (tests/unit, Check). What they share is written once
# in tests/support (for any schema: the runner, guard pages, buffers, ...) and
# tests/support/demo (for the demo's schema and filter/ code); each file there
# is compiled once per build and linked into every suite.
SUPPORT_SRC := $(sort $(wildcard tests/support/*.c))
SUPPORT_DEMO_SRC := $(sort $(wildcard tests/support/demo/*.c))
SUPPORT_OBJ := $(SUPPORT_SRC:tests/%.c=$(RT_BUILD)/obj/tests/%.o)
SUPPORT_DEMO_OBJ := $(SUPPORT_DEMO_SRC:tests/%.c=$(BUILD)/obj/tests/%.o)
TEST_CFLAGS := -Itests

$(BUILD)/obj/tests/support/demo/%.o: tests/support/demo/%.c | $(GEN_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(FILTER_INC) $(TEST_CFLAGS) -c $< -o $@

# The support for any schema sees no generated header: compiled once, in
# RT_BUILD, for the builds of every schema (test-models), like the runtime.
$(RT_BUILD)/obj/tests/support/%.o: tests/support/%.c
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(RUNTIME_INC) $(TEST_CFLAGS) -c $< -o $@

# Archives, so a suite links only the members it uses: the support for any
# schema, and the demo's (with the fuzz harnesses, which the suites that
# replay inputs through them call: tests/fuzz, below).
SUPPORT_LIB := $(RT_BUILD)/tests/libsupport.a
SUPPORT_DEMO_LIB := $(BUILD)/tests/libsupport_demo.a
SUPPORT_DEMO_LINK := $(if $(DEMO_MODEL),$(SUPPORT_DEMO_LIB))
$(SUPPORT_LIB): $(SUPPORT_OBJ)
$(SUPPORT_DEMO_LIB): $(SUPPORT_DEMO_OBJ)
$(SUPPORT_LIB) $(SUPPORT_DEMO_LIB):
	@mkdir -p $(@D)
	$(call say,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(BUILD)/tests/%: tests/unit/%.c $(SUPPORT_DEMO_LINK) $(SUPPORT_LIB) $(SHARED_OBJ)
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(FILTER_INC) $(TEST_CFLAGS) $< $(SUPPORT_DEMO_LINK) $(SUPPORT_LIB) \
	  $(SHARED_OBJ) -o $@ $(LDFLAGS) $(CHECK_LIBS) $(LDLIBS)

# test_rules_compiled: the rules files of tests/rules, and one too large to
# be written out (past RU_EMIT_NODES), each written as C by triage-rulesc
# (tr_rules_<name>), and a list of them (path, compiled) to judge by.
TEST_RULES := $(sort $(wildcard tests/rules/*.rules)) $(GEN)/rules/large.rules \
              $(GEN)/rules/wide.rules $(GEN)/rules/wider.rules
TEST_RULES_OBJ := $(foreach f,$(TEST_RULES),$(BUILD)/obj/gen/rules/$(notdir $(f:.rules=.o))) \
                  $(BUILD)/obj/gen/rules/list.o
$(GEN)/rules/large.rules:
	@mkdir -p $(@D)
	$(Q)seq 1 1400 | sed 's/.*/keep votes.count == & \&\& kind == Request/' > $@
# 64 rules led by kind (the index at its widest: a bit for each), and 65
# (past the index: tried in turn)
RULES_WIDE = awk 'BEGIN { split("Bug Incident Request", k, " "); \
  for (i = 0; i < $(1); i++) { \
    if (i % 4 == 3) print "drop kind == " k[i % 3 + 1] " && (tier == Minor || module == Ui)"; \
    else print "keep kind in [" k[i % 3 + 1] ", " k[(i + 1) % 3 + 1] "] && " \
      (i % 2 ? "votes.count >= " (200 - 3 * i) : "severity != Sev" (i % 4 + 1)) } }'
$(GEN)/rules/wide.rules:
	@mkdir -p $(@D)
	$(Q)$(call RULES_WIDE,64) > $@
$(GEN)/rules/wider.rules:
	@mkdir -p $(@D)
	$(Q)$(call RULES_WIDE,65) > $@
$(GEN)/rules/wide.c $(GEN)/rules/wider.c: $(GEN)/rules/%.c: $(GEN)/rules/%.rules $(BUILD)/triage-rulesc
	$(call say,GEN,$@)
	$(Q)$(BUILD)/triage-rulesc $< tr_rules_$* $@
$(GEN)/rules/%.c: tests/rules/%.rules $(BUILD)/triage-rulesc
	@mkdir -p $(@D)
	$(call say,GEN,$@)
	$(Q)$(BUILD)/triage-rulesc $< tr_rules_$* $@
$(GEN)/rules/large.c: $(GEN)/rules/large.rules $(BUILD)/triage-rulesc
	$(call say,GEN,$@)
	$(Q)$(BUILD)/triage-rulesc $< tr_rules_large $@
$(GEN)/rules/list.c: Makefile | $(GEN_STAMP)
	@mkdir -p $(@D)
	$(call say,GEN,$@)
	$(Q){ echo '/* list.c: the rules test_rules_compiled judges by (Makefile: TEST_RULES). */'; \
	  echo '#include "rules.h"'; \
	  $(foreach f,$(TEST_RULES),echo 'extern const ru_compiled tr_rules_$(notdir $(f:.rules=));';) \
	  echo 'const struct { const char *path; const ru_compiled *c; } tr_rules_list[] = {'; \
	  $(foreach f,$(TEST_RULES),echo '    {"$(f)", &tr_rules_$(notdir $(f:.rules=))},';) \
	  echo '};'; echo 'const int tr_rules_count = $(words $(TEST_RULES));'; } > $@

$(BUILD)/tests/test_rules_compiled: tests/unit/test_rules_compiled.c $(TEST_RULES_OBJ) \
  $(SUPPORT_DEMO_LIB) $(SUPPORT_LIB) $(SHARED_OBJ)
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(FILTER_INC) $(TEST_CFLAGS) $< $(TEST_RULES_OBJ) $(SUPPORT_DEMO_LIB) \
	  $(SUPPORT_LIB) $(SHARED_OBJ) -o $@ $(LDFLAGS) $(CHECK_LIBS) $(LDLIBS)

# The suites that hold for any schema see and link the runtime, the
# generated code and tests/support alone, so they build for schemas the
# demo cannot run on. They reach the schema through its tables (tr_schema)
# and include no generated header, so each is compiled once, in RT_BUILD,
# and linked with the generated code of each schema.
MODEL_TESTS := $(MODEL_TEST_NAMES:%=$(BUILD)/tests/%) $(BUILD)/tests/test_rules_model_c
$(RT_BUILD)/obj/tests/unit/%.o: tests/unit/%.c
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(RUNTIME_INC) $(TEST_CFLAGS) -c $< -o $@

# test_rules_model_c: test_rules_model's first RULESETS rule sets, written
# out by it (--write-rules), then as C by triage-rulesc, against the
# interpreter (the suite built with RM_COMPILED).
RULESETS := 40
RULESET_OBJ := $(BUILD)/obj/gen/rulesets/all.o
# (no debug information for it: a third of its compile time, and a failure
# names the set, whose C is in $(GEN)/rulesets)
$(RULESET_OBJ): CFLAGS += -g0
$(RT_BUILD)/obj/tests/unit/test_rules_model_c.o: tests/unit/test_rules_model.c
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(RUNTIME_INC) $(TEST_CFLAGS) -DRM_COMPILED -c $< -o $@
$(BUILD)/tests/test_rules_model_c: $(RULESET_OBJ)
$(GEN)/rulesets/.written: $(BUILD)/tests/test_rules_model
	@rm -rf $(@D) && mkdir -p $(@D)
	$(call say,GEN,$(@D))
	$(Q)ASAN_OPTIONS=detect_leaks=0 $< --write-rules $(@D) $(RULESETS) && touch $@
# every set's C in one file (ru_emit_c prefixes each set's names with its
# own), then the list of them: one compile
$(GEN)/rulesets/all.c: $(GEN)/rulesets/.written $(BUILD)/triage-rulesc
	$(call say,GEN,$@)
	$(Q)set -e; d=$(@D); for i in $$(seq 0 $$(($(RULESETS) - 1))); do \
	  $(BUILD)/triage-rulesc $$d/set_$$i.rules tr_ruleset_$$i $$d/set_$$i.c; done; \
	{ for i in $$(seq 0 $$(($(RULESETS) - 1))); do cat $$d/set_$$i.c; done; \
	  echo 'const ru_compiled *const tr_rulesets[] = {'; \
	  for i in $$(seq 0 $$(($(RULESETS) - 1))); do echo "    &tr_ruleset_$$i,"; done; \
	  echo '};'; echo 'const int tr_nrulesets = $(RULESETS);'; } > $@.tmp && mv $@.tmp $@

$(MODEL_TESTS): $(BUILD)/tests/%: $(RT_BUILD)/obj/tests/unit/%.o $(SUPPORT_LIB) $(MODEL_OBJ)
	@mkdir -p $(@D)
	$(call say,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $(filter %.o %.a,$^) -o $@ $(CHECK_LIBS) $(LDLIBS)

demo: all
	$(BUILD)/triage-demo run 200000

test-gen: deps
	PYTHONPATH=gen $(PYTHON) -m unittest discover -s gen/tests -q
	tests/schema/run.sh

# Each run's time limit (seconds): where the suites do not fork
# (CK_FORK=no), Check's per-test limits do not apply, and a hang would
# otherwise hold make test.
UNIT_TIMEOUT ?= 1200

# test-unit runs every suite, and the end-to-end scripts, each as a target
# of its own (unit-<name>), so that make -j2 runs two at a time. A run's
# output goes to $(BUILD)/tests/logs/<name>.log and is printed in one piece
# when it ends, headed by the run, its time (elapsed, and CPU: user and
# system, its children's too), and FAILED when it failed. The slowest are
# listed first, so that they start first.
UNIT_FIRST := test_optics_corruptions test_decode e2e test_optics_messages test_optics_prefixes \
              test_oracle test_optics_threats test_jsonvalid
UNIT_NAMES := $(TEST_BIN:$(BUILD)/tests/%=%) $(if $(DEMO_MODEL),e2e e2e_reliability)
UNIT_RUNS := $(addprefix unit-,$(foreach n,$(UNIT_FIRST),$(filter $(n),$(UNIT_NAMES))) \
             $(filter-out $(UNIT_FIRST),$(UNIT_NAMES)))
.PHONY: $(UNIT_RUNS)

test-unit: test-unit-build $(UNIT_RUNS)
	@echo "test-unit: $(words $(UNIT_RUNS)) runs passed"

$(filter-out unit-e2e%,$(UNIT_RUNS)): unit-%: $(BUILD)/tests/%
	@$(call unit_run,$<)
unit-e2e: $(BUILD)/triage-demo
	@$(call unit_run,tests/e2e/run.sh $(BUILD)/triage-demo)
unit-e2e_reliability: $(BUILD)/triage-demo
	@$(call unit_run,tests/e2e/reliability.sh $(BUILD)/triage-demo)

define unit_run
mkdir -p $(BUILD)/tests/logs; log=$(BUILD)/tests/logs/$(@:unit-%=%).log; TIMEFORMAT='%R %U %S'; \
if { time timeout -k 10 $(UNIT_TIMEOUT) $(1) >$$log 2>&1; } 2>$$log.time; then bad=; \
else rc=$$?; bad=": FAILED (exit $$rc$$([ $$rc = 124 ] && echo ", $(UNIT_TIMEOUT) s ran out"))"; fi; \
took=$$(awk '{ printf "%.1f s, %.1f s CPU", $$1, $$2 + $$3 }' $$log.time); \
out=$$(printf '== %s (%s)%s\n' "$(1)" "$$took" "$$bad"; cat $$log); printf '%s\n' "$$out"; [ -z "$$bad" ]
endef

# The sanitizer build: clang, ASan and UBSan, in build/san (test-san,
# test-grpc). $(san_make) TARGET makes TARGET there; a recipe line using it
# starts with +, for make sees a sub-make only in a literal $(MAKE) and would
# otherwise run it without the jobserver (-j1).
SAN_BUILD := build/san
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
san_make = $(MAKE) --no-print-directory BUILD=$(SAN_BUILD) OPT=-O1 DEBUG=-gline-tables-only CC=clang \
  SANFLAGS="$(SAN_FLAGS)"

# test-san runs the suites' exhaustive loops (every byte, every prefix, every
# seed) at one position in SAN_STRIDE (TR_TEST_STRIDE; tests/support/suite.h's
# su_pick): the sanitizers look for memory errors and undefined behaviour on
# the same code paths, and test-unit checks every position. make test-san
# SAN_STRIDE=1 checks every position under the sanitizers too. The suites
# run their tests in one process each (CK_FORK=no): forked, every test's
# child ran LeakSanitizer over the heap it inherited as it exited, which
# took a quarter of test-san's CPU time; in one process the leak check runs
# once, at the end, over what every test left. (test-unit forks: a test
# there runs alone, under its own time limit.)
SAN_STRIDE ?= 4
test-san:
	+TR_TEST_STRIDE=$(SAN_STRIDE) CK_FORK=no $(san_make) test-unit

# Every benchmark, into build/bench: latest.json, the page RESULTS.md and the
# plots (installs the bench's Debian packages first: scripts/deps.sh --bench).
# make bench-publish then makes that run the tracked page: bench/RESULTS.md
# and bench/results/ (nothing else writes them).
bench:
	MAKE="$(MAKE)" BUILD="$(BUILD)" scripts/bench.sh

bench-publish:
	scripts/bench.sh --publish

# The same in quick mode, into build/bench-quick: make test runs it so the
# benchmarks and the page cannot rot.
bench-quick:
	MAKE="$(MAKE)" BUILD="$(BUILD)" scripts/bench.sh --quick

# make test: the Debian packages first (so that no two parts install at
# once), then test-build builds what the parts run (make -j, so both cores
# compile) while test-gen, which needs none of it, runs beside it; then the
# parts run TEST_JOBS at a time, each into its log under build/test-logs
# (scripts/test_parts.sh), the longest first, and test-grpc, which mostly
# waits on its peers, beside them without taking a place. One line as each
# part ends (its time and CPU time), a failed part's log, and the last line
# "make test: N passed, M failed" (with the whole run's time and CPU time).
# Every part runs even after one fails; the exit status is non-zero when
# any failed. A part made alone builds what it needs.
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
TEST_PARTS := early:test-gen test-models-a test-models-b test-san test-unit light:test-grpc \
              fuzz-smoke bench-quick test-install test-scale
test:
	@scripts/deps.sh --bench || scripts/deps.sh
	@scripts/test_parts.sh "$(MAKE)" $(TEST_JOBS) build/test-logs test-build $(TEST_PARTS)

# test-unit-build: what test-unit runs (the suites and triage-demo; the
# sanitizer build makes no triage-bench, which nothing runs there).
# test-build: the four builds, side by side under one make -j (each sub-make
# takes its jobs from the same pool), the other schemas' after the fuzz
# build, whose objects they link.
.PHONY: test-build test-unit-build test-build-plain test-build-san
test-unit-build: deps $(BUILD)/triage-demo $(TEST_BIN)

test-build: test-build-plain test-build-san fuzz-build models-build models-whole
test-build-plain: all test-unit-build $(BUILD)/tests/rawclient
test-build-san: deps
	+$(san_make) test-unit-build $(SAN_BUILD)/tests/rawclient

include mk/grpc.mk
include mk/scale.mk
include mk/install.mk
# make builds the library too, so a program linked against build/libtriage.a
# after a plain make gets what the programs got
all: $(LIB_A)

# ---- any schema: every tests/models/*.schema generated, built once (with
# clang, ASan, UBSan and the fuzzers' coverage, as the fuzz build), and put
# through what holds for any schema: the generic suites (tests/unit/
# test_model.c, test_rules_model.c) and the fuzz harnesses of
# tests/fuzz/fuzz_model.c. Everything under build/models/<name>, but the
# runtime's objects, which are the fuzz build's (RT_BUILD=build/fuzz),
# compiled once. One schema: make model-check SCHEMA=F BUILD=D (the runtime
# then compiled in D too).
MODELS := $(sort $(wildcard tests/models/*.schema))
MODEL_NAMES := $(MODELS:tests/models/%.schema=%)
.PHONY: test-models models-build model-check model-build model-fuzz-bins \
  $(MODEL_NAMES:%=model-build-%)

model_make = $(MAKE) --no-print-directory SCHEMA=tests/models/$(1).schema BUILD=build/models/$(1) \
	  RT_BUILD=$(FUZZ_DIR)

# Every schema checked, one after another (their logs would interleave),
# after every schema is built: made alone on a fresh tree, each check would
# otherwise compile the runtime into the fuzz build at MODEL_OPT, where a
# later fuzz-build finds it up to date (its harnesses then ran at a third
# of their speed).
# In two halves, so that make test runs them side by side (test-models-a:
# the first half of the schemas, test-models-b the others); each half also
# runs, for its schemas, the proxy over GRPC_MODEL and the installs of
# INSTALL_MODELS (a schema's build is used by one part only). test-models is
# both.
MODEL_HALF := $(shell echo $$(( ($(words $(MODEL_NAMES)) + 1) / 2 )))
MODEL_NAMES_a := $(wordlist 1,$(MODEL_HALF),$(MODEL_NAMES))
MODEL_NAMES_b := $(filter-out $(MODEL_NAMES_a),$(MODEL_NAMES))
models_check = set -e; for n in $(1); do echo "== schema tests/models/$$n.schema"; \
	  $(call model_make,$$n) model-check; \
	  echo "== schema tests/models/$$n.schema: its programs (tests/models/demo.sh)"; \
	  tests/models/demo.sh build/models/$$n/whole/triage-demo; done
models_grpc = echo "== schema $(GRPC_MODEL): the proxy between real gRPC peers (tests/grpc/run.sh)"; \
	TR_GRPC_OPTICS="$$(sed -n 's/^OPTICS := //p' build/models/$(GRPC_MODEL)/whole/gen/optics.mk)" \
	  tests/grpc/run.sh build/models/$(GRPC_MODEL)/whole/triage-demo $(BUILD)/tests/rawclient
models_install = set -e; for n in $(1); do \
	  echo "== schema tests/models/$$n.schema: installed, the example over it (tests/install/run.sh)"; \
	  tests/install/run.sh "$(MAKE) SCHEMA=tests/models/$$n.schema RT_BUILD=$(MODEL_WHOLE_RT) \
	    OPT=-O0 DEBUG=" build/models/$$n/whole tests/models/$$n.schema other; done
.PHONY: test-models-a test-models-b
test-models: test-models-a test-models-b
test-models-a test-models-b: test-models-%: models-build models-whole $(BUILD)/tests/rawclient
	@$(call models_check,$(MODEL_NAMES_$*))
	@$(if $(filter $(GRPC_MODEL),$(MODEL_NAMES_$*)),$(models_grpc),true)
	@$(call models_install,$(filter $(INSTALL_MODELS),$(MODEL_NAMES_$*)))

# Every schema also built whole, as a user who made it schema/issue.schema
# would (triage-demo and triage-bench, with gcc, unoptimised: any schema
# builds and runs), into build/models/<name>/whole; test-models then runs
# its commands (tests/models/demo.sh). One after another: they share the
# runtime's objects (compiled once, in MODEL_WHOLE_RT).
MODEL_WHOLE_RT := build/models/runtime
# and one of them between real gRPC peers, as test-grpc runs a schema other
# than the demo's (judging by has(O) for an optic that splits its pool)
GRPC_MODEL := orders
# and installed (test-install's checks, the example built for that schema):
# one with optics, one with none
INSTALL_MODELS := orders minimal
.PHONY: models-whole
models-whole: deps
	+@set -e; for n in $(MODEL_NAMES); do $(MAKE) --no-print-directory \
	  SCHEMA=tests/models/$$n.schema BUILD=build/models/$$n/whole RT_BUILD=$(MODEL_WHOLE_RT) \
	  OPT=-O0 DEBUG= all; done

# Every schema built, side by side (make -j), after the fuzz build: they link
# its runtime, tests/support and generic suites' objects (fuzz-bins makes
# them, so no two builds make them at once).
models-build: $(MODEL_NAMES:%=model-build-%)
$(MODEL_NAMES:%=model-build-%): model-build-%: fuzz-build
	+$(call model_make,$*) model-build

# model-build and model-check make themselves again with the fuzz build's
# flags (MODEL_ONLY=1), then build the suites and the harnesses there. The
# generated code of each schema is compiled at MODEL_OPT: unoptimised, it
# compiles in a fifth of the time and runs its smoke tests a little slower
# (make test-models: 94 -> 65 s CPU to build, 75 -> 82 s to run). There
# the runtime's objects are the fuzz build's (-O1); a model-check of one
# schema alone compiles them at MODEL_OPT too.
MODEL_OPT ?= -O0
ifeq ($(MODEL_ONLY),)
model-build model-check:
	$(MAKE) --no-print-directory OPT=$(MODEL_OPT) DEBUG=-gline-tables-only CC=$(FUZZ_CC) \
	  SANFLAGS="$(FUZZ_SAN)" \
	  MODEL_ONLY=1 FUZZ_DIR=$(BUILD) $@
else
model-build: $(MODEL_TESTS) model-fuzz-bins

# The optics' harnesses as one, scan_every, MODEL_SCAN_SMOKE_RUNS times:
# test_model has just checked every optic's scanner against its getter, on
# values and messages.
fuzz-smoke-scan_every: FUZZ_SMOKE_RUNS = $(MODEL_SCAN_SMOKE_RUNS)

model-check: model-build
	@set -e; for t in $(MODEL_TESTS); do $$t; done
	rm -rf $(FUZZ_DIR)/seeds
	ASAN_OPTIONS=detect_leaks=0 $(FUZZ_DIR)/bin/seeds $(FUZZ_DIR)/seeds
	$(MAKE) -k --no-print-directory $(MODEL_SMOKE:%=fuzz-smoke-%)
endif

# ---- fuzzing (tests/fuzz): one libFuzzer binary per build, bin/fuzz,
# holds every harness; each runs as bin/fuzz_<harness>, a link to it (the
# driver picks the harness by the name it runs under). The harness files
# (tests/fuzz/fuzz.h lists them) are each compiled once, with clang, into
# build/fuzz/obj/fuzz, beside the objects of everything else (built from
# the same sources, through the rules above). Seeds are generated at fuzz
# time into build/fuzz/seeds (`triage-demo gen` split by
# tests/fuzz/corpus.c, plus its handmade docs/security.md cases) and never
# committed; what the fuzzers find grows build/fuzz/corpus/<harness>,
# crashes land in build/fuzz/artifacts.
#   make fuzz [FUZZ_SECONDS=N]   each harness for N seconds (default 60);
#                                make -jK fuzz runs K at a time
#   make fuzz-smoke              each for FUZZ_SMOKE_RUNS runs (make test),
#                                the optics' together (scan_every);
#                                test-models runs the other schemas'
#                                scan_every MODEL_SCAN_SMOKE_RUNS times
#   FUZZ_FLAGS="..."             more libFuzzer flags for make fuzz, e.g.
#                                "-fork=2 -ignore_crashes=1" to go on past a finding
FUZZ_CC ?= clang
FUZZ_DIR ?= build/fuzz
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_RUNS ?= 3000
MODEL_SCAN_SMOKE_RUNS ?= 1000
FUZZ_MAX_LEN ?= 16384
FUZZ_SAN := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all \
            -fno-omit-frame-pointer
MODEL_FUZZ := model $(OPTICS:%=scan_%)
FUZZ_NAMES := split decode validate json policy rules differential gzip $(MODEL_FUZZ)
# The smoke runs (make test) try every optic's scanner through one harness,
# scan_every, on the seeds of them all: each optic sees as many inputs as
# with a run of its own harness, and one process starts instead of one an
# optic (each start, under ASan and libFuzzer, cost more than the runs).
MODEL_SMOKE := model scan_every
SMOKE_NAMES := $(filter-out $(MODEL_FUZZ),$(FUZZ_NAMES)) $(MODEL_SMOKE)
# bin/fuzz_NAME for each harness make fuzz or make fuzz-smoke runs (the
# other schemas': MODEL_LINKS)
FUZZ_LINKS := $(sort $(FUZZ_NAMES) $(SMOKE_NAMES))
MODEL_LINKS := $(sort $(MODEL_FUZZ) $(MODEL_SMOKE))
FUZZ_CONFORMANCE := $(wildcard ../shared/conformance/JSONTestSuite/test_parsing)
# The seed set each harness starts from (besides tests/regression): its own
# folder, or the messages', and scan_every every optic's.
seed_dir = $(FUZZ_DIR)/seeds/$(if $(filter split policy rules model scan_%,$1),$1,message)
fuzz_seeds = $(if $(filter scan_every,$1),$(OPTICS:%=$(FUZZ_DIR)/seeds/scan_%),$(call \
  seed_dir,$1))$(if $(filter json,$1), $(FUZZ_CONFORMANCE))
FUZZ_ARGS = -max_len=$(FUZZ_MAX_LEN) -artifact_prefix=$(FUZZ_DIR)/artifacts/$*- \
  -dict=tests/fuzz/message.dict -print_final_stats=1

.PHONY: fuzz fuzz-smoke fuzz-build fuzz-bins fuzz-bins-model fuzz-big


# Inside the clang sub-make (BUILD=build/fuzz); also what the builds of the
# other schemas link from it (tests/support, the generic suites' objects).
fuzz-bins: $(BUILD)/bin/mkcorpus $(BUILD)/bin/seeds $(FUZZ_LINKS:%=$(BUILD)/bin/fuzz_%) \
  $(SUPPORT_LIB) $(MODEL_TESTS:$(BUILD)/tests/%=$(RT_BUILD)/obj/tests/unit/%.o)

# The same for a schema the demo does not run on (MODEL_ONLY=1): the model
# and scan_<optic> harnesses alone, linked with the runtime and the
# generated code only. fuzz-bins-model: what fuzz-build makes so when the
# schema itself is not the demo's (fuzz-smoke runs those harnesses alone).
model-fuzz-bins: $(BUILD)/bin/seeds $(MODEL_LINKS:%=$(BUILD)/bin/fuzz_%)
fuzz-bins-model: model-fuzz-bins $(SUPPORT_LIB) \
  $(MODEL_TESTS:$(BUILD)/tests/%=$(RT_BUILD)/obj/tests/unit/%.o)
FUZZ_INC = $(if $(MODEL_ONLY),$(GEN_INC),$(FILTER_INC))
FUZZ_DEFS = $(if $(MODEL_ONLY),-DFZ_MODEL_ONLY)

# The harnesses' objects: fuzz_model.o holds for any schema, the others
# need the demo's. The unit suites link them too (libsupport_demo.a):
# tests/unit/test_regression replays tests/regression through the demo's
# table, and test_rules uses the rules harness's schema.
FUZZ_MODEL_OBJ := $(BUILD)/obj/fuzz/fuzz_model.o
FUZZ_DEMO_OBJ := $(FUZZ_MODEL_OBJ) $(patsubst %,$(BUILD)/obj/fuzz/%.o,harness fuzz_wire \
                 fuzz_decode fuzz_judge fuzz_rules)
$(SUPPORT_DEMO_LIB): $(FUZZ_DEMO_OBJ)
FUZZ_OBJ = $(BUILD)/obj/fuzz/fuzz.o \
           $(if $(MODEL_ONLY),$(FUZZ_MODEL_OBJ) $(MODEL_OBJ),$(FUZZ_DEMO_OBJ) $(SHARED_OBJ))

$(BUILD)/obj/fuzz/%.o: tests/fuzz/%.c | $(GEN_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(FUZZ_INC) $(FUZZ_DEFS) -c $< -o $@

$(BUILD)/bin/fuzz: $(FUZZ_OBJ)
	@mkdir -p $(@D)
	$(call say,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -fsanitize=fuzzer $(FUZZ_OBJ) -o $@ $(LDLIBS)

# Named one by one, not by a pattern, which would also match the
# bin/fuzz_*.d files an older build directory may hold.
$(FUZZ_LINKS:%=$(BUILD)/bin/fuzz_%): $(BUILD)/bin/fuzz
	$(Q)ln -sf fuzz $@

$(BUILD)/bin/seeds: tests/fuzz/seeds.c $(MODEL_OBJ)
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(GEN_INC) $< $(MODEL_OBJ) -o $@ $(LDFLAGS) $(LDLIBS)

$(BUILD)/bin/mkcorpus: tests/fuzz/corpus.c $(MODEL_OBJ)
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(GEN_INC) $(TEST_CFLAGS) $< $(MODEL_OBJ) -o $@ $(LDFLAGS) $(LDLIBS)

# The seeds are cut from what the gcc build's triage-demo generates; the
# rules harness starts from the default rules and tests/fuzz/rules-seeds
# (rules over its synthetic schema, tests/fuzz/rules.h).
fuzz-build: deps $(BUILD)/triage-demo
	$(MAKE) BUILD=$(FUZZ_DIR) OPT=-O1 DEBUG=-gline-tables-only CC=$(FUZZ_CC) SANFLAGS="$(FUZZ_SAN)" \
	  $(if $(DEMO_MODEL),fuzz-bins,MODEL_ONLY=1 fuzz-bins-model)
	rm -rf $(FUZZ_DIR)/seeds
	ASAN_OPTIONS=detect_leaks=0 $(FUZZ_DIR)/bin/seeds $(FUZZ_DIR)/seeds
	mkdir -p $(FUZZ_DIR)/seeds/rules && cp schema/default.rules tests/fuzz/rules-seeds/*.rules \
	  $(FUZZ_DIR)/seeds/rules/
	if [ -n "$(DEMO_MODEL)" ]; then { $(BUILD)/triage-demo gen --count 48 --size 3 && \
	  $(BUILD)/triage-demo gen --count 16 --size 7 --seed 2 --layout first; } | \
	  ASAN_OPTIONS=detect_leaks=0 $(FUZZ_DIR)/bin/mkcorpus $(FUZZ_DIR)/seeds; fi

fuzz: fuzz-build
	$(MAKE) -k --no-print-directory \
	  $(patsubst %,fuzz-run-%,$(if $(DEMO_MODEL),$(FUZZ_NAMES),$(MODEL_FUZZ)))

# Big inputs: 1 MiB messages, and an input slower than 5 s is a finding
# (make fuzz-big [FUZZ_BIG_SECONDS=N]).
FUZZ_BIG_SECONDS ?= 300
# (the decode and validate harnesses are the demo's)
ifneq ($(DEMO_MODEL),)
fuzz-big: fuzz-build
	rm -rf $(FUZZ_DIR)/seeds-big
	$(BUILD)/triage-demo gen --count 6 --size 1000 --seed 5 | \
	  ASAN_OPTIONS=detect_leaks=0 $(FUZZ_DIR)/bin/mkcorpus $(FUZZ_DIR)/seeds-big
	$(MAKE) -k --no-print-directory FUZZ_MAX_LEN=1048576 FUZZ_SECONDS=$(FUZZ_BIG_SECONDS) \
	  FUZZ_FLAGS="-timeout=5 -rss_limit_mb=4096 -len_control=0 $(FUZZ_DIR)/seeds-big/message $(FUZZ_FLAGS)" \
	  fuzz-run-decode fuzz-run-validate
else
fuzz-big:
	$(demo_skip)
endif

fuzz-smoke: fuzz-build
	$(MAKE) -k --no-print-directory \
	  $(patsubst %,fuzz-smoke-%,$(if $(DEMO_MODEL),$(SMOKE_NAMES),$(MODEL_SMOKE)))

fuzz-run-%:
	@mkdir -p $(FUZZ_DIR)/corpus/$* $(FUZZ_DIR)/artifacts $(FUZZ_DIR)/logs
	@log=$(FUZZ_DIR)/logs/$*.log; \
	$(FUZZ_DIR)/bin/fuzz_$* -max_total_time=$(FUZZ_SECONDS) $(FUZZ_ARGS) $(FUZZ_FLAGS) \
	  $(FUZZ_DIR)/corpus/$* $(call fuzz_seeds,$*) tests/regression >$$log 2>&1; rc=$$?; \
	cov=$$(grep -Eo 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+(/[0-9a-zA-Z]+)?' $$log | tail -1); \
	runs=$$(sed -n 's/^stat::number_of_executed_units: *//p' $$log); \
	eps=$$(sed -n 's/^stat::average_exec_per_sec: *//p' $$log); \
	if [ -z "$$runs" ]; then \
	  runs=$$(grep -Eo '^#[0-9]+' $$log | tail -1 | tr -d '#'); \
	  eps=$$(grep -Eo 'exec/s:? [0-9]+' $$log | tail -1 | grep -Eo '[0-9]+'); fi; \
	crashes=$$(ls $(FUZZ_DIR)/artifacts 2>/dev/null | grep -c '^$*-'); \
	echo "fuzz $*: $$runs runs in $(FUZZ_SECONDS) s ($$eps/s), $$cov, $$crashes artifacts (log: $$log)"; \
	if [ $$rc -ne 0 ]; then grep -E 'property failed|ERROR|SUMMARY|Test unit written' $$log; exit 1; fi

# A smoke run is a few thousand inputs: libFuzzer's entropic schedule (which
# seeds to mutate more, worth it over hours) cost a third of its CPU time.
FUZZ_SMOKE_FLAGS ?= -entropic=0
# A smoke run stops after FUZZ_SMOKE_RUNS runs or FUZZ_SMOKE_SECONDS, whichever
# comes first (libFuzzer's -max_total_time is not heeded while it runs the
# seeds, and a schema of hundreds of optics makes each scan_every input a
# second's work): stopped by the time, it passes if libFuzzer says it was
# interrupted, with no finding before.
FUZZ_SMOKE_SECONDS ?= 120
fuzz-smoke-%:
	@rm -rf $(FUZZ_DIR)/smoke/$* && mkdir -p $(FUZZ_DIR)/smoke/$* $(FUZZ_DIR)/artifacts
	@echo "== fuzz-smoke $* ($(FUZZ_SMOKE_RUNS) runs, $(FUZZ_SMOKE_SECONDS) s at most)"
	@rc=0; timeout -s INT $(FUZZ_SMOKE_SECONDS) $(FUZZ_DIR)/bin/fuzz_$* -runs=$(FUZZ_SMOKE_RUNS) \
	  -seed=1 $(FUZZ_SMOKE_FLAGS) $(FUZZ_ARGS) $(FUZZ_DIR)/smoke/$* $(call fuzz_seeds,$*) \
	  tests/regression >$(FUZZ_DIR)/smoke/$*.log 2>&1 || rc=$$?; \
	if [ $$rc -eq 124 ] && grep -q 'libFuzzer: run interrupted' $(FUZZ_DIR)/smoke/$*.log; then \
	  echo "   stopped after $(FUZZ_SMOKE_SECONDS) s: $$(grep -o '^#[0-9]*' $(FUZZ_DIR)/smoke/$*.log | tail -1 | tr -d '#') runs"; \
	elif [ $$rc -ne 0 ]; then tail -60 $(FUZZ_DIR)/smoke/$*.log; exit 1; fi

clean:
	rm -rf build

# What each object and program was built from, as the compiler listed it.
# The compiler writes them; no rule does (else make would look for one, even
# through make's built-in rules, and run it under make -n).
RT_DIRS := $(sort $(BUILD) $(RT_BUILD))
DEP_FILES := $(wildcard $(BUILD)/obj/*/*.d $(BUILD)/tests/*.d $(BUILD)/bin/*.d \
  $(BUILD)/obj/tests/support/demo/*.d \
  $(foreach d,$(RT_DIRS),$(d)/obj/runtime/*.d $(d)/obj/tests/support/*.d $(d)/obj/tests/unit/*.d))
-include $(DEP_FILES)
%.d: ;

# An object or suite that has no .d beside it (made before the build wrote
# them, or its .d lost) has no record of the headers it read: it is made
# again, once, and has one from then on.
STALE := $(filter-out $(DEP_FILES:.d=.o) $(DEP_FILES:.d=), \
  $(wildcard $(BUILD)/obj/*/*.o $(BUILD)/obj/tests/support/demo/*.o $(BUILD)/tests/test_* \
    $(foreach d,$(RT_DIRS),$(d)/obj/runtime/*.o $(d)/obj/tests/support/*.o \
      $(d)/obj/tests/unit/*.o)))
# (the suites linked from objects, MODEL_TESTS, have their record in their
# objects' .d)
STALE := $(filter-out %.d %.a %.log %.time $(MODEL_TESTS),$(STALE))
$(STALE): FORCE
.PHONY: FORCE
FORCE:
