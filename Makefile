# SPDX-License-Identifier: GPL-2.0
#
# Scalable update-heavy subsystems for Linux 6.12: top-level driver.
# Every target is a thin wrapper around tools/testing/scalable/scalable.py.
#
#   make run      main job: build, boot, test, benchmark, report (MODE=full|quick|long)
#   make test     what CI runs: release + debug kernels, all tests, splat check
#   make series   export the patch series to out/series/ and check it applies
#   make figures  every figure in the docs is in a committed results file
#   make check    make figures, checkpatch --strict, sparse, W=1, coccicheck,
#                 kernel-doc, the series' objects on x86_64_defconfig, each
#                 option on/off, RT
#   make check-full  make check with whole defconfig kernels, then make deb
#                 and its boot test (not in CI: about 90 minutes cold)
#   make deb      Debian packages of the patched kernel (bindeb-pkg),
#                 DEB_CONFIG=<.config>|defconfig|guest (default: /boot/config-*)
#   make deb-test make deb, then boot its kernel against the harness's guest
#   make trace    cache-line transfers per operation at TRACE_SMP vCPUs (TCG)
#   make soak     the torture kselftest, then ast_mutex_test's kill storm, on
#                 the debug kernel, SOAK_SECONDS (1800) each
#   make selftests-tar  the release kselftests + run_scalable.sh, for a booted host
#   make tcg-check  whether multi-threaded TCG survives static-key flips here
#
# Variables: MODE=full|quick|long (make run), SMP=<guest CPUs, default host CPUs>,
# CPUS=<benchmark worker counts, e.g. 1,2,4>, FLAVOURS="release debug kcsan",
# ACCEL=kvm|tcg (default: detect), LINUX_TARBALL=<6.12.y tarball>,
# LINUX_TREE=<6.12.y source tree>, BOOT_TIMEOUT=<seconds>, JOBS=<make -j>,
# TRACE_SMP=<vCPU counts up to 64, default 1,2,4,8,16>, TRACE_MS=<window ms>,
# TRACE_QUANTUM=<pacing instructions, default 100>,
# TRACE_WORKLOADS=<comma list of traced programs, default all>,
# TRACE_KERNEL=patched|stock (stock: unpatched 6.12, release config),
# NUMA_NODES=<guest NUMA nodes, default 2 for kcsan, 1 otherwise>,
# MEM=<guest memory in MiB, default 3072>, DEB_CONFIG=<base config of make deb>,
# TCG_THREAD=multi|single (default: single for a CONFIG_JUMP_LABEL kernel).

PY	 ?= python3
HARNESS	 := $(PY) tools/testing/scalable/scalable.py
FLAVOURS ?= release debug kcsan
MODE	 ?= full

export SMP CPUS ACCEL LINUX_TARBALL LINUX_TREE BOOT_TIMEOUT JOBS QEMU MODE \
	TRACE_SMP TRACE_MS TRACE_QUANTUM TRACE_TIMEOUT TRACE_WORKLOADS SOAK_SECONDS NUMA_NODES MEM \
	DEB_CONFIG TCG_THREAD

.PHONY: help run quick test prepare build series series-build figures check check-full deb \
	deb-test boot trace soak clean distclean selftests-tar tcg-check

help:
	@sed -n '3,/^$$/p' Makefile | sed 's/^# \{0,1\}//'

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

figures:
	$(HARNESS) figures

check:
	$(HARNESS) check

check-full:
	$(HARNESS) check --full

deb:
	$(HARNESS) deb

deb-test:
	$(HARNESS) deb --test

trace:
	$(HARNESS) trace

soak:
	$(HARNESS) soak

tcg-check:
	$(HARNESS) tcg-check

selftests-tar:
	$(HARNESS) selftests-tar

clean:
	rm -rf out build/src build/series build/series-obj

distclean:
	rm -rf out build
