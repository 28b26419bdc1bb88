#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Unit tests of scalable_native: a native run's log directory read as a
# boot, judged by analyze() with no kernel tree, and make run's report
# written beside the logs.

import contextlib
import io
import json
import os
import sys
import tempfile
import textwrap
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scalable_common as common  # noqa: E402
import scalable_native as N  # noqa: E402
import scalable_parser as P  # noqa: E402

# A kunit.py that "parses" any KTAP into one suite of one passed case and
# notes its own path in the JSON, where the harness's copy would be.
STUB_KUNIT = textwrap.dedent('''\
	import json, sys
	out = [a for a in sys.argv if a.startswith('--json=')][0][len('--json='):]
	json.dump({'name': 'main', 'test_cases': [], 'sub_groups': [
		{'name': 'stub_suite', 'test_cases': [{'name': 'case', 'status': 'PASS'}],
		 'sub_groups': []}], 'kunit_py': __file__}, open(out, 'w'))
	''')

RUN_ENV = textwrap.dedent('''\
	mode=test
	cpus=1,2
	nproc=2
	kernel=6.12.117-scalable
	host=box
	append=console=tty0 scalable_mode=test scalable_cpus=1,2 scalable_upstream=none
	start=1000
	end=1042
	''')

TAP = textwrap.dedent('''\
	TAP version 13
	1..1
	# selftests: scalable: stat_bench
	# RESULT bench=stat_bench mode=same-oplog cpus=1 ops_per_ms=10.0 runs=1 stddev=0 oplog_hits=5
	ok 1 selftests: scalable: stat_bench
	''')


def stub_tree(top):
	"""An unpacked tarball's kunit.py copy under @top (the stub)."""
	d = os.path.join(top, 'tools', 'testing', 'kunit')
	os.makedirs(d)
	with open(os.path.join(d, 'kunit.py'), 'w') as f:
		f.write(STUB_KUNIT)


class EnvTest(unittest.TestCase):
	def test_read_env(self):
		with tempfile.TemporaryDirectory() as d:
			p = os.path.join(d, 'run.env')
			with open(p, 'w') as f:
				f.write(RUN_ENV + 'no equals sign\nx=a=b\n')
			env = N.read_env(p)
		self.assertEqual(env['append'], 'console=tty0 scalable_mode=test scalable_cpus=1,2 '
				 'scalable_upstream=none')
		self.assertEqual(env['x'], 'a=b')
		self.assertNotIn('no equals sign', env)


class BootTest(unittest.TestCase):
	def logdir(self, d, console=True):
		with open(os.path.join(d, 'run.env'), 'w') as f:
			f.write(RUN_ENV)
		with open(os.path.join(d, 'tap.log'), 'w') as f:
			f.write(TAP)
		for name, text in (('kunit.ktap', 'KTAP version 1\n1..0\n'),
				   ('markers.log', 'SCALABLE: init start\nSCALABLE: done\n'),
				   ('dmesg.log', '[    1.0] hello\n')):
			with open(os.path.join(d, name), 'w') as f:
				f.write(text)
		if console:
			with open(os.path.join(d, 'console.log'), 'w') as f:
				f.write('console as joined\n')

	def test_boot(self):
		with tempfile.TemporaryDirectory() as d:
			self.logdir(d)
			b = N.native_boot(d)
		self.assertEqual((b['name'], b['flavour'], b['smp'], b['accel'], b['mode'],
				  b['seconds'], b['ended']),
				 ('native', 'release', 2, 'native', 'test', 42, 'exit'))
		self.assertEqual(b['console_text'], 'console as joined\n')
		self.assertEqual(b['tap_text'], TAP)
		self.assertIn('scalable_upstream=none', b['append'].split())

	def test_stopped_run_joins_its_parts(self):
		"""A run stopped before it joined console.log: its parts, in order."""
		with tempfile.TemporaryDirectory() as d:
			self.logdir(d, console=False)
			os.unlink(os.path.join(d, 'dmesg.log'))
			b = N.native_boot(d)
			with open(os.path.join(d, 'console.log')) as f:
				written = f.read()
		self.assertEqual(b['console_text'], 'KTAP version 1\n1..0\n'
				 'SCALABLE: init start\nSCALABLE: done\n')
		self.assertEqual(written, b['console_text'])


class ReportTest(unittest.TestCase):
	def test_report_without_kernel_tree(self):
		"""analyze() with no source tree: kunit.py from the copy under TOP."""
		with tempfile.TemporaryDirectory() as top:
			stub_tree(top)
			logdir = os.path.join(top, 'out')
			os.makedirs(logdir)
			BootTest().logdir(logdir)
			with open(os.path.join(logdir, 'console.log'), 'w') as f:
				f.write('KTAP version 1\n1..0\nSCALABLE: init start\n'
					'SCALABLE: dcache_oplog at start: enabled=1 hits=1\nSCALABLE: done\n')
			real = P.analyze
			with mock.patch.object(common, 'TOP', top), \
			     mock.patch.object(N, 'analyze', side_effect=real) as analyze, \
			     contextlib.redirect_stdout(io.StringIO()) as out:
				ok = N.report(logdir)
				with open(os.path.join(logdir, 'report.json')) as f:
					data = json.load(f)
				with open(os.path.join(logdir, 'report.md')) as f:
					md = f.read()
				with open(os.path.join(logdir, 'native.kunit.json')) as f:
					used = json.load(f)['kunit_py']
		self.assertIsNone(analyze.call_args[0][0])
		self.assertEqual(used, os.path.join(top, 'tools', 'testing', 'kunit', 'kunit.py'))
		s = data['boots'][0]
		self.assertEqual(s['kunit']['passed'], 1)
		self.assertEqual(s['kselftest']['passed'], 1)
		self.assertEqual(s['accel'], 'native')
		self.assertEqual(data['title'], 'Scalable series: benchmark report (test mode), '
				 'native on box, Linux 6.12.117-scalable')
		# only stat_bench ran: the other benchmarks are missing
		self.assertFalse(ok)
		self.assertIn('benchmark open_bench printed no RESULT line', s['problems'])
		self.assertTrue(md.startswith('# Scalable series: benchmark report (test mode)'))
		self.assertIn('| stat_bench | same-oplog |', md)
		self.assertIn(md, out.getvalue())

	def test_main_usage(self):
		with contextlib.redirect_stderr(io.StringIO()):
			self.assertEqual(N.main(['scalable_native.py']), 2)
			with tempfile.TemporaryDirectory() as d, self.assertRaises(SystemExit):
				N.main(['scalable_native.py', d])


if __name__ == '__main__':
	unittest.main()
