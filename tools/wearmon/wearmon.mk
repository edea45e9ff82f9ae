# wearmon.mk: the wearmon command-line tool (tools/wearmon/*.c) and the man
# pages. Included by the top-level Makefile; reuses $(BUILD), $(CC),
# $(ALL_CFLAGS), $(LDLIBS) and the common library.

# A rule here would otherwise become make's default goal.
.DEFAULT_GOAL := all

WEARMON_SRC := $(sort $(wildcard tools/wearmon/*.c))
WEARMON_OBJ := $(WEARMON_SRC:%.c=$(BUILD)/%.o)
MANPAGES    := daemon/wearmond.8 conf/wearmon.conf.5 tools/wearmon/wearmon.1
MANDIR      ?= $(PREFIX)/share/man

PROGS += $(BUILD)/wearmon

$(BUILD)/wearmon: $(WEARMON_OBJ) $(BUILD)/libwearmon.a
	$(call show,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS)

.PHONY: install-wearmon install-man

# `make install` runs these too once the top-level install depends on them.
install-wearmon: $(BUILD)/wearmon install-man
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BUILD)/wearmon $(DESTDIR)$(PREFIX)/bin/wearmon

install-man:
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8
	install -m 0644 tools/wearmon/wearmon.1 $(DESTDIR)$(MANDIR)/man1/wearmon.1
	install -m 0644 conf/wearmon.conf.5 $(DESTDIR)$(MANDIR)/man5/wearmon.conf.5
	install -m 0644 daemon/wearmond.8 $(DESTDIR)$(MANDIR)/man8/wearmond.8
