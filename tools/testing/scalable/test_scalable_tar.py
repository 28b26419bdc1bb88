#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Unit tests of scalable_tar (make selftests-tar): what the tarball packs,
# the python3 files of its test's initramfs, the guest's report read off
# the console and compared with the host's, and run_scalable.sh
# (run_native.sh) itself, run in a stub tarball without python3 and with.

import copy
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import textwrap
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scalable_common as common  # noqa: E402
import scalable_parser as P  # noqa: E402
import scalable_tar as T  # noqa: E402
from scalable_request import Request  # noqa: E402
from test_scalable_native import STUB_KUNIT  # noqa: E402

SUMMARY = {
	'kunit': {'passed': 90, 'failed': 0, 'skipped': 0, 'crashed': 0, 'suites': ['qdo']},
	'kselftest': {'passed': 30, 'failed': 0, 'skipped': 4, 'plan': 31,
		      'subtests_passed': 200, 'subtests_failed': 0, 'subtests_skipped': 1},
	'targets': {'scalable': {'passed': 20, 'failed': 0, 'skipped': 0},
		    'proc': {'passed': 10, 'failed': 0, 'skipped': 4}},
	'dcache_oplog': {'at start': {'enabled': 1}, 'before': {'enabled': 1},
			 'after': {'enabled': 1}},
	'rmap_oplog': {'at start': {'enabled': 1}, 'before': {'enabled': 1},
		       'after': {'enabled': 1}},
	'results': [{'bench': 'stat_bench', 'mode': 'same-stock', 'cpus': c, 'ops_per_ms': 5.0}
		    for c in (1, 2)] +
		   [{'bench': 'stat_bench', 'mode': 'same-oplog', 'cpus': c, 'ops_per_ms': 6.0}
		    for c in (1, 2)],
	'problems': [],
}


def fake_kunit(d):
	"""A kernel tree's tools/testing/kunit: kunit.py importing a sibling."""
	k = os.path.join(d, 'tools', 'testing', 'kunit')
	os.makedirs(k)
	for name, text in (('kunit.py', 'import kunit_parser\nimport json\n'),
			   ('kunit_parser.py', 'import re\n'), ('unused.py', '')):
		with open(os.path.join(k, name), 'w') as f:
			f.write(text)
	return d


class CompareTest(unittest.TestCase):
	def test_same(self):
		self.assertEqual([], T.compare(SUMMARY, copy.deepcopy(SUMMARY)))

	def test_differ(self):
		"""Each kind of disagreement is a line; so is a problem in either report."""
		guest = copy.deepcopy(SUMMARY)
		guest['kunit']['passed'] = 89
		guest['targets']['proc']['passed'] = 9
		guest['kselftest']['passed'] = 29
		guest['results'].pop()
		host = copy.deepcopy(SUMMARY)
		host['problems'] = ['kernel splat (WARNING): x']
		self.assertEqual(T.compare(guest, host), [
			'KUnit passed: guest 89, host 90',
			'kselftest counts: guest %s, host %s' % (guest['kselftest'], host['kselftest']),
			'kselftest target proc: guest %s, host %s' % (guest['targets']['proc'],
								  host['targets']['proc']),
			'benchmark result only in the host\'s report: stat_bench same-oplog cpus=2',
			'host report: kernel splat (WARNING): x'])

	def test_native_problems(self):
		self.assertEqual([], T.native_problems(SUMMARY, 2))
		g = dict(SUMMARY, dcache_oplog={'at start': {}})
		self.assertEqual(T.native_problems(g, 4), [
			'native run: worker counts [1, 2], not 1..4',
			'native run: no "dcache_oplog before" marker',
			'native run: no "dcache_oplog after" marker'])


class TestBootTest(unittest.TestCase):
	"""scalable_tar.test(): the guest's report against the host's analysis."""

	def run_test(self, guest, host_problems=(), printed=True):
		host = dict(copy.deepcopy(SUMMARY), problems=list(host_problems))
		con = 'SCALABLE: init start\n'
		if printed:
			con += T.BEGIN + '\n' + json.dumps({'boots': [guest]}, indent=1) + '\n' + T.END + '\n'
		boot = {'console_text': con, 'seconds': 1.0}
		with tempfile.TemporaryDirectory() as d, \
		     mock.patch.object(T, 'build_test_initramfs', return_value=os.path.join(d, 'i')), \
		     mock.patch.object(T, 'boot', return_value=boot) as booted, \
		     mock.patch.object(T, 'analyze', return_value=(not host_problems,
								   list(host_problems), host)), \
		     mock.patch.object(T.os.path, 'getsize', return_value=0), \
		     mock.patch.object(T, 'log') as log:
			req = Request(smp=2, boot_timeout=77)
			ok = T.test(req, 'obj', 'src',
				    os.path.join(d, 'inst', 'kselftest-packages', 't.tar.gz'), d)
		self.assertIn('scalable_native=1', booted.call_args[1]['extra_append'])
		self.assertEqual(booted.call_args[0][:7], (req, 'obj', 'release', 2, 'test', d, 77))
		return ok, ' '.join(str(c) for c in log.call_args_list)

	def test_agree(self):
		ok, said = self.run_test(copy.deepcopy(SUMMARY))
		self.assertTrue(ok, said)

	def test_reports_differ(self):
		guest = copy.deepcopy(SUMMARY)
		guest['kunit']['passed'] -= 1
		ok, said = self.run_test(guest)
		self.assertFalse(ok)
		self.assertIn('KUnit passed: guest 89, host 90', said)

	def test_guest_problem_or_no_report(self):
		ok, said = self.run_test(dict(copy.deepcopy(SUMMARY), problems=['KUnit: no test ran']))
		self.assertFalse(ok)
		self.assertIn('guest report: KUnit: no test ran', said)
		ok, said = self.run_test(SUMMARY, host_problems=['kernel panic'], printed=False)
		self.assertFalse(ok)
		self.assertIn('kernel panic', said)
		self.assertIn('printed no report.json', said)


class GuestReportTest(unittest.TestCase):
	def test_between_markers(self):
		text = json.dumps({'boots': [SUMMARY]}, indent=1).replace('\n', '\r\n')
		con = ('[    1.0] KTAP version 1\r\n# SCALABLE: native report.json begin\r\n' +
		       T.BEGIN + '\r\n' + text + '\r\n\r\n' + T.END + '\r\nSCALABLE: done\r\n')
		self.assertEqual(T.guest_report(con), {'boots': [SUMMARY]})

	def test_missing_or_broken(self):
		self.assertIsNone(T.guest_report('SCALABLE: done\n'))
		self.assertIsNone(T.guest_report(T.BEGIN + '\n{"a": 1}\n'))
		self.assertIsNone(T.guest_report(T.BEGIN + '\n{"a": \n[  3.0] printk\n1}\n' +
						 T.END + '\n'))


class PackTest(unittest.TestCase):
	def test_tar_files(self):
		with tempfile.TemporaryDirectory() as src:
			files = T.tar_files(fake_kunit(src))
		self.assertEqual(files['run_scalable.sh'], os.path.join(common.HARNESS, 'run_native.sh'))
		# the series' KUnit sources: the suites analyze() requires
		kunit_srcs = [os.path.relpath(f, common.TOP) for f in P.series_kunit_files()]
		self.assertIn('lib/oplog_kunit.c', kunit_srcs)
		self.assertEqual(sorted(files), sorted(kunit_srcs + [
			'run_scalable.sh', 'tools/testing/kunit/kunit.py',
			'tools/testing/kunit/kunit_parser.py', 'tools/testing/scalable/base.conf',
			'tools/testing/scalable/kselftests.sh',
			'tools/testing/scalable/scalable_common.py',
			'tools/testing/scalable/scalable_kcsan.py',
			'tools/testing/scalable/scalable_native.py',
			'tools/testing/scalable/scalable_parser.py',
			'tools/testing/scalable/scalable_report.py',
			'tools/testing/scalable/scalable_schedule.py']))

	def install(self, d, lines):
		inst = os.path.join(d, 'obj', 'kselftest-install')
		os.makedirs(os.path.join(inst, 'scalable'))
		with open(os.path.join(inst, 'kselftest-list.txt'), 'w') as f:
			f.write(''.join(line + '\n' for line in lines))
		with open(os.path.join(inst, 'run_kselftest.sh'), 'w') as f:
			f.write('#!/bin/sh\n')
		return os.path.dirname(inst)

	def test_pack(self):
		with tempfile.TemporaryDirectory() as d, \
		     mock.patch.object(common, 'SELFTEST_TARGETS', ('scalable', 'proc')):
			obj = self.install(d, ['scalable:stat_bench', 'proc:proc-uptime-001'])
			tar = T.pack(obj, fake_kunit(os.path.join(d, 'src')), os.path.join(d, 'inst'))
			self.assertEqual(tar, os.path.join(d, 'inst', 'kselftest-packages',
							   'kselftest.tar.gz'))
			with tarfile.open(tar) as t:
				names = set(t.getnames())
				mode = t.getmember('./run_scalable.sh').mode
		for n in ('./run_kselftest.sh', './kselftest-list.txt', './scalable',
			  './tools/testing/scalable/scalable_native.py',
			  './tools/testing/kunit/kunit_parser.py'):
			self.assertIn(n, names)
		self.assertFalse([n for n in names if 'kselftest-packages' in n])
		self.assertEqual(mode & 0o755, 0o755)

	def test_listing_checked(self):
		with tempfile.TemporaryDirectory() as d, \
		     mock.patch.object(common, 'SELFTEST_TARGETS', ('scalable', 'proc')):
			obj = self.install(d, ['scalable:stat_bench', 'proc:proc-uptime-001', 'proc:setns-dcache'])
			with self.assertRaisesRegex(common.HarnessError, 'excluded on release: '
						    'proc:setns-dcache'):
				T.pack(obj, fake_kunit(os.path.join(d, 'src')), os.path.join(d, 'inst'))
			with open(os.path.join(obj, 'kselftest-install', 'kselftest-list.txt'), 'w') as f:
				f.write('scalable:stat_bench\n')
			with self.assertRaisesRegex(common.HarnessError, 'has no tests of proc'):
				T.pack(obj, fake_kunit(os.path.join(d, 'src2')), os.path.join(d, 'inst'))


class PythonFilesTest(unittest.TestCase):
	def test_files(self):
		with tempfile.TemporaryDirectory() as src:
			files = T.python_files(fake_kunit(src))
		python = os.path.realpath(sys.executable)
		self.assertIn(python, files)
		names = {os.path.relpath(f, os.path.dirname(os.__file__)) for f in files}
		# the harness's (subprocess, difflib) and the fake kunit.py's (json)
		for n in ('os.py', 'json/__init__.py', 'subprocess.py', 'difflib.py',
			  'encodings/utf_8.py', 'site.py'):
			self.assertIn(n, names)
		self.assertFalse([f for f in files if f.startswith(common.HARNESS + os.sep) or
				  f.startswith(src) or 'site-packages' in f])
		self.assertIn(python, T.shared_libraries([python]) + [python])
		for lib in T.shared_libraries([python]):
			self.assertIn(lib, files)


class NativeScriptTest(unittest.TestCase):
	"""run_scalable.sh in a stub tarball: a fake runner and KUnit results."""

	RESULTS = {
		'alpha': 'KTAP version 1\n1..1\n    KTAP version 1\n    # Subtest: alpha\n    1..1\n'
			 '    ok 1 alpha_one\nok 1 alpha\n',
		'beta': 'KTAP version 1\n1..1\n    KTAP version 1\n    # Subtest: beta\n    1..1\n'
			'    not ok 1 beta_one\nnot ok 1 beta\n',
	}
	RUNNER = textwrap.dedent('''\
		#!/bin/sh
		echo "TAP version 13"
		echo "1..1"
		echo "# selftests: stub: $*"
		echo "# RESULT bench=stat_bench mode=same-oplog cpus=1 ops_per_ms=1 runs=1 stddev=0"
		echo "ok 1 selftests: stub: t $KSELFTEST_STAT_BENCH_ARGS"
		''')

	def setUp(self):
		self.d = tempfile.mkdtemp()
		self.addCleanup(shutil.rmtree, self.d)
		tar = os.path.join(self.d, 'tar')
		os.makedirs(tar)
		with tempfile.TemporaryDirectory() as src:
			files = T.tar_files(fake_kunit(src))
			for path, f in files.items():
				if 'kunit' not in path:
					os.makedirs(os.path.dirname(os.path.join(tar, path)), exist_ok=True)
					shutil.copy2(f, os.path.join(tar, path))
		stub = os.path.join(tar, 'tools', 'testing', 'kunit', 'kunit.py')
		os.makedirs(os.path.dirname(stub))
		with open(stub, 'w') as f:
			f.write(STUB_KUNIT)
		with open(os.path.join(tar, 'run_kselftest.sh'), 'w') as f:
			f.write(self.RUNNER)
		os.chmod(os.path.join(tar, 'run_kselftest.sh'), 0o755)
		with open(os.path.join(tar, 'kselftest-list.txt'), 'w') as f:
			f.write('scalable:stat_bench\nproc:read\n')
		debugfs = os.path.join(self.d, 'debugfs')
		for suite, text in self.RESULTS.items():
			os.makedirs(os.path.join(debugfs, 'kunit', suite))
			with open(os.path.join(debugfs, 'kunit', suite, 'results'), 'w') as f:
				f.write(text)
		self.tar, self.debugfs = tar, debugfs

	def run_script(self, path, *args):
		env = dict(os.environ, PATH=path, SCALABLE_DEBUGFS=self.debugfs)
		for v in ('scalable_upstream', 'scalable_tests', 'scalable_own', 'scalable_ast_bench'):
			env.pop(v, None)
		return subprocess.run([shutil.which('busybox') or 'sh', 'sh',
				       os.path.join(self.tar, 'run_scalable.sh')] + list(args),
				      capture_output=True, text=True, env=env, timeout=120)

	def busybox_path(self):
		"""A PATH of busybox applets: no python3."""
		bb = shutil.which('busybox')
		if not bb:
			self.skipTest('no busybox')
		d = os.path.join(self.d, 'bin')
		os.makedirs(d)
		for a in subprocess.run([bb, '--list'], capture_output=True, text=True).stdout.split():
			os.symlink(bb, os.path.join(d, a))
		return d

	def test_without_python(self):
		r = self.run_script(self.busybox_path(), '-m', 'test', '-c', '1')
		self.assertEqual(r.returncode, 4, r.stdout + r.stderr)
		self.assertIn('no python3 here', r.stdout)
		self.assertIn('\n  python3 tools/testing/scalable/scalable_native.py out\n', r.stdout)
		out = os.path.join(self.tar, 'out')
		with open(os.path.join(out, 'kunit.ktap')) as f:
			self.assertEqual(f.read(), 'KTAP version 1\n1..2\n'
					 '    KTAP version 1\n    # Subtest: alpha\n    1..1\n'
					 '    ok 1 alpha_one\nok 1 alpha\n'
					 '    KTAP version 1\n    # Subtest: beta\n    1..1\n'
					 '    not ok 1 beta_one\nnot ok 2 beta\n')
		with open(os.path.join(out, 'tap.log')) as f:
			tap = f.read()
		# the series' own collection first, then the upstream ones,
		# with the test mode's arguments and the given worker counts
		self.assertLess(tap.index('-c scalable'), tap.index('-c proc'))
		self.assertIn('ok 1 selftests: stub: t -w 50 -m 200 -r 1 -c 1 -n 8192', tap)
		with open(os.path.join(out, 'console.log')) as f:
			con = f.read()
		self.assertLess(con.index('1..2'), con.index('SCALABLE: init start'))
		for m in ('dcache_oplog at start', 'dcache_oplog before', 'dcache_oplog after',
			  'rmap_oplog at start', 'rmap_oplog before', 'rmap_oplog after', 'done'):
			self.assertIn('SCALABLE: ' + m, con)
		with open(os.path.join(out, 'run.env')) as f:
			env = f.read()
		self.assertIn('scalable_mode=test scalable_cpus=1\n', env)

	def test_with_python(self):
		"""The report of make run, written beside the logs; default 1..nproc."""
		path = os.path.dirname(os.path.realpath(sys.executable))
		link = os.path.join(self.busybox_path(), 'python3')
		os.symlink(os.path.realpath(sys.executable), link)
		logdir = os.path.join(self.d, 'logs')
		r = self.run_script(os.path.dirname(link) + ':' + path, '-m', 'quick', '-o', logdir)
		# the stub runs no benchmark sweep: the report finds problems
		self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
		with open(os.path.join(logdir, 'report.json')) as f:
			s = json.load(f)['boots'][0]
		self.assertEqual(s['mode'], 'quick')
		self.assertEqual(s['kselftest']['passed'], 2)
		self.assertIn('# Scalable series: benchmark report (quick mode)', r.stdout)
		n = len(os.sched_getaffinity(0))
		cpus = ','.join(str(i) for i in range(1, n + 1)) if n <= 16 else None
		if cpus:
			with open(os.path.join(logdir, 'tap.log')) as f:
				self.assertIn('-q -c %s' % cpus, f.read())

	def test_bad_arguments(self):
		for args in (('-m', 'slow'), ('-c', '1,,2'), ('-c', 'a'), ('extra',)):
			r = self.run_script(os.environ['PATH'], *args)
			self.assertEqual(r.returncode, 2, args)


class SharedRunTest(unittest.TestCase):
	"""init.sh and run_scalable.sh run the tests through kselftests.sh only."""

	def test_one_copy_of_the_run(self):
		for name in ('init.sh', 'run_native.sh'):
			with open(os.path.join(common.HARNESS, name)) as f:
				text = f.read()
			self.assertIn('scalable_kselftests\n', text, name)
			self.assertNotIn('run_kselftest.sh -o', text, name)
			self.assertNotIn('KSELFTEST_', text, name)

	def test_shellcheck(self):
		if not shutil.which('shellcheck'):
			self.skipTest('no shellcheck')
		for name in ('init.sh', 'kselftests.sh', 'run_native.sh'):
			r = subprocess.run(['shellcheck', '-x', name], cwd=common.HARNESS,
					   capture_output=True, text=True)
			self.assertEqual(r.returncode, 0, r.stdout)


if __name__ == '__main__':
	unittest.main()
