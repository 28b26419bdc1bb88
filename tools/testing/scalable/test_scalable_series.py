#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Unit tests of scalable_series: which files the static checks take, the
# cover letter, and git failures reported as HarnessError.  The export
# itself needs the base tree: "make series" runs it.

import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scalable_common as common  # noqa: E402
import scalable_series as SE  # noqa: E402
from scalable_request import Request  # noqa: E402


class SeriesTest(unittest.TestCase):
	OWNER = {'lib/oplog.c': 1, 'include/linux/oplog.h': 1, 'fs/dcache_oplog.c': 2,
		 'tools/testing/selftests/scalable/stat_bench.c': 3,
		 'Documentation/core-api/oplog.rst': 4, 'kernel/configs/scalable.config': 5,
		 'scripts/x.c': 6, 'samples/y.c': 6}

	def test_kernel_files(self):
		self.assertEqual(SE.kernel_c_files(self.OWNER), ['fs/dcache_oplog.c', 'lib/oplog.c'])
		self.assertEqual(SE.kernel_doc_files(self.OWNER),
				 ['fs/dcache_oplog.c', 'include/linux/oplog.h', 'lib/oplog.c'])

	def test_cover_letter(self):
		with tempfile.TemporaryDirectory() as d, \
		     mock.patch.object(common, 'PATCHES', d):
			with open(os.path.join(d, 'cover-letter'), 'w') as f:
				f.write('Scalable subsystems\n\nThe blurb.\nMore.\n')
			path = os.path.join(d, '0000-cover-letter.patch')
			with open(path, 'w') as f:
				f.write('Subject: [PATCH 0/9] *** SUBJECT HERE ***\n\n'
					'*** BLURB HERE ***\n\nA (1):\n')
			SE.cover_letter(path)
			with open(path) as f:
				text = f.read()
		self.assertEqual(text, 'Subject: [PATCH 0/9] Scalable subsystems\n\n'
				 'The blurb.\nMore.\n\nA (1):\n')

	def test_git(self):
		with tempfile.TemporaryDirectory() as d:
			subprocess.run(['git', 'init', '-q', d], check=True)
			self.assertEqual(SE.git(d, 'rev-parse', '--is-inside-work-tree', capture=True),
					 'true')
			with self.assertRaises(common.HarnessError) as cm:
				SE.git(d, 'rev-parse', '--verify', '-q', 'no-such-ref', capture=True)
			self.assertIn('git rev-parse --verify -q no-such-ref failed in ' + d,
				      str(cm.exception))
			r = SE.git(d, 'rev-parse', '--verify', '-q', 'no-such-ref', check=False)
			self.assertNotEqual(r.returncode, 0)

	def test_commit_series_reverses_later_series_diffs(self):
		"""A new file that a later patch changes is committed as its owner
		added it, and each later patch's commit changes it."""
		with tempfile.TemporaryDirectory() as top, tempfile.TemporaryDirectory() as repo:
			def write(rel, text):
				path = os.path.join(top, rel)
				os.makedirs(os.path.dirname(path), exist_ok=True)
				with open(path, 'w') as f:
					f.write(text)
				return path
			write('tools/Makefile', 'A\nB\nC\n')
			write('tools/b.c', 'b\n')
			patches = [{'name': '0001-a', 'diff': None, 'series_diff': None,
				    'dir': os.path.dirname(write('patches/0001-a/message', 'a: add\n'))},
				   {'name': '0002-b', 'diff': None,
				    'series_diff': write('patches/0002-b/series.diff',
							 '--- a/tools/Makefile\n+++ b/tools/Makefile\n'
							 '@@ -1 +1,2 @@\n A\n+B\n'),
				    'dir': os.path.join(top, 'patches', '0002-b')},
				   {'name': '0003-c', 'diff': None,
				    'series_diff': write('patches/0003-c/series.diff',
							 '--- a/tools/Makefile\n+++ b/tools/Makefile\n'
							 '@@ -1,2 +1,3 @@\n A\n B\n+C\n'),
				    'dir': os.path.dirname(write('patches/0003-c/message', 'c: add\n'))}]
			write('patches/0002-b/message', 'b: add\n')
			owner = {'tools/Makefile': '0001-a', 'tools/b.c': '0002-b'}
			subprocess.run(['git', 'init', '-q', repo], check=True)
			for k, v in (('user.name', 'T'), ('user.email', 't@example.org')):
				SE.git(repo, 'config', k, v)
			SE.git(repo, 'commit', '-q', '--allow-empty', '-m', 'base')
			SE.git(repo, 'tag', 'base')
			with mock.patch.object(common, 'TOP', top):
				SE.commit_series(repo, patches, owner)
			shown = [SE.git(repo, 'show', 'series~%d:tools/Makefile' % n, capture=True)
				 for n in (2, 1, 0)]
			self.assertEqual(shown, ['A', 'A\nB', 'A\nB\nC'])
			self.assertEqual(SE.git(repo, 'show', '--format=', '--name-only', 'series~1',
						capture=True).split(), ['tools/Makefile', 'tools/b.c'])

	def test_series_out(self):
		self.assertEqual(SE.series_out(Request()), os.path.join(common.TOP, 'out', 'series'))
		self.assertEqual(SE.series_out(Request(out='/x/out')), '/x/out/series')


if __name__ == '__main__':
	unittest.main()
