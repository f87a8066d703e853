# perfcast — build, test, bench, fuzz.
#   make            build/perfcast
#   make test       unit, CLI and API tests (API tests start a private
#                   PostgreSQL), ends with "N passed, N failed"
#   make test-asan  the same under AddressSanitizer + UndefinedBehaviorSanitizer
#   make test-readme  the examples of the README and of docs/*.md, run and their answers compared;
#                   the README's layout table against the top-level folders
#   make test-faults  kill -9 during each job kind, PostgreSQL restarted under
#                   load, two servers with one killed mid-run (tests/faults.c)
#   make check-layout the layers, file sizes and the api/ rule (also in make test)
#   make bench      speed and accuracy figures
#   make audit      doubtful models and predictions on Extra-P's test data, warned or silent
#   make fuzz       each libFuzzer target for FUZZ_SECONDS seconds
#   make run        install what is missing, build, start PostgreSQL when
#                   DATABASE_URL is unset, serve on http://127.0.0.1:8080
CC       ?= cc
BUILD    ?= build
PKGS     := gsl jansson libmatheval libmicrohttpd libpq libcrypto
# trace readers: yajl (streaming JSON), SQLite (Nsight Systems exports), zlib (gzip)
PKGS     += yajl sqlite3 zlib
# Cube profiles and .extra-p experiments: libarchive (tar, zip), expat (anchor.xml)
PKGS     += libarchive expat
OPT      ?= -O2
SAN      ?=
CFLAGS   ?=
CFLAGS   += -std=c11 $(OPT) -g -Wall -Wextra -Werror -D_GNU_SOURCE $(SAN) \
            $(shell pkg-config --cflags $(PKGS)) -I.
LDLIBS   += $(shell pkg-config --libs $(PKGS)) -lm -lpthread
LDFLAGS  += $(SAN)

# api/ and store/ are in the library so that tests can link them; the files
# under migrations/ and api/openapi.json are compiled in from $(BUILD)/gen/.
LIB_SRC   := $(wildcard common/*.c modeling/*.c ingest/*.c simulate/*.c store/*.c api/*.c)
LIB_SRC   += $(wildcard sweep/*.c)
# per-iteration analysis: execution graph, overheads, critical path, GPU breakdown
LIB_SRC   += $(wildcard execgraph/*.c)
# the analyses over models, traces and simulations (pure: no I/O, no globals)
LIB_SRC   += $(wildcard analysis/*.c)
# the refit pipeline: stored profiles -> a new model set (load, aggregate, fit, write)
LIB_SRC   += $(wildcard pipeline/*.c)
GEN_SRC   := $(BUILD)/gen/migrations.c $(BUILD)/gen/openapi.c
MIGRATIONS := $(sort $(wildcard migrations/*.sql))
APP_SRC   := $(wildcard server/*.c)
TEST_SRC  := $(wildcard tests/test_*.c)
BENCH_SRC := $(wildcard bench/*.c)
FUZZ_SRC  := $(wildcard tests/fuzz/fuzz_*.c)

LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/obj/%.o) $(GEN_SRC:.c=.o)
APP_OBJ   := $(APP_SRC:%.c=$(BUILD)/obj/%.o)
LIB       := $(BUILD)/libperfcast.a
# tests/harness.c (private PostgreSQL + server + HTTP client) for API tests
TESTLIB   := $(BUILD)/libtesthelp.a
TESTS     := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
BENCHES   := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
FUZZERS   := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)
FUZZ_SECONDS ?= 20

.PHONY: all test test-asan test-readme test-browser test-faults bench fuzz run clean check-layout audit
all: $(BUILD)/perfcast

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/gen/migrations.c: $(MIGRATIONS) tools/embed.sh
	@mkdir -p $(dir $@)
	tools/embed.sh migrations $@ $(MIGRATIONS)

$(BUILD)/gen/openapi.c: api/openapi.json tools/embed.sh
	@mkdir -p $(dir $@)
	tools/embed.sh blob $@ api_openapi_json api/openapi.json

$(BUILD)/gen/%.o: $(BUILD)/gen/%.c
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(LIB): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/perfcast: $(APP_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(APP_OBJ) $(LIB) $(LDLIBS)

# perfcast with the test hooks compiled in (server/test_hooks.h): only tests run it
HOOKS_OBJ := $(filter-out $(BUILD)/obj/server/test_hooks.o,$(APP_OBJ)) $(BUILD)/obj/server/test_hooks_on.o
$(BUILD)/obj/server/test_hooks_on.o: server/test_hooks.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DPERFCAST_TEST_HOOKS -MMD -MP -c $< -o $@

$(BUILD)/tests/perfcast-hooks: $(HOOKS_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(HOOKS_OBJ) $(LIB) $(LDLIBS)

$(TESTLIB): $(BUILD)/obj/tests/harness.o
	rm -f $@ && ar rcs $@ $^

# every test, bench and fuzz program calls pmnf_numeric_init() before main()
NUMINIT   := $(BUILD)/obj/tests/numeric_init.o

$(BUILD)/tests/%: tests/%.c $(wildcard tests/*.h) $(TESTLIB) $(LIB) $(NUMINIT)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(NUMINIT) $(TESTLIB) $(LIB) $(LDFLAGS) $(LDLIBS)

# the previous printer and the sample values, shared by the test and the bench
$(BUILD)/tests/test_numtext $(BUILD)/bench/bench_numtext $(BUILD)/fuzz/fuzz_numtext: tests/numtext_reference.h tests/numtext_samples.h

$(BUILD)/bench/%: bench/%.c bench/gen_core.h bench/gen_kineto.h bench/gen_stepgraph.h bench/service_profile.h bench/server_mem.h bench/wrk.h tests/harness.h $(TESTLIB) $(LIB) $(NUMINIT)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(NUMINIT) $(TESTLIB) $(LIB) $(LDFLAGS) $(LDLIBS)

# the experiment of the configuration searches, shared by their test and bench_caps
$(BUILD)/tests/test_api_searches $(BUILD)/bench/bench_caps: tests/modeled_experiment.h

# the audit of Extra-P's test data, shared by its bench and its test
$(BUILD)/tests/test_audit $(BUILD)/bench/bench_audit: tests/audit.h

# the server's memory read from /proc, shared by the memory benches and test_api_memtrim
$(BUILD)/tests/test_api_memtrim: bench/server_mem.h

test: $(BUILD)/perfcast $(BUILD)/tests/perfcast-hooks $(TESTS)
	@tests/run.sh $(BUILD)

# The layout DEVELOPERS.md describes: no upward include, no folder cycle, no
# file over 1,000 lines, api/ files handlers or serving infrastructure, pure
# modules without I/O (tests/test_layout.sh runs the same in make test).
check-layout:
	@python3 tools/check_layout.py

# The shell examples of the README and of every guide in docs/, each document
# run in order against a fresh server and database (and pasted twice), their
# answers compared with the ones the document shows; the README's layout table first.
test-readme: $(BUILD)/perfcast
	@python3 tools/check_readme_layout.py
	@python3 tests/readme_test.py $(BUILD)

# Faults a deployment meets, each asserting nothing acknowledged is lost,
# nothing stuck, the server up (tests/faults.c; about 2 minutes).
# The server is the test build (server/test_hooks.h): its hooks fire only
# on what the suite names.
test-faults: $(BUILD)/tests/perfcast-hooks $(BUILD)/tests/faults
	@PERFCAST_BIN=$(BUILD)/tests/perfcast-hooks $(BUILD)/tests/faults

# tests/lsan.supp: libmatheval leaks the partial tree of a formula it cannot parse
test-asan:
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	$(MAKE) BUILD=$(BUILD)-asan OPT=-O1 SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" test

bench: $(BUILD)/perfcast $(BENCHES)
	@bench/run.sh $(BUILD)

audit: $(BUILD)/bench/bench_audit
	@$(BUILD)/bench/bench_audit tests/data/extrap-audit

# libFuzzer targets are built with clang: the library's sources compiled once
# with the fuzzer's coverage and the sanitizers (build/fuzz/obj), each target
# linked against them.
FUZZ_SAN    := -std=c11 -O1 -g -D_GNU_SOURCE -I. $(shell pkg-config --cflags $(PKGS))
FUZZ_CFLAGS := $(FUZZ_SAN) -fsanitize=fuzzer,address,undefined
FUZZ_OBJ    := $(patsubst %.c,$(BUILD)/fuzz/obj/%.o,$(LIB_SRC) tests/numeric_init.c) \
               $(patsubst $(BUILD)/gen/%.c,$(BUILD)/fuzz/obj/gen/%.o,$(GEN_SRC))
$(BUILD)/fuzz/obj/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_SAN) -fsanitize=fuzzer-no-link,address,undefined -c -o $@ $<
$(BUILD)/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_SAN) -fsanitize=fuzzer-no-link,address,undefined -MMD -MP -c -o $@ $<
-include $(FUZZ_OBJ:.o=.d)
.SECONDARY: $(FUZZ_OBJ)
$(BUILD)/fuzz/%: tests/fuzz/%.c $(FUZZ_OBJ)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_OBJ) $(LDLIBS)

fuzz: $(FUZZERS)
	@for f in $(FUZZERS); do \
	  name=$$(basename $$f); corpus=tests/fuzz/corpus/$${name#fuzz_}; mkdir -p $(BUILD)/fuzz/work-$$name; \
	  dict=tests/fuzz/$${name#fuzz_}.dict; [ -f $$dict ] && dict=-dict=$$dict || dict=; \
	  echo "fuzz: $$name for $(FUZZ_SECONDS)s"; \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	  $$f -max_total_time=$(FUZZ_SECONDS) -max_len=65536 $$dict $(BUILD)/fuzz/work-$$name $$corpus >$(BUILD)/fuzz/$$name.log 2>&1 \
	    || { tail -40 $(BUILD)/fuzz/$$name.log; exit 1; }; \
	  grep -E "^Done|stat::number_of_executed_units" $(BUILD)/fuzz/$$name.log | tail -1; \
	done

# The dashboard in a real browser (Debian's chromium driven by puppeteer-core
# from tests/browser/package.json): a private PostgreSQL and server with the
# example experiment (tests/browser/fixture.c), every page opened and
# checked against the API.
$(BUILD)/tests/browser_fixture: tests/browser/fixture.c $(wildcard tests/*.h) $(TESTLIB) $(LIB) $(NUMINIT)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(NUMINIT) $(TESTLIB) $(LIB) $(LDFLAGS) $(LDLIBS)

test-browser: $(BUILD)/perfcast $(BUILD)/tests/browser_fixture
	@tests/browser/run.sh $(BUILD)

# Not a build step: the script installs missing packages first, then calls make.
run:
	@scripts/run.sh

clean:
	rm -rf build build-asan

-include $(LIB_OBJ:.o=.d) $(APP_OBJ:.o=.d) $(BUILD)/obj/tests/harness.d $(NUMINIT:.o=.d) $(BUILD)/obj/server/test_hooks_on.d
