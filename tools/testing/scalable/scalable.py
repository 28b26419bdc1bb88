#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Host-side harness of the scalable-subsystems series: prepares the patched
# 6.12 tree, builds the release and debug kernels, boots them in QEMU with a
# busybox initramfs, checks KUnit/kselftest results and the console for
# kernel splats, and reports the benchmark numbers.  The top-level Makefile
# is a thin wrapper around the subcommands here; run "make help".

import argparse
import contextlib
import fcntl
import gzip
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

TOP = os.path.realpath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
HARNESS = os.path.join(TOP, 'tools', 'testing', 'scalable')
BUILD = os.path.join(TOP, 'build')
OUT = os.environ.get('SCALABLE_OUT') or os.path.join(TOP, 'out')
PATCHES = os.path.join(TOP, 'patches')

FLAVOURS = ('release', 'debug')
BENCHMARKS = ('stat_bench', 'fork_bench', 'fork_truncate', 'inotify_bench', 'ast_bench',
	      'qdo_latency', 'counter_bench', 'oplog_list')
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


# Debian packages the harness needs, with a file that proves each present.
PACKAGES = {
	'gcc': '/usr/bin/gcc',
	'make': '/usr/bin/make',
	'flex': '/usr/bin/flex',
	'bison': '/usr/bin/bison',
	'bc': '/usr/bin/bc',
	'libelf-dev': '/usr/include/gelf.h',
	'libssl-dev': '/usr/include/openssl/ssl.h',
	'cpio': '/usr/bin/cpio',
	'qemu-system-x86': '/usr/bin/qemu-system-x86_64',
	'busybox-static': '/bin/busybox',
	'sparse': '/usr/bin/sparse',
	'coccinelle': '/usr/bin/spatch',
	# spatch compiles the OCaml scripts of some semantic patches (coccicheck)
	'ocaml-nox': '/usr/bin/ocamlopt',
	'ccache': '/usr/bin/ccache',
	'python3': '/usr/bin/python3',
	'xz-utils': '/usr/bin/xz',
	'rsync': '/usr/bin/rsync',
	'git': '/usr/bin/git',
	'perl': '/usr/bin/perl',
	'kmod': '/usr/bin/kmod',
	# scripts/spdxcheck.py, run by checkpatch, with Debian's python3
	'python3-ply': '/usr/lib/python3/dist-packages/ply/__init__.py',
	'python3-git': '/usr/lib/python3/dist-packages/git/__init__.py',
}

# Console patterns that fail a boot: any kernel splat.
SPLATS = [
	(r'WARNING: CPU: \d+', 'WARNING'),
	(r'WARNING: (possible|suspicious|inconsistent|bad unlock|held lock)', 'lockdep'),
	(r'------------\[ cut here \]------------', 'WARN/BUG'),
	(r'\bBUG: ', 'BUG'),
	(r'kernel BUG at', 'BUG'),
	(r'\bOops\b', 'Oops'),
	(r'general protection fault', 'GPF'),
	(r'Kernel panic - not syncing', 'panic'),
	(r'(possible recursive locking|possible circular locking|inconsistent lock state|'
	 r'suspicious RCU usage|lock held when returning|possible irq lock inversion)', 'lockdep'),
	(r'INFO: lockdep is turned off', 'lockdep'),
	(r'DEBUG_LOCKS_WARN_ON', 'lockdep'),
	(r'\bKASAN: ', 'KASAN'),
	(r'\bUBSAN: ', 'UBSAN'),
	(r'ODEBUG: ', 'debugobjects'),
	(r'list_(add|del) corruption', 'DEBUG_LIST'),
	(r'rcu: INFO: rcu_\w+ (self-)?detected stall', 'RCU stall'),
	(r'rcu_\w+ detected stalls on CPUs', 'RCU stall'),
	(r'INFO: task \S+ blocked for more than', 'hung task'),
	(r'soft lockup - CPU#', 'soft lockup'),
	(r'Watchdog detected hard LOCKUP', 'hard lockup'),
	(r'unreferenced object 0x', 'kmemleak'),
	(r'Call Trace:', 'stack trace'),
]


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


# ---------------------------------------------------------------- packages

def missing_packages(need_base):
	missing = [p for p, f in PACKAGES.items() if not os.path.exists(f)]
	if need_base:
		conf = read_conf()
		if not os.path.exists(conf['TARBALL']):
			missing.append('%s=%s' % (conf['DEBIAN_PACKAGE'], conf['DEBIAN_VERSION']))
	return missing


def ensure_packages(need_base=True):
	missing = missing_packages(need_base)
	if not missing:
		return
	cmd = ['apt-get', 'install', '-y', '--no-install-recommends'] + missing
	if os.geteuid() != 0:
		die('missing Debian packages: %s\n'
		    '  install them as root with:\n    sudo %s' %
		    (' '.join(missing), ' '.join(cmd)))
	log('installing missing packages: ' + ' '.join(missing))
	env = dict(os.environ, DEBIAN_FRONTEND='noninteractive')
	r = subprocess.run(cmd, env=env)
	if r.returncode != 0:
		subprocess.run(['apt-get', 'update'], env=env)
		r = subprocess.run(cmd, env=env)
	if r.returncode != 0:
		conf = read_conf()
		avail = subprocess.run(['apt-cache', 'policy', conf['DEBIAN_PACKAGE']],
				       capture_output=True, text=True).stdout
		die('apt-get could not install: %s\n%s\n'
		    '  The series is pinned to %s %s (tools/testing/scalable/base.conf).\n'
		    '  If apt serves another version, either point the build at a 6.12.y tree\n'
		    '  of your own (make test LINUX_TARBALL=/path/linux-6.12.y.tar.xz or\n'
		    '  LINUX_TREE=/path/to/linux), or move the pin (all four values in\n'
		    '  base.conf) and re-run make series and make test.' %
		    (' '.join(missing), avail.strip(), conf['DEBIAN_PACKAGE'],
		     conf['DEBIAN_VERSION']))
	still = missing_packages(need_base)
	if still:
		die('packages still missing after apt-get: ' + ' '.join(still))


# ---------------------------------------------------------------- base tree

def sha256(path):
	h = hashlib.sha256()
	with open(path, 'rb') as f:
		for chunk in iter(lambda: f.read(1 << 20), b''):
			h.update(chunk)
	return h.hexdigest()


def tree_version(tree):
	v = {}
	with open(os.path.join(tree, 'Makefile')) as f:
		for line in f:
			m = re.match(r'(VERSION|PATCHLEVEL|SUBLEVEL) = (\d+)', line)
			if m:
				v[m.group(1)] = m.group(2)
			if len(v) == 3:
				break
	return '%s.%s.%s' % (v.get('VERSION'), v.get('PATCHLEVEL'), v.get('SUBLEVEL'))


def base_source():
	"""Return (kind, path, identity) of the base the user asked for."""
	tree = os.environ.get('LINUX_TREE')
	tarball = os.environ.get('LINUX_TARBALL')
	if tree and tarball:
		die('set only one of LINUX_TREE and LINUX_TARBALL')
	if tree:
		if not os.path.exists(os.path.join(tree, 'Makefile')):
			die('LINUX_TREE=%s is not a kernel source tree (no Makefile)' % tree)
		return 'tree', os.path.realpath(tree), 'tree:' + os.path.realpath(tree)
	if tarball:
		if not os.path.isfile(tarball):
			die('LINUX_TARBALL=%s does not exist' % tarball)
		return 'tarball', os.path.realpath(tarball), 'tarball:' + sha256(tarball)
	conf = read_conf()
	path = conf['TARBALL']
	if not os.path.isfile(path):
		die('%s is missing: install %s=%s (make prepare does it as root)' %
		    (path, conf['DEBIAN_PACKAGE'], conf['DEBIAN_VERSION']))
	digest = sha256(path)
	if digest != conf['SHA256']:
		installed = subprocess.run(['dpkg-query', '-W', '-f=${Version}', conf['DEBIAN_PACKAGE']],
					   capture_output=True, text=True).stdout.strip()
		die('%s has sha256 %s, but base.conf pins %s (%s %s).\n'
		    '  The installed package is version %s.  Install the pinned one with\n'
		    '    apt-get install %s=%s\n'
		    '  or build on your own tree with LINUX_TARBALL=... or LINUX_TREE=...' %
		    (path, digest, conf['SHA256'], conf['DEBIAN_PACKAGE'], conf['DEBIAN_VERSION'],
		     installed or 'unknown', conf['DEBIAN_PACKAGE'], conf['DEBIAN_VERSION']))
	return 'tarball', path, 'tarball:' + digest


def unpack_base():
	"""Unpack the pristine base into build/base/linux; return its path.

	The new base is unpacked beside the old one and checked before it
	replaces it, so a wrong tarball or tree leaves the previous base alone.
	"""
	kind, path, ident = base_source()
	dst = os.path.join(BUILD, 'base')
	stamp = os.path.join(dst, '.identity')
	tree = os.path.join(dst, 'linux')
	if os.path.exists(stamp) and open(stamp).read() == ident:
		return tree
	if kind == 'tree':
		check_base_version(path, path)
	log('unpacking base %s' % path)
	new = os.path.join(BUILD, 'base.new')
	shutil.rmtree(new, ignore_errors=True)
	os.makedirs(new)
	if kind == 'tree':
		run(['rsync', '-a', '--exclude=.git', path + '/', os.path.join(new, 'linux') + '/'])
	else:
		tmp = os.path.join(new, 'unpack')
		os.makedirs(tmp)
		run(['tar', '-xf', path, '-C', tmp])
		entries = os.listdir(tmp)
		if len(entries) != 1 or not os.path.isdir(os.path.join(tmp, entries[0])):
			shutil.rmtree(new, ignore_errors=True)
			die('%s does not unpack into a single directory' % path)
		os.rename(os.path.join(tmp, entries[0]), os.path.join(new, 'linux'))
		os.rmdir(tmp)
	try:
		check_base_version(os.path.join(new, 'linux'), path)
	except SystemExit:
		shutil.rmtree(new, ignore_errors=True)
		raise
	with open(os.path.join(new, '.identity'), 'w') as f:
		f.write(ident)
	shutil.rmtree(dst, ignore_errors=True)
	os.rename(new, dst)
	return tree


def check_base_version(tree, what):
	if not os.path.exists(os.path.join(tree, 'Makefile')):
		die('%s is not a kernel source tree (no Makefile)' % what)
	ver = tree_version(tree)
	if not ver.startswith('6.12.'):
		die('%s is Linux %s, but this series is for 6.12.y' % (what, ver))
	conf = read_conf()
	if ver != conf['LINUX_VERSION']:
		log('note: the base is %s; the series is pinned to and tested on %s' %
		    (ver, conf['LINUX_VERSION']))


# ---------------------------------------------------------------- series

def series_patches():
	"""The series, in order: list of dicts (dir, message, files, diff)."""
	out = []
	for name in sorted(os.listdir(PATCHES)):
		d = os.path.join(PATCHES, name)
		if not os.path.isdir(d):
			continue
		msg = open(os.path.join(d, 'message')).read()
		files = []
		fpath = os.path.join(d, 'files')
		if os.path.exists(fpath):
			for line in open(fpath):
				line = line.split('#', 1)[0].strip()
				if line:
					files.append(line)
		diff = os.path.join(d, 'upstream.diff')
		out.append({'name': name, 'dir': d, 'message': msg, 'files': files,
			    'diff': diff if os.path.exists(diff) else None})
	return out


def tracked_files():
	"""Files of the checkout: committed ones and new ones git does not ignore."""
	r = subprocess.run(['git', 'ls-files', '-z', '--cached', '--others', '--exclude-standard'],
			   cwd=TOP, capture_output=True)
	if r.returncode != 0:
		# Not a git checkout (a tarball of the repo): walk the tree instead.
		files = []
		for root, dirs, names in os.walk(TOP):
			dirs[:] = [d for d in dirs if d not in ('.git', 'build', 'out')]
			for n in names:
				files.append(os.path.relpath(os.path.join(root, n), TOP))
		return files
	return [f for f in r.stdout.decode().split('\0') if f]


# Paths in this repository that are not part of the kernel series.
NOT_IN_SERIES = ('README.md', 'Makefile', '.gitignore', '.ci/', 'patches/',
		 'tools/testing/scalable/')


def series_files(patches):
	"""Map every new in-tree file to the patch that adds it; check coverage."""
	owner = {}
	tracked = [f for f in tracked_files() if not f.startswith(NOT_IN_SERIES)]
	for p in patches:
		for entry in p['files']:
			matched = [f for f in tracked
				   if f == entry or (entry.endswith('/') and f.startswith(entry))]
			if not matched:
				raise HarnessError('%s/files lists %s, which is not in the repository' %
						   (p['name'], entry))
			for f in matched:
				if f in owner:
					raise HarnessError('%s is claimed by both %s and %s' %
							   (f, owner[f], p['name']))
				owner[f] = p['name']
	orphans = [f for f in tracked if f not in owner]
	if orphans:
		raise HarnessError('files not in any patch of patches/*/files: ' + ' '.join(orphans))
	return owner


# Bump when the way the tree is assembled changes, to re-assemble old trees.
ASSEMBLY_VERSION = b'2: patch --fuzz=0 --no-backup-if-mismatch'


def prepare_src():
	"""Build build/src/linux = base + upstream diffs + new files; incremental."""
	with machine_lock('assembling the tree'):
		return _prepare_src()


def _prepare_src():
	base = unpack_base()
	patches = series_patches()
	owner = series_files(patches)
	src = os.path.join(BUILD, 'src', 'linux')
	h = hashlib.sha256(open(os.path.join(BUILD, 'base', '.identity'), 'rb').read())
	h.update(ASSEMBLY_VERSION)
	for p in patches:
		if p['diff']:
			h.update(open(p['diff'], 'rb').read())
	h.update('\n'.join(sorted(owner)).encode())
	ident = h.hexdigest()
	stamp = os.path.join(BUILD, 'src', '.identity')
	if not (os.path.exists(stamp) and open(stamp).read() == ident):
		log('assembling the patched tree in build/src/linux')
		shutil.rmtree(os.path.join(BUILD, 'src'), ignore_errors=True)
		os.makedirs(os.path.join(BUILD, 'src'))
		# Hard links: unchanged files keep their inode and mtime, so the
		# O= build dirs stay incremental across re-assembly.  patch(1) and
		# rsync replace files instead of writing through the link.
		run(['cp', '-al', base, src], quiet=True)
		for p in patches:
			if p['diff']:
				# Exactly as git apply/am will: no fuzz, no backup files.
				r = subprocess.run(['patch', '-p1', '-N', '-s', '--fuzz=0',
						    '--no-backup-if-mismatch', '-d', src, '-i',
						    p['diff']])
				if r.returncode != 0:
					shutil.rmtree(os.path.join(BUILD, 'src'), ignore_errors=True)
					raise HarnessError('%s/upstream.diff does not apply to the base' % p['name'])
		for f in owner:
			if os.path.exists(os.path.join(base, f)):
				raise HarnessError('%s exists in the base tree: edit it through an '
						   'upstream.diff instead' % f)
	# New files: copy only those whose content changed (checksum).  No -t: a
	# copied file gets the time of the copy, so it is always newer than the
	# objects built from its previous content, whatever its mtime here (a
	# checkout or merge can carry a file's time backwards).
	listing = os.path.join(BUILD, 'src', '.overlay')
	with open(listing, 'w') as f:
		f.write('\n'.join(sorted(owner)) + '\n')
	run(['rsync', '-rl', '--checksum', '--files-from=' + listing, TOP + '/', src + '/'],
	    quiet=True)
	with open(stamp, 'w') as f:
		f.write(ident)
	return src


# ---------------------------------------------------------------- build

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


def make_cmd(src, obj, *targets, extra=()):
	jobs = os.environ.get('JOBS') or str(host_cpus())
	cc = 'ccache gcc' if shutil.which('ccache') else 'gcc'
	return ['make', '-C', src, 'O=' + obj, 'CC=' + cc, 'HOSTCC=' + cc, '-j' + jobs,
		'-s'] + list(extra) + list(targets)


def config_values(path):
	vals = {}
	for line in open(path):
		m = re.match(r'(CONFIG_\w+)=(.*)', line)
		if m:
			vals[m.group(1)] = m.group(2)
			continue
		m = re.match(r'# (CONFIG_\w+) is not set', line)
		if m:
			vals[m.group(1)] = 'n'
	return vals


def fragments(flavour):
	return ['scalable.config', 'scalable-%s.config' % flavour]


def configure(src, obj, flavour):
	frags = fragments(flavour)
	ident = hashlib.sha256(b''.join(open(os.path.join(src, 'kernel', 'configs', f), 'rb').read()
				       for f in frags)).hexdigest()
	stamp = os.path.join(obj, '.scalable-config')
	if os.path.exists(stamp) and open(stamp).read() == ident and \
	   os.path.exists(os.path.join(obj, '.config')):
		return
	os.makedirs(obj, exist_ok=True)
	r = subprocess.run(make_cmd(src, obj, 'tinyconfig', *frags), capture_output=True, text=True,
			   env=build_env())
	if r.returncode != 0:
		raise HarnessError('configuring %s failed:\n%s' % (flavour, r.stdout + r.stderr))
	final = config_values(os.path.join(obj, '.config'))
	bad = []
	for f in frags:
		for sym, want in config_values(os.path.join(src, 'kernel', 'configs', f)).items():
			got = final.get(sym, 'n')
			if got != want:
				bad.append('%s: %s=%s requested, got %s' % (f, sym, want, got))
	if bad:
		raise HarnessError('config fragments did not take effect (unmet dependency?):\n  ' +
				   '\n  '.join(bad))
	with open(stamp, 'w') as f:
		f.write(ident)


def build_kernel(flavour):
	if flavour not in FLAVOURS:
		die('unknown config "%s": choose one of %s' % (flavour, ', '.join(FLAVOURS)))
	with machine_lock('building %s' % flavour):
		src = prepare_src()
		obj = os.path.join(BUILD, flavour)
		configure(src, obj, flavour)
		t0 = time.time()
		log('building the %s kernel in build/%s' % (flavour, flavour))
		run(make_cmd(src, obj, 'bzImage', 'headers'), env=build_env())
		log('%s kernel built in %.0f s' % (flavour, time.time() - t0))
		build_selftests(src, obj, flavour)
		build_initramfs(obj, flavour)
	return obj


def build_env():
	# Relative paths in the ccache hash: another checkout of the project
	# (a git worktree) then reuses the objects compiled here.
	return dict(os.environ, CCACHE_BASEDIR=TOP)


def build_selftests(src, obj, flavour):
	"""Install SELFTEST_TARGETS into build/<flavour>/kselftest-install.

	The static targets and DYNAMIC_TARGETS are built by two make runs and
	merged into one install tree (one kselftest-list.txt).  The selftests
	Makefile only fails when every target fails to build, so check that each
	target installed every test it lists.
	"""
	inst = os.path.join(obj, 'kselftest-install')
	shutil.rmtree(inst, ignore_errors=True)
	static = [t for t in SELFTEST_TARGETS if t not in DYNAMIC_TARGETS]
	dynamic = [t for t in SELFTEST_TARGETS if t in DYNAMIC_TARGETS]

	def make_install(targets, path, ldflags):
		run(['make', '-C', os.path.join(src, 'tools', 'testing', 'selftests'),
		     'O=' + obj, 'TARGETS=' + ' '.join(targets),
		     'KHDR_INCLUDES=-isystem ' + os.path.join(obj, 'usr', 'include'),
		     'INSTALL_PATH=' + path, '-j' + str(host_cpus()), '-s', 'install'] + ldflags)

	make_install(static, inst, ['LDFLAGS=-static'])
	if not os.path.exists(os.path.join(inst, 'run_kselftest.sh')):
		raise HarnessError('kselftest install produced no run_kselftest.sh')
	if dynamic:
		dyn = inst + '.dynamic'
		shutil.rmtree(dyn, ignore_errors=True)
		make_install(dynamic, dyn, [])
		with open(os.path.join(dyn, 'kselftest-list.txt')) as f:
			extra = f.read()
		with open(os.path.join(inst, 'kselftest-list.txt'), 'a') as f:
			f.write(extra)
		for t in dynamic:
			if os.path.isdir(os.path.join(dyn, t)):
				shutil.move(os.path.join(dyn, t), os.path.join(inst, t))
		shutil.rmtree(dyn)
	check_selftest_install(inst)
	exclude_tests(os.path.join(inst, 'kselftest-list.txt'), flavour)


def exclude_tests(listing, flavour):
	"""Take @flavour's EXCLUDED_TESTS out of the runner's list."""
	with open(listing) as f:
		lines = [line.strip() for line in f if line.strip()]
	stale = sorted(set(EXCLUDED_TESTS) - set(lines))
	if stale:
		raise HarnessError('EXCLUDED_TESTS names tests that were not built: ' +
				   ' '.join(stale))
	out = excluded_tests(flavour)
	with open(listing, 'w') as f:
		f.write(''.join(line + '\n' for line in lines if line not in out))


def check_selftest_install(inst):
	"""Every target listed, every listed test present and executable."""
	listed = {}
	with open(os.path.join(inst, 'kselftest-list.txt')) as f:
		for line in f:
			line = line.strip()
			if line:
				col, test = line.split(':', 1)
				listed.setdefault(col, []).append(test)
	bad = []
	for t in SELFTEST_TARGETS:
		if t not in listed:
			bad.append('%s: no tests installed' % t)
		for test in listed.get(t, []):
			path = os.path.join(inst, t, test)
			if not os.access(path, os.X_OK):
				bad.append('%s: %s was not built' % (t, test))
	if bad:
		raise HarnessError('kselftest build incomplete:\n  ' + '\n  '.join(bad))


def elf_interpreter(path):
	"""True if @path is an ELF executable with a program interpreter."""
	with open(path, 'rb') as f:
		head = f.read(4)
	if head != b'\x7fELF':
		return False
	r = subprocess.run(['readelf', '-l', '-W', path], capture_output=True, text=True)
	return 'Requesting program interpreter' in r.stdout


def shared_libraries(paths):
	"""The host files (loader included) that dynamic executables @paths load."""
	libs = set()
	for p in paths:
		r = subprocess.run(['ldd', p], capture_output=True, text=True)
		if r.returncode != 0:
			raise HarnessError('ldd %s failed: %s' % (p, r.stderr.strip()))
		for line in r.stdout.splitlines():
			m = re.match(r'\s*(?:\S+ => )?(/\S+) \(0x', line)
			if m:
				libs.add(m.group(1))
			elif '=> not found' in line:
				raise HarnessError('%s needs %s, not found on the host' % (p, line.strip()))
	return sorted(libs)


def build_initramfs(obj, flavour):
	"""Busybox-static root with the kselftests in /opt/kselftest."""
	root = os.path.join(obj, 'initramfs')
	shutil.rmtree(root, ignore_errors=True)
	for d in ('bin', 'sbin', 'usr/bin', 'usr/sbin', 'proc', 'sys', 'dev', 'tmp', 'opt', 'etc',
		  'root'):
		os.makedirs(os.path.join(root, d), exist_ok=True)
	shutil.copy2('/bin/busybox', os.path.join(root, 'bin', 'busybox'))
	applets = subprocess.run(['/bin/busybox', '--list'], capture_output=True,
				 text=True).stdout.split()
	for a in applets:
		if a == 'busybox':
			continue
		os.symlink('busybox', os.path.join(root, 'bin', a))
	# The kselftest runner calls "/usr/bin/timeout --foreground"; busybox's
	# timeout has no --foreground, so drop it and keep the per-test timeout.
	shim = os.path.join(root, 'usr', 'bin', 'timeout')
	with open(shim, 'w') as f:
		f.write('#!/bin/sh\n[ "$1" = --foreground ] && shift\nexec /bin/busybox timeout "$@"\n')
	os.chmod(shim, 0o755)
	shutil.copy2(os.path.join(HARNESS, 'init.sh'), os.path.join(root, 'init'))
	os.chmod(os.path.join(root, 'init'), 0o755)
	run(['cp', '-a', os.path.join(obj, 'kselftest-install'), os.path.join(root, 'opt', 'kselftest')],
	    quiet=True)
	# Shared libraries of the dynamically linked kselftests (DYNAMIC_TARGETS),
	# at their host paths: the loader finds them in its default directories.
	dyn = []
	for t in DYNAMIC_TARGETS:
		for d, _, names in os.walk(os.path.join(root, 'opt', 'kselftest', t)):
			dyn += [os.path.join(d, n) for n in names
				if elf_interpreter(os.path.join(d, n))]
	for lib in shared_libraries(dyn):
		dst = os.path.join(root, lib.lstrip('/'))
		os.makedirs(os.path.dirname(dst), exist_ok=True)
		shutil.copy(lib, dst)
	with open(os.path.join(root, 'etc', 'passwd'), 'w') as f:
		f.write('root:x:0:0:root:/root:/bin/sh\n')
	img = os.path.join(obj, 'initramfs.cpio.gz')
	files = subprocess.run(['find', '.'], cwd=root, capture_output=True, text=True).stdout
	cpio = subprocess.run(['cpio', '-o', '-H', 'newc', '--quiet', '-R', '0:0'], cwd=root,
			      input=files.encode(), capture_output=True)
	if cpio.returncode != 0:
		raise HarnessError('cpio failed: ' + cpio.stderr.decode())
	with gzip.open(img, 'wb', compresslevel=1) as f:
		f.write(cpio.stdout)
	return img


# ---------------------------------------------------------------- boot

def kvm_works():
	"""/dev/kvm can exist without usable hardware virtualization: check both."""
	forced = os.environ.get('ACCEL')
	if forced:
		if forced not in ('kvm', 'tcg'):
			die('ACCEL must be kvm or tcg, not "%s"' % forced)
		return forced == 'kvm'
	if not os.access('/dev/kvm', os.R_OK | os.W_OK):
		return False
	try:
		flags = open('/proc/cpuinfo').read()
	except OSError:
		return False
	return bool(re.search(r'^flags\s*:.*\b(vmx|svm)\b', flags, re.M))


def qemu_cmd(obj, smp, accel, append, console, tap, mem):
	cmd = [os.environ.get('QEMU') or 'qemu-system-x86_64', '-M', 'pc', '-m', mem,
	       '-smp', str(smp), '-nodefaults', '-display', 'none', '-no-reboot',
	       '-kernel', os.path.join(obj, 'arch', 'x86', 'boot', 'bzImage'),
	       '-initrd', os.path.join(obj, 'initramfs.cpio.gz'),
	       '-append', append,
	       '-chardev', 'file,id=con,path=' + console, '-serial', 'chardev:con',
	       '-chardev', 'file,id=tap,path=' + tap, '-serial', 'chardev:tap']
	if accel == 'kvm':
		cmd += ['-accel', 'kvm', '-cpu', 'host']
	else:
		cmd += ['-accel', 'tcg,thread=multi', '-cpu', 'max']
	return cmd


def tcg_tsc_param(accel):
	"""OpLog's clock under TCG.

	TCG gives every vCPU the same TSC, derived from the host's and kept
	monotonic across vCPUs (QEMU's cpu_get_ticks()), but it cannot advertise
	the invariant-TSC CPUID bit, so the guest kernel would not trust it and
	OpLog would fall back to its global sequence counter.  Where the host
	TSC itself is constant and synchronized, say so on the command line.
	Under KVM (-cpu host) the guest decides by itself.
	"""
	if accel != 'tcg':
		return ''
	try:
		flags = open('/proc/cpuinfo').read()
	except OSError:
		return ''
	if re.search(r'^flags\s*:.*\bconstant_tsc\b.*\bnonstop_tsc\b', flags, re.M):
		return ' oplog.clock=tsc'
	return ''


def boot(obj, flavour, smp, mode, logdir, timeout, inject='none', cpus=None):
	"""Boot once; return dict with console and tap logs and how it ended."""
	os.makedirs(logdir, exist_ok=True)
	# KERNEL_ARGS: extra kernel command-line words, e.g. dcache_oplog=off to
	# run the tests on the stock dentry path; their logs get their own names.
	kargs = ' '.join(os.environ.get('KERNEL_ARGS', '').split())
	name = '%s-smp%d%s%s' % (flavour, smp, '' if inject == 'none' else '-inject-' + inject,
				 '-' + re.sub(r'[^A-Za-z0-9]+', '_', kargs) if kargs else '')
	console = os.path.join(logdir, name + '.console.log')
	tap = os.path.join(logdir, name + '.tap.log')
	append = ('console=ttyS0 panic=-1 oops=panic loglevel=7 '
		  'scalable_mode=%s scalable_inject=%s '
		  'scalable_kmemleak=%d' % (mode, inject, 1 if flavour == 'debug' else 0))
	if cpus:
		append += ' scalable_cpus=' + cpus
	if flavour == 'debug':
		append += ' kmemleak=on'
	if kargs:
		append += ' ' + kargs
	accel = 'kvm' if kvm_works() else 'tcg'
	mem = '2G'
	for attempt in (1, 2):
		for p in (console, tap):
			open(p, 'w').close()
		cmd = qemu_cmd(obj, smp, accel, append + tcg_tsc_param(accel), console, tap, mem)
		log('booting %s kernel, -smp %d, %s, mode %s (console: %s)' %
		    (flavour, smp, accel.upper(), mode, os.path.relpath(console, TOP)))
		t0 = time.time()
		with machine_lock('booting'):
			# Time the guest, not the wait for the lock.
			t0 = time.time()
			proc, ended, seen_tap = watch_guest(cmd, console, tap, accel, timeout)
		if ended == 'kvm-silent' and attempt == 1:
			log('KVM guest printed nothing in 30 s: KVM does not really work here, '
			    'retrying with TCG')
			accel = 'tcg'
			continue
		break
	secs = time.time() - t0
	con = open(console, errors='replace').read()
	taptext = open(tap, errors='replace').read()
	return {'name': name, 'flavour': flavour, 'smp': smp, 'accel': accel, 'mode': mode,
		'console': console, 'tap': tap, 'console_text': con, 'tap_text': taptext,
		'ended': ended or 'exit', 'qemu_rc': proc.returncode, 'seconds': secs,
		'append': append}


def watch_guest(cmd, console, tap, accel, timeout):
	"""Run QEMU; kill it on timeout, or when a KVM guest stays silent."""
	t0 = time.time()
	proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
				stderr=subprocess.STDOUT)
	ended, seen_tap = None, 0
	try:
		while True:
			try:
				proc.wait(timeout=1)
				break
			except subprocess.TimeoutExpired:
				pass
			elapsed = time.time() - t0
			seen_tap = echo_progress(tap, seen_tap)
			if accel == 'kvm' and elapsed > 30 and os.path.getsize(console) == 0:
				ended = 'kvm-silent'
				break
			if elapsed > timeout:
				ended = 'timeout'
				break
	finally:
		if proc.poll() is None:
			proc.kill()
			proc.wait()
	seen_tap = echo_progress(tap, seen_tap)
	out = proc.stdout.read().decode(errors='replace').strip()
	if out:
		log('qemu: ' + out[-2000:])
	return proc, ended, seen_tap


def echo_progress(path, seen):
	try:
		with open(path, errors='replace') as f:
			f.seek(seen)
			data = f.read()
	except OSError:
		return seen
	end = data.rfind('\n')
	if end < 0:
		return seen
	for line in data[:end].splitlines():
		if re.match(r'(not )?ok \d+ ', line) or 'RESULT ' in line or \
		   re.match(r'# (not )?ok \d+ ', line):
			print('  | ' + line, flush=True)
	return seen + len(data[:end + 1].encode())


# ---------------------------------------------------------------- analysis

def find_splats(text):
	found = []
	for pat, kind in SPLATS:
		for m in re.finditer(pat, text):
			ls = text.rfind('\n', 0, m.start()) + 1
			le = text.find('\n', m.end())
			found.append((kind, text[ls:le if le >= 0 else None].strip()))
	return found


def parse_kunit(src, b, logdir):
	"""Parse the KTAP on the console with kunit.py; return a summary dict."""
	con = b['console_text']
	cut = con.find('SCALABLE: init start')
	ktap = con[:cut] if cut >= 0 else con
	path = os.path.join(logdir, b['name'] + '.ktap.log')
	with open(path, 'w') as f:
		f.write(ktap)
	jpath = os.path.join(logdir, b['name'] + '.kunit.json')
	kunit = os.path.join(src, 'tools', 'testing', 'kunit', 'kunit.py')
	r = subprocess.run([sys.executable, kunit, 'parse', '--json=' + jpath, path],
			   capture_output=True, text=True)
	summary = {'rc': r.returncode, 'passed': 0, 'failed': 0, 'skipped': 0, 'crashed': 0,
		   'suites': [], 'output': r.stdout[-4000:] + r.stderr[-2000:]}
	try:
		data = json.load(open(jpath))
	except (OSError, ValueError):
		return summary

	def walk(group, suite):
		for case in group.get('test_cases', []):
			st = case.get('status', '')
			key = {'PASS': 'passed', 'FAIL': 'failed', 'SKIP': 'skipped'}.get(st, 'crashed')
			summary[key] += 1
			if suite and suite not in summary['suites']:
				summary['suites'].append(suite)
		for g in group.get('sub_groups', []):
			walk(g, suite or g.get('name'))
	walk(data, None)
	return summary


def parse_kselftest(text):
	"""Results of run_kselftest.sh (TAP 13) and their nested subtests.

	The runner prints one TAP plan per collection (target), and init.sh runs
	it more than once, so the output is a sequence of blocks, each with its
	plan.  Every result carries its target; a subtest (a line indented by
	the runner's "# ") belongs to the test whose "# selftests: T: N" header
	precedes it.  A SKIP directive marks a skip, never a pass.
	"""
	top, sub, blocks = [], [], []
	target = None
	for line in text.splitlines():
		m = re.match(r'1\.\.(\d+)$', line)
		if m:
			blocks.append({'plan': int(m.group(1)), 'results': 0})
			continue
		m = re.match(r'# selftests: (\S+): ', line)
		if m:
			target = m.group(1)
			continue
		m = re.match(r'(# )?(not ok|ok) (\d+) (.*?)(?:\s+#\s*(.*))?$', line)
		if m:
			name = m.group(4)
			t = {'ok': m.group(2) == 'ok', 'name': name,
			     'skip': (m.group(5) or '').upper().startswith('SKIP')}
			if m.group(1):
				t['target'] = target
				sub.append(t)
			else:
				mt = re.match(r'selftests: (\S+): ', name)
				t['target'] = mt.group(1) if mt else target
				top.append(t)
				if blocks:
					blocks[-1]['results'] += 1
	plan = sum(b['plan'] for b in blocks) if blocks else None
	return {'plan': plan, 'blocks': blocks, 'top': top, 'sub': sub}


def kselftest_counts(kst, target=None, flavour=None):
	"""Pass/skip/fail counts of tests and subtests, of one target or all.

	The tests that EXCLUDED_TESTS keeps from running on @flavour count as
	skipped.
	"""
	top = [t for t in kst['top'] if target is None or t['target'] == target]
	sub = [t for t in kst['sub'] if target is None or t['target'] == target]
	excluded = [t for t in (excluded_tests(flavour) if flavour else {})
		    if t.split(':')[0] in SELFTEST_TARGETS and
		    (target is None or t.split(':')[0] == target)]
	return {'passed': sum(1 for t in top if t['ok'] and not t['skip']),
		'failed': sum(1 for t in top if not t['ok']),
		'skipped': sum(1 for t in top if t['skip']) + len(excluded),
		'subtests_passed': sum(1 for t in sub if t['ok'] and not t['skip']),
		'subtests_failed': sum(1 for t in sub if not t['ok'] and not t['skip']),
		'subtests_skipped': sum(1 for t in sub if t['skip'])}


def parse_dcache_oplog(console):
	"""init.sh's "dcache_oplog <when>: enabled=1 hits=N ..." lines, by <when>."""
	states = {}
	for m in re.finditer(r'SCALABLE: dcache_oplog (at start|before|after): (.*)', console):
		st = {}
		for kv in m.group(2).split():
			k, _, v = kv.partition('=')
			if v.isdigit():
				st[k] = int(v)
		states[m.group(1)] = st
	return states


def check_dcache_oplog(states, append):
	"""Problems with the dentry OpLog around the upstream selftests.

	The series' tests must leave the switch as they found it; the upstream
	tests must run with it on (unless the boot asked for dcache_oplog=off)
	and the OpLog must have counted references meanwhile.
	"""
	problems = []
	start, before, after = (states.get(k) for k in ('at start', 'before', 'after'))
	if not (start and before and after):
		return ['dcache_oplog: init.sh printed no switch and counters around the '
			'upstream selftests (is CONFIG_DCACHE_OPLOG on and debugfs mounted?)']
	if start.get('enabled') != before.get('enabled'):
		problems.append('dcache_oplog: the series\' kselftests left the switch at %s, '
				'found at %s' % (before.get('enabled'), start.get('enabled')))
	off = 'dcache_oplog=off' in append.split()
	if before.get('enabled') != (0 if off else 1):
		problems.append('dcache_oplog: switch %s during the upstream selftests, '
				'expected %s' % (before.get('enabled'), 0 if off else 1))
	if not off and after.get('hits', 0) <= before.get('hits', 0):
		problems.append('dcache_oplog: no per-CPU reference was counted during the '
				'upstream selftests (hits %s -> %s)' %
				(before.get('hits'), after.get('hits')))
	return problems


def parse_results(text):
	res = []
	for m in re.finditer(r'RESULT (bench=\S+(?: \S+=\S+)*)', text):
		d = dict(kv.split('=', 1) for kv in m.group(1).split())
		for k, v in list(d.items()):
			try:
				d[k] = int(v) if re.fullmatch(r'-?\d+', v) else float(v) \
					if re.fullmatch(r'-?[\d.]+(e-?\d+)?', v) else v
			except ValueError:
				pass
		res.append(d)
	return res


def analyze(src, b, logdir, expect_done=True):
	"""Judge one boot: returns (ok, problems, summary)."""
	problems = []
	con = b['console_text']
	if b['ended'] == 'timeout':
		problems.append('the guest did not finish within the timeout and was killed')
	elif 'Kernel panic - not syncing' in con:
		problems.append('kernel panic')
	elif expect_done and 'SCALABLE: done' not in con:
		problems.append('the guest stopped before init finished (QEMU exit %s)' % b['qemu_rc'])
	splats = find_splats(con)
	for kind, line in splats:
		problems.append('kernel splat (%s): %s' % (kind, line))
	kunit = parse_kunit(src, b, logdir)
	if kunit['failed'] or kunit['crashed'] or kunit['rc'] != 0:
		problems.append('KUnit: %d failed, %d crashed (kunit.py parse exit %d)' %
				(kunit['failed'], kunit['crashed'], kunit['rc']))
	if expect_done and kunit['passed'] == 0:
		problems.append('KUnit: no test ran')
	kst = parse_kselftest(b['tap_text'])
	oplog = parse_dcache_oplog(con)
	if expect_done:
		if kst['plan'] is None:
			problems.append('kselftest: no TAP plan in the output')
		for blk in kst['blocks']:
			if blk['results'] != blk['plan']:
				problems.append('kselftest: plan 1..%d but %d results' %
						(blk['plan'], blk['results']))
		# Diagnostic boots (KERNEL_ARGS) may run only some of the targets.
		args = b.get('append', '').split()
		only = [a.split('=', 1)[1] for a in args if a.startswith('scalable_upstream=')]
		for t in SELFTEST_TARGETS:
			if t == 'scalable' and 'scalable_own=0' in args:
				continue
			if t != 'scalable' and only and t not in only[0].split(','):
				continue
			if not any(r['target'] == t for r in kst['top']):
				problems.append('kselftest: no result from target %s' % t)
		if any(t != 'scalable' for t in SELFTEST_TARGETS):
			problems += check_dcache_oplog(oplog, b.get('append', ''))
	results = parse_results(b['tap_text'])
	if expect_done:
		for bench in BENCHMARKS if 'scalable_own=0' not in b.get('append', '').split() else ():
			if not any(r['bench'] == bench for r in results):
				problems.append('benchmark %s printed no RESULT line' % bench)
	for t in kst['top']:
		if not t['ok']:
			problems.append('kselftest failed: ' + t['name'])
	for t in kst['sub']:
		if not t['ok'] and not t['skip']:
			problems.append('  subtest failed: ' + t['name'])
	summary = {'boot': b['name'], 'flavour': b['flavour'], 'smp': b['smp'], 'accel': b['accel'],
		   'mode': b['mode'], 'seconds': round(b['seconds'], 1), 'ended': b['ended'],
		   'kunit': {k: kunit[k] for k in ('passed', 'failed', 'skipped', 'crashed', 'suites')},
		   'kselftest': dict(kselftest_counts(kst, flavour=b['flavour']), plan=kst['plan']),
		   'targets': {t: kselftest_counts(kst, t, b['flavour']) for t in SELFTEST_TARGETS},
		   'not_run': excluded_tests(b['flavour']),
		   'dcache_oplog': oplog,
		   'results': results,
		   'console': os.path.relpath(b['console'], TOP), 'tap': os.path.relpath(b['tap'], TOP),
		   'problems': problems}
	if problems:
		tail = '\n'.join(con.splitlines()[-40:])
		print('\n----- %s: last console lines -----\n%s\n-----' % (b['name'], tail), flush=True)
		if kunit['failed'] or kunit['crashed']:
			print(kunit['output'], flush=True)
	return not problems, problems, summary


# ---------------------------------------------------------------- report

def num(v):
	"""Three significant digits, without exponents for the usual ranges."""
	if v >= 100:
		return '%.0f' % v
	return '%.3g' % v if v >= 0.001 or v == 0 else '%.2e' % v


def bench_table(results):
	"""Markdown table: one row per (bench, mode), one column per CPU count.

	A result with ast_speedup (ast_bench's baselines) also shows in its cell
	how much faster the default ast_mutex was than it in the same cell, so
	that every pairing can be read off the table, not only 2/1 scaling.
	"""
	cpus = sorted({r['cpus'] for r in results if isinstance(r.get('cpus'), int)})
	rows = {}
	for r in results:
		rows.setdefault((r['bench'], r.get('mode', '-')), {})[r['cpus']] = r
	if not cpus:
		return '(no benchmark results)'
	head = '| benchmark | mode | ' + \
	       ' | '.join('%d CPU: ops/ms ±sd (per CPU)' % c for c in cpus) + \
	       ' | scaling %d/1 |' % cpus[-1]
	lines = [head, '|' + '---|' * (len(cpus) + 3)]
	for (bench, mode), byc in rows.items():
		cells = []
		for c in cpus:
			r = byc.get(c)
			if r is None:
				cells.append('-')
			elif r.get('status') == 'fail':
				cells.append('FAILED')
			else:
				cell = '%s ±%s (%s)' % (num(r['ops_per_ms']), num(r.get('stddev', 0)),
							num(r['ops_per_ms'] / c))
				if isinstance(r.get('ast_speedup'), (int, float)):
					cell += ' ast %.2fx' % r['ast_speedup']
					if isinstance(r.get('ast_cpu_speedup'), (int, float)):
						cell += ' (cpu %.2fx)' % r['ast_cpu_speedup']
				cells.append(cell)
		one, top = byc.get(cpus[0]), byc.get(cpus[-1])
		scale = '%.2fx' % (top['ops_per_ms'] / one['ops_per_ms']) \
			if one and top and one['ops_per_ms'] > 0 and cpus[0] == 1 else '-'
		lines.append('| %s | %s | %s | %s |' % (bench, mode, ' | '.join(cells), scale))
	if any('ast_speedup' in r for r in results):
		lines += ['', '"ast N.NNx": the default ast_mutex moved N.NN times as many items '
			  'per ms as this baseline with the same threads, buffer and CPUs '
			  '(ast_speedup; above 1 ast is faster); "cpu M.MMx": this baseline '
			  'spent M.MM times as much CPU time (user + system) per item as ast '
			  '(ast_cpu_speedup).']
	return '\n'.join(lines)


def write_report(summaries, title):
	os.makedirs(OUT, exist_ok=True)
	conf = read_conf()
	report = {'title': title, 'base': conf['LINUX_VERSION'],
		  'host_cpus': host_cpus(), 'date': time.strftime('%Y-%m-%dT%H:%M:%S%z'),
		  'boots': summaries}
	with open(os.path.join(OUT, 'report.json'), 'w') as f:
		json.dump(report, f, indent=1)
	md = ['# %s' % title, '',
	      'Base: Linux %s; host CPUs: %d; %s' % (conf['LINUX_VERSION'], host_cpus(),
						  report['date']), '']
	for s in summaries:
		md.append('## %s kernel, -smp %d, %s, mode %s (%.0f s)' %
			  (s['flavour'], s['smp'], s['accel'].upper(), s['mode'], s['seconds']))
		md.append('')
		k, t = s['kunit'], s['kselftest']
		md.append('- KUnit: %d passed, %d failed, %d skipped, %d crashed (suites: %s)' %
			  (k['passed'], k['failed'], k['skipped'], k['crashed'],
			   ', '.join(k['suites']) or 'none'))
		md.append('- kselftest: %d passed, %d failed, %d skipped (%s run, %d not run); '
			  'subtests %d passed, %d failed, %d skipped' %
			  (t['passed'], t['failed'], t['skipped'], t['plan'],
			   len(s.get('not_run', {})), t['subtests_passed'], t['subtests_failed'],
			   t['subtests_skipped']))
		for name, c in s.get('targets', {}).items():
			md.append('  - %s: %d passed, %d failed, %d skipped; subtests %d passed, '
				  '%d failed, %d skipped' %
				  (name, c['passed'], c['failed'], c['skipped'], c['subtests_passed'],
				   c['subtests_failed'], c['subtests_skipped']))
			for test, why in s.get('not_run', {}).items():
				if test.split(':')[0] == name:
					md.append('    - skipped (not run): %s: %s' % (test, why))
		ops = s.get('dcache_oplog', {})
		if 'before' in ops and 'after' in ops:
			b, a = ops['before'], ops['after']
			md.append('- dentry OpLog during the upstream kselftests: switch %s; ' %
				  b.get('enabled') + ', '.join(
					  '%s %d -> %d (+%d)' % (k, b[k], a[k], a[k] - b[k])
					  for k in ('hits', 'misses', 'syncs', 'flushes')
					  if k in a and k in b))
		md.append('- console: `%s`, TAP: `%s`' % (s['console'], s['tap']))
		if s['problems']:
			md.append('- **FAILED:**')
			md += ['  - ' + p for p in s['problems']]
		else:
			md.append('- no kernel splat, all tests passed')
		md.append('')
		if s['results']:
			md.append(bench_table(s['results']))
			md.append('')
	if any(s['accel'] == 'tcg' for s in summaries):
		md.append('Numbers from TCG (software emulation) show ratios, not hardware speed; '
			  'run on a KVM host for real scaling numbers.')
	text = '\n'.join(md) + '\n'
	with open(os.path.join(OUT, 'report.md'), 'w') as f:
		f.write(text)
	print('\n' + text, flush=True)
	log('report written to %s and %s' % (os.path.relpath(os.path.join(OUT, 'report.md'), TOP),
					     os.path.relpath(os.path.join(OUT, 'report.json'), TOP)))


# ---------------------------------------------------------------- commands

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


def boot_timeout(flavour, mode):
	# The benchmarks sweep 1..smp workers, so their run time grows with smp.
	smp = default_smp()
	base = {'test': 900, 'quick': 600 + 120 * smp, 'full': 1800 + 600 * smp}[mode]
	return env_int('BOOT_TIMEOUT', 0) or base * (3 if flavour == 'debug' else 1)


def cmd_prepare(args):
	ensure_packages(need_base=not (os.environ.get('LINUX_TREE') or
				       os.environ.get('LINUX_TARBALL')))
	prepare_src()
	log('build/src/linux is ready')


def cmd_build(args):
	ensure_packages(need_base=not (os.environ.get('LINUX_TREE') or
				       os.environ.get('LINUX_TARBALL')))
	for fl in args.flavours:
		build_kernel(fl)


def boot_and_judge(flavour, mode, smp, logdir, cpus=None):
	src = os.path.join(BUILD, 'src', 'linux')
	obj = os.path.join(BUILD, flavour)
	b = boot(obj, flavour, smp, mode, logdir, boot_timeout(flavour, mode), cpus=cpus)
	ok, problems, summary = analyze(src, b, logdir)
	verdict = 'PASS' if ok else 'FAIL'
	log('%s: %s in %.0f s' % (b['name'], verdict, b['seconds']))
	for p in problems:
		log('  ' + p)
	return ok, summary


def cmd_run(args):
	"""The main job: build the release kernel, boot, test, benchmark, report."""
	mode = args.mode
	if mode not in ('quick', 'full', 'test'):
		die('MODE must be quick or full, not "%s"' % mode)
	cmd_build(argparse.Namespace(flavours=['release']))
	smp = default_smp()
	logdir = os.path.join(OUT, 'logs')
	ok, summary = boot_and_judge('release', mode, smp, logdir, cpus=os.environ.get('CPUS'))
	write_report([summary], 'Scalable series: benchmark report (%s mode)' % mode)
	return 0 if ok else 1


def cmd_test(args):
	"""What CI runs: release and debug kernels, all tests, splat check."""
	flavours = args.flavours
	cmd_build(argparse.Namespace(flavours=flavours))
	smp = default_smp()
	logdir = os.path.join(OUT, 'logs')
	results, summaries = [], []
	if not args.no_harness_check:
		results.append(('harness self-check', harness_selfcheck(logdir)))
	for fl in flavours:
		ok, summary = boot_and_judge(fl, 'test', smp, logdir)
		results.append((fl, ok))
		summaries.append(summary)
	write_report(summaries, 'Scalable series: test report')
	failed = [n for n, ok in results if not ok]
	if failed:
		log('FAILED: ' + ', '.join(failed))
		return 1
	log('all tests passed')
	return 0


def harness_selfcheck(logdir):
	"""Boot with injected faults: each must be caught, or the harness is broken."""
	src = os.path.join(BUILD, 'src', 'linux')
	obj = os.path.join(BUILD, 'release')
	ok = True
	for inject, timeout, want in (('warn', 300, 'kernel splat (WARNING)'),
				      ('panic', 300, 'kernel panic'),
				      ('hang', 25, 'did not finish within the timeout')):
		b = boot(obj, 'release', 2, 'test', logdir, timeout, inject=inject)
		passed, problems, _ = analyze(src, b, logdir, expect_done=False) \
			if inject != 'warn' else analyze(src, b, logdir)
		caught = any(want in p for p in problems)
		log('harness self-check: injected %s -> %s' %
		    (inject, 'caught' if caught else 'NOT CAUGHT: %s' % problems))
		ok = ok and caught and not passed
	return ok


def cmd_boot(args):
	"""Boot an already built kernel once (for debugging the harness)."""
	smp = default_smp()
	logdir = os.path.join(OUT, 'logs')
	if args.inject != 'none':
		b = boot(os.path.join(BUILD, args.flavour), args.flavour, smp, args.mode, logdir,
			 env_int('BOOT_TIMEOUT', 60), inject=args.inject)
		ok, problems, _ = analyze(os.path.join(BUILD, 'src', 'linux'), b, logdir,
					  expect_done=False)
		for p in problems:
			log(p)
		return 0 if ok else 1
	ok, summary = boot_and_judge(args.flavour, args.mode, smp, logdir, cpus=os.environ.get('CPUS'))
	write_report([summary], 'Scalable series: boot report')
	return 0 if ok else 1


def main():
	ap = argparse.ArgumentParser(description=__doc__)
	sub = ap.add_subparsers(dest='cmd', required=True)
	sub.add_parser('prepare', help='install packages, unpack and patch the base')
	p = sub.add_parser('build', help='build kernels, selftests and initramfs')
	p.add_argument('flavours', nargs='*', default=list(FLAVOURS))
	p = sub.add_parser('run', help='main job: build, boot, test and benchmark the release kernel')
	p.add_argument('--mode', default=os.environ.get('MODE') or 'full')
	p = sub.add_parser('test', help='CI: build and boot release and debug, fail on any failure')
	p.add_argument('flavours', nargs='*', default=list(FLAVOURS))
	p.add_argument('--no-harness-check', action='store_true')
	p = sub.add_parser('boot', help='boot a built kernel once')
	p.add_argument('flavour', choices=FLAVOURS)
	p.add_argument('--mode', default=os.environ.get('MODE') or 'test')
	p.add_argument('--inject', default='none', choices=('none', 'warn', 'panic', 'hang'))
	p = sub.add_parser('series', help='export the series with git format-patch')
	p.add_argument('--build', action='store_true', help='build every step of the series')
	sub.add_parser('check', help='checkpatch, sparse, W=1, coccicheck and kernel-doc')
	args = ap.parse_args()
	for fl in getattr(args, 'flavours', []) or []:
		if fl not in FLAVOURS:
			die('unknown config "%s": choose one of %s' % (fl, ', '.join(FLAVOURS)))
	try:
		if args.cmd == 'series':
			import series
			return series.cmd_series(args)
		if args.cmd == 'check':
			import series
			return series.cmd_check(args)
		return {'prepare': cmd_prepare, 'build': cmd_build, 'run': cmd_run, 'test': cmd_test,
			'boot': cmd_boot}[args.cmd](args) or 0
	except HarnessError as e:
		die(str(e), 1)
	except KeyboardInterrupt:
		die('interrupted', 130)


if __name__ == '__main__':
	# series.py imports this file as "scalable": let it get this module,
	# not a second copy whose HarnessError main() would not catch.
	sys.modules.setdefault('scalable', sys.modules[__name__])
	sys.exit(main())
