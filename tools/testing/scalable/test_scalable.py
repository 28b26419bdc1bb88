#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# The harness's unit tests, run by "make test" before anything is built:
# this file runs the tests of the driver (scalable.py) and of the module
# layout below, and those of every test_scalable_*.py beside it (one per
# module: test_scalable_parser.py tests scalable_parser.py, and so on).
# Each of those also runs alone: python3 test_scalable_parser.py.
#
#   python3 tools/testing/scalable/test_scalable.py [-v]

import argparse
import ast
import contextlib
import dataclasses
import glob
import importlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import scalable  # noqa: E402
import scalable_common as common  # noqa: E402
import scalable_request  # noqa: E402
import scalable_trace  # noqa: E402
from scalable_request import Request  # noqa: E402

# The harness's modules and the harness modules each may import: a DAG,
# from the leaf (scalable_common) to the driver (scalable), which nothing
# imports.  A new module is added here with what it imports.
LAYERS = {
	'scalable_common': (),
	'scalable_request': ('scalable_common',),
	'scalable_tree': ('scalable_common',),
	'scalable_build': ('scalable_common', 'scalable_tree'),
	'scalable_schedule': ('scalable_common',),
	'scalable_qemu': ('scalable_common', 'scalable_schedule'),
	'scalable_kcsan': ('scalable_common',),
	'scalable_parser': ('scalable_common', 'scalable_kcsan', 'scalable_schedule'),
	'scalable_report': ('scalable_common', 'scalable_schedule'),
	'scalable_series': ('scalable_common', 'scalable_tree', 'scalable_build', 'scalable_figures'),
	'scalable_configs': ('scalable_common', 'scalable_tree', 'scalable_build', 'scalable_qemu',
			     'scalable_parser'),
	'scalable_trace': (),
	'scalable_figures': ('scalable_trace',),
	'scalable_native': ('scalable_common', 'scalable_parser', 'scalable_report'),
	'scalable_tar': ('scalable_common', 'scalable_build', 'scalable_qemu', 'scalable_parser',
			 'scalable_native'),
	'scalable': ('scalable_common', 'scalable_request', 'scalable_tree', 'scalable_build',
		     'scalable_schedule', 'scalable_qemu',
		     'scalable_kcsan', 'scalable_parser', 'scalable_report', 'scalable_series',
		     'scalable_configs', 'scalable_trace', 'scalable_tar', 'scalable_figures'),
}


def harness_modules():
	return sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(HERE, 'scalable*.py')))


def imports(name):
	"""Harness modules that module @name imports, at any level of its code."""
	with open(os.path.join(HERE, name + '.py')) as f:
		tree = ast.parse(f.read())
	found = set()
	for node in ast.walk(tree):
		if isinstance(node, ast.Import):
			found |= {a.name.split('.')[0] for a in node.names}
		elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
			found.add(node.module.split('.')[0])
	return {m for m in found if m == 'scalable' or m.startswith('scalable_')}


def closure(name):
	"""@name's harness modules, transitively, by LAYERS."""
	seen, todo = set(), list(LAYERS[name])
	while todo:
		m = todo.pop()
		if m not in seen:
			seen.add(m)
			todo += LAYERS[m]
	return seen


class LayoutTest(unittest.TestCase):
	"""The modules form a DAG: each imports only what LAYERS allows it."""

	def test_every_module_declared(self):
		self.assertEqual(harness_modules(), sorted(LAYERS),
				 'declare each tools/testing/scalable/scalable*.py in LAYERS '
				 'with the harness modules it imports')

	def test_layers_are_a_dag(self):
		for name in LAYERS:
			self.assertNotIn(name, closure(name), 'import cycle through ' + name)

	def test_imports_follow_layers(self):
		for name in harness_modules():
			self.assertLessEqual(imports(name), set(LAYERS.get(name, ())),
					     '%s.py imports outside its layer' % name)
			if name != 'scalable':
				self.assertNotIn('scalable', imports(name),
						 '%s.py imports the driver' % name)

	def test_each_imports_alone(self):
		"""In a fresh interpreter, each module imports alone, and pulls in no more."""
		code = ('import sys; sys.path.insert(0, sys.argv[1]); import %s; '
			'print(" ".join(sorted(m for m in sys.modules if m == "scalable" '
			'or m.startswith("scalable_"))))')
		for name in harness_modules():
			r = subprocess.run([sys.executable, '-c', code % name, HERE],
					   capture_output=True, text=True, timeout=60)
			self.assertEqual(r.returncode, 0, '%s: %s' % (name, r.stderr))
			loaded = set(r.stdout.split()) - {name}
			self.assertLessEqual(loaded, closure(name), name)


class DriverTest(unittest.TestCase):
	"""scalable.py, the entry point "make" calls: bad input ends with a clear message."""

	def cli(self, *args, env=None):
		return subprocess.run([sys.executable, os.path.join(common.HARNESS, 'scalable.py')] +
				      list(args), capture_output=True, text=True, timeout=60,
				      env=dict(os.environ, **(env or {})))

	def test_unknown_config(self):
		r = self.cli('build', 'fast')
		self.assertEqual(r.returncode, 2)
		self.assertIn('unknown config "fast"', r.stderr)

	def test_help_lists_subcommands(self):
		r = self.cli('--help')
		self.assertEqual(r.returncode, 0)
		for cmd in ('prepare', 'build', 'run', 'test', 'boot', 'series', 'check', 'figures'):
			self.assertIn(cmd, r.stdout)

	def test_bad_boot_flavour(self):
		r = self.cli('boot', 'fast')
		self.assertEqual(r.returncode, 2)
		self.assertIn("invalid choice: 'fast'", r.stderr)

	def test_bad_setting_before_anything_runs(self):
		"""A bad variable stops every subcommand, with what is allowed."""
		for var, value, msg in (('SMP', 'many', 'SMP must be a number from 1 to 64, not "many"'),
					('TRACE_KERNEL', 'old', 'TRACE_KERNEL is patched or stock'),
					('SOAK_SECONDS', '1h', 'SOAK_SECONDS must be a whole number')):
			r = self.cli('figures', env={var: value})
			self.assertEqual(r.returncode, 2, var)
			self.assertIn('scalable: error: ' + msg, r.stderr)
			self.assertNotIn('Traceback', r.stderr)


class FiguresCommandTest(unittest.TestCase):
	"""make figures fails on a figure without its results file."""

	def figures(self, message):
		with tempfile.TemporaryDirectory() as top, \
		     mock.patch.object(common, 'TOP', top), \
		     mock.patch.object(scalable.scalable_figures, 'NOT_FIGURES', ()), \
		     contextlib.redirect_stderr(io.StringIO()), \
		     contextlib.redirect_stdout(io.StringIO()) as out:
			os.makedirs(os.path.join(top, 'patches', '0001-x'))
			with open(os.path.join(top, 'patches', '0001-x', 'message'), 'w') as f:
				f.write(message)
			return scalable.cmd_figures(Request(), argparse.Namespace()), out.getvalue()

	def test_fails_on_a_figure(self):
		rc, out = self.figures('Subject\n\nstat() is 3.4% faster.\n')
		self.assertEqual(rc, 1)
		self.assertIn('patches/0001-x/message:3: 3.4%', out)
		rc, out = self.figures('Subject\n\nstat() is faster.\n')
		self.assertEqual(rc, 0)
		self.assertNotIn('message:', out)


class MakeTestTest(unittest.TestCase):
	def test_release_boot_runs_upstream_off(self):
		"""make test: only the release boot runs the upstream kselftests with
		the switches off too (scalable_upstream_off=1)."""
		calls = []

		def judge(req, fl, mode, smp, logdir, cpus=None, upstream_off=False):
			calls.append((fl, mode, smp, cpus, upstream_off))
			return True, {}
		args = argparse.Namespace(flavours=['release', 'debug', 'kcsan'], no_harness_check=True,
					  no_trace=True, no_selftests_tar=True)
		# CPUS shapes make run's and make boot's benchmarks, not make test's
		req = Request(smp=2, cpus='1,2', out='/nonexistent/out')
		with mock.patch.object(scalable, 'cmd_build'), \
		     mock.patch.object(scalable, 'boot_and_judge', side_effect=judge), \
		     mock.patch.object(scalable, 'write_report') as report, \
		     contextlib.redirect_stderr(io.StringIO()), \
		     contextlib.redirect_stdout(io.StringIO()):
			self.assertEqual(scalable.cmd_test(req, args), 0)
		self.assertEqual(calls, [('release', 'test', 2, None, True),
					 ('debug', 'test', 2, None, False),
					 ('kcsan', 'test', 2, None, False)])
		self.assertEqual(report.call_args[0][0], '/nonexistent/out')


class RequestPassedDownTest(unittest.TestCase):
	"""The settings that a subcommand changes for its boots go down in a
	changed copy of the request, never through the environment."""

	def setUp(self):
		tmp = tempfile.TemporaryDirectory()
		self.addCleanup(tmp.cleanup)
		self.req = Request(smp=4, kernel_args='dcache_oplog=off', out=tmp.name)
		self.booted = []
		for p in (mock.patch.object(scalable, 'cmd_build'),
			  mock.patch.object(scalable, 'boot', side_effect=self.boot),
			  mock.patch.object(scalable, 'log'),
			  mock.patch.dict(os.environ, {'KERNEL_ARGS': 'from-env', 'TCG_THREAD': ''})):
			p.start()
			self.addCleanup(p.stop)

	def boot(self, req, obj, flavour, smp, mode, logdir, timeout, **kw):
		self.booted.append((req, flavour, smp, timeout, kw))
		return {'console_text': '', 'tap_text': '', 'seconds': 1, 'accel': 'tcg',
			'console': 'c', 'append': '', 'ended': 'exit'}

	def test_soak_kernel_args(self):
		args = argparse.Namespace(seconds=60, rejudge=False)
		with mock.patch.object(scalable, 'analyze', return_value=(True, [], {})):
			self.assertEqual(scalable.cmd_soak(self.req, args), 1)	# no totals
		(req, flavour, smp, timeout, _), = self.booted
		self.assertEqual(req.kernel_args, 'dcache_oplog=off scalable_soak=60 '
				 'scalable_tests=torture,ast_mutex_test scalable_upstream=none')
		self.assertEqual(req, Request(smp=4, kernel_args=req.kernel_args, out=self.req.out))
		self.assertEqual((flavour, smp), ('debug', 4))
		self.assertEqual(timeout, 120 + scalable.boot_timeout(req, 'debug', 'test'))
		self.assertEqual(self.req.kernel_args, 'dcache_oplog=off')
		self.assertEqual(os.environ['KERNEL_ARGS'], 'from-env')

	def soak_with(self, tap):
		self.booted.clear()
		with mock.patch.object(scalable, 'boot',
				       side_effect=lambda *a, **kw: dict(self.boot(*a, **kw),
									   tap_text=tap)), \
		     mock.patch.object(scalable, 'analyze', return_value=(True, [], {})):
			rc = scalable.cmd_soak(self.req, argparse.Namespace(seconds=60, rejudge=False))
		with open(os.path.join(self.req.out, 'soak.json')) as f:
			return rc, json.load(f)

	def test_soak_needs_the_kill_storm(self):
		torture = '# totals: passes 3 ops 10\n'
		storm = '# totals: phase kill_storm kills %d chosen 1 entered 2 failures %d\n'
		rc, res = self.soak_with(torture)
		self.assertEqual(rc, 1)
		self.assertIn('kill storm did not run', ' '.join(res['problems']))
		rc, res = self.soak_with(torture + storm % (40, 0) + storm % (2, 0))
		self.assertEqual((rc, res['totals']['kill_storm kills']), (0, 42))
		rc, res = self.soak_with(torture + storm % (40, 0) + storm % (2, 1))
		self.assertEqual(rc, 1)
		self.assertIn('the kill storm failed 1 times', ' '.join(res['problems']))

	def test_tcg_check_thread_modes(self):
		args = argparse.Namespace(rounds=1, timeout=30)
		self.assertEqual(scalable.cmd_tcg_check(self.req, args), 1)	# no rounds
		self.assertEqual([b[0].tcg_thread for b in self.booted], ['multi', 'single'])
		for req, _, smp, timeout, kw in self.booted:
			self.assertEqual(req, dataclasses.replace(self.req, tcg_thread=req.tcg_thread))
			self.assertEqual((smp, timeout, kw['accel']), (4, 30, 'tcg'))
		self.assertIsNone(self.req.tcg_thread)
		self.assertEqual(os.environ['TCG_THREAD'], '')


class ResultsFileCallTest(unittest.TestCase):
	"""make trace, make run and make test's gate each write a results file."""

	def setUp(self):
		tmp = tempfile.TemporaryDirectory()
		self.addCleanup(tmp.cleanup)
		self.out = os.path.join(tmp.name, 'out')
		for p in (mock.patch.object(scalable, 'cmd_build'),
			  contextlib.redirect_stdout(io.StringIO())):
			p.__enter__()
			self.addCleanup(p.__exit__, None, None, None)

	def test_trace(self):
		req = Request(trace_smp=(1, 8, 16), out=self.out)
		with mock.patch.object(scalable, 'trace_boot', return_value=(None, ['no trace'])) as tb, \
		     mock.patch.object(scalable, 'write_results') as wr:
			self.assertEqual(scalable.cmd_trace(req, argparse.Namespace()), 1)
		with open(os.path.join(self.out, 'trace.md')) as f:
			text = f.read()
		with open(os.path.join(self.out, 'trace.json')) as f:
			self.assertEqual(json.load(f)['quantum'], 100)
		self.assertEqual([c[0][:3] for c in tb.call_args_list],
				 [(req, n, scalable_request.TRACE_WORKLOADS) for n in (1, 8, 16)])
		(wreq, kind, parts, body, t0, accel), kw = wr.call_args
		self.assertIs(wreq, req)
		self.assertEqual((kind, parts, accel, kw), ('trace', 'smp1-8-16', False, {}))
		self.assertEqual(body + '\n', text)
		self.assertLessEqual(t0, time.time())

	def test_run(self):
		def report(out, summaries, title, trace=None):
			os.makedirs(out, exist_ok=True)
			with open(os.path.join(out, 'report.md'), 'w') as f:
				f.write('# ' + title + '\n')
		req = Request(smp=2, cpus='1,2', out=self.out)
		with mock.patch.object(scalable, 'boot_and_judge',
				       return_value=(True, {'accel': 'kvm'})) as judge, \
		     mock.patch.object(scalable, 'write_report', side_effect=report), \
		     mock.patch.object(scalable, 'write_results') as wr:
			self.assertEqual(scalable.cmd_run(req, argparse.Namespace(mode='quick')), 0)
		judge.assert_called_once_with(req, 'release', 'quick', 2,
					      os.path.join(self.out, 'logs'), cpus='1,2')
		wr.assert_called_once_with(req, 'run', 'smp2',
					   '# Scalable series: benchmark report (quick mode)\n',
					   mock.ANY, True, settings={'MODE': 'quick'})

	def test_gate(self):
		started = []

		def boot(req, n, work, ms, logdir, quantum=None, stock=False):
			started.append((n, time.time(), ms, quantum))
			return None, ['traced boot at %d vCPUs did not finish' % n]
		req = Request(trace_ms=700, trace_gate_quantum=50, out=self.out)
		with mock.patch.object(scalable, 'trace_boot', side_effect=boot), \
		     mock.patch.object(scalable, 'write_results') as wr, \
		     mock.patch.object(scalable, 'log'):
			self.assertFalse(scalable.trace_check(req, os.path.join(self.out, 'logs')))
		# the instrument at quantum 5 and 500 ms windows, the gates at
		# TRACE_GATE_QUANTUM and TRACE_MS, at 8 vCPUs and at 16
		self.assertEqual([s[2:] for s in started], [(500, 5), (500, 5), (700, 50), (700, 50)])
		self.assertEqual([s[0] for s in started], [2, 4, scalable_trace.GATE_CPUS,
							   scalable_trace.WIDE_GATE_CPUS])
		with open(os.path.join(self.out, 'gate.json')) as f:
			self.assertEqual(json.load(f)['cpus'], scalable_trace.GATE_CPUS)
		(wreq, kind, parts, body, t0, accel), _ = wr.call_args
		n = scalable_trace.GATE_CPUS
		self.assertEqual((kind, parts, accel), ('gate', 'smp%d' % n, False))
		self.assertLessEqual(t0, started[-2][1])
		self.assertGreaterEqual(t0, started[-3][1])
		lines = body.splitlines()
		self.assertEqual(lines[:2], ['| gate | verdict | detail |', '|---|---|---|'])
		w = scalable_trace.WIDE_GATE_CPUS
		self.assertEqual(len([ln for ln in lines if ' | FAIL | ' in ln]),
				 len(scalable_trace.gate_rows([], n)) +
				 len(scalable_trace.gate_rows([], w)))
		self.assertIn('(nothing traced)', lines)
		# the gate boots' problems, not those of the boots before them
		self.assertIn('- traced boot at %d vCPUs did not finish' % n, lines)
		self.assertIn('- traced boot at %d vCPUs did not finish' % w, lines)
		self.assertNotIn('- traced boot at 2 vCPUs did not finish', lines)


class TraceSmpTest(unittest.TestCase):
	"""TRACE_SMP: vCPU counts up to the guests' CONFIG_NR_CPUS
	(test_scalable_request.py parses it)."""

	def test_cap_is_the_guests_nr_cpus(self):
		with open(os.path.join(common.TOP, 'kernel', 'configs', 'scalable.config')) as f:
			m = re.search(r'^CONFIG_NR_CPUS=(\d+)$', f.read(), re.M)
		self.assertIsNotNone(m)
		self.assertEqual(scalable_request.TRACE_MAX_SMP, int(m.group(1)))

	def test_detectors_off_only_above_32(self):
		"""The 8-vCPU gates and 32-vCPU reports keep the stall detectors."""
		off = ' rcupdate.rcu_cpu_stall_suppress=1 nowatchdog'
		for n in (1, 8, 16, 32):
			self.assertEqual(scalable.trace_append(['stat_bench'], 500, n),
					 'kunit.enable=0 scalable_trace=stat_bench scalable_trace_ms=500')
		for n in (33, 64):
			self.assertEqual(scalable.trace_append(['stat_bench', 'qdo_idle'], 1000, n),
					 'kunit.enable=0 scalable_trace=stat_bench,qdo_idle '
					 'scalable_trace_ms=1000' + off)


class WorkloadTest(unittest.TestCase):
	"""The benchmark programs, init.sh and the harness's lists agree."""

	SELFTESTS = os.path.join(common.TOP, 'tools', 'testing', 'selftests', 'scalable')

	def engine_programs(self):
		"""The programs built on bench.c: the RESULT name is the program's."""
		progs = []
		for path in sorted(glob.glob(os.path.join(self.SELFTESTS, '*.c'))):
			name = os.path.basename(path)[:-2]
			with open(path) as f:
				if name != 'bench' and '#include "bench.h"' in f.read():
					progs.append(name)
		return progs

	def test_engine_programs_are_listed(self):
		progs = self.engine_programs()
		self.assertIn('stat_bench', progs)
		for prog in progs:
			self.assertIn(prog, common.BENCHMARKS)

	def test_init_gives_every_benchmark_its_durations(self):
		# Without KSELFTEST_<NAME>_ARGS a checking boot would run the
		# default sweep: 1 s warm-up and 5 s measured, 3 runs per cell.
		# kselftests.sh sets them for init.sh and run_scalable.sh.
		with open(os.path.join(common.HARNESS, 'kselftests.sh')) as f:
			text = f.read()
		m = re.search(r'^\tfor t in ((?:[^;]|\\\n)*); do\n(?:\t\t#.*\n)?\t\tv=KSELFTEST_', text,
			      re.M)
		self.assertIsNotNone(m)
		listed = m.group(1).replace('\\\n', ' ').split()
		for prog in self.engine_programs():
			self.assertIn(prog, listed)

	def test_trace_workloads_exist(self):
		for prog in scalable_request.TRACE_WORKLOADS:
			if prog != 'qdo_idle':
				self.assertTrue(os.path.exists(os.path.join(self.SELFTESTS, prog + '.c')),
						prog)


def load_tests(loader, tests, pattern):
	"""Run as a script: add the tests of every test_scalable_*.py.

	Under "python3 -m unittest discover" (@pattern set), discovery finds
	them by itself.
	"""
	if pattern is None:
		for path in sorted(glob.glob(os.path.join(HERE, 'test_scalable_*.py'))):
			mod = importlib.import_module(os.path.basename(path)[:-3])
			tests.addTests(loader.loadTestsFromModule(mod))
	return tests


if __name__ == '__main__':
	unittest.main()
