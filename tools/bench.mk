# bench.mk: dgen_bench, the data generator's throughput on one core, which
# `make bench` (tools/bench.py) prints next to the device's rate.
# Included by the top-level Makefile; reuses $(BUILD), $(CC), $(ALL_CFLAGS).

# A rule here would otherwise become make's default goal.
.DEFAULT_GOAL := all

PROGS += $(BUILD)/dgen_bench

$(BUILD)/dgen_bench: tools/dgen_bench.c $(BUILD)/dgen_bench.d $(BUILD)/libwearmon.a | build-deps
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(BUILD)/libwearmon.a $(LDLIBS)

DEP_EXTRA += $(BUILD)/dgen_bench.d
