# SPDX-License-Identifier: GPL-2.0
#
# The leaf of the harness that every other module imports: the paths of the
# checkout, what the guest runs (kernel flavours, kselftest targets,
# benchmarks), logging, running commands and the machine-wide lock.  It
# imports no other module of the harness.  The settings of a run (the
# environment variables) are scalable_request.py's: its Request is passed
# down to the functions here that need one.
#
# The other modules read the tables here as scalable_common.NAME at call
# time, not through "from scalable_common import NAME", so that a unit test
# patches one of them in one place.

import contextlib
import fcntl
import os
import shlex
import subprocess
import sys

TOP = os.path.realpath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
HARNESS = os.path.join(TOP, 'tools', 'testing', 'scalable')
BUILD = os.path.join(TOP, 'build')
PATCHES = os.path.join(TOP, 'patches')

FLAVOURS = ('release', 'debug', 'kcsan')
BENCHMARKS = ('stat_bench', 'open_bench', 'create_bench', 'fork_bench', 'fork_truncate',
	      'mmap_bench', 'exec_bench', 'inotify_bench', 'ast_bench', 'qdo_latency', 'counter_bench',
	      'oplog_list', 'cacheline_bench')
# The series' own kselftests, then the upstream 6.12 targets that exercise
# path lookup and the dcache (rename, unlink, rmdir, umount, d_invalidate,
# symlinks and magic links, O_TMPFILE) and that run in the busybox guest;
# init.sh runs the upstream ones after the series' own, with the dentry
# OpLog on, and prints its counters around them.  README.md says why the
# other candidates (exec, filesystems, mount, mount_setattr, ...) are not
# here.
SELFTEST_TARGETS = ('scalable', 'fchmodat2', 'openat2', 'proc', 'tmpfs', 'mm')
# Upstream targets that are built program by program: target -> the
# programs.  The 6.12 mm Makefile does not build as a whole (khugepaged.c
# uses KSFT_SKIP without including kselftest.h), and its only listed test,
# run_vmtests.sh, is a bash script that the busybox guest cannot run.  Each
# program below is built statically by the target's own Makefile rule and
# listed as mm:<program>, so run_kselftest.sh runs it with the series'
# reverse-map OpLog (mm/oplog_rmap.c) on.  These are the programs of
# run_vmtests.sh that run in the guest without swap, hugetlbfs, THP,
# userfaultfd, KSM, test modules or extra libraries; README.md lists the
# rest and why.
PROGRAM_TARGETS = {
	'mm': ('map_fixed_noreplace', 'mlock2-tests', 'mrelease_test', 'mremap_dontunmap',
	       'mremap_test', 'madv_populate', 'mseal_test', 'seal_elf', 'mdwe_test',
	       'gup_longterm', 'cow', 'mkdirty', 'droppable'),
}
# Targets whose Makefile builds with -fsanitize=address (gcc cannot link
# that statically): built as upstream builds them, dynamically linked, with
# their shared libraries copied into the initramfs.
DYNAMIC_TARGETS = ('fchmodat2', 'openat2')
# The dynamically linked userland that exec_bench runs (its -P default,
# /usr/bin): Debian's coreutils and dash, copied into the initramfs at
# their host paths with the loader and libraries that ldd lists.  /init's
# PATH puts busybox's /bin first, so nothing else runs them.
EXEC_PROGRAMS = ('/usr/bin/true', '/usr/bin/dash', '/usr/bin/cat', '/usr/bin/wc')
# Tests of those targets that cannot run in this guest: test -> (the kernel
# flavours it is not run on, why).  Taken out of the run list at install
# time and reported as skipped ("not run").
EXCLUDED_TESTS = {
	'proc:proc-loadavg-001': (FLAVOURS, 'needs CONFIG_PID_NS '
				  '(unshare(CLONE_NEWPID) is EINVAL)'),
	'proc:setns-dcache': (FLAVOURS, 'needs CONFIG_NET_NS, hence networking '
			      '(unshare(CLONE_NEWNET) is EINVAL)'),
	'proc:setns-sysvipc': (FLAVOURS, 'needs CONFIG_IPC_NS '
			       '(unshare(CLONE_NEWIPC) is EINVAL)'),
	# 2 x 400000 resolutions of a 64-component path against a renaming
	# child: a few seconds in the release kernel, more than 900 s in the
	# debug kernel under TCG (lockdep, KASAN), with the dentry OpLog on
	# or off alike.
	# read.c walks /proc and /sys asserting that readdir() of every
	# directory first returns "." and "..".  A /proc/<pid> directory whose
	# task is reaped between opendir() and the first getdents64() returns
	# ENOENT (proc_pident_readdir() and its siblings: get_proc_task() is
	# NULL), which glibc's readdir() reports as end of directory with errno
	# left 0; read.c then dereferences the NULL entry ("segfault at 12":
	# d_type of struct dirent64).  Any task that exits during the walk (a
	# kworker, the runner's own helpers) triggers it, on any kernel.
	'proc:read': (FLAVOURS, 'stock race in the test: a /proc/<pid> directory of a task '
		      'reaped during the walk reads as empty (getdents64() ENOENT, which '
		      'glibc readdir() turns into end of directory with errno 0), and read.c '
		      'dereferences the NULL entry (assert(de->d_type == DT_DIR))'),
	# droppable.c faults 128 MiB in, then madvise(MADV_PAGEOUT)s it ten
	# times, a second apart, and fails unless every page was dropped.  A
	# page faulted in waits in the per-CPU LRU batch of the CPU it was
	# faulted on until that batch is drained; madvise_pageout() drains
	# only the batch of the CPU it runs on, and folio_isolate_lru() skips
	# a folio that is not on the LRU yet.  When the test migrates between
	# the memset() and the madvise() and the other CPU adds no more pages
	# (an idle guest CPU), up to a batch of pages is never dropped, on any
	# kernel.
	'mm:droppable': (FLAVOURS, 'stock race in the test: pages faulted on another CPU '
			 'stay in that CPU\'s LRU batch, which madvise(MADV_PAGEOUT) does not '
			 'drain, when the test migrates between its memset() and madvise()'),
	'openat2:rename_attack_test': (('debug',), 'runs more than 15 minutes in '
				       'the debug kernel under TCG; runs in the release boot'),
}


def excluded_tests(flavour):
	"""EXCLUDED_TESTS of @flavour: {test: why}."""
	return {t: why for t, (fls, why) in EXCLUDED_TESTS.items() if flavour in fls}


# Skips that are expected: key -> (the kernel flavours it is expected on,
# why).  Any other skip fails the boot; those of this table that happened
# are listed in the verdict and the report.  Keys:
#   TARGET:PROGRAM               a kselftest program skipped as a whole
#                                (exit code 4: "ok N selftests: T: P # SKIP"),
#                                and every skipped subtest of it
#   TARGET:PROGRAM:DESCRIPTION   one skipped subtest of that program: the
#                                description of its result line (for
#                                kselftest_harness.h, FIXTURE.VARIANT.TEST:
#                                "ok N F.V.T # SKIP MSG"), or for
#                                "ok N # SKIP MSG" (ksft_test_result_skip(),
#                                ksft_exit_skip() after a plan) MSG; for a
#                                kselftest_harness.h program's "ok N
#                                FIXTURE[.VARIANT].TEST # SKIP MSG" the test's
#                                name, whatever MSG says
#   kunit:SUITE                  a KUnit suite, and every case in it
#   kunit:SUITE.CASE             one KUnit case, and its parameters
#   kunit:SUITE.CASE.PARAM       one parameter of a parameterised case
# rmap_oplog_test's migrate case, in both variants of its fixture.
RMAP_MIGRATE_SKIP = (('release', 'debug'), 'the migration test needs a second NUMA node, '
		     'which only the KCSAN flavour boots (NUMA_FLAVOURS in scalable_qemu.py)')
EXPECTED_SKIPS = {
	# torture.faults skips only for "no fault injection (CONFIG_FAILSLAB,
	# CONFIG_FAIL_PAGE_ALLOC, CONFIG_FAULT_INJECTION_DEBUG_FS)" once its
	# fixture is set up; what else skips it (no root, no second CPU, no
	# QDo, a kind not built) skips torture.hotplug too, which no key
	# expects.
	'scalable:torture:torture.faults': (
		('release', 'kcsan'), 'fault injection is configured in the debug kernel only '
		'(kernel/configs/scalable-debug.config): it would slow the release kernel\'s slab '
		'fast path, and the faults phase runs there'),
	'scalable:rmap_oplog_test:rmap_oplog.stock.migrate': RMAP_MIGRATE_SKIP,
	'scalable:rmap_oplog_test:rmap_oplog.oplog.migrate': RMAP_MIGRATE_SKIP,
	# Upstream mm programs (PROGRAM_TARGETS): cases for what the guest has not.
	'mm:mdwe_test': (FLAVOURS, 'the arm64_BTI variants need arm64 (HWCAP2_BTI)'),
	'mm:mkdirty': (FLAVOURS, 'its THP cases need CONFIG_TRANSPARENT_HUGEPAGE, its migration '
		       'case mbind() (CONFIG_NUMA: the KCSAN kernel only), its uffd-wp case '
		       'CONFIG_USERFAULTFD'),
	'mm:cow': (FLAVOURS, 'the THP, hugetlb and swap cases: the guest has no '
		   'CONFIG_TRANSPARENT_HUGEPAGE, no hugetlbfs and no swap ("MADV_PAGEOUT did not '
		   'work, is swap enabled?")'),
	'mm:gup_longterm': (FLAVOURS, 'the hugetlb cases: the guest has no hugetlbfs'),
	'fchmodat2:fchmodat2_test:fchmodat2(symlink)': (
		FLAVOURS, 'fchmodat2(AT_SYMLINK_NOFOLLOW) on a symlink fails with EOPNOTSUPP '
		'on every filesystem since 6.6: notify_change() refuses any mode change of '
		'a symlink (fs/attr.c, 5d1f903f75a8 "attr: block mode changes of symlinks"); '
		'the test reports that failure as a skip'),
}


def expected_skips(flavour):
	"""EXPECTED_SKIPS of @flavour: {key: why}."""
	return {k: why for k, (fls, why) in EXPECTED_SKIPS.items() if flavour in fls}


# "-oplog" benchmark modes whose workload is meant not to hit the OpLog:
# bench:mode -> why.  Every other "-oplog" mode fails the boot when the
# per-run count of OpLog hits it prints is 0 (the OpLog was not used).
OPLOG_COLD_MODES = {
	'stat_bench:many-oplog': 'a walk of more names than the log cache holds stays on '
	'the stock path by design (the hotness filter of fs/dcache_oplog.c)',
}


class HarnessError(Exception):
	pass


def log(msg):
	print('scalable: ' + msg, flush=True)


def die(msg, code=2):
	print('scalable: error: ' + msg, file=sys.stderr, flush=True)
	sys.exit(code)


def run(cmd, **kw):
	"""Run a command, echoing it; raise HarnessError on failure."""
	quiet = kw.pop('quiet', False)
	if not quiet:
		log('$ ' + ' '.join(shlex.quote(c) for c in cmd))
	r = subprocess.run(cmd, **kw)
	if r.returncode != 0:
		raise HarnessError('command failed (exit %d): %s' % (r.returncode, ' '.join(cmd)))
	return r


def read_conf():
	conf = {}
	with open(os.path.join(HARNESS, 'base.conf')) as f:
		for line in f:
			line = line.strip()
			if line and not line.startswith('#'):
				k, v = line.split('=', 1)
				conf[k] = v
	return conf


def host_cpus():
	return len(os.sched_getaffinity(0))


def default_smp(req):
	"""The guests' vCPUs: @req's SMP, else the host's CPUs, at least 2."""
	return req.smp or max(2, host_cpus())


@contextlib.contextmanager
def machine_lock(req, what):
	"""One kernel build or guest boot at a time per machine.

	Two at once on a small machine make both slow, and a build beside a boot
	distorts the benchmark numbers; several checkouts (git worktrees) of the
	project share this lock, the file @req.lock (SCALABLE_LOCK).
	"""
	global _lock_depth
	if _lock_depth:
		_lock_depth += 1
		try:
			yield
		finally:
			_lock_depth -= 1
		return
	path = req.lock
	with open(path, 'a') as f:
		try:
			fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
		except BlockingIOError:
			log('waiting for another build or boot on this machine (%s) before %s' %
			    (path, what))
			fcntl.flock(f, fcntl.LOCK_EX)
		_lock_depth = 1
		try:
			yield
		finally:
			_lock_depth = 0
			fcntl.flock(f, fcntl.LOCK_UN)


_lock_depth = 0
