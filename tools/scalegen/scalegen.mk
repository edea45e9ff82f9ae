# scalegen.mk: build/scalegen, the database generator of the scale test
# (tests/integration/test_scale.py) and of `make bench`'s year-scale section
# (tools/scalegen/README.md). Included by the top-level Makefile; reuses
# $(BUILD), $(CC), $(ALL_CFLAGS), $(LDLIBS) and the libraries. It links the
# daemon's objects too (libwearmond.a): its alerts follow daemon/alert.c's
# rules, kinds and MESSAGE_IDs.

# A rule here would otherwise become make's default goal.
.DEFAULT_GOAL := all

PROGS += $(BUILD)/scalegen

SCALEGEN_OBJ := $(addprefix $(BUILD)/tools/scalegen/,scalegen.o drive.o replica.o)

# scalegen.c includes daemon/alert.h. (Only objects and libraries are
# linked: a .d file of the days when scalegen was one source names its .c
# as a prerequisite of the program.)
$(BUILD)/tools/scalegen/%.o: ALL_CFLAGS += -iquote daemon

$(BUILD)/scalegen: $(SCALEGEN_OBJ) $(BUILD)/libwearmond.a $(BUILD)/libwearmon.a | build-deps
	$(call show,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $(filter %.o %.a,$^) $(LDLIBS)

DEP_EXTRA += $(SCALEGEN_OBJ:.o=.d)

# build/sqltrace.so: the statements a program prepares, for the scale test
# (tools/scalegen/sqltrace.c).
PROGS += $(BUILD)/sqltrace.so

$(BUILD)/sqltrace.so: tools/scalegen/sqltrace.c | build-deps
	@mkdir -p $(BUILD)/tools/scalegen
	$(call show,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -fPIC -shared -MF $(BUILD)/tools/scalegen/sqltrace.d -o $@ $< -ldl

DEP_EXTRA += $(BUILD)/tools/scalegen/sqltrace.d
