#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Unit tests of scalable_build: the make command line, config fragments and
# the kselftest install checks.

import os
import sys
import tempfile
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scalable_build as B  # noqa: E402
import scalable_common as common  # noqa: E402
from scalable_request import Request  # noqa: E402


class InstallTest(unittest.TestCase):
	"""The selftest install checks: nothing missing runs as if it passed."""

	def install(self, d, listing, built):
		with open(os.path.join(d, 'kselftest-list.txt'), 'w') as f:
			f.write(listing)
		for t in built:
			os.makedirs(os.path.join(d, os.path.dirname(t)), exist_ok=True)
			with open(os.path.join(d, t), 'w') as f:
				f.write('#!/bin/sh\n')
			os.chmod(os.path.join(d, t), 0o755)

	def test_missing_program_and_target(self):
		with tempfile.TemporaryDirectory() as d, \
		     mock.patch.object(common, 'SELFTEST_TARGETS', ('scalable', 'openat2', 'tmpfs')):
			self.install(d, 'scalable:a\nopenat2:b\nopenat2:c\n',
				     ['scalable/a', 'openat2/b'])
			with self.assertRaises(common.HarnessError) as cm:
				B.check_selftest_install(d)
		self.assertIn('openat2: c was not built', str(cm.exception))
		self.assertIn('tmpfs: no tests installed', str(cm.exception))

	def test_exclude(self):
		ex = {'proc:x': (('release', 'debug'), 'needs y'), 'proc:z': (('debug',), 'slow')}
		with tempfile.TemporaryDirectory() as d, \
		     mock.patch.object(common, 'EXCLUDED_TESTS', ex):
			self.install(d, 'proc:w\nproc:x\nproc:z\n', [])
			B.exclude_tests(os.path.join(d, 'kselftest-list.txt'), 'release')
			with open(os.path.join(d, 'kselftest-list.txt')) as f:
				self.assertEqual(f.read(), 'proc:w\nproc:z\n')
			# an exclusion of a test that is not built is stale: refuse it
			with self.assertRaises(common.HarnessError):
				B.exclude_tests(os.path.join(d, 'kselftest-list.txt'), 'debug')

	def test_install_programs(self):
		"""A target built program by program: its make targets, listing, settings."""
		with tempfile.TemporaryDirectory() as d:
			src, obj, inst = (os.path.join(d, x) for x in ('src', 'obj', 'inst'))
			tdir = os.path.join(src, 'tools', 'testing', 'selftests', 'mm')
			os.makedirs(tdir)
			os.makedirs(inst)
			with open(os.path.join(tdir, 'settings'), 'w') as f:
				f.write('timeout=180\n')
			self.install(inst, 'proc:a\n', ['proc/a'])
			cmds = []

			def fake_run(cmd, **kw):
				cmds.append(cmd)
				with open(os.path.join(tdir, 'local_config.h'), 'w') as f:
					f.write('/* probe */\n')
				for arg in cmd:
					if arg.startswith(os.path.join(inst, 'mm') + '/'):
						self.install(inst, 'proc:a\n',
							     [os.path.relpath(arg, inst), 'proc/a'])
				self.install(inst, 'proc:a\n', ['mm/stray.o'])

			with mock.patch.object(B, 'run', fake_run), \
			     mock.patch.object(common, 'SELFTEST_TARGETS', ('proc', 'mm')):
				B.install_programs(src, obj, inst, 'mm', ('p1', 'p2'))
				B.check_selftest_install(inst)
			self.assertEqual(len(cmds), 1)
			self.assertIn('LDFLAGS=-static', cmds[0])
			self.assertEqual(cmds[0][-2:], [os.path.join(inst, 'mm', 'p1'),
							os.path.join(inst, 'mm', 'p2')])
			self.assertEqual(sorted(os.listdir(os.path.join(inst, 'mm'))),
					 ['p1', 'p2', 'settings'])
			with open(os.path.join(inst, 'kselftest-list.txt')) as f:
				self.assertEqual(f.read(), 'proc:a\nmm:p1\nmm:p2\n')
			# what the Makefile left in the source directory is gone
			self.assertEqual(os.listdir(tdir), ['settings'])


class ConfigTest(unittest.TestCase):
	def test_config_values(self):
		with tempfile.TemporaryDirectory() as d:
			path = os.path.join(d, '.config')
			with open(path, 'w') as f:
				f.write('#\n# comment\nCONFIG_SMP=y\n# CONFIG_KASAN is not set\n'
					'CONFIG_NR_CPUS=64\nCONFIG_CMDLINE=""\n')
			self.assertEqual(B.config_values(path),
					 {'CONFIG_SMP': 'y', 'CONFIG_KASAN': 'n', 'CONFIG_NR_CPUS': '64',
					  'CONFIG_CMDLINE': '""'})

	def test_fragments_exist(self):
		for fl in common.FLAVOURS:
			for frag in B.fragments(fl):
				self.assertTrue(os.path.exists(os.path.join(
					common.TOP, 'kernel', 'configs', frag)), frag)

	def test_make_cmd(self):
		cmd = B.make_cmd(Request(jobs=3), '/s', '/o', 'bzImage', 'headers', extra=['W=1'])
		self.assertEqual(cmd[:3], ['make', '-C', '/s'])
		self.assertIn('O=/o', cmd)
		self.assertIn('-j3', cmd)
		self.assertEqual(cmd[-3:], ['W=1', 'bzImage', 'headers'])
		# no JOBS: the host's CPUs
		with mock.patch.object(B, 'host_cpus', return_value=5):
			self.assertIn('-j5', B.make_cmd(Request(), '/s', '/o'))

	def test_unknown_flavour(self):
		with self.assertRaises(SystemExit):
			with mock.patch('sys.stderr'):
				B.build_kernel(Request(), 'fast')


if __name__ == '__main__':
	unittest.main()
