#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Unit tests of scalable_common: commands, the guests' vCPUs, base.conf,
# the test tables and the machine-wide lock.

import contextlib
import io
import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scalable_common as common  # noqa: E402
from scalable_request import Request  # noqa: E402


def die_message(test, fn, *args):
	"""Call @fn, which must die(): return what it printed."""
	err = io.StringIO()
	with contextlib.redirect_stderr(err), test.assertRaises(SystemExit) as cm:
		fn(*args)
	test.assertNotEqual(cm.exception.code, 0)
	return err.getvalue()


class CommonTest(unittest.TestCase):
	def test_paths(self):
		self.assertTrue(os.path.exists(os.path.join(common.TOP, 'Makefile')))
		self.assertTrue(os.path.isdir(common.PATCHES))
		self.assertEqual(common.HARNESS, os.path.dirname(os.path.realpath(common.__file__)))

	def test_run(self):
		self.assertEqual(common.run(['true'], quiet=True).returncode, 0)
		with self.assertRaises(common.HarnessError) as cm:
			common.run(['false'], quiet=True)
		self.assertIn('exit 1', str(cm.exception))

	def test_read_conf(self):
		conf = common.read_conf()
		self.assertTrue(conf['LINUX_VERSION'].startswith('6.12.'))
		self.assertEqual(set(conf), {'LINUX_VERSION', 'DEBIAN_PACKAGE', 'DEBIAN_VERSION',
					     'TARBALL', 'SHA256'})

	def test_default_smp(self):
		"""SMP, else the host's CPUs, at least 2 (test_scalable_request.py: a bad SMP)."""
		self.assertEqual(common.default_smp(Request(smp=3)), 3)
		self.assertEqual(common.default_smp(Request(smp=1)), 1)
		with mock.patch.object(common, 'host_cpus', return_value=1):
			self.assertEqual(common.default_smp(Request()), 2)
		with mock.patch.object(common, 'host_cpus', return_value=6):
			self.assertEqual(common.default_smp(Request()), 6)

	def test_excluded_tests(self):
		self.assertIn('openat2:rename_attack_test', common.excluded_tests('debug'))
		self.assertNotIn('openat2:rename_attack_test', common.excluded_tests('release'))
		for t in common.EXCLUDED_TESTS:
			self.assertIn(t.split(':')[0], common.SELFTEST_TARGETS)
		self.assertTrue(set(common.DYNAMIC_TARGETS) <= set(common.SELFTEST_TARGETS))

	def test_expected_skips(self):
		"""Keys as documented above EXPECTED_SKIPS, flavours that exist, a reason each."""
		for key, (fls, why) in common.EXPECTED_SKIPS.items():
			parts = key.split(':', 2)
			if parts[0] == 'kunit':
				self.assertEqual(len(parts), 2, key)
				self.assertTrue(parts[1], key)
			else:
				self.assertIn(parts[0], common.SELFTEST_TARGETS, key)
				self.assertGreaterEqual(len(parts), 2, key)
				self.assertTrue(all(parts), key)
			self.assertTrue(fls and set(fls) <= set(common.FLAVOURS), key)
			self.assertTrue(why, key)
		for fl in common.FLAVOURS:
			self.assertIn('fchmodat2:fchmodat2_test:fchmodat2(symlink)',
				      common.expected_skips(fl))
		with mock.patch.object(common, 'EXPECTED_SKIPS', {'kunit:x': (('debug',), 'y')}):
			self.assertEqual(common.expected_skips('debug'), {'kunit:x': 'y'})
			self.assertEqual(common.expected_skips('release'), {})

	def test_oplog_cold_modes(self):
		for key, why in common.OPLOG_COLD_MODES.items():
			bench, mode = key.split(':')
			self.assertIn(bench, common.BENCHMARKS)
			self.assertTrue(mode.endswith('-oplog'), key)
			self.assertTrue(why, key)


class MachineLockTest(unittest.TestCase):
	TRY = ('import fcntl, sys\n'
	       'f = open(sys.argv[1], "a")\n'
	       'try:\n'
	       '    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)\n'
	       '    print("free")\n'
	       'except BlockingIOError:\n'
	       '    print("held")\n')

	def state(self, path):
		return subprocess.run([sys.executable, '-c', self.TRY, path], capture_output=True,
				      text=True, timeout=30).stdout.strip()

	def test_nested_and_released(self):
		with tempfile.TemporaryDirectory() as d:
			path = os.path.join(d, 'lock')
			req = Request(lock=path)
			with common.machine_lock(req, 'outer'):
				self.assertEqual(self.state(path), 'held')
				# A nested taker (a build inside make check) does not
				# deadlock, and does not release the outer hold.
				with common.machine_lock(req, 'inner'):
					self.assertEqual(self.state(path), 'held')
				self.assertEqual(self.state(path), 'held')
			self.assertEqual(self.state(path), 'free')
			self.assertEqual(common._lock_depth, 0)


if __name__ == '__main__':
	unittest.main()
