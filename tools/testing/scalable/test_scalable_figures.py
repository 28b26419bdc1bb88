#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Unit tests of scalable_figures ("make figures"): which texts and scopes
# it reads, what counts as a figure, and when a figure has its results
# file; on synthetic trees in temporary directories.

import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scalable_figures as F  # noqa: E402
import scalable_trace  # noqa: E402

RUN = '<!-- make run on a 2-core host -->\n| stat_bench | same-oplog | 441 ±39.7 | 0.96x |\n'
TRACE = ('# exec_bench traced at 8 vCPUs\n\nCommand: `TRACE_SMP=8 make trace`\n\n'
	 '| exec_bench | shared-exec-oplog | transfers/op | 1808.660 |\n'
	 '| OpLog code at most 1 transfer/op | met | 0.55 |\n'
	 '| reverse-map transfers/op | missed | 27.9 vs 22.8 |\n')


class FiguresTest(unittest.TestCase):
	def setUp(self):
		self.tmp = tempfile.TemporaryDirectory()
		self.top = self.tmp.name
		self.write(os.path.join(F.RESULTS, 'run-1.md'), RUN)
		self.write(os.path.join(F.RESULTS, 'trace-8.md'), TRACE)

	def tearDown(self):
		self.tmp.cleanup()

	def write(self, path, text):
		path = os.path.join(self.top, path)
		os.makedirs(os.path.dirname(path), exist_ok=True)
		with open(path, 'w', encoding='utf-8') as f:
			f.write(text)

	def problems(self, not_figures=()):
		return F.problems(self.top, not_figures)

	def message(self, text):
		self.write('patches/0001-x/message', text)
		return self.problems()

	def test_named_file_holds_the_figures(self):
		self.assertEqual(self.message(
			'Traced (tools/testing/scalable/results/trace-8.md): 27.9 lines per\n'
			'exec against 22.8 private; OpLog code 0.55, 1808.660 transfers.\n'), [])

	def test_figure_without_results_file_fails(self):
		p = self.message('Subject\n\nstat() got 3.4% faster and open() 1.32x.\n')
		self.assertEqual(len(p), 2)
		self.assertIn('patches/0001-x/message:3: 3.4% is in no results file', p[0])
		self.assertIn('it names none', p[0])
		self.assertIn('1.32x', p[1])

	def test_figure_missing_from_the_named_file_fails(self):
		p = self.message('From trace-8.md: 27.9 lines, 420.9 stock.\n')
		self.assertEqual(len(p), 1)
		self.assertIn('420.9', p[0])
		self.assertIn('(trace-8.md)', p[0])

	def test_unnamed_file_does_not_count(self):
		# 0.96x is in run-1.md, but the text names only trace-8.md
		self.assertEqual(len(self.message('See trace-8.md; OpLog at 0.96x of stock.\n')), 1)
		# nor does a longer name that holds the file's name
		self.assertEqual(len(self.message('See old-run-1.md: 0.96x.\n')), 1)
		self.assertEqual(self.message('See run-1.md: 0.96x.\n'), [])

	def test_same_digits_only(self):
		# a sign, x or % and trailing zeros do not matter; rounding does
		self.assertEqual(self.message('trace-8.md: 0.550, +27.9%, 22.8x, 1808.66.\n'), [])
		p = self.message('trace-8.md: OpLog code 0.6 and 27.90 lines.\n')
		self.assertEqual([x.split(': ')[1].split()[0] for x in p], ['0.6'])

	def test_not_figures(self):
		self.write('patches/cover-letter', 'The plugin ignores version 6.12.117, '
			   'Linux 6.12, 6.12.y, QEMU 7.2 and\nQEMU 7.2.22, linux-6.12 and '
			   '10.0.2.15, python3.11, `/path/linux-6.12.y.tar.xz`,\n'
			   'tools/testing/x/1.5/y, build/1.5.md, run-1.5.md, section 4.1,\n'
			   '§3.2, §§ 4.11a/b, thesis sections 3.2-3.4 and\n8.2, Fig. 4.11, '
			   'table 5.9, SPDX GPL-2.0, since\n6.13, FreeBSD 6.0, Linux 5.15, '
			   "Debian's 6.18 kernel.\n")
		self.assertEqual(self.problems(), [])

	def test_figures_are_found(self):
		found = F.figures('Gains: -1.9%, +0.6% and 1.14/0.99 (4.2x), 3.5 ms, 1.5ms, '
				  '2.0. And 7.25 per op; in 3.3.2 and 1.2.3.4 none.\n')[0]
		self.assertEqual([t for _, t, _ in found],
				 ['1.9%', '0.6%', '1.14', '0.99', '4.2x', '3.5', '1.5ms', '2.0', '7.25'])

	def test_not_figures_list(self):
		allow = (('slack of 0.1 transfers', 'a constant'), ('never used 9.9', 'stale'))
		self.write('Documentation/core-api/x.rst',
			   'The slack of\n   0.1 transfers per op; 0.1 here is a figure.\n')
		p = self.problems(allow)
		self.assertEqual(len(p), 2)
		self.assertIn('x.rst:2: 0.1 is in no results file', p[0])
		self.assertIn('NOT_FIGURES: "never used 9.9" (stale) is in no text', p[1])

	def test_readme_sections_are_scopes(self):
		self.write('README.md', '# Title\n\nFigures from results/run-1.md.\n\n'
			   '## One\n\nResults in tools/testing/scalable/results/trace-8.md: 27.9.\n'
			   '### Sub\n\n22.8 lines.\n\n## Two\n\nAgain 27.9 lines and 0.96x.\n')
		p = self.problems()
		self.assertEqual(len(p), 2)
		self.assertIn('README.md:14: 27.9 is in no results file that README.md\'s "Two" '
			      'names (it names none)', p[0])
		self.assertIn('README.md:14: 0.96x', p[1])

	def test_readme_gate_table_is_exempt(self):
		table = scalable_trace.gate_table()
		self.assertRegex(table, r'\d\.\d')
		self.write('README.md', '# Title\n\n## Gates\n\n' + table + '\n\nBut 0.25 fails.\n')
		p = self.problems()
		self.assertEqual(len(p), 1)
		self.assertIn('0.25', p[0])
		self.assertIn('README.md:%d:' % (table.count('\n') + 7), p[0])

	def test_texts(self):
		for path in ('README.md', 'Documentation/a.rst', 'Documentation/core-api/b.rst',
			     'Documentation/c.txt', 'patches/cover-letter', 'patches/0001-x/message',
			     'patches/0001-x/upstream.diff', 'notes.md'):
			self.write(path, '1.5\n')
		self.assertEqual(F.texts(self.top),
				 ['README.md', 'Documentation/a.rst', 'Documentation/core-api/b.rst',
				  'patches/cover-letter', 'patches/0001-x/message'])
		self.assertEqual(len(self.problems()), 5)

	def test_digits(self):
		self.assertEqual(F.digits('4.20'), '4.2')
		self.assertEqual(F.digits('16.00'), '16.0')
		self.assertEqual(F.digits('0.055'), '0.055')

	def test_not_figures_entries_have_reasons(self):
		for phrase, reason in F.NOT_FIGURES:
			self.assertTrue(F.FIGURE.search(phrase), phrase)
			self.assertTrue(reason.strip(), phrase)


if __name__ == '__main__':
	unittest.main()
