# SPDX-License-Identifier: GPL-2.0
#
# Building what a boot needs: a kernel flavour configured from tinyconfig
# and its fragments (checked to have taken effect), the kselftest targets
# installed and checked, and the busybox initramfs that carries them, all
# in build/<flavour>.

import gzip
import hashlib
import os
import re
import shutil
import subprocess
import time

import scalable_common as common
from scalable_common import HarnessError, die, host_cpus, log, machine_lock, run
from scalable_tree import prepare_src

def make_cmd(req, src, obj, *targets, extra=()):
	"""make of @targets in the tree @src, objects in @obj, @req's JOBS jobs."""
	jobs = str(req.jobs or host_cpus())
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


def configure(req, src, obj, flavour):
	frags = fragments(flavour)
	ident = hashlib.sha256(b''.join(open(os.path.join(src, 'kernel', 'configs', f), 'rb').read()
				       for f in frags)).hexdigest()
	stamp = os.path.join(obj, '.scalable-config')
	if os.path.exists(stamp) and open(stamp).read() == ident and \
	   os.path.exists(os.path.join(obj, '.config')):
		return
	os.makedirs(obj, exist_ok=True)
	r = subprocess.run(make_cmd(req, src, obj, 'tinyconfig', *frags), capture_output=True,
			   text=True, env=build_env())
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


def build_kernel(req, flavour):
	if flavour not in common.FLAVOURS:
		die('unknown config "%s": choose one of %s' % (flavour, ', '.join(common.FLAVOURS)))
	with machine_lock(req, 'building %s' % flavour):
		src = prepare_src(req)
		obj = os.path.join(common.BUILD, flavour)
		configure(req, src, obj, flavour)
		t0 = time.time()
		log('building the %s kernel in build/%s' % (flavour, flavour))
		run(make_cmd(req, src, obj, 'bzImage', 'headers'), env=build_env())
		log('%s kernel built in %.0f s' % (flavour, time.time() - t0))
		build_selftests(src, obj, flavour)
		build_initramfs(obj, flavour)
	return obj


def build_env():
	# Relative paths in the ccache hash: another checkout of the project
	# (a git worktree) then reuses the objects compiled here.
	return dict(os.environ, CCACHE_BASEDIR=common.TOP)


def build_selftests(src, obj, flavour):
	"""Install SELFTEST_TARGETS into build/<flavour>/kselftest-install.

	The static targets and DYNAMIC_TARGETS are built by two make runs and
	merged into one install tree (one kselftest-list.txt).  The selftests
	Makefile only fails when every target fails to build, so check that each
	target installed every test it lists.
	"""
	inst = os.path.join(obj, 'kselftest-install')
	shutil.rmtree(inst, ignore_errors=True)
	static = [t for t in common.SELFTEST_TARGETS
		  if t not in common.DYNAMIC_TARGETS and t not in common.PROGRAM_TARGETS]
	dynamic = [t for t in common.SELFTEST_TARGETS if t in common.DYNAMIC_TARGETS]

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
	for t in common.SELFTEST_TARGETS:
		if t in common.PROGRAM_TARGETS:
			install_programs(src, obj, inst, t, common.PROGRAM_TARGETS[t])
	check_selftest_install(inst)
	exclude_tests(os.path.join(inst, 'kselftest-list.txt'), flavour)


def install_programs(src, obj, inst, target, programs):
	"""Build @programs of the selftest @target one by one into @inst/@target.

	Each program is made through the target Makefile's own rule for its
	full output path (statically linked, against the kernel's exported
	headers), and listed as @target:<program> in kselftest-list.txt.  The
	target's settings file (the runner's per-test timeout) is copied, as
	the kselftest install would.
	"""
	out = os.path.join(inst, target)
	tdir = os.path.join(src, 'tools', 'testing', 'selftests', target)
	os.makedirs(out, exist_ok=True)
	# The mm Makefile writes local_config.{h,mk} (its feature probe) into
	# the source directory: take them out again, so that the assembled
	# tree stays what the series reproduces (make check compares them).
	present = set(os.listdir(tdir))
	try:
		run(['make', '-C', tdir,
		     'OUTPUT=' + out, 'KHDR_INCLUDES=-isystem ' + os.path.join(obj, 'usr', 'include'),
		     'LDFLAGS=-static', '-j' + str(host_cpus()), '-s'] +
		    [os.path.join(out, p) for p in programs])
	finally:
		for name in set(os.listdir(tdir)) - present:
			os.unlink(os.path.join(tdir, name))
	# The programs' object files, if the rules left any, are not tests.
	for name in os.listdir(out):
		if name not in programs and name != 'settings':
			path = os.path.join(out, name)
			if os.path.isdir(path):
				shutil.rmtree(path)
			else:
				os.unlink(path)
	if os.path.exists(os.path.join(tdir, 'settings')):
		shutil.copy2(os.path.join(tdir, 'settings'), os.path.join(out, 'settings'))
	with open(os.path.join(inst, 'kselftest-list.txt'), 'a') as f:
		f.write(''.join('%s:%s\n' % (target, p) for p in programs))


def exclude_tests(listing, flavour):
	"""Take @flavour's EXCLUDED_TESTS out of the runner's list."""
	with open(listing) as f:
		lines = [line.strip() for line in f if line.strip()]
	stale = sorted(set(common.EXCLUDED_TESTS) - set(lines))
	if stale:
		raise HarnessError('EXCLUDED_TESTS names tests that were not built: ' +
				   ' '.join(stale))
	out = common.excluded_tests(flavour)
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
	for t in common.SELFTEST_TARGETS:
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
	initramfs_root(obj, root)
	return write_cpio(root, os.path.join(obj, 'initramfs.cpio.gz'))


def initramfs_root(obj, root):
	"""Fill @root: busybox, /init and what it sources, the kselftests of @obj."""
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
	shutil.copy2(os.path.join(common.HARNESS, 'init.sh'), os.path.join(root, 'init'))
	os.chmod(os.path.join(root, 'init'), 0o755)
	# The test run that /init shares with the native run_scalable.sh.
	shutil.copy2(os.path.join(common.HARNESS, 'kselftests.sh'), os.path.join(root, 'kselftests.sh'))
	run(['cp', '-a', os.path.join(obj, 'kselftest-install'), os.path.join(root, 'opt', 'kselftest')],
	    quiet=True)
	# Shared libraries of the dynamically linked kselftests (DYNAMIC_TARGETS),
	# at their host paths: the loader finds them in its default directories.
	copy_host_files(root, shared_libraries(dynamic_executables(
		os.path.join(root, 'opt', 'kselftest'))))
	# exec_bench's dynamically linked programs, and what they load.
	missing = [p for p in common.EXEC_PROGRAMS if not os.access(p, os.X_OK)]
	if missing:
		raise HarnessError('exec_bench runs %s from the host: %s missing (apt-get '
				   'install coreutils dash)' % (', '.join(common.EXEC_PROGRAMS),
								', '.join(missing)))
	copy_host_files(root, list(common.EXEC_PROGRAMS) +
			shared_libraries(common.EXEC_PROGRAMS))
	with open(os.path.join(root, 'etc', 'passwd'), 'w') as f:
		f.write('root:x:0:0:root:/root:/bin/sh\n')


def dynamic_executables(inst):
	"""The dynamically linked programs of DYNAMIC_TARGETS in the install @inst."""
	dyn = []
	for t in common.DYNAMIC_TARGETS:
		for d, _, names in os.walk(os.path.join(inst, t)):
			dyn += [os.path.join(d, n) for n in names
				if elf_interpreter(os.path.join(d, n))]
	return dyn


def copy_host_files(root, paths):
	"""Copy the host's files @paths into @root at the same paths."""
	for path in paths:
		dst = os.path.join(root, path.lstrip('/'))
		os.makedirs(os.path.dirname(dst), exist_ok=True)
		shutil.copy(path, dst)


def write_cpio(root, img):
	"""The gzipped newc cpio of @root, owned by root, at @img."""
	files = subprocess.run(['find', '.'], cwd=root, capture_output=True, text=True).stdout
	cpio = subprocess.run(['cpio', '-o', '-H', 'newc', '--quiet', '-R', '0:0'], cwd=root,
			      input=files.encode(), capture_output=True)
	if cpio.returncode != 0:
		raise HarnessError('cpio failed: ' + cpio.stderr.decode())
	with gzip.open(img, 'wb', compresslevel=1) as f:
		f.write(cpio.stdout)
	return img


def build_plugin():
	"""Build the c2c QEMU plugin (tools/testing/scalable/c2c) into build/c2c."""
	out = os.path.join(common.BUILD, 'c2c')
	os.makedirs(out, exist_ok=True)
	run(['make', '-C', os.path.join(common.HARNESS, 'c2c'), '-s', 'O=' + out], quiet=True)
	so = os.path.join(out, 'c2c.so')
	if not os.path.exists(so):
		raise HarnessError('the c2c plugin did not build: %s is missing' % so)
	return so
