#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Unit tests of scalable_report: number formatting, the benchmark table,
# out/report.md and out/report.json, and the results files of out/results/.

import calendar
import contextlib
import dataclasses
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scalable_common as common  # noqa: E402
import scalable_report as R  # noqa: E402
from scalable_request import Request, request_from_env  # noqa: E402

RESULTS = [
	{'bench': 'stat_bench', 'mode': 'same', 'cpus': 1, 'ops_per_ms': 100.5, 'runs': 3,
	 'stddev': 1.25},
	{'bench': 'stat_bench', 'mode': 'same', 'cpus': 2, 'ops_per_ms': 150.0, 'runs': 3,
	 'stddev': 2.0},
]

SUMMARY = {
	'boot': 'release-smp2', 'flavour': 'release', 'smp': 2, 'accel': 'tcg', 'mode': 'test',
	'seconds': 12.4, 'ended': 'exit',
	'kunit': {'passed': 40, 'failed': 0, 'skipped': 1, 'crashed': 0,
		  'suites': ['qdo', 'oplog']},
	'kselftest': {'passed': 10, 'failed': 1, 'skipped': 2, 'plan': 12,
		      'subtests_passed': 100, 'subtests_failed': 1, 'subtests_skipped': 3},
	'targets': {'proc': {'passed': 5, 'failed': 1, 'skipped': 1, 'subtests_passed': 0,
			     'subtests_failed': 0, 'subtests_skipped': 0}},
	'not_run': {'proc:setns-dcache': 'needs CONFIG_NET_NS'},
	'expected_skips': {'proc:proc-pid-vm:mmap': 'no vsyscall page', 'kunit:qdo.qdo_x': 'one CPU'},
	'dcache_oplog': {'before': {'enabled': 1, 'hits': 100, 'misses': 20},
			 'after': {'enabled': 1, 'hits': 900, 'misses': 60}},
	'results': RESULTS,
	'console': 'out/logs/release-smp2.console.log', 'tap': 'out/logs/release-smp2.tap.log',
	'problems': ['kselftest failed: selftests: proc: x'],
}


class TableTest(unittest.TestCase):
	def test_num(self):
		self.assertEqual(R.num(1234.5), '1234')
		self.assertEqual(R.num(100), '100')
		self.assertEqual(R.num(12.345), '12.3')
		self.assertEqual(R.num(0), '0')
		self.assertEqual(R.num(0.00012), '1.20e-04')

	def test_table(self):
		t = R.bench_table(RESULTS)
		self.assertIn('| stat_bench | same | 100 ±1.25 (100) | 150 ±2 (75) | 1.49x |', t)
		self.assertEqual(t.splitlines()[0], '| benchmark | mode | 1 CPU: ops/ms ±sd (per CPU) | '
				 '2 CPU: ops/ms ±sd (per CPU) | scaling 2/1 |')
		self.assertEqual(t.splitlines()[1], '|---|---|---|---|---|')
		self.assertEqual(R.bench_table([]), '(no benchmark results)')

	def test_failed_and_missing_cells(self):
		t = R.bench_table(RESULTS + [
			{'bench': 'fork_bench', 'mode': 'x', 'cpus': 2, 'ops_per_ms': 5.0,
			 'status': 'fail'}])
		self.assertIn('| fork_bench | x | - | FAILED | - |', t)

	def test_no_scaling_without_one_cpu(self):
		t = R.bench_table([dict(r, cpus=r['cpus'] * 2) for r in RESULTS])
		self.assertIn('| stat_bench | same | 100 ±1.25 (50.2) | 150 ±2 (37.5) | - |', t)


	def test_table_ast_speedup(self):
		t = R.bench_table([
			{'bench': 'ast_bench', 'mode': 'ast-t100-b100', 'cpus': 2,
			 'ops_per_ms': 1965.0, 'runs': 2, 'stddev': 443.0},
			{'bench': 'ast_bench', 'mode': 'cv-bcast-t100-b100', 'cpus': 2,
			 'ops_per_ms': 713.0, 'runs': 2, 'stddev': 5.0, 'ast_speedup': 2.756,
			 'ast_cpu_speedup': 3.1}])
		self.assertIn('| ast_bench | cv-bcast-t100-b100 | 713 ±5 (356) ast 2.76x (cpu 3.10x) | - |',
			      t)
		self.assertIn('| ast_bench | ast-t100-b100 | 1965 ±443 (982) | - |', t)
		self.assertIn('ast_speedup', t)


	def test_table_oplog_ratio_and_crossover(self):
		rs = []
		for t, ratio in ((1, 0.8), (2, 0.95), (3, 1.1), (4, 1.2)):
			rs.append({'bench': 'fork_truncate', 'mode': 'T=%d-stock' % t, 'cpus': 2,
				   'ops_per_ms': 10.0, 'runs': 1, 'stddev': 0})
			rs.append({'bench': 'fork_truncate', 'mode': 'T=%d-oplog' % t, 'cpus': 2,
				   'ops_per_ms': 10.0 * ratio, 'runs': 1, 'stddev': 0,
				   'base': 'T=%d-stock' % t, 'ratio': ratio})
		t = R.bench_table(rs)
		self.assertIn('| fork_truncate | T=3-oplog | 11 ±0 (5.5) oplog 1.10x | - |', t)
		self.assertIn('| fork_truncate | T=3-stock | 10 ±0 (5) | - |', t)
		self.assertIn('the OpLog wins from a truncate every 3 forks on', t)
		self.assertEqual(R.fork_truncate_crossover(rs[:4]),
				 'fork_truncate at 2 CPUs: the OpLog wins at no T (T=1 0.80x, T=2 0.95x).')
		self.assertEqual(R.fork_truncate_crossover(RESULTS), '')


class ReportTest(unittest.TestCase):
	REPORT = {'title': 'T', 'base': '6.12.117', 'host_cpus': 2,
		  'date': '2025-01-01T00:00:00+0000', 'boots': [SUMMARY]}

	def test_markdown(self):
		md = R.markdown(self.REPORT).splitlines()
		self.assertEqual(md[:3], ['# T', '', 'Base: Linux 6.12.117; host CPUs: 2; '
					  '2025-01-01T00:00:00+0000'])
		for line in ('## release kernel, -smp 2, TCG, mode test (12 s)',
			     '- KUnit: 40 passed, 0 failed, 1 skipped, 0 crashed (suites: qdo, oplog)',
			     '- kselftest: 10 passed, 1 failed, 2 skipped (12 run, 1 not run); '
			     'subtests 100 passed, 1 failed, 3 skipped',
			     '  - proc: 5 passed, 1 failed, 1 skipped; subtests 0 passed, 0 failed, '
			     '0 skipped',
			     '    - skipped (not run): proc:setns-dcache: needs CONFIG_NET_NS',
			     '    - skipped (expected): proc:proc-pid-vm:mmap: no vsyscall page',
			     '  - skipped (expected): kunit:qdo.qdo_x: one CPU',
			     '- dentry OpLog during the upstream kselftests: switch 1; '
			     'hits 100 -> 900 (+800), misses 20 -> 60 (+40)',
			     '- console: `out/logs/release-smp2.console.log`, '
			     'TAP: `out/logs/release-smp2.tap.log`',
			     '- **FAILED:**', '  - kselftest failed: selftests: proc: x',
			     '| stat_bench | same | 100 ±1.25 (100) | 150 ±2 (75) | 1.49x |'):
			self.assertIn(line, md)
		self.assertTrue(md[-1].startswith('Numbers from TCG'))

	def test_single_threaded_tcg(self):
		"""A JUMP_LABEL kernel's single-threaded TCG boot says so."""
		s = dict(SUMMARY, tcg_thread='single')
		md = R.markdown(dict(self.REPORT, boots=[s])).splitlines()
		self.assertIn('## release kernel, -smp 2, TCG single-threaded, mode test (12 s)', md)
		self.assertIn('not parallel', md[-1])
		md = R.markdown(dict(self.REPORT, boots=[dict(SUMMARY, tcg_thread='multi')]))
		self.assertIn('TCG multi-threaded, mode test', md)
		self.assertNotIn('not parallel', md)

	def test_kcsan_stock_reports_listed(self):
		race = {'title': 'data-race in __d_move / handle_dots',
			'where': ['fs/dcache.c:2863', 'fs/namei.c:1976']}
		s = dict(SUMMARY, kcsan_stock=[race, race])
		md = R.markdown(dict(self.REPORT, boots=[s])).splitlines()
		self.assertIn('- KCSAN reports in stock 6.12 code (listed, not failed): 2', md)
		self.assertIn('  - 2x data-race in __d_move / handle_dots '
			      '(at fs/dcache.c:2863, fs/namei.c:1976)', md)
		self.assertFalse(any('KCSAN' in ln for ln in R.markdown(self.REPORT).splitlines()))

	def test_upstream_off_line(self):
		"""make test's release boot: one line on the passes with the switches off and on."""
		s = dict(SUMMARY, upstream_off={'tests': 37, 'subtests': 457, 'identical': True})
		md = R.markdown(dict(self.REPORT, boots=[s])).splitlines()
		self.assertIn('- upstream kselftests with switches off and on: 37 tests, 457 subtests, '
			      'identical', md)
		s = dict(SUMMARY, upstream_off={'tests': 37, 'subtests': 457, 'identical': False})
		self.assertIn('457 subtests, DIFFERENT (below)', R.markdown(dict(self.REPORT, boots=[s])))
		self.assertNotIn('switches off and on', R.markdown(self.REPORT))
		self.assertNotIn('switches off and on', R.markdown(dict(
			self.REPORT, boots=[dict(SUMMARY, upstream_off=None)])))

	def test_passed(self):
		s = dict(SUMMARY, problems=[], accel='kvm', results=[], dcache_oplog={})
		md = R.markdown(dict(self.REPORT, boots=[s]))
		self.assertIn('- no kernel splat, all tests passed', md)
		self.assertNotIn('TCG', md)
		self.assertNotIn('dentry OpLog', md)
		self.assertNotIn('| benchmark |', md)

	def test_write_report(self):
		with tempfile.TemporaryDirectory() as d, \
		     contextlib.redirect_stdout(io.StringIO()) as out:
			R.write_report(os.path.join(d, 'out'), [SUMMARY], 'Scalable series: test report')
			with open(os.path.join(d, 'out', 'report.json')) as f:
				report = json.load(f)
			with open(os.path.join(d, 'out', 'report.md')) as f:
				md = f.read()
		self.assertEqual(report['boots'], [SUMMARY])
		self.assertEqual(report['title'], 'Scalable series: test report')
		self.assertEqual(report['base'], common.read_conf()['LINUX_VERSION'])
		self.assertEqual(md, R.markdown(report))
		self.assertIn(md, out.getvalue())


# 2026-11-28 09:54:52 UTC
T0 = calendar.timegm((2026, 11, 28, 9, 54, 52, 0, 0, 0))


class ResultsFileTest(unittest.TestCase):
	"""write_results(): out/results/<kind>-<shape>-<accel>-<date>.md, its header."""

	def setUp(self):
		self.tmp = tempfile.TemporaryDirectory()
		self.addCleanup(self.tmp.cleanup)
		self.out = os.path.join(self.tmp.name, 'out')
		self.calls = []
		self.dirty = ''
		self.fail = ()
		self.req = Request(out=self.out)
		for p in (mock.patch.object(R.subprocess, 'run', side_effect=self.fake_run),
			  mock.patch.object(R, 'host_cpus', return_value=2),
			  mock.patch.object(R.platform, 'platform',
					    return_value='Linux-6.1-x86_64'),
			  # the environment is not read: the request is
			  mock.patch.dict(os.environ, {'TRACE_SMP': '3', 'MODE': 'long', 'QEMU': 'x'})):
			p.start()
			self.addCleanup(p.stop)

	def fake_run(self, cmd, **kw):
		"""git and QEMU as the tests want them; @self.fail names those that fail."""
		self.calls.append((cmd, kw.get('cwd')))
		if cmd[0] in self.fail:
			raise FileNotFoundError(cmd[0])
		if cmd[:2] == ['git', 'rev-parse']:
			out = '0123456789ab\n'
		elif cmd[:2] == ['git', 'status']:
			out = self.dirty
		elif cmd[1:] == ['--version']:
			out = 'QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7)\nCopyright (c)\n'
		else:
			raise AssertionError('unexpected command %s' % cmd)
		return subprocess.CompletedProcess(cmd, 0, out, '')

	def write(self, *args, **kw):
		"""write_results() with self.req: (its path, its text)."""
		with contextlib.redirect_stdout(io.StringIO()) as out:
			path = R.write_results(self.req, *args, **kw)
		self.assertIn('results written to ', out.getvalue())
		with open(path) as f:
			return path, f.read()

	def header(self, text):
		"""The header's "key: value" lines, as a dict."""
		self.assertTrue(text.startswith('<!--\n'))
		head = text[:text.index('\n-->\n')].splitlines()[1:]
		return dict(line.split(': ', 1) for line in head)

	def test_file_name(self):
		self.assertFalse(os.path.exists(os.path.join(self.out, 'results')))
		path, _ = self.write('trace', 'smp1-8-16', 'table', T0, False)
		self.assertEqual(path, os.path.join(self.out, 'results',
						    'trace-smp1-8-16-tcg-20261128-0954.md'))
		path, _ = self.write('run', 'smp2', 'report', T0, True)
		self.assertEqual(os.path.basename(path), 'run-smp2-kvm-20261128-0954.md')
		# a second run in the same minute does not overwrite the first
		path, _ = self.write('run', 'smp2', 'report', T0 + 5, True)
		self.assertEqual(os.path.basename(path), 'run-smp2-kvm-20261128-0954-2.md')

	def test_header(self):
		with mock.patch.object(R.time, 'time', return_value=T0 + 254):
			_, text = self.write('trace', 'smp1-8-16', 'table', T0, False)
		self.assertEqual(self.header(text), {
			'command': 'make trace',
			'commit': '0123456789ab',
			'started': '2026-11-28T09:54:52Z',
			'ended': '2026-11-28T09:59:06Z',
			'host': '2 CPUs, Linux-6.1-x86_64, QEMU emulator version 7.2.22 '
				'(Debian 1:7.2+dfsg-7), TCG'})
		git = [(c, cwd) for c, cwd in self.calls if c[0] == 'git']
		self.assertEqual(git, [(['git', 'rev-parse', '--short=12', 'HEAD'], common.TOP),
				       (['git', 'status', '--porcelain', '--untracked-files=no'],
					common.TOP)])
		self.assertIn((['qemu-system-x86_64', '--version'], common.TOP), self.calls)

	def test_uncommitted_changes(self):
		self.dirty = ' M tools/testing/scalable/scalable.py\n'
		_, text = self.write('gate', 'smp8', 'gates', T0, False)
		self.assertEqual(self.header(text)['commit'], '0123456789ab + uncommitted changes')

	def given(self, env):
		"""Make self.req as main() would from @env (the variables it was given)."""
		self.req = request_from_env(dict(env, SCALABLE_OUT=self.out))

	def test_trace_environment(self):
		self.given({'TRACE_SMP': '1,8,16', 'TRACE_MS': '2000', 'TRACE_WORKLOADS': 'exec_bench',
			    'TRACE_KERNEL': 'stock', 'SMP': '4', 'TRACE_GATE_QUANTUM': '50'})
		_, text = self.write('trace', 'smp1-8-16', 'table', T0, False)
		# in the documented order; SMP and TRACE_GATE_QUANTUM do not shape a trace
		self.assertEqual(self.header(text)['command'],
				 'TRACE_KERNEL=stock TRACE_SMP=1,8,16 TRACE_MS=2000 '
				 'TRACE_WORKLOADS=exec_bench make trace')

	def test_run_and_gate_environment(self):
		self.given({'MODE': 'full', 'CPUS': '1,2', 'ACCEL': 'kvm', 'TRACE_MS': '500'})
		_, text = self.write('run', 'smp2', 'report', T0, True, settings={'MODE': 'quick'})
		self.assertEqual(self.header(text)['command'], 'MODE=quick CPUS=1,2 ACCEL=kvm make run')
		self.assertTrue(self.header(text)['host'].endswith(', KVM'))
		_, text = self.write('gate', 'smp8', 'gates', T0, False)
		self.assertEqual(self.header(text)['command'], 'TRACE_MS=500 ACCEL=kvm make test')
		# as given, quoted for the shell
		self.given({'TRACE_WORKLOADS': 'stat_bench, exec_bench'})
		_, text = self.write('trace', 'smp1', 'table', T0, False)
		self.assertEqual(self.header(text)['command'],
				 "TRACE_WORKLOADS='stat_bench, exec_bench' make trace")
		# KERNEL_ARGS shapes what the guests run (exec_bench's shape)
		self.given({'TRACE_SMP': '8', 'KERNEL_ARGS': 'scalable_exec_shape=all'})
		_, text = self.write('trace', 'smp8', 'table', T0, False)
		self.assertEqual(self.header(text)['command'],
				 'TRACE_SMP=8 KERNEL_ARGS=scalable_exec_shape=all make trace')
		self.given({'TRACE_WORKLOADS': 'stat_bench, exec_bench'})
		# what a subcommand changes in its copy is not what the user gave
		self.req = dataclasses.replace(self.req, trace_workloads=('qdo_idle',))
		_, text = self.write('trace', 'smp1', 'table', T0, False)
		self.assertEqual(self.header(text)['command'],
				 "TRACE_WORKLOADS='stat_bench, exec_bench' make trace")

	def test_qemu_binary(self):
		self.req = Request(out=self.out, qemu='/opt/qemu/bin/qemu-system-x86_64')
		self.write('run', 'smp2', 'report', T0, False)
		self.assertIn((['/opt/qemu/bin/qemu-system-x86_64', '--version'], common.TOP),
			      self.calls)

	def test_unknown_when_git_or_qemu_fail(self):
		self.fail = ('git', 'qemu-system-x86_64')
		_, text = self.write('run', 'smp2', 'report', T0, False)
		head = self.header(text)
		self.assertEqual(head['commit'], 'unknown')
		self.assertEqual(head['host'], '2 CPUs, Linux-6.1-x86_64, unknown, TCG')
		self.fail = ()
		failed = subprocess.CompletedProcess([], 128, '', 'fatal: not a git repository')
		with mock.patch.object(R.subprocess, 'run', return_value=failed):
			_, text = self.write('run', 'smp2', 'report', T0, False)
		head = self.header(text)
		self.assertEqual(head['commit'], 'unknown')
		self.assertIn(', unknown, TCG', head['host'])

	def test_text_follows_header(self):
		body = '# Scalable series: benchmark report (full mode)\n\n| a | b |\n'
		_, text = self.write('run', 'smp2', body, T0, False)
		self.assertTrue(text.endswith('\n-->\n\n' + body))
		_, text = self.write('trace', 'smp1', 'no newline', T0, False)
		self.assertTrue(text.endswith('-->\n\nno newline\n'))


if __name__ == '__main__':
	unittest.main()
