# SPDX-License-Identifier: GPL-2.0
#
# What one run of the harness is asked to do: the environment variables
# (make's variables: the top-level Makefile exports its own, and make passes
# on those of its command line) that change what it builds, boots, traces
# or reports, parsed and checked in one place, request_from_env(), into one
# Request.  scalable.py's main() makes it before any subcommand runs and
# passes it down as an argument, as tools/testing/kunit/kunit.py passes its
# KunitRequest; no other module reads a setting from the environment
# (test_scalable_request.py checks).  A subcommand that changes a setting
# for what it calls (make soak's kernel arguments, make tcg-check's TCG
# thread mode) passes dataclasses.replace(req, ...) down; the environment
# stays as it was.
#
# An unset or empty variable leaves its field's default.  Where the
# default depends on what runs (the host's CPUs, the kernel's config, the
# subcommand), the field is None and its user says what None means.

import dataclasses
import os
import re
from typing import Optional, Tuple

import scalable_common as common
from scalable_common import HarnessError

# What a traced boot runs (init.sh, scalable_trace=): the instrument's own
# check first, then the benchmarks, then an idle window for QDo.
TRACE_WORKLOADS = ('cacheline_bench', 'stat_bench', 'open_bench', 'create_bench',
		   'oplog_list_bench', 'fork_bench', 'fork_truncate', 'mmap_bench', 'exec_bench',
		   'inotify_bench', 'ast_bench', 'qdo_idle')
TRACE_SMP = (1, 2, 4, 8, 16)
# The most vCPUs a traced boot may have: the guests' CONFIG_NR_CPUS
# (kernel/configs/scalable.config).  The c2c plugin itself takes any count.
TRACE_MAX_SMP = 64
# The modes of the guest's benchmarks (kselftests.sh's scalable_mode); make
# run takes all four, though "test" is make test's and make boot's.
MODES = ('quick', 'full', 'long', 'test')


@dataclasses.dataclass(frozen=True)
class Request:
	"""The settings of one run of the harness; VARIABLES names each field's variable."""

	# The base: a 6.12.y source tree or tarball of the user's instead of
	# base.conf's package (at most one of the two; scalable_tree.base_source()).
	linux_tree: Optional[str] = None
	linux_tarball: Optional[str] = None
	# make's -j of the kernel builds (scalable_build.make_cmd()); None: the
	# host's CPUs.
	jobs: Optional[int] = None
	# The QEMU that boots the guests, and whose --version the results
	# files name (scalable_report.qemu_version()).
	qemu: str = 'qemu-system-x86_64'
	# The guests' vCPUs; None: the host's CPUs, at least 2
	# (scalable_common.default_smp()).
	smp: Optional[int] = None
	# The benchmarks' worker counts, a comma list (the guest's
	# scalable_cpus), for make run and make boot; None: 1, 2, 4, ... SMP.
	cpus: Optional[str] = None
	# 'kvm' or 'tcg'; None: KVM where it works (scalable_qemu.kvm_works()).
	accel: Optional[str] = None
	# TCG's thread mode, 'multi' or 'single'; None: by the kernel's config
	# (scalable_qemu.tcg_thread()).
	tcg_thread: Optional[str] = None
	# The guest's memory in MiB (see README, KVM).  More than 2 GiB:
	# upstream mm:mremap_test maps 2 GiB regions, which the default
	# overcommit heuristic refuses in a guest with less memory.
	mem: int = 3072
	# The guest's NUMA nodes; 0: scalable_qemu.NUMA_FLAVOURS (2 for kcsan).
	numa_nodes: int = 0
	# Extra kernel command-line words of every boot, e.g. dcache_oplog=off
	# to run the tests on the stock dentry path (scalable_qemu.boot()).
	kernel_args: str = ''
	# A boot's timeout in seconds; None (or 0): its schedule's
	# (scalable_qemu.boot_timeout()), or 60 for make boot's injected faults.
	boot_timeout: Optional[int] = None
	# The default of make run's and make boot's --mode; None: full and test.
	mode: Optional[str] = None
	# The default of make soak's --seconds.
	soak_seconds: int = 1800
	# make trace: the vCPU counts traced, the programs each boot runs, the
	# kernel ('patched' or 'stock': unpatched 6.12, release config).
	trace_smp: Tuple[int, ...] = TRACE_SMP
	trace_workloads: Tuple[str, ...] = TRACE_WORKLOADS
	trace_kernel: str = 'patched'
	# A traced window in ms (make trace and make test's gates).
	trace_ms: int = 1000
	# The plugin's pacing quantum in instructions; None: 100 for make trace,
	# 5 for make test's instrument checks.
	trace_quantum: Optional[int] = None
	# The quantum of make test's traced gates.
	trace_gate_quantum: int = 100
	# A traced boot's timeout in seconds; 0: 300 + 60 per vCPU.
	trace_timeout: int = 0
	# make deb's base config: a .config file (its absolute path),
	# 'defconfig' or 'guest'; None: the running kernel's /boot/config-*
	# (scalable_configs.deb_base_config()).
	deb_config: Optional[str] = None
	# Where reports, logs, results files and the exported series go.
	out: str = os.path.join(common.TOP, 'out')
	# The machine-wide lock of builds and boots (scalable_common.machine_lock()).
	lock: str = '/tmp/scalable-machine.lock'
	# (VARIABLE, value) of each variable above that was set, as given, in
	# VARIABLES' order: what a results file's command line repeats
	# (scalable_report.results_command()).  A dataclasses.replace() of a
	# field leaves it alone: it is what the user asked for.
	given: Tuple[Tuple[str, str], ...] = ()


def _whole(unit, least=0):
	"""The parser of a whole number of @unit, at least @least."""
	def parse(name, v):
		if not re.fullmatch(r'[0-9]+', v) or int(v) < least:
			at = ', at least %d' % least if least else ''
			raise HarnessError('%s must be a whole number of %s%s, not "%s"' %
					   (name, unit, at, v))
		return int(v)
	return parse


def _choice(options, allowed):
	"""The parser of one of @options; @allowed says which in the message."""
	def parse(name, v):
		if v not in options:
			raise HarnessError('%s must be %s, not "%s"' % (name, allowed, v))
		return v
	return parse


def _text(name, v):
	return v


def _smp(name, v):
	if not re.fullmatch(r'[0-9]+', v) or not 1 <= int(v) <= 64:
		raise HarnessError('SMP must be a number from 1 to 64, not "%s"' % v)
	return int(v)


def _mem(name, v):
	if not re.fullmatch(r'[0-9]+', v) or int(v) < 256:
		raise HarnessError('MEM must be the guest memory in MiB, at least 256, '
				   'not "%s"' % v)
	return int(v)


def _cpus(name, v):
	if not all(re.fullmatch(r'[0-9]+', w) and int(w) >= 1 for w in v.split(',')):
		raise HarnessError('CPUS is a comma list of benchmark worker counts (whole numbers '
				   'from 1, no spaces), not "%s"' % v)
	return v


def _trace_smp(name, v):
	counts = []
	for w in v.split(','):
		if not re.fullmatch(r'[0-9]+', w.strip()) or not 1 <= int(w) <= TRACE_MAX_SMP:
			raise HarnessError('TRACE_SMP is a comma list of vCPU counts from 1 to %d, '
					   'not "%s"' % (TRACE_MAX_SMP, v))
		counts.append(int(w))
	return tuple(counts)


def _trace_workloads(name, v):
	"""A comma list of TRACE_WORKLOADS, in the given order."""
	work = tuple(w.strip() for w in v.split(',') if w.strip())
	bad = [w for w in work if w not in TRACE_WORKLOADS]
	if bad or not work:
		raise HarnessError('TRACE_WORKLOADS is a comma list of %s, not "%s"' %
				   (', '.join(TRACE_WORKLOADS), v))
	return work


def _trace_kernel(name, v):
	if v not in ('patched', 'stock'):
		raise HarnessError('TRACE_KERNEL is patched or stock, not "%s"' % v)
	return v


def _linux_tree(name, v):
	if not os.path.exists(os.path.join(v, 'Makefile')):
		raise HarnessError('LINUX_TREE=%s is not a kernel source tree (no Makefile)' % v)
	return v


def _linux_tarball(name, v):
	if not os.path.isfile(v):
		raise HarnessError('LINUX_TARBALL=%s does not exist' % v)
	return v


def _deb_config(name, v):
	if v in ('defconfig', 'guest'):
		return v
	if not os.path.isfile(v):
		raise HarnessError('DEB_CONFIG=%s: no such file (give a kernel .config, '
				   '"defconfig" or "guest")' % v)
	return os.path.abspath(v)


# Each variable: (its Request field, its parser: (name, value) -> the
# field's value, or HarnessError).  Also the order of Request.given.
VARIABLES = {
	'LINUX_TREE': ('linux_tree', _linux_tree),
	'LINUX_TARBALL': ('linux_tarball', _linux_tarball),
	'JOBS': ('jobs', _whole('make jobs', 1)),
	'QEMU': ('qemu', _text),
	'MODE': ('mode', _choice(MODES, 'full, quick or long')),
	'SMP': ('smp', _smp),
	'CPUS': ('cpus', _cpus),
	'ACCEL': ('accel', _choice(('kvm', 'tcg'), 'kvm or tcg')),
	'TCG_THREAD': ('tcg_thread', _choice(('multi', 'single'), 'multi or single')),
	'MEM': ('mem', _mem),
	'NUMA_NODES': ('numa_nodes', _whole('NUMA nodes')),
	'KERNEL_ARGS': ('kernel_args', _text),
	'BOOT_TIMEOUT': ('boot_timeout', _whole('seconds')),
	'SOAK_SECONDS': ('soak_seconds', _whole('seconds')),
	'TRACE_KERNEL': ('trace_kernel', _trace_kernel),
	'TRACE_SMP': ('trace_smp', _trace_smp),
	'TRACE_MS': ('trace_ms', _whole('milliseconds')),
	'TRACE_QUANTUM': ('trace_quantum', _whole('instructions')),
	'TRACE_GATE_QUANTUM': ('trace_gate_quantum', _whole('instructions')),
	'TRACE_TIMEOUT': ('trace_timeout', _whole('seconds')),
	'TRACE_WORKLOADS': ('trace_workloads', _trace_workloads),
	'DEB_CONFIG': ('deb_config', _deb_config),
	'SCALABLE_OUT': ('out', _text),
	'SCALABLE_LOCK': ('lock', _text),
}


def request_from_env(environ):
	"""The Request of @environ (os.environ in main()), checked.

	Raises HarnessError naming the first variable, in VARIABLES' order,
	whose value is not allowed, and what is.
	"""
	given = tuple((name, environ[name]) for name in VARIABLES if environ.get(name))
	if environ.get('LINUX_TREE') and environ.get('LINUX_TARBALL'):
		raise HarnessError('set only one of LINUX_TREE and LINUX_TARBALL')
	fields = {}
	for name, value in given:
		field, parse = VARIABLES[name]
		fields[field] = parse(name, value)
	return Request(given=given, **fields)
