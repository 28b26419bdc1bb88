# SPDX-License-Identifier: GPL-2.0
#
# The leaf of the harness that every other module imports: the paths of the
# checkout, what the guest runs (kernel flavours, kselftest targets,
# benchmarks), logging, running commands, the machine-wide lock and the
# environment variables that every command reads.  It imports no other
# module of the harness.
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
OUT = os.environ.get('SCALABLE_OUT') or os.path.join(TOP, 'out')
PATCHES = os.path.join(TOP, 'patches')

FLAVOURS = ('release', 'debug', 'kcsan')
BENCHMARKS = ('stat_bench', 'open_bench', 'create_bench', 'fork_bench', 'fork_truncate',
	      'inotify_bench', 'ast_bench', 'qdo_latency', 'counter_bench', 'oplog_list',
	      'cacheline_bench')
# The series' own kselftests, then the upstream 6.12 targets that exercise
# path lookup and the dcache (rename, unlink, rmdir, umount, d_invalidate,
# symlinks and magic links, O_TMPFILE) and that run in the busybox guest;
# init.sh runs the upstream ones after the series' own, with the dentry
# OpLog on, and prints its counters around them.  README.md says why the
# other candidates (exec, filesystems, mount, mount_setattr, ...) are not
# here.
SELFTEST_TARGETS = ('scalable', 'fchmodat2', 'openat2', 'proc', 'tmpfs')
# Targets whose Makefile builds with -fsanitize=address (gcc cannot link
# that statically): built as upstream builds them, dynamically linked, with
# their shared libraries copied into the initramfs.
DYNAMIC_TARGETS = ('fchmodat2', 'openat2')
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
	'openat2:rename_attack_test': (('debug',), 'runs more than 15 minutes in '
				       'the debug kernel under TCG; runs in the release boot'),
}


def excluded_tests(flavour):
	"""EXCLUDED_TESTS of @flavour: {test: why}."""
	return {t: why for t, (fls, why) in EXCLUDED_TESTS.items() if flavour in fls}


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


def env_int(name, default):
	v = os.environ.get(name)
	if not v:
		return default
	if not v.isdigit():
		die('%s must be a whole number of seconds, not "%s"' % (name, v))
	return int(v)


def default_smp():
	v = os.environ.get('SMP')
	if v:
		if not v.isdigit() or int(v) < 1 or int(v) > 64:
			die('SMP must be a number from 1 to 64, not "%s"' % v)
		return int(v)
	return max(2, host_cpus())


@contextlib.contextmanager
def machine_lock(what):
	"""One kernel build or guest boot at a time per machine.

	Two at once on a small machine make both slow, and a build beside a boot
	distorts the benchmark numbers; several checkouts (git worktrees) of the
	project share this lock.
	"""
	global _lock_depth
	if _lock_depth:
		_lock_depth += 1
		try:
			yield
		finally:
			_lock_depth -= 1
		return
	path = os.environ.get('SCALABLE_LOCK', '/tmp/scalable-machine.lock')
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
