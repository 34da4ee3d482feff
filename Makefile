# clockdoctor: GNU make.  `make` builds into build/, `make test` runs every test
# (unit, unit under ASan+UBSan, the command as a user runs it, and the QEMU lab).
#
# Sources are found by wildcard: a new module is a new .c file in src/<layer>/,
# and its unit test is tests/unit/test_<module>.c, linked against every
# module except main.c.

CC      ?= cc
PREFIX  ?= /usr/local
DESTDIR ?=
LIBDIR  ?= $(PREFIX)/lib
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

.PHONY: all test unit unit-san cli lab arm64 fuzz install clean lib
all: $(B)/clockdoctor $(UNIT_BIN) lib

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

# ---- libfastclock: lib/*.c as a static and a shared library ----
# The shared objects are compiled again with -fPIC and hidden visibility:
# only the fc_ functions marked FC_API in include/fastclock.h are exported.
FC_SONAME  := libfastclock.so.0
FC_SOVER   := 0.1.0
LIB_SRC    := $(sort $(wildcard lib/*.c))
LIB_OBJ    := $(LIB_SRC:%.c=$(B)/obj/%.o)
LIB_PIC    := $(LIB_SRC:%.c=$(B)/pic/%.o)
DEPS       += $(LIB_PIC:.o=.d)
lib: $(B)/libfastclock.a $(B)/libfastclock.so $(B)/fastclock.pc $(B)/fastclock-example

$(B)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -fvisibility=hidden -MMD -MP -c -o $@ $<

$(B)/libfastclock.a: $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(B)/libfastclock.so.$(FC_SOVER): $(LIB_PIC)
	$(CC) $(LDFLAGS) -shared -Wl,-soname,$(FC_SONAME) -Wl,-z,now -o $@ $^ -lpthread

$(B)/libfastclock.so: $(B)/libfastclock.so.$(FC_SOVER)
	ln -sf libfastclock.so.$(FC_SOVER) $(B)/$(FC_SONAME)
	ln -sf $(FC_SONAME) $@

$(B)/fastclock.pc: lib/fastclock.pc.in Makefile
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@VERSION@|$(FC_SOVER)|' $< > $@

# The example is built against the installed-style header and the static
# library, as a user would.
$(B)/fastclock-example: examples/fastclock-example.c include/fastclock.h $(B)/libfastclock.a
	$(CC) -Iinclude $(CSTD) $(WARN) $(OPT) $(SANFLAGS) $(LDFLAGS) -o $@ $< $(B)/libfastclock.a -lpthread

# ---- the accelerator: libfastclock-preload.so, for LD_PRELOAD (docs/run.md) ----
# The shim and the library's PIC objects; the version script exports the
# time functions only.  It is loaded into programs built without
# sanitizers, and a sanitizer's runtime cannot be preloaded into them, so
# under SANITIZE=1 the library is compiled again without them.  The test
# programs that run under it (tests/progs) are never sanitized either.
PRELOAD_CFLAGS := $(CPPFLAGS) $(CSTD) $(WARN) $(OPT) -fPIC -fvisibility=hidden
ifeq ($(SANITIZE),1)
PRELOAD_LIB := $(LIB_SRC:%.c=$(B)/preload-pic/%.o)
$(B)/preload-pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(PRELOAD_CFLAGS) -MMD -MP -c -o $@ $<
DEPS += $(PRELOAD_LIB:.o=.d)
else
PRELOAD_LIB := $(LIB_PIC)
endif
PROGS_SRC := $(sort $(wildcard tests/progs/*.c))
PROGS_BIN := $(PROGS_SRC:tests/progs/%.c=$(B)/progs/%)
lib: $(B)/libfastclock-preload.so
cli: $(B)/libfastclock-preload.so $(PROGS_BIN) $(B)/progs/libcdspy.so
install: install-preload
.PHONY: install-preload

$(B)/preload/fastclock_preload.o: preload/fastclock_preload.c include/fastclock.h
	@mkdir -p $(dir $@)
	$(CC) $(PRELOAD_CFLAGS) -c -o $@ $<

$(B)/libfastclock-preload.so: $(B)/preload/fastclock_preload.o $(PRELOAD_LIB) preload/fastclock_preload.map
	$(CC) -shared -Wl,-z,now -Wl,-z,relro -Wl,-z,defs -Wl,--version-script=preload/fastclock_preload.map \
	    -o $@ $(B)/preload/fastclock_preload.o $(PRELOAD_LIB) -ldl -lpthread

$(B)/progs/%: tests/progs/%.c include/fastclock.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CSTD) $(WARN) -O2 -g -o $@ $< -ldl -lpthread

# A spy preloaded after the accelerator counts the calls it hands on.
$(B)/progs/libcdspy.so: tests/progs/spy/cdspy.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O2 -fPIC -shared -o $@ $< -ldl

install-preload: $(B)/libfastclock-preload.so
	install -d $(DESTDIR)$(LIBDIR)
	install -m 0755 $(B)/libfastclock-preload.so $(DESTDIR)$(LIBDIR)/libfastclock-preload.so

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

lab: build/clockdoctor build/libfastclock.a
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
	$(MAKE) --no-print-directory tsan
	$(MAKE) --no-print-directory arm64
	$(MAKE) --no-print-directory lab

# libfastclock's threads, forks and signal handlers under ThreadSanitizer
# (and the same program plain, where handlers land inside re-anchors).
.PHONY: tsan
tsan:
	sh tests/tsan/run

# ---- benchmarks (ratios printed, nothing asserted; not part of `make test`) ----
# bench: libfastclock's calls beside the kernel's clocks and the bare
# counter, with the library's cost side by side with what it competes with.
# bench-peers: the same against abseil, quanta and minstant in one process
# (bench/peers/README.md); needs cargo, crates.io and libabsl-dev.
.PHONY: bench bench-peers
BENCH_WAYS ?= library,monotonic,realtime,monotonic_coarse,counter
bench: $(B)/clockdoctor
	$(B)/clockdoctor bench -s --targets -d 4 -c $(BENCH_WAYS)

bench-peers: $(B)/libfastclock.a
	$(MAKE) --no-print-directory -C bench/peers B=$(CURDIR)/$(B) run

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
install: $(B)/clockdoctor lib
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man3 \
	           $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/share/doc/clockdoctor/examples
	install -m 0755 $(B)/clockdoctor $(DESTDIR)$(PREFIX)/bin/clockdoctor
	install -m 0644 docs/clockdoctor.1 $(DESTDIR)$(PREFIX)/share/man/man1/clockdoctor.1
	install -m 0644 docs/fastclock.3 $(DESTDIR)$(PREFIX)/share/man/man3/fastclock.3
	install -m 0644 include/fastclock.h $(DESTDIR)$(PREFIX)/include/fastclock.h
	install -m 0644 $(B)/libfastclock.a $(DESTDIR)$(LIBDIR)/libfastclock.a
	install -m 0755 $(B)/libfastclock.so.$(FC_SOVER) $(DESTDIR)$(LIBDIR)/libfastclock.so.$(FC_SOVER)
	ln -sf libfastclock.so.$(FC_SOVER) $(DESTDIR)$(LIBDIR)/$(FC_SONAME)
	ln -sf $(FC_SONAME) $(DESTDIR)$(LIBDIR)/libfastclock.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@VERSION@|$(FC_SOVER)|' lib/fastclock.pc.in \
	    > $(DESTDIR)$(LIBDIR)/pkgconfig/fastclock.pc
	install -m 0644 examples/fastclock-example.c $(DESTDIR)$(PREFIX)/share/doc/clockdoctor/examples/

clean:
	rm -rf build build-san build-fuzz
