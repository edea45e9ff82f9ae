# simssd.mk: the simulated SSD (tools/simssd), its FTL unit tests.
# Included by the top-level Makefile; reuses $(BUILD), $(CC), $(ALL_CFLAGS).

# A rule here would otherwise become make's default goal.
.DEFAULT_GOAL := all

SIMSSD_DIR     := tools/simssd
SIMSSD_PKGS    := fuse3 libzstd
SIMSSD_CFLAGS   = $(call lazy,SIMSSD_CFLAGS,--cflags $(SIMSSD_PKGS))
SIMSSD_PKG_LIBS = $(call lazy,SIMSSD_PKG_LIBS,--libs $(SIMSSD_PKGS))
SIMSSD_LIBS     = $(SIMSSD_PKG_LIBS) -lm
# The FTL and everything else that needs no FUSE: unit-testable.
SIMSSD_CORE    := ftl opts ctl thermal
SIMSSD_OBJ     := $(addprefix $(BUILD)/$(SIMSSD_DIR)/,$(addsuffix .o,$(SIMSSD_CORE) store compress simssd))
SIMSSD_TEST_OBJ := $(addprefix $(BUILD)/$(SIMSSD_DIR)/,$(addsuffix .o,$(SIMSSD_CORE) test_ftl))
SIMSSD_SAN_TEST_OBJ := $(addprefix $(BUILD)/san/$(SIMSSD_DIR)/,$(addsuffix .o,$(SIMSSD_CORE) test_ftl))

PROGS += $(BUILD)/simssd
EXTRA_UNIT_BIN += $(BUILD)/tests/simssd_ftl_test
EXTRA_UNIT_SAN_BIN += $(BUILD)/san/tests/simssd_ftl_test

# More specific than the generic $(BUILD)/%.o rule, so make prefers these.
$(BUILD)/$(SIMSSD_DIR)/%.o: $(SIMSSD_DIR)/%.c $(BUILD)/$(SIMSSD_DIR)/%.d | build-deps
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(SIMSSD_CFLAGS) -c -o $@ $<

$(BUILD)/san/$(SIMSSD_DIR)/%.o: $(SIMSSD_DIR)/%.c $(BUILD)/san/$(SIMSSD_DIR)/%.d | build-deps
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) $(SIMSSD_CFLAGS) -c -o $@ $<

$(BUILD)/simssd: $(SIMSSD_OBJ)
	$(call show,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $^ $(SIMSSD_LIBS)

$(BUILD)/tests/simssd_ftl_test: $(SIMSSD_TEST_OBJ)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ -lcmocka -lm

$(BUILD)/san/tests/simssd_ftl_test: $(SIMSSD_SAN_TEST_OBJ)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -o $@ $^ -lcmocka -lm
