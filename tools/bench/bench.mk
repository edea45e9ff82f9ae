# bench.mk: dgen_bench, the data generator's throughput on one core, which
# `make bench` (tools/bench/bench.py) prints next to the device's rate.
# Included by the top-level Makefile; reuses $(BUILD), $(CC), $(ALL_CFLAGS).
# Its dependency file lives in $(BUILD)/bench/, so that one left by a build
# from before the move to tools/bench/ (naming tools/dgen_bench.c) is not read.

# A rule here would otherwise become make's default goal.
.DEFAULT_GOAL := all

PROGS += $(BUILD)/dgen_bench

$(BUILD)/dgen_bench: tools/bench/dgen_bench.c $(BUILD)/bench/dgen_bench.d $(BUILD)/libwearmon.a \
		| build-deps
	@mkdir -p $(BUILD)/bench
	$(call show,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -MF $(BUILD)/bench/dgen_bench.d $(ALL_LDFLAGS) -o $@ $< \
		$(BUILD)/libwearmon.a $(LDLIBS)

DEP_EXTRA += $(BUILD)/bench/dgen_bench.d
