# wearmon build. `make` only builds; `sudo make check` installs the build,
# run and test packages and runs every test; `sudo make demo` installs the
# build and run packages and runs the main job on the simulated SSD; `sudo
# make bench` compares with fio; `make install` installs no package.

CC       ?= gcc
PREFIX   ?= /usr/local
DESTDIR  ?=
BUILD    ?= build

# Libraries by who uses them. pkg-config runs when a flag is first needed,
# not when the Makefile is read: `sudo make demo` and `sudo make check`
# install the packages first and then build in a sub-make, so the first
# build of a fresh machine already has every include path.
# $(call lazy,VAR,ARGS): the first use runs pkg-config ARGS and makes VAR
# that value for good (so VAR must be the whole of pkg-config's output).
lazy = $(eval $(1) := $$(shell pkg-config $(2) 2>/dev/null))$($(1))
LIB_PKGS  := libsystemd inih sqlite3 blkid liburing
PKG_CFLAGS = $(call lazy,PKG_CFLAGS,--cflags $(LIB_PKGS))
PKG_LIBS   = $(call lazy,PKG_LIBS,--libs $(LIB_PKGS))

# Messages are bounded on purpose (a truncated path in an error is fine), so
# -Wformat-truncation would only flag intended snprintf clipping.
WARN     := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wstrict-prototypes \
            -Wmissing-prototypes -Wswitch-enum -Wno-unused-parameter
# gcc only: clang has no -Wformat-truncation (and would reject the flag).
ifeq ($(shell $(CC) -Werror -Wno-format-truncation -x c -c -o /dev/null /dev/null 2>/dev/null && echo y),y)
WARN     += -Wno-format-truncation
endif
CFLAGS   ?= -O2 -g
# -MMD -MP: each object depends on exactly the headers it includes.
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -pthread \
             $(WARN) $(CFLAGS) -MMD -MP -Icommon $(PKG_CFLAGS)
# What libwearmon.a and the programs linking it need; --as-needed keeps a
# program from depending on a library none of its objects calls.
LDFLAGS  ?=
ALL_LDFLAGS = -Wl,--as-needed $(LDFLAGS)
LDLIBS    = -laio $(PKG_LIBS) -lpthread -lm

SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer \
             -fno-sanitize-recover=all

COMMON_SRC := $(sort $(wildcard common/*/*.c common/*/*/*.c))
DAEMON_SRC := $(sort $(wildcard daemon/*.c))
UNIT_SRC   := $(sort $(wildcard tests/unit/test_*.c))

COMMON_OBJ := $(COMMON_SRC:%.c=$(BUILD)/%.o)
DAEMON_OBJ := $(DAEMON_SRC:%.c=$(BUILD)/%.o)
SAN_COMMON_OBJ := $(COMMON_SRC:%.c=$(BUILD)/san/%.o)
# The daemon without main.o: what the unit tests of daemon/ logic link.
DAEMON_LIB_OBJ := $(filter-out $(BUILD)/daemon/main.o,$(DAEMON_OBJ))
SAN_DAEMON_LIB_OBJ := $(DAEMON_LIB_OBJ:$(BUILD)/%=$(BUILD)/san/%)
UNIT_BIN   := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
SAN_UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/san/tests/%)

PROGS := $(BUILD)/wearmond

# A quiet build, as the kernel's and systemd's: one line per program linked
# and nothing per object; `make V=1` shows every command. $(Q) silences a
# command, $(call show,WHAT,FILE) prints the one line.
V ?= 0
ifeq ($(V),1)
Q :=
show =
else
Q := @
show = @printf '  %-5s %s\n' '$(1)' '$(2)'
endif

-include $(wildcard tools/*.mk tools/*/*.mk)

.PHONY: all build-deps check check-run check-quick check-clang unit unit-san integration \
        demo demo-run bench bench-run install install-systemd install-completion clean format lint lint-cppcheck \
        lint-layers lint-sizes lint-archdoc

# `make` only compiles. It installs nothing: when a build package is missing it
# says which, and the command that installs them.
all: $(PROGS)

build-deps:
	@pkg-config --exists $(LIB_PKGS) fuse3 libzstd 2>/dev/null && [ -e /usr/include/libaio.h ] || { \
		tools/install-deps.sh --check build; \
		echo "make: install them with: sudo tools/install-deps.sh build" >&2; exit 1; }

# Order-only: checked once before anything compiles, never a reason to rebuild.
# An object without its .d (built before -MMD, or the .d lost) is rebuilt:
# the empty rule for the .d files (DEP_FILES, below) "makes" a missing one,
# which dates the object.
$(BUILD)/%.o: %.c $(BUILD)/%.d | build-deps
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/san/%.o: %.c $(BUILD)/san/%.d | build-deps
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -c -o $@ $<

$(BUILD)/libwearmon.a: $(COMMON_OBJ)
	@rm -f $@
	$(Q)ar rcs $@ $^

$(BUILD)/san/libwearmon.a: $(SAN_COMMON_OBJ)
	@rm -f $@
	$(Q)ar rcs $@ $^

$(BUILD)/libwearmond.a: $(DAEMON_LIB_OBJ)
	@rm -f $@
	$(Q)ar rcs $@ $^

$(BUILD)/san/libwearmond.a: $(SAN_DAEMON_LIB_OBJ)
	@rm -f $@
	$(Q)ar rcs $@ $^

$(BUILD)/wearmond: $(DAEMON_OBJ) $(BUILD)/libwearmon.a
	$(call show,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS)

# One unit-test binary per module, linked against the library and the
# daemon's objects (not main). The tests alone measure compressed sizes
# (zstd, zlib).
TEST_PKG_LIBS = $(call lazy,TEST_PKG_LIBS,--libs libzstd zlib)
TEST_LIBS = $(TEST_PKG_LIBS) -lcmocka
$(BUILD)/tests/test_%: tests/unit/test_%.c $(BUILD)/tests/test_%.d $(BUILD)/libwearmond.a $(BUILD)/libwearmon.a | build-deps
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -Itests/unit -iquote daemon -o $@ $< $(BUILD)/libwearmond.a $(BUILD)/libwearmon.a $(LDLIBS) $(TEST_LIBS)

$(BUILD)/san/tests/test_%: tests/unit/test_%.c $(BUILD)/san/tests/test_%.d $(BUILD)/san/libwearmond.a $(BUILD)/san/libwearmon.a | build-deps
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) $(SAN_FLAGS) -Itests/unit -iquote daemon -o $@ $< $(BUILD)/san/libwearmond.a $(BUILD)/san/libwearmon.a $(LDLIBS) $(TEST_LIBS)

# Named one by one, not by a pattern: a pattern would make them intermediate
# files, whose absence never dates anything.
DEP_FILES := $(sort $(patsubst %.o,%.d,$(COMMON_OBJ) $(DAEMON_OBJ) $(SAN_COMMON_OBJ) \
	$(SAN_DAEMON_LIB_OBJ) $(WEARMON_OBJ) \
	$(SIMSSD_OBJ) $(SIMSSD_TEST_OBJ) $(SIMSSD_SAN_TEST_OBJ)) \
	$(addsuffix .d,$(UNIT_BIN) $(SAN_UNIT_BIN)) $(DEP_EXTRA))
$(DEP_FILES): ;
-include $(wildcard $(DEP_FILES))

unit: $(UNIT_BIN) $(EXTRA_UNIT_BIN)
	@tools/run-unit.sh $(UNIT_BIN) $(EXTRA_UNIT_BIN)
	@tools/check-resolve-once.sh $(BUILD)/daemon/iter.o daemon/iter.c

unit-san: $(SAN_UNIT_BIN) $(EXTRA_UNIT_SAN_BIN)
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
		tools/run-unit.sh $(SAN_UNIT_BIN) $(EXTRA_UNIT_SAN_BIN)

# The integration tests run in parallel (pytest-xdist): TEST_JOBS workers,
# the tests sharing a module's fixture on one of them (--dist loadgroup);
# those marked alone (they time the machine) after them, by themselves;
# those marked slow are left out of check-quick (tests/README.md).
TEST_JOBS ?= 4
PYTEST = WEARMON_BUILD=$(abspath $(BUILD)) /usr/bin/python3 -m pytest -q -p no:cacheprovider
XDIST = -n $(TEST_JOBS) --dist loadgroup

integration: all
	@$(PYTEST) $(XDIST) -m "not alone" tests/integration $(PYTEST_ARGS)
	@$(PYTEST) -m alone tests/integration $(PYTEST_ARGS) || [ $$? -eq 5 ]

# A developer's loop: the unit tests and the fast integration tests.
check-quick: all unit
	@$(PYTEST) $(XDIST) -m "not slow and not alone" tests/integration $(PYTEST_ARGS)

# The whole tree must also build warning-free with clang (-Wall -Wextra -Werror).
check-clang:
	@$(MAKE) --no-print-directory CC=clang BUILD=$(BUILD)/clang \
		$(BUILD)/clang/wearmond $(BUILD)/clang/wearmon $(BUILD)/clang/simssd
	@echo "clang: build clean"

# The README's commands. Each installs the packages its purpose needs, then
# builds and runs in a sub-make, which reads the compile flags afresh.
check:
	@tools/install-deps.sh build run test
	@$(MAKE) --no-print-directory check-run

# The build first, then three lanes at once (the integration tests, the
# QEMU devices, the other builds with lint and the unit tests), then the
# tests that need the machine alone; every stage runs even when an earlier
# one failed, and the last line counts every test run. tools/run-check.sh
# also fails the run when a test left a process, loop device or mount of
# its own behind.
check-run:
	@MAKE="$(MAKE)" BUILD="$(BUILD)" TEST_JOBS="$(TEST_JOBS)" tools/run-check.sh

demo:
	@tools/install-deps.sh build run
	@$(MAKE) --no-print-directory demo-run

demo-run: all
	@tools/demo.sh $(BUILD)

bench:
	@tools/install-deps.sh build run test
	@$(MAKE) --no-print-directory bench-run

bench-run: all
	@tools/bench/bench.sh $(BUILD)

# Units and catalogs under $(PREFIX)/lib/systemd: systemd searches both
# /usr/local/lib/systemd/{system,catalog} and /usr/lib/systemd/...; other
# prefixes need UNITDIR and CATALOGDIR pointed at one of those.
UNITDIR    ?= $(PREFIX)/lib/systemd/system
CATALOGDIR ?= $(PREFIX)/lib/systemd/catalog

# Installs no package: it only says which runtime packages are missing.
# /var/lib/wearmon gets the mode of the unit's StateDirectory= (0755), so
# `wearmond --check` finds the database directory before the first start.
install: all install-wearmon install-systemd install-completion
	@tools/install-deps.sh --check run >&2 || \
		echo "make install: wearmond needs them at run time: sudo tools/install-deps.sh run" >&2
	install -d $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(PREFIX)/bin
	install -d -m 0755 $(DESTDIR)/var/lib/wearmon
	install -m 0755 $(BUILD)/wearmond $(DESTDIR)$(PREFIX)/sbin/wearmond
	install -d $(DESTDIR)/etc/wearmon
	install -m 0644 conf/wearmon.conf $(DESTDIR)/etc/wearmon/wearmon.conf.example

# Bash completion of wearmon and wearmond (tools/wearmon/wearmon.bash),
# where bash-completion loads a command's completion on first use: one
# file per command name, the same script under both.
BASHCOMPDIR ?= $(or $(shell pkg-config --variable=completionsdir bash-completion 2>/dev/null),\
	/usr/share/bash-completion/completions)

install-completion:
	install -d $(DESTDIR)$(BASHCOMPDIR)
	install -m 0644 tools/wearmon/wearmon.bash $(DESTDIR)$(BASHCOMPDIR)/wearmon
	install -m 0644 tools/wearmon/wearmon.bash $(DESTDIR)$(BASHCOMPDIR)/wearmond

# The unit's ExecStart names $(PREFIX)/sbin/wearmond (the file in the tree
# says /usr/local, the default PREFIX). The catalog index is rebuilt, and
# the group wearmon of the unit's Group= created, on the running system
# only, never into a DESTDIR staging tree.
install-systemd:
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(CATALOGDIR)
	sed 's|/usr/local/sbin/wearmond|$(PREFIX)/sbin/wearmond|' systemd/wearmon.service \
		> $(DESTDIR)$(UNITDIR)/wearmon.service.tmp
	chmod 0644 $(DESTDIR)$(UNITDIR)/wearmon.service.tmp
	mv $(DESTDIR)$(UNITDIR)/wearmon.service.tmp $(DESTDIR)$(UNITDIR)/wearmon.service
	install -m 0644 systemd/wearmon.catalog $(DESTDIR)$(CATALOGDIR)/wearmon.catalog
	@if [ -z "$(DESTDIR)" ] && ! getent group wearmon >/dev/null; then \
		echo "groupadd --system wearmon"; groupadd --system wearmon; fi
	@if [ -z "$(DESTDIR)" ] && command -v journalctl >/dev/null; then \
		echo "journalctl --update-catalog"; journalctl --update-catalog; fi

# `make format` rewrites, `make lint` checks: the same files, the style of
# .clang-format. lint first runs cppcheck with the checks that find bugs
# rather than taste: warning (undefined behaviour, wrong API use),
# portability and performance; style and information stay off. A finding
# that is not a bug is silenced where it occurs, by a comment
# `/* cppcheck-suppress ID */` on the line before, saying why
# (--inline-suppr), never by a global switch.
FORMAT_SRC = $(sort $(wildcard common/*/*.[ch] common/*/*/*.[ch] daemon/*.[ch] tools/*/*.[ch] \
	tests/unit/*.[ch]))
CPPCHECK_FLAGS := --enable=warning,portability,performance --std=c11 --inline-suppr \
	--error-exitcode=1 --quiet -Icommon

format:
	clang-format -i $(FORMAT_SRC)

# `make check` runs lint (its stage "lint"): a file out of format fails the
# check, and `make format` is the fix.
lint: lint-cppcheck lint-layers lint-sizes lint-archdoc
	clang-format --dry-run -Werror $(FORMAT_SRC)
	@echo "clang-format: clean"

# Who may call whom (common/ARCHITECTURE.md), read from the built objects:
# no call cycle between files, no call against the layers, and a wearmon
# without device, I/O or config-parser code (tools/layers.py).
lint-layers: all
	tools/layers.py --build $(BUILD)

# No function over 60 lines, no file over 900 in common/ and daemon/
# (tools/sizes.py names each one over): a module a maintainer reads whole.
lint-sizes:
	tools/sizes.py

# common/ARCHITECTURE.md names every source file of common/, daemon/ and
# tools/*/, and every file it names exists (tools/archdoc.py).
lint-archdoc:
	tools/archdoc.py

lint-cppcheck:
	cppcheck $(CPPCHECK_FLAGS) common daemon tools
	@echo "cppcheck: clean"

clean:
	rm -rf $(BUILD)
