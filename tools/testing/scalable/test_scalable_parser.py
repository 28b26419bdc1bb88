#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Unit tests of scalable_parser: the splat check, the kselftest TAP parser,
# the dentry OpLog counters, the RESULT-line parser and the judgement of a
# boot.

import contextlib
import io
import os
import sys
import tempfile
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scalable_common as common  # noqa: E402
import scalable_parser as P  # noqa: E402


CLEAN_BOOT = """\
[    0.000000] Linux version 6.12.117 (root@host) #1 SMP PREEMPT_DYNAMIC
[    0.100000] Lock dependency validator: Copyright (c) 2006 Red Hat, Inc., Ingo Molnar
[    0.100001] ... MAX_LOCKDEP_SUBCLASSES:  8
[    0.200000] kmemleak: Kernel memory leak detector initialized (mem pool available: 15656)
[    0.300000] KTAP version 1
[    0.300001] 1..1
[    0.300002] ok 1 list-kernel-test
SCALABLE: init start mode=test cpus=2 kernel=6.12.117
SCALABLE: done
"""


class SplatTest(unittest.TestCase):
	def test_clean_boot_has_no_splat(self):
		self.assertEqual(P.find_splats(CLEAN_BOOT), [])

	def kinds(self, text):
		return {k for k, _ in P.find_splats(CLEAN_BOOT + text)}

	def test_warning(self):
		self.assertIn('WARNING', self.kinds(
			'[    1.0] WARNING: CPU: 1 PID: 1 at lib/foo.c:10 foo+0x1/0x2\n'))

	def test_lockdep(self):
		self.assertIn('lockdep', self.kinds(
			'[    1.0] WARNING: possible circular locking dependency detected\n'))
		self.assertIn('lockdep', self.kinds('[    1.0] inconsistent lock state\n'))

	def test_kasan(self):
		self.assertIn('KASAN', self.kinds(
			'[    1.0] BUG: KASAN: slab-use-after-free in foo+0x1/0x2\n'))

	def test_rcu_stall_and_hung_task(self):
		self.assertIn('RCU stall', self.kinds(
			'[   30.0] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:\n'))
		self.assertIn('hung task', self.kinds(
			'[  200.0] INFO: task kworker/0:1:12 blocked for more than 120 seconds.\n'))

	def test_oops_and_panic(self):
		k = self.kinds('[    1.0] Oops: general protection fault, probably for '
			       'non-canonical address\n[    1.1] Kernel panic - not syncing: Fatal\n')
		self.assertTrue({'Oops', 'GPF', 'panic'} <= k)

	def test_kmemleak(self):
		self.assertIn('kmemleak', self.kinds(
			'unreferenced object 0xffff888003a1c000 (size 64):\n'))


KSELFTEST = """\
TAP version 13
1..2
# timeout set to 900
# selftests: scalable: stat_bench
# TAP version 13
# 1..2
# # RESULT bench=stat_bench mode=same cpus=1 ops_per_ms=100.500 runs=3 stddev=1.250
# ok 1 stat_bench same cpus=1
# # RESULT bench=stat_bench mode=same cpus=2 ops_per_ms=150.000 runs=3 stddev=2.000
# not ok 2 stat_bench same cpus=2
# # Totals: pass:1 fail:1 xfail:0 xpass:0 skip:0 error:0
not ok 1 selftests: scalable: stat_bench # exit=1
# selftests: scalable: inotify_bench
# ok 1 inotify_bench per-file-watch cpus=1 # SKIP no inotify
ok 2 selftests: scalable: inotify_bench # SKIP
"""


# init.sh runs the upstream targets in a second run_kselftest.sh; the runner
# prints one plan per collection.
UPSTREAM = """\
# SCALABLE: dcache_oplog before: enabled=1 hits=100 misses=20 syncs=7 flushes=3 logs=2
TAP version 13
1..2
# overriding timeout to 900
# selftests: openat2: openat2_test
# TAP version 13
# 1..3
# ok 1 openat2 with valid how
# ok 2 openat2 with RESOLVE_CACHED # SKIP not supported
# not ok 3 openat2 with bad flags
# # Totals: pass:1 fail:1 xfail:0 xpass:0 skip:1 error:0
not ok 1 selftests: openat2: openat2_test # exit=1
# selftests: openat2: resolve_test
# ok 1 resolve
ok 2 selftests: openat2: resolve_test
TAP version 13
1..2
# selftests: tmpfs: bug-link-o-tmpfile
ok 1 selftests: tmpfs: bug-link-o-tmpfile # SKIP
"""

OPLOG_CONSOLE = """\
SCALABLE: dcache_oplog at start: enabled=1 hits=0 misses=0 evictions=0 syncs=0 flushes=0 logs=0
SCALABLE: kselftest scalable rc=0
SCALABLE: upstream selftests: openat2 tmpfs
SCALABLE: dcache_oplog before: enabled=1 hits=100 misses=20 evictions=0 syncs=7 flushes=3 logs=2
SCALABLE: kselftest upstream rc=0
SCALABLE: dcache_oplog after: enabled=1 hits=900 misses=60 evictions=1 syncs=50 flushes=9 logs=4
"""


class KselftestTest(unittest.TestCase):
	def test_parse(self):
		k = P.parse_kselftest(KSELFTEST)
		self.assertEqual(k['plan'], 2)
		self.assertEqual([t['ok'] for t in k['top']], [False, True])
		self.assertEqual(k['top'][0]['name'], 'selftests: scalable: stat_bench')
		self.assertTrue(k['top'][1]['skip'])
		self.assertEqual([t['ok'] for t in k['sub']], [True, False, True])
		self.assertTrue(k['sub'][2]['skip'])

	def test_blocks_and_targets(self):
		k = P.parse_kselftest(KSELFTEST + UPSTREAM)
		self.assertEqual([(b['plan'], b['results']) for b in k['blocks']],
				 [(2, 2), (2, 2), (2, 1)])
		self.assertEqual(k['plan'], 6)
		self.assertEqual([t['target'] for t in k['top']],
				 ['scalable', 'scalable', 'openat2', 'openat2', 'tmpfs'])
		self.assertEqual([t['target'] for t in k['sub']],
				 ['scalable'] * 3 + ['openat2'] * 4)

	def test_skips_are_not_passes(self):
		k = P.parse_kselftest(KSELFTEST + UPSTREAM)
		self.assertEqual(P.kselftest_counts(k, 'openat2'),
				 {'passed': 1, 'failed': 1, 'skipped': 0, 'subtests_passed': 2,
				  'subtests_failed': 1, 'subtests_skipped': 1})
		self.assertEqual(P.kselftest_counts(k, 'tmpfs'),
				 {'passed': 0, 'failed': 0, 'skipped': 1, 'subtests_passed': 0,
				  'subtests_failed': 0, 'subtests_skipped': 0})
		self.assertEqual(P.kselftest_counts(k)['subtests_skipped'], 2)

	def test_excluded_count_as_skipped(self):
		k = P.parse_kselftest('TAP version 13\n1..1\n# selftests: proc: w\n'
				      'ok 1 selftests: proc: w\n')
		with mock.patch.object(common, 'EXCLUDED_TESTS',
				       {'proc:x': (('debug',), 'needs y')}), \
		     mock.patch.object(common, 'SELFTEST_TARGETS', ('proc',)):
			c = P.kselftest_counts(k, 'proc', 'debug')
			r = P.kselftest_counts(k, 'proc', 'release')
		self.assertEqual((c['passed'], c['skipped'], c['failed']), (1, 1, 0))
		self.assertEqual((r['passed'], r['skipped'], r['failed']), (1, 0, 0))


class AnalyzeTest(unittest.TestCase):
	def boot(self, **kw):
		b = {'name': 't', 'flavour': 'release', 'smp': 2, 'accel': 'tcg', 'mode': 'test',
		     'seconds': 1.0, 'ended': 'exit', 'qemu_rc': 0, 'append': '',
		     'console': os.path.join(common.TOP, 'c.log'),
		     'tap': os.path.join(common.TOP, 't.log'),
		     'console_text': CLEAN_BOOT + OPLOG_CONSOLE, 'tap_text': KSELFTEST + UPSTREAM}
		b.update(kw)
		return b

	def analyze(self, b, targets, benchmarks=(), **kw):
		with tempfile.TemporaryDirectory() as d, \
		     mock.patch.object(common, 'SELFTEST_TARGETS', targets), \
		     mock.patch.object(common, 'BENCHMARKS', benchmarks), \
		     mock.patch.object(P, 'parse_kunit', return_value={
			     'rc': 0, 'passed': 1, 'failed': 0, 'skipped': 0, 'crashed': 0,
			     'suites': [], 'output': ''}), \
		     contextlib.redirect_stdout(io.StringIO()):
			return P.analyze(d, b, d, **kw)

	def test_analyze_upstream(self):
		"""A short block, a missing target and a failure all fail the boot."""
		ok, problems, summary = self.analyze(self.boot(), ('scalable', 'openat2', 'proc'))
		self.assertFalse(ok)
		self.assertIn('kselftest: plan 1..2 but 1 results', problems)
		self.assertIn('kselftest: no result from target proc', problems)
		self.assertIn('kselftest failed: selftests: openat2: openat2_test', problems)
		self.assertFalse([p for p in problems if p.startswith('dcache_oplog')])
		self.assertEqual(summary['targets']['openat2']['subtests_skipped'], 1)
		self.assertEqual(summary['console'], 'c.log')

	def test_timeout_and_missing_benchmark(self):
		ok, problems, _ = self.analyze(self.boot(ended='timeout'), ('scalable',),
					       ('stat_bench', 'fork_bench'))
		self.assertFalse(ok)
		self.assertIn('the guest did not finish within the timeout and was killed', problems)
		self.assertIn('benchmark fork_bench printed no RESULT line', problems)
		self.assertNotIn('benchmark stat_bench printed no RESULT line', problems)


class DcacheOplogTest(unittest.TestCase):
	def test_parse(self):
		st = P.parse_dcache_oplog(OPLOG_CONSOLE)
		self.assertEqual(st['before']['hits'], 100)
		self.assertEqual(st['after']['syncs'], 50)
		self.assertEqual(st['at start']['enabled'], 1)
		self.assertEqual(P.check_dcache_oplog(st, ''), [])

	def test_no_hits(self):
		st = P.parse_dcache_oplog(OPLOG_CONSOLE.replace('hits=900', 'hits=100'))
		self.assertIn('no per-CPU reference', ' '.join(P.check_dcache_oplog(st, '')))

	def test_switch_left_off(self):
		st = P.parse_dcache_oplog(OPLOG_CONSOLE.replace('before: enabled=1',
								 'before: enabled=0'))
		p = ' '.join(P.check_dcache_oplog(st, ''))
		self.assertIn('left the switch at 0', p)
		self.assertIn('switch 0 during the upstream selftests', p)

	def test_off_boot(self):
		st = P.parse_dcache_oplog(OPLOG_CONSOLE.replace('enabled=1', 'enabled=0').
					  replace('hits=900', 'hits=100'))
		self.assertEqual(P.check_dcache_oplog(st, 'console=ttyS0 dcache_oplog=off'), [])
		self.assertTrue(P.check_dcache_oplog(st, 'console=ttyS0'))

	def test_missing(self):
		self.assertTrue(P.check_dcache_oplog(P.parse_dcache_oplog(CLEAN_BOOT), ''))


class ResultsTest(unittest.TestCase):
	def test_results(self):
		r = P.parse_results(KSELFTEST)
		self.assertEqual(len(r), 2)
		self.assertEqual(r[1], {'bench': 'stat_bench', 'mode': 'same', 'cpus': 2,
					'ops_per_ms': 150.0, 'runs': 3, 'stddev': 2.0})

	def test_types(self):
		r = P.parse_results('# RESULT bench=b mode=m-x cpus=4 ops_per_ms=1e-3 delta=-2 '
				    'status=fail\n')
		self.assertEqual(r, [{'bench': 'b', 'mode': 'm-x', 'cpus': 4, 'ops_per_ms': 0.001,
				      'delta': -2, 'status': 'fail'}])


if __name__ == '__main__':
	unittest.main()
