# SPDX-License-Identifier: GPL-2.0
#
# Unit tests of scalable_kcsan: reading KCSAN reports and telling the
# series' races from stock ones.

import os
import tempfile
import unittest

import scalable_kcsan as kcsan

REPORT = '''[   12.000001] ==================================================================
[   12.000002] BUG: KCSAN: data-race in __dcache_oplog_put / dput
[   12.000003]
[   12.000004] write to 0xffff888003c1e0c8 of 4 bytes by task 81 on cpu 1:
[   12.000005]  __dcache_oplog_put+0x4c/0x120
[   12.000006]  dput+0x31/0x2f0
[   12.000007]  do_syscall_64+0x9e/0x1a0
[   12.000008]
[   12.000009] read to 0xffff888003c1e0c8 of 4 bytes by task 82 on cpu 0:
[   12.000010]  dput+0x18/0x2f0
[   12.000011]  path_put+0x1e/0x30
[   12.000012]
[   12.000013] value changed: 0x00000002 -> 0x00000001
[   12.000014]
[   12.000015] Reported by Kernel Concurrency Sanitizer on:
[   12.000016] CPU: 0 UID: 0 PID: 82 Comm: stat_bench Not tainted 6.12.0 #1
[   12.000017] ==================================================================
[   13.000001] ==================================================================
[   13.000002] BUG: KCSAN: data-race in tick_sched_do_timer / tick_nohz_idle_stop_tick
[   13.000003]
[   13.000004] write to 0xffffffff82a0c1d0 of 4 bytes by interrupt on cpu 1:
[   13.000005]  tick_sched_do_timer+0x2a/0x120
[   13.000006]
[   13.000007] read to 0xffffffff82a0c1d0 of 4 bytes by task 0 on cpu 0:
[   13.000008]  tick_nohz_idle_stop_tick+0x6e/0x3b0
[   13.000009]
[   13.000010] Reported by Kernel Concurrency Sanitizer on:
[   13.000011] ==================================================================
'''


class ParseTest(unittest.TestCase):
	def test_two_reports_with_their_stacks(self):
		r = kcsan.parse(REPORT)
		self.assertEqual(2, len(r))
		self.assertEqual('data-race in __dcache_oplog_put / dput', r[0]['title'])
		self.assertEqual([[('__dcache_oplog_put', 0x4c), ('dput', 0x31),
				   ('do_syscall_64', 0x9e)],
				  [('dput', 0x18), ('path_put', 0x1e)]], r[0]['accesses'])
		self.assertEqual([[('tick_sched_do_timer', 0x2a)],
				  [('tick_nohz_idle_stop_tick', 0x6e)]], r[1]['accesses'])

	def test_nothing_without_a_report(self):
		self.assertEqual([], kcsan.parse('[    1.0] BUG: KASAN: use-after-free\n'))


class ClassifyTest(unittest.TestCase):
	CHAINS = {
		('__dcache_oplog_put', 0x4c): [('fs/dcache_oplog.c', 300)],
		# An access of stock dput(), on a line the series did not add.
		('dput', 0x18): [('fs/dcache.c', 900)],
		('tick_sched_do_timer', 0x2a): [('kernel/time/tick-sched.c', 200)],
		('tick_nohz_idle_stop_tick', 0x6e): [('kernel/time/tick-sched.c', 1200)],
	}

	def locate(self, func, off):
		return self.CHAINS.get((func, off), [])

	def test_a_series_file_makes_it_the_series(self):
		lines = {'fs/dcache_oplog.c': None, 'fs/dcache.c': {10, 11}}
		series, stock = kcsan.classify(kcsan.parse(REPORT), self.locate, lines)
		self.assertEqual(['data-race in __dcache_oplog_put / dput'],
				 [r['title'] for r in series])
		self.assertEqual(['data-race in tick_sched_do_timer / tick_nohz_idle_stop_tick'],
				 [r['title'] for r in stock])
		self.assertIn('fs/dcache_oplog.c:300', series[0]['where'])

	def test_a_line_the_series_added_makes_it_the_series(self):
		reports = kcsan.parse(REPORT)
		self.CHAINS = dict(self.CHAINS)
		self.CHAINS[('__dcache_oplog_put', 0x4c)] = [('fs/dcache.c', 850)]
		series, _ = kcsan.classify(reports, self.locate, {'fs/dcache.c': {900}})
		self.assertEqual(1, len(series))
		series, stock = kcsan.classify(reports, self.locate, {'fs/dcache.c': {901}})
		self.assertEqual(([], 2), (series, len(stock)))

	def test_an_inlined_series_helper_counts(self):
		reports = kcsan.parse(REPORT)
		self.CHAINS = dict(self.CHAINS)
		self.CHAINS[('__dcache_oplog_put', 0x4c)] = [('fs/dcache.c', 850)]
		self.CHAINS[('dput', 0x18)] = [('include/linux/dcache_oplog.h', 40),
					       ('fs/dcache.c', 900)]
		series, _ = kcsan.classify(reports, self.locate,
					   {'include/linux/dcache_oplog.h': None})
		self.assertEqual(1, len(series))


class UnlocatedTest(unittest.TestCase):
	def test_an_access_without_location_fails(self):
		series, stock = kcsan.classify(kcsan.parse(REPORT), lambda f, o: [], {})
		self.assertEqual((2, 0), (len(series), len(stock)))
		self.assertIn('__dcache_oplog_put+0x4c: not located', series[0]['where'])


class SeriesLinesTest(unittest.TestCase):
	def test_added_and_changed_lines_and_new_files(self):
		with tempfile.TemporaryDirectory() as d:
			base, src = os.path.join(d, 'base'), os.path.join(d, 'src')
			for t in (base, src):
				os.makedirs(os.path.join(t, 'fs'))
			with open(os.path.join(base, 'fs', 'a.c'), 'w') as f:
				f.write('one\ntwo\nthree\n')
			with open(os.path.join(src, 'fs', 'a.c'), 'w') as f:
				f.write('one\nTWO\nthree\nfour\n')
			with open(os.path.join(src, 'fs', 'new.c'), 'w') as f:
				f.write('x\n')
			out = kcsan.series_lines(base, src, ['fs/a.c', 'fs/new.c', 'fs/gone.c'])
			self.assertEqual({'fs/a.c': {2, 4}, 'fs/new.c': None}, out)


class JudgeTest(unittest.TestCase):
	def test_without_kernel_tree(self):
		"""src None: no report can be located, so every one is the series'."""
		out = kcsan.judge(REPORT, 'kcsan', None)
		self.assertEqual([], out['stock'])
		self.assertEqual(['__dcache_oplog_put+0x4c: not located', 'dput+0x18: not located'],
				 out['series'][0]['where'])
		self.assertEqual(2, len(out['series']))
		self.assertEqual({'series': [], 'stock': []}, kcsan.judge('no report\n', 'kcsan', None))


class SeriesPathsTest(unittest.TestCase):
	def test_files_and_diffs(self):
		with tempfile.NamedTemporaryFile('w', suffix='.diff', delete=False) as f:
			f.write('--- a/fs/dcache.c\n+++ b/fs/dcache.c\n@@ -1 +1 @@\n-a\n+b\n')
			diff = f.name
		try:
			patches = [{'files': ['lib/oplog.c', 'tools/testing/selftests/scalable/'],
				    'diff': diff},
				   {'files': ['fs/dcache_oplog.c'], 'diff': None}]
			self.assertEqual(['fs/dcache.c', 'fs/dcache_oplog.c', 'lib/oplog.c'],
					 kcsan.series_paths(patches))
		finally:
			os.unlink(diff)


if __name__ == '__main__':
	unittest.main()
