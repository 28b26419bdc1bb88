#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Unit tests of scalable_tree: missing packages, the base's checks, and the
# series definition in patches/ (which patch adds which file).

import os
import sys
import tempfile
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scalable_common as common  # noqa: E402
import scalable_tree as T  # noqa: E402
from scalable_request import Request  # noqa: E402
from test_scalable_common import die_message  # noqa: E402


def write(path, text):
	os.makedirs(os.path.dirname(path), exist_ok=True)
	with open(path, 'w') as f:
		f.write(text)


class BaseTest(unittest.TestCase):
	"""Bad input ends with a clear message and a non-zero exit, never a hang."""

	def test_missing_packages_not_root(self):
		pk = dict(T.PACKAGES, **{'no-such-package': '/nonexistent/file'})
		with mock.patch.object(T, 'PACKAGES', pk), mock.patch('os.geteuid', return_value=1000):
			msg = die_message(self, T.ensure_packages, False)
		self.assertIn('no-such-package', msg)
		self.assertIn('sudo apt-get install', msg)

	def test_wrong_base_version(self):
		with tempfile.TemporaryDirectory() as d:
			write(os.path.join(d, 'Makefile'), 'VERSION = 6\nPATCHLEVEL = 11\nSUBLEVEL = 3\n')
			msg = die_message(self, T.check_base_version, d, d)
		self.assertIn('Linux 6.11.3', msg)
		self.assertIn('6.12.y', msg)

	def test_own_base(self):
		"""LINUX_TREE or LINUX_TARBALL (test_scalable_request.py checks them)."""
		with tempfile.TemporaryDirectory() as d:
			write(os.path.join(d, 'Makefile'), 'VERSION = 6\n')
			write(os.path.join(d, 'linux.tar.xz'), 'tar')
			real = os.path.realpath(d)
			self.assertEqual(T.base_source(Request(linux_tree=d)),
					 ('tree', real, 'tree:' + real))
			self.assertEqual(T.base_source(Request(linux_tarball=d + '/linux.tar.xz')),
					 ('tarball', real + '/linux.tar.xz',
					  'tarball:' + T.sha256(d + '/linux.tar.xz')))
			self.assertFalse(T.base_package_needed(Request(linux_tree=d)))
			self.assertFalse(T.base_package_needed(Request(linux_tarball=d)))
		self.assertTrue(T.base_package_needed(Request()))

	def test_tree_version(self):
		with tempfile.TemporaryDirectory() as d:
			write(os.path.join(d, 'Makefile'), '# SPDX\nVERSION = 6\nPATCHLEVEL = 12\n'
			      'SUBLEVEL = 117\nEXTRAVERSION =\n')
			self.assertEqual(T.tree_version(d), '6.12.117')


class SeriesDefinitionTest(unittest.TestCase):
	def test_series_patches(self):
		with tempfile.TemporaryDirectory() as d, \
		     mock.patch.object(common, 'PATCHES', d):
			write(os.path.join(d, 'cover-letter'), 'subject\n')
			write(os.path.join(d, '0002-b', 'message'), 'b: two\n')
			write(os.path.join(d, '0002-b', 'upstream.diff'), '--- a/x\n')
			write(os.path.join(d, '0001-a', 'message'), 'a: one\n')
			write(os.path.join(d, '0001-a', 'files'),
			      '# comment\nlib/a.c  # the code\n\ninclude/a/\n')
			p = T.series_patches()
		self.assertEqual([x['name'] for x in p], ['0001-a', '0002-b'])
		self.assertEqual(p[0]['files'], ['lib/a.c', 'include/a/'])
		self.assertIsNone(p[0]['diff'])
		self.assertEqual(p[1]['files'], [])
		self.assertTrue(p[1]['diff'].endswith('upstream.diff'))
		self.assertEqual(p[1]['message'], 'b: two\n')

	PATCHES = [{'name': '0001-a', 'files': ['lib/a.c', 'include/a/']},
		   {'name': '0002-b', 'files': ['lib/b.c']}]
	TRACKED = ['lib/a.c', 'include/a/x.h', 'include/a/y.h', 'lib/b.c', 'README.md',
		   'patches/0001-a/files', 'tools/testing/scalable/scalable_new.py']

	def owner(self, tracked, patches=None):
		with mock.patch.object(T, 'tracked_files', return_value=tracked):
			return T.series_files(patches or self.PATCHES)

	def test_series_files(self):
		self.assertEqual(self.owner(self.TRACKED),
				 {'lib/a.c': '0001-a', 'include/a/x.h': '0001-a',
				  'include/a/y.h': '0001-a', 'lib/b.c': '0002-b'})

	def test_harness_is_not_in_the_series(self):
		for f in self.TRACKED:
			if f.startswith(('README', 'patches/', 'tools/testing/scalable/')):
				self.assertTrue(f.startswith(T.NOT_IN_SERIES), f)

	def test_orphan(self):
		with self.assertRaises(common.HarnessError) as cm:
			self.owner(self.TRACKED + ['lib/c.c'])
		self.assertIn('files not in any patch of patches/*/files: lib/c.c', str(cm.exception))

	def test_claimed_twice_or_missing(self):
		with self.assertRaises(common.HarnessError) as cm:
			self.owner(self.TRACKED, self.PATCHES + [{'name': '0003-c', 'files': ['lib/b.c']}])
		self.assertIn('lib/b.c is claimed by both 0002-b and 0003-c', str(cm.exception))
		with self.assertRaises(common.HarnessError) as cm:
			self.owner(self.TRACKED, self.PATCHES + [{'name': '0003-c', 'files': ['lib/c.c']}])
		self.assertIn('0003-c/files lists lib/c.c', str(cm.exception))

	def test_series_diff_changes_only_earlier_new_files(self):
		with tempfile.TemporaryDirectory() as d:
			diff = os.path.join(d, 'series.diff')
			write(diff, '--- a/lib/a.c\n+++ b/lib/a.c\n@@ -1 +1,2 @@\n a\n+b\n')
			self.assertEqual(T.diff_paths(diff), ['lib/a.c'])
			ok = [dict(self.PATCHES[0]), dict(self.PATCHES[1], series_diff=diff)]
			self.assertEqual(self.owner(self.TRACKED, ok)['lib/a.c'], '0001-a')
			for bad in ([dict(self.PATCHES[0], series_diff=diff), self.PATCHES[1]],
				    [dict(self.PATCHES[0], files=['include/a/']),
				     dict(self.PATCHES[1], files=['lib/b.c', 'lib/a.c'],
					  series_diff=diff)]):
				with self.assertRaises(common.HarnessError) as cm:
					self.owner(self.TRACKED, bad)
				self.assertIn('series.diff changes lib/a.c, which no earlier patch adds',
					      str(cm.exception))

	def test_this_checkout(self):
		"""Every file of this checkout is in one patch or outside the series."""
		owner = T.series_files(T.series_patches())
		self.assertFalse([f for f in owner if f.startswith('tools/testing/scalable/')])
		self.assertIn('lib/oplog.c', owner)


if __name__ == '__main__':
	unittest.main()
