#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Unit tests of scalable_schedule.py, and the check that make test runs
# without booting: a full make run on the reference host fits its budget.

import os
import subprocess
import sys
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scalable_common as common  # noqa: E402
import scalable_schedule as S  # noqa: E402


class BudgetTest(unittest.TestCase):
	"""What make test checks before it builds anything."""

	def test_full_run_fits_its_budget(self):
		"""make run's full sweep at 2 TCG vCPUs: timeout within FULL_BUDGET_S."""
		t = S.timeout('full', S.REFERENCE_SMP)
		self.assertLessEqual(t, S.FULL_BUDGET_S,
				     'the full sweep is scheduled for %s at %d vCPUs, so its timeout '
				     '(x%.1f) is %s, past the budget of %s: move benchmarks or modes '
				     'to MODE=long (kselftests.sh) or shorten them' %
				     (S.fmt(S.total(S.schedule('full', S.REFERENCE_SMP))),
				      S.REFERENCE_SMP, S.MARGIN, S.fmt(t), S.fmt(S.FULL_BUDGET_S)))

	def test_budget_check_fails_on_a_new_benchmark(self):
		"""A benchmark of 20 modes added to the full sweep breaks the budget."""
		progs = S.programs() + ['zz_new_bench']
		bench = dict(S.BENCH, zz_new_bench={'kind': 'bench', 'modes': 20})
		with mock.patch.object(S, 'programs', return_value=progs), \
		     mock.patch.dict(S.BENCH, bench):
			self.assertGreater(S.timeout('full', S.REFERENCE_SMP), S.FULL_BUDGET_S)

	def test_every_program_has_a_cost(self):
		self.assertEqual(S.unmodelled(), [])
		self.assertIn('stat_bench', S.programs())
		self.assertNotIn('bench', S.programs())

	def test_kselftests_sh_arguments(self):
		"""Every program kselftests.sh gives arguments to is in the model."""
		for mode in ('full', 'quick', 'test', 'long'):
			args, tmo = S.bench_env(mode)
			self.assertTrue(args)
			self.assertGreater(tmo, 0)
			for prog in args:
				self.assertIn(prog, S.programs())
				self.assertTrue(prog in S.BENCH or prog in S.COSTS, prog)

	def test_torture_soak_arguments(self):
		"""torture's options are the harness's test filters: a boot runs every
		test but the soak; make soak (scalable_soak) the soak alone, for
		TORTURE_SECONDS, with that much more runner timeout."""
		script = os.path.join(common.HARNESS, 'kselftests.sh')
		for soak, args, secs, tmo in (('', '-T soak', '', '900'),
					      ('600', '-t soak', '600', '1500')):
			cmd = 'scalable_soak=%s; . %s; scalable_bench_args; echo "$tmo"; env'
			r = subprocess.run(['sh', '-c', cmd % (soak, script)],
					   capture_output=True, text=True, check=True,
					   env={'PATH': os.environ.get('PATH', '/usr/bin:/bin')})
			lines = r.stdout.splitlines()
			self.assertEqual(lines[0], tmo)
			self.assertIn('KSELFTEST_TORTURE_ARGS=' + args, lines)
			self.assertEqual([ln for ln in lines if ln.startswith('TORTURE_SECONDS=')],
					 ['TORTURE_SECONDS=' + secs] if secs else [])

	def test_long_mode_holds_more(self):
		"""MODE=long runs what the full sweep left out: more, not less."""
		self.assertGreater(S.total(S.schedule('long', 2)), S.total(S.schedule('full', 2)))

	def test_checking_boot_with_upstream_off_fits_its_timeout(self):
		"""make test's release boot, with its upstream pass with the switches
		off, at 2 TCG vCPUs: its schedule times MARGIN within TEST_TIMEOUT_S."""
		t = S.timeout('test', S.REFERENCE_SMP, upstream_off=True)
		self.assertLessEqual(t, S.TEST_TIMEOUT_S,
				     'a checking boot with the off pass is scheduled for %s: its '
				     'timeout (x%.1f) is %s, past TEST_TIMEOUT_S (%s)' %
				     (S.fmt(S.total(S.schedule('test', S.REFERENCE_SMP,
							       upstream_off=True))),
				      S.MARGIN, S.fmt(t), S.fmt(S.TEST_TIMEOUT_S)))
		self.assertGreater(t, S.timeout('test', S.REFERENCE_SMP))

	def test_upstream_off_pass(self):
		"""scalable_upstream_off=1: every upstream collection twice, the off
		pass first, each costing what its normal pass does."""
		on = S.boot_schedule('test', 2, None, 'scalable_mode=test scalable_inject=none')
		both = S.boot_schedule('test', 2, None, 'scalable_mode=test scalable_inject=none '
				       'scalable_upstream_off=1')
		cols = sorted(t for t in common.SELFTEST_TARGETS if t != 'scalable')
		keys = [k for k, _ in both]
		self.assertEqual(keys[-2 * len(cols) - 1:],
				 ['upstream-off:' + t for t in cols] + ['upstream:' + t for t in cols] +
				 ['end'])
		self.assertAlmostEqual(S.total(both) - S.total(on),
				       sum(S.COSTS['upstream:' + t] for t in cols))
		items = S.boot_schedule('test', 2, None, 'scalable_own=0 scalable_upstream=proc '
					'scalable_upstream_off=1')
		self.assertEqual([k for k, _ in items],
				 ['boot', 'upstream-off:proc', 'upstream:proc', 'end'])
		# no upstream collection, no off pass
		items = S.boot_schedule('test', 2, None, 'scalable_tests=torture '
					'scalable_upstream=none scalable_upstream_off=1')
		self.assertEqual([k for k, _ in items], ['boot', 'torture', 'end'])

	def test_upstream_costs(self):
		for t in common.SELFTEST_TARGETS:
			if t != 'scalable':
				self.assertIn('upstream:' + t, S.COSTS)


class ArgsTest(unittest.TestCase):
	def test_bench_quick_yields_to_explicit(self):
		o = S.parse_args('stat_bench', ['-w', '50', '-q'])
		self.assertEqual((o['w'], o['m'], o['r']), (50, 400, 2))
		o = S.parse_args('stat_bench', [])
		self.assertEqual((o['w'], o['m'], o['r']), (1000, 5000, 3))

	def test_ast_quick_where_it_stands(self):
		o = S.parse_args('ast_bench', ['-w', '50', '-q'])
		self.assertEqual((o['w'], o['m'], o['r']), (100, 400, 2))
		o = S.parse_args('ast_bench', ['-q', '-w', '50', '-t', '100,1000', '-c', '2'])
		self.assertEqual((o['w'], o['t'], o['c']), (50, [100, 1000], [2]))

	def test_counts(self):
		self.assertEqual(S.counts('bench', 2, None), [1, 2])
		self.assertEqual(S.counts('bench', 16, None), [1, 2, 4, 8, 16])
		self.assertEqual(S.counts('bench', 6, None), [1, 2, 4, 6])
		self.assertEqual(S.counts('list', 3, None), [1, 2, 3])
		self.assertEqual(S.counts('bench', 2, [1, 2, 4]), [1, 2])

	def test_bench_plan(self):
		modes, cs, runs, window, secs = S.bench_plan('open_bench', ['-q'], 2)
		self.assertEqual((modes, cs, runs, window), (S.BENCH['open_bench']['modes'],
							     [1, 2], 2, 0.5))
		self.assertGreater(secs, modes * 2 * runs * window)
		modes, _, _, _, _ = S.bench_plan('fork_truncate', ['-T', '1,2,3,10'], 2)
		self.assertEqual(modes, 8)
		modes, cs, _, _, _ = S.bench_plan('ast_bench', ['-t', '100,1000', '-b', '1,100'], 2)
		self.assertEqual((modes, cs), (len(S.BENCH['ast_bench']['impls']) * 4, [1, 2]))
		modes, _, _, _, four = S.bench_plan('ast_bench', ['-t', '1000', '-i', 'ast,cv-bcast'],
						    2)
		self.assertEqual(modes, 6)
		_, _, _, _, six = S.bench_plan('ast_bench', ['-t', '1000'], 2)
		self.assertGreater(six, 5 * four)

	def test_boot_schedule(self):
		self.assertIsNone(S.boot_schedule('test', 2, None, 'scalable_trace=stat_bench'))
		self.assertIsNone(S.boot_schedule('test', 2, None, 'scalable_inject=warn'))
		items = S.boot_schedule('test', 2, None,
					'x=1 scalable_inject=none scalable_tests=ast_bench,torture '
					'scalable_upstream=none')
		self.assertEqual([k for k, _ in items], ['boot', 'ast_bench', 'torture', 'end'])
		items = S.boot_schedule('full', 2, None, 'scalable_own=0 scalable_upstream=proc')
		self.assertEqual([k for k, _ in items], ['boot', 'upstream:proc', 'end'])
		one = S.boot_schedule('full', 2, None, 'scalable_tests=ast_bench '
				      'scalable_upstream=none scalable_ast_bench=-t_100_-b_1_-c_2_-i_ast')
		full = S.boot_schedule('full', 2, None, 'scalable_tests=ast_bench '
				       'scalable_upstream=none')
		self.assertLess(S.total(one), S.total(full))


class PlanTest(unittest.TestCase):
	def test_plan_matches(self):
		n = S.BENCH['open_bench']['modes']
		tap = ('# selftests: scalable: open_bench\n'
		       '# # open_bench: %d modes x 2 counts, about 12.0 s of windows\n'
		       % n)
		self.assertEqual(S.plan_problems(tap, 'quick', 2), [])

	def test_plan_differs(self):
		tap = ('# # open_bench: 10 modes x 2 counts, about 12.0 s of warm-up\n'
		       '# # oplog_list: 4 modes x 3 counts, about 1 s of warm-up\n'
		       '# # new_bench: 1 modes x 2 counts, about 1 s of warm-up\n')
		p = S.plan_problems(tap, 'quick', 2)
		self.assertEqual(len(p), 3, p)
		self.assertIn('open_bench runs 10 modes x 2 counts', p[0])
		self.assertIn('oplog_list runs 4 modes x 3 counts, the schedule expects 4 x 2', p[1])
		self.assertIn('new_bench printed a plan but has no entry', p[2])


class ProgressTest(unittest.TestCase):
	def test_feed(self):
		items = [('boot', 10), ('ast_bench', 60), ('torture', 30), ('upstream:proc', 20),
			 ('end', 5)]
		p = S.Progress(items, 1000.0)
		self.assertEqual(p.feed('TAP version 13', 1001), [])
		out = p.feed('# selftests: scalable: ast_bench', 1012)
		self.assertEqual(len(out), 1)
		self.assertIn('ast_bench started at 12 s: scheduled 1 min 00 s (48% of the run), '
			      'about 1 min 55 s left', out[0])
		out = p.feed('ok 1 selftests: scalable: ast_bench', 1080)
		self.assertEqual(out, ['<< ast_bench done in 1 min 08 s (scheduled 1 min 00 s)'])
		out = p.feed('# selftests: scalable: torture', 1081)
		self.assertIn('about 55 s left', out[0])
		p.feed('not ok 2 selftests: scalable: torture # exit=1', 1100)
		out = p.feed('# selftests: proc: proc-uptime-001', 1101)
		self.assertIn('upstream:proc started', out[0])
		self.assertEqual(p.feed('# selftests: proc: proc-uptime-002', 1105), [])
		p.close(1130)
		self.assertEqual([k for k, _, _ in p.timeline],
				 ['boot', 'ast_bench', 'torture', 'upstream:proc', 'end'])
		rows = S.report_rows(items, p.timeline)
		self.assertEqual(rows[1], ('ast_bench', 60, 68))
		self.assertEqual(rows[3], ('upstream:proc', 20, 29))

	def test_feed_upstream_off(self):
		"""The off pass's collections are items of their own: each pass's
		time goes to its own item, not the first pass's."""
		items = [('boot', 10), ('upstream-off:proc', 20), ('upstream:proc', 20), ('end', 5)]
		p = S.Progress(items, 1000.0)
		self.assertEqual(p.feed('# SCALABLE: upstream pass off begin', 1010), [])
		out = p.feed('# selftests: proc: proc-uptime-001', 1011)
		self.assertIn('upstream-off:proc started at 11 s', out[0])
		self.assertEqual(p.feed('# selftests: proc: proc-uptime-002', 1020), [])
		self.assertEqual(p.feed('# SCALABLE: upstream pass off end', 1030), [])
		out = p.feed('# selftests: proc: proc-uptime-001', 1031)
		self.assertIn('upstream:proc started at 31 s', out[0])
		p.close(1050)
		self.assertEqual([k for k, _, _ in p.timeline],
				 ['boot', 'upstream-off:proc', 'upstream:proc', 'end'])
		rows = S.report_rows(items, p.timeline)
		self.assertEqual(rows[1], ('upstream-off:proc', 20, 20))
		self.assertEqual(rows[2], ('upstream:proc', 20, 19))

	def test_fmt(self):
		self.assertEqual(S.fmt(59.6), '1 min 00 s')
		self.assertEqual(S.fmt(7), '7 s')
		self.assertEqual(S.fmt(3725), '1 h 02 min')


if __name__ == '__main__':
	unittest.main()
