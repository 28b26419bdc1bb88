# SPDX-License-Identifier: GPL-2.0
#
# Scalable update-heavy subsystems for Linux 6.12: top-level driver.
# Every target is a thin wrapper around tools/testing/scalable/scalable.py.
#
#   make run      main job: build, boot, test, benchmark, report (MODE=full|quick)
#   make test     what CI runs: release + debug kernels, all tests, splat check
#   make series   export the patch series to out/series/ and check it applies
#   make check    checkpatch --strict, sparse, W=1, coccicheck, kernel-doc
#
# Variables: MODE=full|quick (make run), SMP=<guest CPUs, default host CPUs>,
# CPUS=<benchmark worker counts, e.g. 1,2,4>, FLAVOURS="release debug",
# ACCEL=kvm|tcg (default: detect), LINUX_TARBALL=<6.12.y tarball>,
# LINUX_TREE=<6.12.y source tree>, BOOT_TIMEOUT=<seconds>, JOBS=<make -j>.

PY	 ?= python3
HARNESS	 := $(PY) tools/testing/scalable/scalable.py
FLAVOURS ?= release debug
MODE	 ?= full

export SMP CPUS ACCEL LINUX_TARBALL LINUX_TREE BOOT_TIMEOUT JOBS QEMU MODE

.PHONY: help run quick test prepare build series series-build check boot clean distclean

help:
	@sed -n '3,15p' Makefile | sed 's/^# \{0,1\}//'

run:
	$(HARNESS) run --mode $(MODE)

quick:
	$(HARNESS) run --mode quick

test:
	$(PY) tools/testing/scalable/test_scalable.py
	$(HARNESS) test $(FLAVOURS)

prepare:
	$(HARNESS) prepare

build:
	$(HARNESS) build $(FLAVOURS)

boot:
	$(HARNESS) boot $(firstword $(FLAVOURS)) --mode $(MODE)

series:
	$(HARNESS) series

series-build:
	$(HARNESS) series --build

check:
	$(HARNESS) check

clean:
	rm -rf out build/src build/series build/series-obj

distclean:
	rm -rf out build
