# clockdoctor: GNU make.  `make` builds into build/, `make test` runs every test
# (unit, unit under ASan+UBSan, the command as a user runs it, and the QEMU lab).
#
# Sources are found by wildcard: a new module is a new .c file in src/<layer>/,
# and its unit test is tests/unit/test_<module>.c, linked against every
# module except main.c.

CC      ?= cc
PREFIX  ?= /usr/local
DESTDIR ?=
PYTHON  ?= python3

WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 -Wno-format-nonliteral
CSTD    := -std=c11 -D_GNU_SOURCE
OPT     ?= -O2 -g
CPPFLAGS += -Isrc -Ilib -Iinclude
LDLIBS  += -lpthread -lm

# SANITIZE=1 builds everything, tests included, with AddressSanitizer and
# UndefinedBehaviorSanitizer into build-san/.
ifeq ($(SANITIZE),1)
  B      := build-san
  OPT    := -O1 -g -fno-omit-frame-pointer
  SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined
else
  B      := build
  SANFLAGS :=
endif

CFLAGS  += $(CSTD) $(WARN) $(OPT) $(SANFLAGS)
LDFLAGS += $(SANFLAGS)

# lib/ holds the code libfastclock will share with the command (TSC sync and
# frequency); it is linked into the command from the start.
SRC      := $(sort $(wildcard src/*.c src/*/*.c lib/*.c))
MAIN_SRC := src/main.c
MOD_SRC  := $(filter-out $(MAIN_SRC),$(SRC))
MOD_OBJ  := $(MOD_SRC:%.c=$(B)/obj/%.o)
MAIN_OBJ := $(MAIN_SRC:%.c=$(B)/obj/%.o)
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
DEPS     := $(MOD_OBJ:.o=.d) $(MAIN_OBJ:.o=.d)

.PHONY: all test unit unit-san cli lab arm64 fuzz install clean
all: $(B)/clockdoctor $(UNIT_BIN)

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(B)/libcd.a: $(MOD_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(B)/clockdoctor: $(MAIN_OBJ) $(B)/libcd.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/tests/%: tests/unit/%.c tests/unit/unit.h $(B)/libcd.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/unit $(CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libcd.a $(LDLIBS)

-include $(DEPS)

# ---- tests ----
# Each unit test program prints "N passed, M failed" and exits non-zero on a
# failure; run-unit sums them.  Each runs under a timeout, as libuv's do.
unit: $(UNIT_BIN)
	@sh tests/unit/run-unit $(B) $(UNIT_BIN)

unit-san:
	$(MAKE) --no-print-directory SANITIZE=1 unit

cli: $(B)/clockdoctor
	CLOCKDOCTOR=$(CURDIR)/$(B)/clockdoctor $(PYTHON) -m pytest -q tests/cli

lab: build/clockdoctor
	CLOCKDOCTOR=$(CURDIR)/build/clockdoctor $(PYTHON) -m pytest -q tests/lab

# The arm64 path, cross-compiled and run under qemu-user (skips loudly
# without the cross compiler; .ci/run installs it).
arm64:
	sh tests/arm64/run

test: all
	$(MAKE) --no-print-directory unit
	$(MAKE) --no-print-directory unit-san
	$(MAKE) --no-print-directory cli
	$(MAKE) --no-print-directory SANITIZE=1 cli
	$(MAKE) --no-print-directory arm64
	$(MAKE) --no-print-directory lab

# ---- fuzzing (clang's libFuzzer) ----
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=build-fuzz/%)
FUZZ_SECONDS ?= 60
build-fuzz/%: tests/fuzz/%.c $(MOD_SRC)
	@mkdir -p build-fuzz
	clang $(CSTD) $(CPPFLAGS) -g -O1 -fsanitize=fuzzer,address,undefined -o $@ $< $(MOD_SRC) $(LDLIBS)
fuzz: $(FUZZ_BIN)
	@for f in $(FUZZ_BIN); do \
	  mkdir -p build-fuzz/corpus-$$(basename $$f); \
	  echo "fuzzing $$f for $(FUZZ_SECONDS)s"; \
	  $$f -max_total_time=$(FUZZ_SECONDS) -max_len=65536 build-fuzz/corpus-$$(basename $$f) tests/fuzz/seeds || exit 1; \
	done

# ---- install ----
install: $(B)/clockdoctor
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 $(B)/clockdoctor $(DESTDIR)$(PREFIX)/bin/clockdoctor
	install -m 0644 docs/clockdoctor.1 $(DESTDIR)$(PREFIX)/share/man/man1/clockdoctor.1

clean:
	rm -rf build build-san build-fuzz
