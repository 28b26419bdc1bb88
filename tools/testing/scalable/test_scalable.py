#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Unit tests of the harness's parsers: the splat check, the kselftest TAP
# parser, the RESULT-line parser and the report table.  Run by "make test"
# before anything is built.

import contextlib
import io
import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scalable as S  # noqa: E402


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
		self.assertEqual(S.find_splats(CLEAN_BOOT), [])

	def kinds(self, text):
		return {k for k, _ in S.find_splats(CLEAN_BOOT + text)}

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
		k = S.parse_kselftest(KSELFTEST)
		self.assertEqual(k['plan'], 2)
		self.assertEqual([t['ok'] for t in k['top']], [False, True])
		self.assertEqual(k['top'][0]['name'], 'selftests: scalable: stat_bench')
		self.assertTrue(k['top'][1]['skip'])
		self.assertEqual([t['ok'] for t in k['sub']], [True, False, True])
		self.assertTrue(k['sub'][2]['skip'])

	def test_blocks_and_targets(self):
		k = S.parse_kselftest(KSELFTEST + UPSTREAM)
		self.assertEqual([(b['plan'], b['results']) for b in k['blocks']],
				 [(2, 2), (2, 2), (2, 1)])
		self.assertEqual(k['plan'], 6)
		self.assertEqual([t['target'] for t in k['top']],
				 ['scalable', 'scalable', 'openat2', 'openat2', 'tmpfs'])
		self.assertEqual([t['target'] for t in k['sub']],
				 ['scalable'] * 3 + ['openat2'] * 4)

	def test_skips_are_not_passes(self):
		k = S.parse_kselftest(KSELFTEST + UPSTREAM)
		self.assertEqual(S.kselftest_counts(k, 'openat2'),
				 {'passed': 1, 'failed': 1, 'skipped': 0, 'subtests_passed': 2,
				  'subtests_failed': 1, 'subtests_skipped': 1})
		self.assertEqual(S.kselftest_counts(k, 'tmpfs'),
				 {'passed': 0, 'failed': 0, 'skipped': 1, 'subtests_passed': 0,
				  'subtests_failed': 0, 'subtests_skipped': 0})
		self.assertEqual(S.kselftest_counts(k)['subtests_skipped'], 2)

	def test_analyze_upstream(self):
		"""A short block, a missing target and a failure all fail the boot."""
		b = {'name': 't', 'flavour': 'release', 'smp': 2, 'accel': 'tcg', 'mode': 'test',
		     'seconds': 1.0, 'ended': 'exit', 'qemu_rc': 0, 'append': '',
		     'console': os.path.join(S.TOP, 'c.log'), 'tap': os.path.join(S.TOP, 't.log'),
		     'console_text': CLEAN_BOOT + OPLOG_CONSOLE, 'tap_text': KSELFTEST + UPSTREAM}
		with tempfile.TemporaryDirectory() as d, \
		     mock.patch.object(S, 'SELFTEST_TARGETS', ('scalable', 'openat2', 'proc')), \
		     mock.patch.object(S, 'BENCHMARKS', ()), \
		     mock.patch.object(S, 'parse_kunit', return_value={
			     'rc': 0, 'passed': 1, 'failed': 0, 'skipped': 0, 'crashed': 0,
			     'suites': [], 'output': ''}), \
		     contextlib.redirect_stdout(io.StringIO()):
			ok, problems, summary = S.analyze(d, b, d)
		self.assertFalse(ok)
		self.assertIn('kselftest: plan 1..2 but 1 results', problems)
		self.assertIn('kselftest: no result from target proc', problems)
		self.assertIn('kselftest failed: selftests: openat2: openat2_test', problems)
		self.assertFalse([p for p in problems if p.startswith('dcache_oplog')])
		self.assertEqual(summary['targets']['openat2']['subtests_skipped'], 1)


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
		     mock.patch.object(S, 'SELFTEST_TARGETS', ('scalable', 'openat2', 'tmpfs')):
			self.install(d, 'scalable:a\nopenat2:b\nopenat2:c\n',
				     ['scalable/a', 'openat2/b'])
			with self.assertRaises(S.HarnessError) as cm:
				S.check_selftest_install(d)
		self.assertIn('openat2: c was not built', str(cm.exception))
		self.assertIn('tmpfs: no tests installed', str(cm.exception))

	def test_exclude(self):
		ex = {'proc:x': (('release', 'debug'), 'needs y'), 'proc:z': (('debug',), 'slow')}
		with tempfile.TemporaryDirectory() as d, \
		     mock.patch.object(S, 'EXCLUDED_TESTS', ex):
			self.install(d, 'proc:w\nproc:x\nproc:z\n', [])
			S.exclude_tests(os.path.join(d, 'kselftest-list.txt'), 'release')
			with open(os.path.join(d, 'kselftest-list.txt')) as f:
				self.assertEqual(f.read(), 'proc:w\nproc:z\n')
			# an exclusion of a test that is not built is stale: refuse it
			with self.assertRaises(S.HarnessError):
				S.exclude_tests(os.path.join(d, 'kselftest-list.txt'), 'debug')

	def test_excluded_count_as_skipped(self):
		k = S.parse_kselftest('TAP version 13\n1..1\n# selftests: proc: w\n'
				      'ok 1 selftests: proc: w\n')
		with mock.patch.object(S, 'EXCLUDED_TESTS', {'proc:x': (('debug',), 'needs y')}), \
		     mock.patch.object(S, 'SELFTEST_TARGETS', ('proc',)):
			c = S.kselftest_counts(k, 'proc', 'debug')
			r = S.kselftest_counts(k, 'proc', 'release')
		self.assertEqual((c['passed'], c['skipped'], c['failed']), (1, 1, 0))
		self.assertEqual((r['passed'], r['skipped'], r['failed']), (1, 0, 0))


class DcacheOplogTest(unittest.TestCase):
	def test_parse(self):
		st = S.parse_dcache_oplog(OPLOG_CONSOLE)
		self.assertEqual(st['before']['hits'], 100)
		self.assertEqual(st['after']['syncs'], 50)
		self.assertEqual(st['at start']['enabled'], 1)
		self.assertEqual(S.check_dcache_oplog(st, ''), [])

	def test_no_hits(self):
		st = S.parse_dcache_oplog(OPLOG_CONSOLE.replace('hits=900', 'hits=100'))
		self.assertIn('no per-CPU reference', ' '.join(S.check_dcache_oplog(st, '')))

	def test_switch_left_off(self):
		st = S.parse_dcache_oplog(OPLOG_CONSOLE.replace('before: enabled=1',
								 'before: enabled=0'))
		p = ' '.join(S.check_dcache_oplog(st, ''))
		self.assertIn('left the switch at 0', p)
		self.assertIn('switch 0 during the upstream selftests', p)

	def test_off_boot(self):
		st = S.parse_dcache_oplog(OPLOG_CONSOLE.replace('enabled=1', 'enabled=0').
					  replace('hits=900', 'hits=100'))
		self.assertEqual(S.check_dcache_oplog(st, 'console=ttyS0 dcache_oplog=off'), [])
		self.assertTrue(S.check_dcache_oplog(st, 'console=ttyS0'))

	def test_missing(self):
		self.assertTrue(S.check_dcache_oplog(S.parse_dcache_oplog(CLEAN_BOOT), ''))

	def test_results(self):
		r = S.parse_results(KSELFTEST)
		self.assertEqual(len(r), 2)
		self.assertEqual(r[1], {'bench': 'stat_bench', 'mode': 'same', 'cpus': 2,
					'ops_per_ms': 150.0, 'runs': 3, 'stddev': 2.0})

	def test_table(self):
		t = S.bench_table(S.parse_results(KSELFTEST))
		self.assertIn('| stat_bench | same | 100 ±1.25 (100) | 150 ±2 (75) | 1.49x |',
			      t)
		self.assertEqual(S.bench_table([]), '(no benchmark results)')

	def test_table_ast_speedup(self):
		t = S.bench_table(S.parse_results(
			'# RESULT bench=ast_bench mode=ast-t100-b100 cpus=2 ops_per_ms=1965.000 '
			'runs=2 stddev=443.000\n'
			'# RESULT bench=ast_bench mode=cv-bcast-t100-b100 cpus=2 ops_per_ms=713.000 '
			'runs=2 stddev=5.000 ast_speedup=2.756 ast_cpu_speedup=3.100\n'))
		self.assertIn('| ast_bench | cv-bcast-t100-b100 | 713 ±5 (356) ast 2.76x (cpu 3.10x) | - |',
			      t)
		self.assertIn('| ast_bench | ast-t100-b100 | 1965 ±443 (982) | - |', t)
		self.assertIn('ast_speedup', t)


class BadInputTest(unittest.TestCase):
	"""Bad input ends with a clear message and a non-zero exit, never a hang."""

	def die_message(self, fn, *args):
		err = io.StringIO()
		with contextlib.redirect_stderr(err), self.assertRaises(SystemExit) as cm:
			fn(*args)
		self.assertNotEqual(cm.exception.code, 0)
		return err.getvalue()

	def test_missing_packages_not_root(self):
		pk = dict(S.PACKAGES, **{'no-such-package': '/nonexistent/file'})
		with mock.patch.object(S, 'PACKAGES', pk), mock.patch('os.geteuid', return_value=1000):
			msg = self.die_message(S.ensure_packages, False)
		self.assertIn('no-such-package', msg)
		self.assertIn('sudo apt-get install', msg)

	def test_wrong_base_version(self):
		with tempfile.TemporaryDirectory() as d:
			with open(os.path.join(d, 'Makefile'), 'w') as f:
				f.write('VERSION = 6\nPATCHLEVEL = 11\nSUBLEVEL = 3\n')
			msg = self.die_message(S.check_base_version, d, d)
		self.assertIn('Linux 6.11.3', msg)
		self.assertIn('6.12.y', msg)

	def test_not_a_tree(self):
		with tempfile.TemporaryDirectory() as d, \
		     mock.patch.dict(os.environ, {'LINUX_TREE': d}):
			msg = self.die_message(S.base_source)
		self.assertIn('not a kernel source tree', msg)

	def cli(self, *args, env=None):
		return subprocess.run([sys.executable, os.path.join(S.HARNESS, 'scalable.py')] +
				      list(args), capture_output=True, text=True, timeout=60,
				      env=dict(os.environ, **(env or {})))

	def test_unknown_config(self):
		r = self.cli('build', 'fast')
		self.assertEqual(r.returncode, 2)
		self.assertIn('unknown config "fast"', r.stderr)

	def test_bad_smp(self):
		with mock.patch.dict(os.environ, {'SMP': 'many'}):
			msg = self.die_message(S.default_smp)
		self.assertIn('SMP must be a number', msg)

	def test_bad_accel(self):
		with mock.patch.dict(os.environ, {'ACCEL': 'xen'}):
			msg = self.die_message(S.kvm_works)
		self.assertIn('ACCEL must be kvm or tcg', msg)


if __name__ == '__main__':
	unittest.main()
