# SPDX-License-Identifier: MIT
# clockdoctor: GNU make.  `make` builds into build/, `make test` runs every test
# (unit, unit under ASan+UBSan, the command as a user runs it, and the QEMU lab).
#
# Sources are found by wildcard: a new module is a new .c file in src/<layer>/,
# and its unit test is tests/unit/test_<module>.c, linked against every
# module except main.c and against the harness, tests/unit/unit.c.

CC      ?= cc
PYTHON  ?= python3

# The one version of the command, the library, the man pages and the
# packages: compiled in (-DCD_VERSION), substituted into fastclock.pc, the
# man pages and the RPM spec; debian/changelog is checked against it
# (tests/pkg/test_package.py).  `make -s version` prints it.
VERSION := 0.1.0

# Install paths, one definition each (the GNU names).  The build compiles in
# the ones the command needs (where `run` finds the accelerator), so give the
# same values to `make` and to `make install`; the man pages and the systemd
# units are written with them.  DESTDIR only prefixes what is installed.
PREFIX         ?= /usr/local
DESTDIR        ?=
BINDIR         ?= $(PREFIX)/bin
LIBDIR         ?= $(PREFIX)/lib
INCLUDEDIR     ?= $(PREFIX)/include
DATADIR        ?= $(PREFIX)/share
MANDIR         ?= $(DATADIR)/man
DOCDIR         ?= $(DATADIR)/doc/clockdoctor
EXAMPLESDIR    ?= $(DOCDIR)/examples
PKGCONFIGDIR   ?= $(LIBDIR)/pkgconfig
# the accelerator, for LD_PRELOAD: a plugin, not a library to link with
PRELOADDIR     ?= $(LIBDIR)
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
# Prometheus alerting rules, for an operator's rule_files:
PROMRULESDIR   ?= $(DATADIR)/clockdoctor/prometheus
# shell completion, where bash-completion and zsh look (Debian's zsh:
# $(DATADIR)/zsh/vendor-completions)
BASHCOMPDIR    ?= $(DATADIR)/bash-completion/completions
ZSHCOMPDIR     ?= $(DATADIR)/zsh/site-functions
# the Grafana dashboard of those metrics, to import
GRAFANADIR     ?= $(DATADIR)/clockdoctor/grafana
# The folder node_exporter's textfile collector reads, where the units
# (clockdoctor-check, clockdoctor-watch) write: upstream node_exporter reads
# none until given --collector.textfile.directory, and this is the folder
# its documentation and most installs use; Debian's prometheus-node-exporter
# reads /var/lib/prometheus/node-exporter (debian/rules sets that).  `check`
# says at each run whether node_exporter reads the folder it wrote into.
TEXTFILEDIR    ?= /var/lib/node_exporter/textfile_collector

WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 -Wno-format-nonliteral
CSTD    := -std=c11 -D_GNU_SOURCE
OPT     ?= -O2 -g
CPPFLAGS += -Isrc -Ilib -Iinclude -DCD_VERSION='"$(VERSION)"'
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

# The caller's own flags (a distribution's hardening: dpkg-buildflags,
# rpm's %set_build_flags), before the sanitizers join them: the accelerator,
# never sanitized, takes these.
USER_CFLAGS  := $(CFLAGS)
USER_LDFLAGS := $(LDFLAGS)
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

.PHONY: all test unit unit-san cli lab arm64 fuzz install clean lib package-test
all: $(B)/clockdoctor $(UNIT_BIN) lib

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(B)/libcd.a: $(MOD_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(B)/clockdoctor: $(MAIN_OBJ) $(B)/libcd.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Each unit test program links the harness and the helpers the programs
# share (tests/unit/unit.c), compiled once, sanitized as the rest.
UNIT_OBJ := $(B)/obj/tests/unit/unit.o
DEPS     += $(UNIT_OBJ:.o=.d)
$(B)/tests/%: tests/unit/%.c tests/unit/unit.h $(UNIT_OBJ) $(B)/libcd.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/unit $(CFLAGS) $(LDFLAGS) -o $@ $< $(UNIT_OBJ) $(B)/libcd.a $(LDLIBS)

# ---- libfastclock: lib/*.c as a static and a shared library ----
# The shared objects are compiled again with -fPIC and hidden visibility:
# only the fc_ functions marked FC_API in include/fastclock.h are exported.
# The soname's number is the ABI's (bumped on an incompatible change); the
# file's full name carries the release.
FC_SONAME  := libfastclock.so.0
FC_SOVER   := $(VERSION)
LIB_SRC    := $(sort $(wildcard lib/*.c))
LIB_OBJ    := $(LIB_SRC:%.c=$(B)/obj/%.o)
LIB_PIC    := $(LIB_SRC:%.c=$(B)/pic/%.o)
DEPS       += $(LIB_PIC:.o=.d)
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

$(B)/fastclock.pc: lib/fastclock.pc.in $(B)/gen/version $(B)/gen/paths
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@VERSION@|$(VERSION)|' $< > $@

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
PRELOAD_CFLAGS := $(CPPFLAGS) $(USER_CFLAGS) $(CSTD) $(WARN) $(OPT) -fPIC -fvisibility=hidden
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
# libfastclock in every form, and the accelerator
lib: $(B)/libfastclock.a $(B)/libfastclock.so $(B)/fastclock.pc $(B)/fastclock-example \
     $(B)/libfastclock-preload.so

$(B)/preload/fastclock_preload.o: preload/fastclock_preload.c include/fastclock.h lib/fastclock_serve.h
	@mkdir -p $(dir $@)
	$(CC) $(PRELOAD_CFLAGS) -c -o $@ $<

$(B)/libfastclock-preload.so: $(B)/preload/fastclock_preload.o $(PRELOAD_LIB) preload/fastclock_preload.map
	$(CC) $(USER_LDFLAGS) -shared -Wl,-z,now -Wl,-z,relro -Wl,-z,defs -Wl,--version-script=preload/fastclock_preload.map \
	    -o $@ $(B)/preload/fastclock_preload.o $(PRELOAD_LIB) -ldl -lpthread

$(B)/progs/%: tests/progs/%.c tests/progs/ways.h tests/progs/system_service.h tests/progs/altstack.h include/fastclock.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CSTD) $(WARN) -O2 -g -o $@ $< -ldl -lpthread

# A spy preloaded after the accelerator counts the calls it hands on.
$(B)/progs/libcdspy.so: tests/progs/spy/cdspy.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O2 -fPIC -shared -o $@ $< -ldl

# ---- what the build compiles in, and the files written with the install paths ----
# A value the build uses is kept in a file holding that value, rewritten only
# when it changes: what uses it is rebuilt then, and only then (a `make
# install PREFIX=/usr` after `make` relinks the command, no more).
.PHONY: FORCE
define cd_stamp
	@mkdir -p $(dir $@)
	@printf '%s\n' $(1) > $@.tmp; if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
endef
$(B)/gen/version: FORCE
	$(call cd_stamp,'$(VERSION)')
$(B)/gen/paths: FORCE
	$(call cd_stamp,'$(PREFIX)' '$(BINDIR)' '$(LIBDIR)' '$(INCLUDEDIR)' '$(PRELOADDIR)' '$(MANDIR)' '$(SYSTEMDUNITDIR)' '$(PROMRULESDIR)' '$(DOCDIR)' '$(EXAMPLESDIR)' '$(TEXTFILEDIR)' '$(BASHCOMPDIR)' '$(ZSHCOMPDIR)')
$(MOD_OBJ) $(MAIN_OBJ) $(LIB_OBJ) $(LIB_PIC) $(B)/preload/fastclock_preload.o: $(B)/gen/version
# What `clockdoctor --version` says of the build: the git revision when the
# source is a git tree's top (a package's copy of it is not: "unknown"), and
# the day it was built, SOURCE_DATE_EPOCH's when set (dpkg and rpmbuild set
# it: a reproducible build).  Rewritten when they change: buildinfo.o alone
# (src/util/buildinfo.h).
CD_REVISION   := $(shell [ "$$(git -C '$(CURDIR)' rev-parse --show-toplevel 2>/dev/null)" = '$(CURDIR)' ] && \
                   git -C '$(CURDIR)' describe --always --dirty 2>/dev/null | tr -cd 'A-Za-z0-9._+-' || echo unknown)
CD_BUILD_DATE := $(shell date -u -d "@$(or $(SOURCE_DATE_EPOCH),$$(date +%s))" +%Y-%m-%d 2>/dev/null || \
                   date -u +%Y-%m-%d)
$(B)/gen/buildinfo: FORCE
	$(call cd_stamp,'$(CD_REVISION)' '$(CD_BUILD_DATE)')
$(B)/obj/src/util/buildinfo.o: $(B)/gen/buildinfo
$(B)/obj/src/util/buildinfo.o: CPPFLAGS += -DCD_REVISION='"$(or $(CD_REVISION),unknown)"' -DCD_BUILD_DATE='"$(CD_BUILD_DATE)"'
# `run` looks for the accelerator where `make install` puts it.
$(B)/obj/src/run.o: CPPFLAGS += -DCD_PRELOADDIR='"$(PRELOADDIR)"'
$(B)/obj/src/run.o: $(B)/gen/paths

# Man pages and systemd units are written from their sources with the
# version and the install paths; nothing installed names @...@ or $(...).
CD_SUBST := sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
                -e 's|@PRELOADDIR@|$(PRELOADDIR)|g' -e 's|@DOCDIR@|$(DOCDIR)|g' -e 's|@EXAMPLESDIR@|$(EXAMPLESDIR)|g' \
                -e 's|@PROMRULESDIR@|$(PROMRULESDIR)|g' -e 's|@SYSTEMDUNITDIR@|$(SYSTEMDUNITDIR)|g' \
                -e 's|@TEXTFILEDIR@|$(TEXTFILEDIR)|g' \
                -e 's|@BASHCOMPDIR@|$(BASHCOMPDIR)|g' -e 's|@ZSHCOMPDIR@|$(ZSHCOMPDIR)|g'
MAN1_SRC := $(sort $(wildcard docs/*.1))
MAN3_SRC := $(sort $(wildcard docs/*.3))
MAN_OUT  := $(MAN1_SRC:docs/%=$(B)/man/%) $(MAN3_SRC:docs/%=$(B)/man/%)
# every exported fc_ function is a name `man` finds: a .so link to fastclock(3)
# (the parenthesis is a variable: make would count it)
OPEN_PAREN := (
FC_FUNCS := $(shell sed -n 's/^FC_API[^$(OPEN_PAREN)]*[ *]\(fc_[a-z0-9_]*\)$(OPEN_PAREN).*/\1/p' include/fastclock.h)
# units: NAME.in written with the paths, or NAME (no path in it) as it is
UNIT_SRC := $(sort $(wildcard contrib/*.service.in contrib/*.timer.in contrib/*.service contrib/*.timer))
UNIT_OUT := $(patsubst contrib/%.in,$(B)/contrib/%,$(filter %.in,$(UNIT_SRC))) \
            $(patsubst contrib/%,$(B)/contrib/%,$(filter-out %.in,$(UNIT_SRC)))
RULES_SRC := $(sort $(wildcard contrib/prometheus/*.rules.yml))
DASHBOARD_SRC := contrib/grafana/clockdoctor.json
# the documents the man pages refer to, installed where they say
DOC_SRC  := $(sort $(wildcard docs/*.md)) docs/bench_example.txt
.PHONY: man units
man: $(MAN_OUT)
units: $(UNIT_OUT)
all: man units

$(B)/man/%: docs/% $(B)/gen/version $(B)/gen/paths
	@mkdir -p $(dir $@)
	$(CD_SUBST) $< > $@

$(B)/contrib/%: contrib/%.in $(B)/gen/paths
	@mkdir -p $(dir $@)
	$(CD_SUBST) $< > $@

$(B)/contrib/%: contrib/%
	@mkdir -p $(dir $@)
	cp $< $@

-include $(DEPS)

# ---- tests ----
# Each unit test program prints "N passed, M failed" and exits non-zero on a
# failure; run-unit sums them.  Each runs under a timeout, as libuv's do.
unit: $(UNIT_BIN)
	@sh tests/unit/run-unit $(B) $(UNIT_BIN)

unit-san:
	$(MAKE) --no-print-directory SANITIZE=1 unit

# The command as a user runs it, with the accelerator and the programs it
# runs (tests/progs).
cli: $(B)/clockdoctor $(B)/libfastclock-preload.so $(PROGS_BIN) $(B)/progs/libcdspy.so
	CLOCKDOCTOR=$(CURDIR)/$(B)/clockdoctor $(PYTHON) -m pytest -q tests/cli

# The packages built, installed into an empty root, run there and purged;
# lintian; the RPM's contents (tests/pkg; about a minute).  Once, plain.
.PHONY: package-test
package-test:
	$(PYTHON) -m pytest -q tests/pkg

# The lab always uses the plain build (build/, even under SANITIZE=1): the
# guests get the binary and the static library without a sanitizer's
# runtime, which the initramfs does not carry.
lab: build/clockdoctor build/libfastclock.a arm64-build
	CLOCKDOCTOR=$(CURDIR)/build/clockdoctor $(PYTHON) -m pytest -q tests/lab

# The aarch64 build the lab's arm64 guests run (tests/lab/arm64.py): these
# rules, with the cross compiler, into build/aarch64/; the command static
# (the guest has no C library but for the programs LD_PRELOAD must reach).
# Without the cross compiler it says so, and the lab skips those guests.
ARM64_CROSS ?= aarch64-linux-gnu-
.PHONY: arm64-build
arm64-build:
	@if command -v $(ARM64_CROSS)gcc >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory B=build/aarch64 SANITIZE= CC=$(ARM64_CROSS)gcc AR=$(ARM64_CROSS)ar \
	    LDLIBS="-static -lpthread -lm" build/aarch64/clockdoctor build/aarch64/libfastclock.a \
	    build/aarch64/libfastclock-preload.so; \
	else echo "arm64-build: no $(ARM64_CROSS)gcc: the lab's arm64 guests will be skipped"; fi

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
	$(MAKE) --no-print-directory package-test
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
# bench-lab: in the lab's four-vCPU guest on hpet, redis-server and a
# loopback server (tests/lab/guest/tsserve.c) with and without the
# accelerator, side by side, against the Amdahl bound of their time calls
# (tests/lab/scenarios/bench-servers.py, docs/run.md; 15-30 min under TCG).
.PHONY: bench bench-peers bench-lab
BENCH_WAYS ?= library,monotonic,realtime,monotonic_coarse,counter
bench: $(B)/clockdoctor
	$(B)/clockdoctor bench -s --targets -d 4 -c $(BENCH_WAYS)

bench-peers: $(B)/libfastclock.a $(B)/libcd.a
	$(MAKE) --no-print-directory -C bench/peers B=$(CURDIR)/$(B) run

bench-lab: build/clockdoctor build/libfastclock-preload.so
	CLOCKDOCTOR=$(CURDIR)/build/clockdoctor $(PYTHON) tests/lab/lab.py run bench-servers

# bench-served: the accelerator's served clock_gettime and gettimeofday
# against libc's own, in one process (bench/served.c), with FASTCLOCK=force.
.PHONY: bench-served
$(B)/bench/served: bench/served.c $(B)/libcd.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CSTD) $(WARN) -O2 -o $@ $< $(B)/libcd.a -ldl
bench-served: $(B)/bench/served $(B)/libfastclock-preload.so
	FASTCLOCK=force LD_PRELOAD=$(CURDIR)/$(B)/libfastclock-preload.so $(B)/bench/served

# ---- fuzzing (clang's libFuzzer) ----
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=build-fuzz/%)
FUZZ_SECONDS ?= 60
build-fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz.h $(MOD_SRC)
	@mkdir -p build-fuzz
	clang $(CSTD) $(CPPFLAGS) -g -O1 -fsanitize=fuzzer,address,undefined -o $@ $< $(MOD_SRC) $(LDLIBS)
fuzz: $(FUZZ_BIN)
	@for f in $(FUZZ_BIN); do \
	  mkdir -p build-fuzz/corpus-$$(basename $$f); \
	  echo "fuzzing $$f for $(FUZZ_SECONDS)s"; \
	  $$f -max_total_time=$(FUZZ_SECONDS) -max_len=65536 build-fuzz/corpus-$$(basename $$f) tests/fuzz/inputs || exit 1; \
	done

# ---- install ----
# `make install` and `make uninstall` take the same paths as the build (see
# the top); uninstall removes exactly the files install writes, and the
# folders of this project's own that are then empty.
.PHONY: uninstall version
INSTALL ?= install
version:
	@echo $(VERSION)

# what `make install` ships (the packages build this, not the tests)
.PHONY: shipped
shipped: $(B)/clockdoctor lib man units
install: shipped
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(INCLUDEDIR) \
	    $(DESTDIR)$(PRELOADDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(SYSTEMDUNITDIR) \
	    $(DESTDIR)$(PROMRULESDIR) $(DESTDIR)$(GRAFANADIR) $(DESTDIR)$(DOCDIR) $(DESTDIR)$(EXAMPLESDIR) \
	    $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	$(INSTALL) -m 0755 $(B)/clockdoctor $(DESTDIR)$(BINDIR)/clockdoctor
	$(INSTALL) -m 0644 $(B)/libfastclock.a $(DESTDIR)$(LIBDIR)/libfastclock.a
	$(INSTALL) -m 0644 $(B)/libfastclock.so.$(FC_SOVER) $(DESTDIR)$(LIBDIR)/libfastclock.so.$(FC_SOVER)
	ln -sf libfastclock.so.$(FC_SOVER) $(DESTDIR)$(LIBDIR)/$(FC_SONAME)
	ln -sf $(FC_SONAME) $(DESTDIR)$(LIBDIR)/libfastclock.so
	$(INSTALL) -m 0644 $(B)/fastclock.pc $(DESTDIR)$(PKGCONFIGDIR)/fastclock.pc
	$(INSTALL) -m 0644 include/fastclock.h $(DESTDIR)$(INCLUDEDIR)/fastclock.h
	$(INSTALL) -m 0644 $(B)/libfastclock-preload.so $(DESTDIR)$(PRELOADDIR)/libfastclock-preload.so
	$(INSTALL) -m 0644 $(MAN1_SRC:docs/%=$(B)/man/%) $(DESTDIR)$(MANDIR)/man1/
	$(INSTALL) -m 0644 $(MAN3_SRC:docs/%=$(B)/man/%) $(DESTDIR)$(MANDIR)/man3/
	for f in $(FC_FUNCS); do echo '.so man3/fastclock.3' > $(DESTDIR)$(MANDIR)/man3/$$f.3 || exit 1; done
	$(INSTALL) -m 0644 $(UNIT_OUT) $(DESTDIR)$(SYSTEMDUNITDIR)/
	$(INSTALL) -m 0644 $(RULES_SRC) $(DESTDIR)$(PROMRULESDIR)/
	$(INSTALL) -m 0644 $(DASHBOARD_SRC) $(DESTDIR)$(GRAFANADIR)/
	$(INSTALL) -m 0644 $(DOC_SRC) $(DESTDIR)$(DOCDIR)/
	$(INSTALL) -m 0644 examples/fastclock-example.c $(DESTDIR)$(EXAMPLESDIR)/
	$(INSTALL) -m 0644 contrib/completion/clockdoctor.bash $(DESTDIR)$(BASHCOMPDIR)/clockdoctor
	$(INSTALL) -m 0644 contrib/completion/_clockdoctor $(DESTDIR)$(ZSHCOMPDIR)/_clockdoctor

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/clockdoctor \
	    $(DESTDIR)$(LIBDIR)/libfastclock.a $(DESTDIR)$(LIBDIR)/libfastclock.so.$(FC_SOVER) \
	    $(DESTDIR)$(LIBDIR)/$(FC_SONAME) $(DESTDIR)$(LIBDIR)/libfastclock.so \
	    $(DESTDIR)$(PKGCONFIGDIR)/fastclock.pc $(DESTDIR)$(INCLUDEDIR)/fastclock.h \
	    $(DESTDIR)$(PRELOADDIR)/libfastclock-preload.so \
	    $(MAN1_SRC:docs/%=$(DESTDIR)$(MANDIR)/man1/%) $(MAN3_SRC:docs/%=$(DESTDIR)$(MANDIR)/man3/%) \
	    $(FC_FUNCS:%=$(DESTDIR)$(MANDIR)/man3/%.3) \
	    $(UNIT_OUT:$(B)/contrib/%=$(DESTDIR)$(SYSTEMDUNITDIR)/%) \
	    $(RULES_SRC:contrib/prometheus/%=$(DESTDIR)$(PROMRULESDIR)/%) \
	    $(DASHBOARD_SRC:contrib/grafana/%=$(DESTDIR)$(GRAFANADIR)/%) \
	    $(DOC_SRC:docs/%=$(DESTDIR)$(DOCDIR)/%) $(DESTDIR)$(EXAMPLESDIR)/fastclock-example.c \
	    $(DESTDIR)$(BASHCOMPDIR)/clockdoctor $(DESTDIR)$(ZSHCOMPDIR)/_clockdoctor
	-rmdir $(DESTDIR)$(EXAMPLESDIR) $(DESTDIR)$(DOCDIR) $(DESTDIR)$(PROMRULESDIR) $(DESTDIR)$(GRAFANADIR) 2>/dev/null
	-rmdir $(DESTDIR)$(DATADIR)/clockdoctor 2>/dev/null

# ---- packages: make deb, make rpm (docs/operators.md) ----
# Each is built from a copy of the source tree under build/pkg, so the
# worktree is never written; the packages land in build/pkg.  The copy is
# what git tracks plus new files it does not ignore (or, outside git, the
# tree without its build folders).
PKG_DIR := $(CURDIR)/build/pkg
PKG_SRC := $(PKG_DIR)/clockdoctor-$(VERSION)
.PHONY: deb rpm pkg-tree
pkg-tree:
	rm -rf $(PKG_SRC) && mkdir -p $(PKG_SRC)
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
	    git ls-files -z --cached --others --exclude-standard | \
	        tar --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C $(PKG_SRC); \
	else \
	    tar --exclude=./build --exclude=./build-san --exclude=./build-fuzz -cf - . | tar -xf - -C $(PKG_SRC); \
	fi

deb: pkg-tree
	cd $(PKG_SRC) && dpkg-buildpackage -us -uc -b $(DEB_FLAGS)
	@ls $(PKG_DIR)/*.deb

# rpmbuild from a tarball of the same copy, with the spec written from
# clockdoctor.spec.in (the version); its whole tree under build/pkg/rpm.
RPM_TOP := $(PKG_DIR)/rpm
# Debian's rpm has an empty package database: its build requirements
# (gcc, make) cannot be checked there.
RPM_FLAGS ?= $(if $(wildcard /etc/debian_version),--nodeps)
rpm: pkg-tree
	rm -rf $(RPM_TOP) && mkdir -p $(RPM_TOP)/SOURCES $(RPM_TOP)/SPECS
	sed -e 's|@VERSION@|$(VERSION)|g' packaging/clockdoctor.spec.in > $(RPM_TOP)/SPECS/clockdoctor.spec
	tar -C $(PKG_DIR) -czf $(RPM_TOP)/SOURCES/clockdoctor-$(VERSION).tar.gz clockdoctor-$(VERSION)
	rpmbuild --define '_topdir $(RPM_TOP)' $(RPM_FLAGS) -bb $(RPM_TOP)/SPECS/clockdoctor.spec
	@find $(RPM_TOP)/RPMS -name '*.rpm'

clean:
	rm -rf build build-san build-fuzz
