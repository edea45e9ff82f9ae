# bench.mk: dgen_bench, the data generator's throughput on one core, which
# `make bench` (tools/bench.py) prints next to the device's rate.
# Included by the top-level Makefile; reuses $(BUILD), $(CC), $(ALL_CFLAGS).

# A rule here would otherwise become make's default goal.
.DEFAULT_GOAL := all

PROGS += $(BUILD)/dgen_bench

$(BUILD)/dgen_bench: tools/dgen_bench.c common/datagen.h $(BUILD)/libwearmon.a
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libwearmon.a $(LDLIBS)
