# wearmon build. `make` builds, `make check` runs every test, `make demo`
# runs the main job on the simulated SSD, `make bench` compares with fio.

CC       ?= gcc
PREFIX   ?= /usr/local
DESTDIR  ?=
BUILD    ?= build

PKGS     := libsystemd inih sqlite3 zlib libzstd blkid
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

# Messages are bounded on purpose (a truncated path in an error is fine), so
# -Wformat-truncation would only flag intended snprintf clipping.
WARN     := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wstrict-prototypes \
            -Wmissing-prototypes -Wno-unused-parameter
# gcc only: clang has no -Wformat-truncation (and would reject the flag).
ifeq ($(shell $(CC) -Werror -Wno-format-truncation -x c -c -o /dev/null /dev/null 2>/dev/null && echo y),y)
WARN     += -Wno-format-truncation
endif
CFLAGS   ?= -O2 -g
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -pthread \
              $(WARN) $(CFLAGS) -Icommon $(PKG_CFLAGS)
LDLIBS   := -laio $(PKG_LIBS) -lpthread -lm

SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer \
             -fno-sanitize-recover=all

COMMON_SRC := $(sort $(wildcard common/*.c))
DAEMON_SRC := $(sort $(wildcard daemon/*.c))
UNIT_SRC   := $(sort $(wildcard tests/unit/test_*.c))

COMMON_OBJ := $(COMMON_SRC:%.c=$(BUILD)/%.o)
DAEMON_OBJ := $(DAEMON_SRC:%.c=$(BUILD)/%.o)
SAN_COMMON_OBJ := $(COMMON_SRC:%.c=$(BUILD)/san/%.o)
UNIT_BIN   := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
SAN_UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/san/tests/%)

PROGS := $(BUILD)/wearmond

-include $(wildcard tools/*.mk)

.PHONY: all deps check check-clang unit unit-san integration demo bench install clean \
        format lint install-systemd

all: deps $(PROGS)

deps:
	@tools/install-deps.sh

$(BUILD)/%.o: %.c common/*.h daemon/*.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/san/%.o: %.c common/*.h daemon/*.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -c -o $@ $<

$(BUILD)/libwearmon.a: $(COMMON_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/san/libwearmon.a: $(SAN_COMMON_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/wearmond: $(DAEMON_OBJ) $(BUILD)/libwearmon.a
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS)

# One unit-test binary per module, linked against the library (not main).
$(BUILD)/tests/test_%: tests/unit/test_%.c tests/unit/*.h $(BUILD)/libwearmon.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/unit -o $@ $< $(BUILD)/libwearmon.a $(LDLIBS) -lcmocka

$(BUILD)/san/tests/test_%: tests/unit/test_%.c tests/unit/*.h $(BUILD)/san/libwearmon.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -Itests/unit -o $@ $< $(BUILD)/san/libwearmon.a $(LDLIBS) -lcmocka

unit: deps $(UNIT_BIN) $(EXTRA_UNIT_BIN)
	@tools/run-unit.sh $(UNIT_BIN) $(EXTRA_UNIT_BIN)

unit-san: deps $(SAN_UNIT_BIN) $(EXTRA_UNIT_SAN_BIN)
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
		tools/run-unit.sh $(SAN_UNIT_BIN) $(EXTRA_UNIT_SAN_BIN)

integration: all
	@WEARMON_BUILD=$(abspath $(BUILD)) /usr/bin/python3 -m pytest -q -p no:cacheprovider \
		tests/integration $(PYTEST_ARGS)

# The whole tree must also build warning-free with clang (STYLE.md).
check-clang:
	@$(MAKE) --no-print-directory CC=clang BUILD=$(BUILD)/clang \
		$(BUILD)/clang/wearmond $(BUILD)/clang/wearmon $(BUILD)/clang/simssd
	@echo "clang: build clean"

# The README's test command: unit tests, the same under ASan+UBSan, then
# the integration tests on real loop devices.
check: all check-clang unit unit-san integration

demo: all
	@tools/demo.sh $(BUILD)

bench: all
	@tools/bench.sh $(BUILD)

# Units and catalogs under $(PREFIX)/lib/systemd: systemd searches both
# /usr/local/lib/systemd/{system,catalog} and /usr/lib/systemd/...; other
# prefixes need UNITDIR and CATALOGDIR pointed at one of those.
UNITDIR    ?= $(PREFIX)/lib/systemd/system
CATALOGDIR ?= $(PREFIX)/lib/systemd/catalog

install: all install-wearmon install-systemd
	install -d $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BUILD)/wearmond $(DESTDIR)$(PREFIX)/sbin/wearmond
	install -d $(DESTDIR)/etc/wearmon
	install -m 0644 conf/wearmon.conf $(DESTDIR)/etc/wearmon/wearmon.conf.example

# The unit's ExecStart names $(PREFIX)/sbin/wearmond (the file in the tree
# says /usr/local, the default PREFIX). The catalog index is rebuilt on the
# running system only, never into a DESTDIR staging tree.
install-systemd:
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(CATALOGDIR)
	sed 's|/usr/local/sbin/wearmond|$(PREFIX)/sbin/wearmond|' systemd/wearmon.service \
		> $(DESTDIR)$(UNITDIR)/wearmon.service.tmp
	chmod 0644 $(DESTDIR)$(UNITDIR)/wearmon.service.tmp
	mv $(DESTDIR)$(UNITDIR)/wearmon.service.tmp $(DESTDIR)$(UNITDIR)/wearmon.service
	install -m 0644 systemd/wearmon.catalog $(DESTDIR)$(CATALOGDIR)/wearmon.catalog
	@if [ -z "$(DESTDIR)" ]; then echo "journalctl --update-catalog"; \
		journalctl --update-catalog; fi

format:
	clang-format -i common/*.[ch] daemon/*.[ch] tests/unit/*.[ch]

clean:
	rm -rf $(BUILD)
