# SPDX-License-Identifier: GPL-2.0
#
# make selftests-tar: the release kselftests as a tarball in the kselftest
# gen_tar layout, for a machine booted into the patched kernel, with
# run_scalable.sh (run_native.sh), which runs them there as the guest's
# /init does (kselftests.sh, shared) and makes make run's report with the
# harness's own code (scalable_native.py and what it imports) and the
# kernel's KUnit parser, packed beside it.  Its test boots the release
# kernel with the unpacked tarball and a python3 in the initramfs, has
# /init run run_scalable.sh instead of its own tests, and checks the report
# written in the guest against the host's analysis of the same boot.

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time

import scalable_common as common
import scalable_native
from scalable_build import copy_host_files, initramfs_root, shared_libraries, write_cpio
from scalable_common import HarnessError, default_smp, log, run
from scalable_parser import analyze, series_kunit_files
from scalable_qemu import boot, boot_timeout

SCRIPT = 'run_scalable.sh'
# Where the guest of the test has the unpacked tarball (init.sh).
GUEST_TAR = '/opt/scalable-tar'
BEGIN = 'SCALABLE: native report.json begin'
END = 'SCALABLE: native report.json end'

# The modules that importing @entry loads, by file, in a fresh interpreter
# with the site-packages left out (python -S; site is imported, not run):
# what the report needs of the standard library, and of the directories
# given first on sys.path.
LIST_MODULES = ('import sys; sys.path[:0] = sys.argv[1:]; import site, _sitebuiltins, %s; '
		'print("\\n".join(sorted({m.__file__ for m in list(sys.modules.values()) '
		'if getattr(m, "__file__", None)})))')


def module_files(entry, paths, python=None):
	"""Files of the modules that "import @entry" loads, @paths first on sys.path."""
	r = subprocess.run([python or sys.executable, '-S', '-c', LIST_MODULES % entry] +
			   [os.path.abspath(p) for p in paths], capture_output=True, text=True)
	if r.returncode != 0:
		raise HarnessError('importing %s failed: %s' % (entry, r.stderr.strip()[-2000:]))
	return r.stdout.split()


def files_in(files, directory):
	"""Those of @files directly in @directory."""
	return sorted({f for f in files if os.path.dirname(os.path.abspath(f)) ==
		       os.path.abspath(directory)})


def tar_files(src):
	"""{path in the tarball: file to pack} beside the kselftests.

	run_scalable.sh at the top; the harness modules that the report's
	entry point (scalable_native) imports, base.conf and kselftests.sh at
	their tools/testing/scalable/ paths; the kunit.py modules of the
	kernel tree @src that "import kunit" loads at tools/testing/kunit/;
	the series' KUnit sources at their paths, from which analyze() takes
	the suites and cases that must have run (series_kunit_suites()).
	The paths mirror the source tree, so that common.TOP is the unpacked
	tarball and analyze(None, ...) finds kunit.py and the suites there.
	"""
	here = common.HARNESS
	kunit = os.path.join(src, 'tools', 'testing', 'kunit')
	files = {SCRIPT: os.path.join(here, 'run_native.sh')}
	for name in ('kselftests.sh', 'base.conf'):
		files['tools/testing/scalable/' + name] = os.path.join(here, name)
	for f in files_in(module_files(scalable_native.__name__, [here]), here):
		files['tools/testing/scalable/' + os.path.basename(f)] = f
	for f in files_in(module_files('kunit', [kunit]), kunit):
		files['tools/testing/kunit/' + os.path.basename(f)] = f
	for f in series_kunit_files():
		files[os.path.relpath(f, common.TOP)] = f
	return files


def check_listing(inst, flavour):
	"""The install @inst lists every target and none of @flavour's EXCLUDED_TESTS."""
	with open(os.path.join(inst, 'kselftest-list.txt')) as f:
		listed = {line.strip() for line in f if line.strip()}
	left = sorted(set(common.excluded_tests(flavour)) & listed)
	if left:
		raise HarnessError('%s lists tests excluded on %s: %s' % (inst, flavour, ' '.join(left)))
	missing = [t for t in common.SELFTEST_TARGETS
		   if not any(line.startswith(t + ':') for line in listed)]
	if missing:
		raise HarnessError('%s has no tests of %s' % (inst, ' '.join(missing)))


def pack(obj, src, inst):
	"""Pack the kselftests of build/release (@obj) as gen_tar does; return its path.

	The install tree (build_selftests(): SELFTEST_TARGETS, the release
	flavour's EXCLUDED_TESTS out of the list) is copied to @inst, the
	INSTALL_PATH of the kselftest Makefile, tar_files() added, and
	tarred as its gen_tar target does (FORMAT .gz):
	@inst/kselftest-packages/kselftest.tar.gz.

	The gen_tar target itself is not called: it depends on its install
	target, which would install all SELFTEST_TARGETS again in one pass,
	statically linked, where the ASan-built DYNAMIC_TARGETS cannot link,
	and would put EXCLUDED_TESTS back in the list.  Its tar command line
	is the one below.
	"""
	shutil.rmtree(inst, ignore_errors=True)
	os.makedirs(os.path.dirname(inst), exist_ok=True)
	run(['cp', '-a', os.path.join(obj, 'kselftest-install'), inst], quiet=True)
	check_listing(inst, scalable_native.FLAVOUR)
	for path, f in sorted(tar_files(src).items()):
		dst = os.path.join(inst, path)
		os.makedirs(os.path.dirname(dst), exist_ok=True)
		shutil.copy2(f, dst)
	os.chmod(os.path.join(inst, SCRIPT), 0o755)
	tar = os.path.join(inst, 'kselftest-packages', 'kselftest.tar.gz')
	os.makedirs(os.path.dirname(tar), exist_ok=True)
	run(['tar', 'caf', tar, '--exclude=kselftest-packages', '-C', inst, '.'], quiet=True)
	return tar


def python_files(src, python=None):
	"""The interpreter, the standard library files and shared libraries the report loads.

	The interpreter (sys.executable, its real path) and the files of the
	modules that importing the report's entry point and the kunit.py of
	the kernel tree @src load, outside the harness and that tree's
	tools/testing/kunit (both packed in the tarball) and
	outside site-packages; then what ldd says the interpreter and those
	of the modules that are shared objects load.
	"""
	python = os.path.realpath(python or sys.executable)
	r = subprocess.run([python, '-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"]);'
			    'print(sysconfig.get_paths()["platlib"])'], capture_output=True, text=True)
	site = [os.path.join(p, '') for p in r.stdout.split()]
	mods = set()
	for entry, path in ((scalable_native.__name__, common.HARNESS),
			    ('kunit', os.path.join(src, 'tools', 'testing', 'kunit'))):
		loaded = module_files(entry, [path], python)
		mods |= set(loaded) - set(files_in(loaded, path))
	mods = {m for m in mods if not any(m.startswith(s) for s in site)}
	return sorted({python} | mods | set(shared_libraries(
		[python] + [m for m in mods if m.endswith('.so')])))


def pyc_files(files):
	"""The compiled forms of @files that exist (the guest need not compile them)."""
	out = []
	for f in files:
		if f.endswith('.py'):
			try:
				c = importlib.util.cache_from_source(f)
			except ValueError:
				continue
			if os.path.exists(c):
				out.append(c)
	return out


def build_test_initramfs(obj, src, tar, root, img):
	"""The release initramfs with the unpacked @tar and a python3, no own tests.

	/opt/kselftest gives way to the tarball at GUEST_TAR (the shared
	libraries of the dynamic kselftests stay); the interpreter and what
	python_files() lists go at their host paths, /usr/bin/python3 links
	to it.
	"""
	initramfs_root(obj, root)
	shutil.rmtree(os.path.join(root, 'opt', 'kselftest'))
	dest = os.path.join(root, GUEST_TAR.lstrip('/'))
	os.makedirs(dest)
	run(['tar', 'xf', tar, '-C', dest], quiet=True)
	files = python_files(src)
	copy_host_files(root, files + pyc_files(files))
	python = os.path.realpath(sys.executable)
	link = os.path.join(root, 'usr', 'bin', 'python3')
	if python != '/usr/bin/python3':
		if os.path.lexists(link):
			os.unlink(link)
		os.symlink(python, link)
	return write_cpio(root, img)


def guest_report(console):
	"""The report.json that /init printed on @console between BEGIN and END, or None."""
	lines = console.splitlines()
	try:
		a = next(i for i, ln in enumerate(lines) if ln.strip() == BEGIN)
		b = next(i for i in range(a + 1, len(lines)) if lines[i].strip() == END)
	except StopIteration:
		return None
	try:
		return json.loads('\n'.join(lines[a + 1:b]))
	except ValueError:
		return None


def rows(summary):
	"""The (bench, mode, cpus) of a summary's RESULT lines."""
	return {(r['bench'], str(r.get('mode', '-')), r.get('cpus')) for r in summary['results']}


def compare(guest, host):
	"""Where the guest's report of a boot (@guest) and the host's analysis of
	the same boot's logs (@host), both analyze() summaries, disagree.

	Returns lines: the KUnit counts, the kselftest counts of all and of
	each target, the (bench, mode, cpus) rows of the RESULT lines, and
	each report's problems, which must be none; empty when they agree.
	"""
	diffs = []
	for key in ('passed', 'failed', 'skipped', 'crashed'):
		g, h = guest['kunit'].get(key), host['kunit'].get(key)
		if g != h:
			diffs.append('KUnit %s: guest %s, host %s' % (key, g, h))
	if guest['kselftest'] != host['kselftest']:
		diffs.append('kselftest counts: guest %s, host %s' %
			     (guest['kselftest'], host['kselftest']))
	for t in sorted(set(guest['targets']) | set(host['targets'])):
		g, h = guest['targets'].get(t), host['targets'].get(t)
		if g != h:
			diffs.append('kselftest target %s: guest %s, host %s' % (t, g, h))
	g, h = rows(guest), rows(host)
	for who, only in (('guest', g - h), ('host', h - g)):
		for r in sorted(only, key=str):
			diffs.append('benchmark result only in the %s\'s report: %s %s cpus=%s' %
				     ((who,) + r))
	for who, s in (('guest', guest), ('host', host)):
		for p in s['problems']:
			diffs.append('%s report: %s' % (who, p))
	return diffs


def native_problems(guest, smp):
	"""What a native run's report must show beyond compare(): its run at
	@smp CPUs swept every worker count from 1 to @smp, and the dentry
	OpLog and reverse-map OpLog markers of kselftests.sh came through."""
	problems = []
	counts = sorted({r['cpus'] for r in guest['results'] if isinstance(r.get('cpus'), int)})
	if counts != list(range(1, smp + 1)):
		problems.append('native run: worker counts %s, not 1..%d' % (counts, smp))
	for which in ('dcache_oplog', 'rmap_oplog'):
		for when in ('at start', 'before', 'after'):
			if when not in guest.get(which, {}):
				problems.append('native run: no "%s %s" marker' % (which, when))
	return problems


def test(req, obj, src, tar, logdir):
	"""Boot @tar natively in the release guest (mode test); True if it passes."""
	t0 = time.time()
	work = os.path.dirname(os.path.dirname(os.path.dirname(tar)))
	img = build_test_initramfs(obj, src, tar, os.path.join(work, 'initramfs'),
				   os.path.join(work, 'initramfs.cpio.gz'))
	log('selftests-tar test: initramfs with the tarball and python3: %s (%.0f MiB)' %
	    (os.path.relpath(img, common.TOP), os.path.getsize(img) / 2**20))
	smp = default_smp(req)
	b = boot(req, obj, 'release', smp, 'test', logdir, boot_timeout(req, 'release', 'test'),
		 extra_append='scalable_native=1', tag='native', initrd=img)
	_, problems, host = analyze(src, b, logdir)
	guest = guest_report(b['console_text'])
	if guest is None:
		diffs = problems + ['the guest printed no report.json between "%s" and "%s"' %
				    (BEGIN, END)]
	else:
		g = guest['boots'][0]
		diffs = compare(g, host) + native_problems(g, smp)
		log('selftests-tar test: guest report: KUnit %d passed, kselftest %d passed, '
		    '%d benchmark results; host: KUnit %d passed, kselftest %d passed, %d results' %
		    (g['kunit']['passed'], g['kselftest']['passed'], len(g['results']),
		     host['kunit']['passed'], host['kselftest']['passed'], len(host['results'])))
	for p in diffs:
		log('  ' + p)
	passed = not diffs
	log('selftests-tar test: %s in %.0f s (boot %.0f s)' %
	    ('PASS' if passed else 'FAIL', time.time() - t0, b['seconds']))
	return passed
