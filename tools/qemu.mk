# qemu.mk: `make check-devices`, wearmond on NVMe, SATA and SCSI
# (virtio-scsi, MegaRAID SAS) controllers emulated by QEMU (tools/qemu,
# tests/devices); the last stage of `make check` (tools/run-check.sh), after
# the faster unit and integration tests.
# Included by the top-level Makefile; reuses $(BUILD).

# A rule here would otherwise become make's default goal.
.DEFAULT_GOAL := all

.PHONY: check-devices

check-devices: all
	@WEARMON_BUILD=$(abspath $(BUILD)) /usr/bin/python3 -m pytest -q -p no:cacheprovider \
		tests/devices $(PYTEST_ARGS)
