# SPDX-License-Identifier: GPL-2.0
#
# The report of a run: the benchmark table (one row per benchmark and
# mode, one column per worker count) and out/report.md and out/report.json
# from the summaries that scalable_parser.analyze() returns; and the
# results file of every measuring command (out/results/, write_results()).

import json
import os
import platform
import re
import shlex
import subprocess
import time

import scalable_common as common
import scalable_schedule as schedule
from scalable_common import host_cpus, log, read_conf

def num(v):
	"""Three significant digits, without exponents for the usual ranges."""
	if v >= 100:
		return '%.0f' % v
	return '%.3g' % v if v >= 0.001 or v == 0 else '%.2e' % v


def fork_truncate_crossover(results):
	"""Where fork_truncate's OpLog starts to win, at the most CPUs it ran.

	Its modes are "T=<t>-stock" and "T=<t>-oplog" (a truncate every t
	forks); the "-oplog" lines carry the ratio to "-stock".  The crossover
	is the smallest t from which every larger t has a ratio of at least 1
	(the thesis, section 6.1: OpLog loses at a truncate every 1-2 forks and
	wins from 3).  Returns a sentence, or '' without such results.
	"""
	ratios = {}
	for r in results:
		m = re.fullmatch(r'T=(\d+)-oplog', str(r.get('mode', '')))
		if r.get('bench') == 'fork_truncate' and m and \
		   isinstance(r.get('ratio'), (int, float)) and isinstance(r.get('cpus'), int):
			ratios.setdefault(r['cpus'], {})[int(m.group(1))] = r['ratio']
	if not ratios:
		return ''
	cpus = max(ratios)
	byt = ratios[cpus]
	ts = sorted(byt)
	cross = None
	for t in reversed(ts):
		if byt[t] < 1:
			break
		cross = t
	seen = ', '.join('T=%d %.2fx' % (t, byt[t]) for t in ts)
	if cross is None:
		return 'fork_truncate at %d CPUs: the OpLog wins at no T (%s).' % (cpus, seen)
	return 'fork_truncate at %d CPUs: the OpLog wins from a truncate every %d forks ' \
	       'on (%s).' % (cpus, cross, seen)


def bench_table(results):
	"""Markdown table: one row per (bench, mode), one column per CPU count.

	A result with ast_speedup (ast_bench's baselines) also shows in its cell
	how much faster the default ast_mutex was than it in the same cell, so
	that every pairing can be read off the table, not only 2/1 scaling.
	"""
	cpus = sorted({r['cpus'] for r in results if isinstance(r.get('cpus'), int)})
	rows = {}
	for r in results:
		rows.setdefault((r['bench'], r.get('mode', '-')), {})[r['cpus']] = r
	if not cpus:
		return '(no benchmark results)'
	head = '| benchmark | mode | ' + \
	       ' | '.join('%d CPU: ops/ms ±sd (per CPU)' % c for c in cpus) + \
	       ' | scaling %d/1 |' % cpus[-1]
	lines = [head, '|' + '---|' * (len(cpus) + 3)]
	for (bench, mode), byc in rows.items():
		cells = []
		for c in cpus:
			r = byc.get(c)
			if r is None:
				cells.append('-')
			elif r.get('status') == 'fail':
				cells.append('FAILED')
			else:
				cell = '%s ±%s (%s)' % (num(r['ops_per_ms']), num(r.get('stddev', 0)),
							num(r['ops_per_ms'] / c))
				if str(mode).endswith('-oplog') and \
				   isinstance(r.get('ratio'), (int, float)):
					cell += ' oplog %.2fx' % r['ratio']
				if isinstance(r.get('ast_speedup'), (int, float)):
					cell += ' ast %.2fx' % r['ast_speedup']
					if isinstance(r.get('ast_cpu_speedup'), (int, float)):
						cell += ' (cpu %.2fx)' % r['ast_cpu_speedup']
				cells.append(cell)
		one, top = byc.get(cpus[0]), byc.get(cpus[-1])
		scale = '%.2fx' % (top['ops_per_ms'] / one['ops_per_ms']) \
			if one and top and one['ops_per_ms'] > 0 and cpus[0] == 1 else '-'
		lines.append('| %s | %s | %s | %s |' % (bench, mode, ' | '.join(cells), scale))
	if any(str(r.get('mode', '')).endswith('-oplog') and 'ratio' in r for r in results):
		lines += ['', '"oplog N.NNx": this "-oplog" mode moved N.NN times as many '
			  'operations per ms as its "-stock" mode with the same CPUs '
			  '(ratio; above 1 the OpLog is faster).']
		cross = fork_truncate_crossover(results)
		if cross:
			lines += ['', cross]
	if any('ast_speedup' in r for r in results):
		lines += ['', '"ast N.NNx": the default ast_mutex moved N.NN times as many items '
			  'per ms as this baseline with the same threads, buffer and CPUs '
			  '(ast_speedup; above 1 ast is faster); "cpu M.MMx": this baseline '
			  'spent M.MM times as much CPU time (user + system) per item as ast '
			  '(ast_cpu_speedup).']
	return '\n'.join(lines)


def time_table(time):
	"""Markdown: each item of a boot's schedule, scheduled and measured."""
	lines = ['| part of the boot | scheduled | measured | measured / scheduled |',
		 '|---|---|---|---|']
	measured = 0.0
	for key, sched, ms in time['rows']:
		if ms is None:
			lines.append('| %s | %s | - | - |' % (key, schedule.fmt(sched)))
			continue
		measured += ms
		lines.append('| %s | %s | %s | %s |' %
			     (key, schedule.fmt(sched), schedule.fmt(ms),
			      '%.2f' % (ms / sched) if sched else '-'))
	lines.append('| all | %s | %s | %s |' %
		     (schedule.fmt(time['scheduled']), schedule.fmt(measured),
		      '%.2f' % (measured / time['scheduled']) if time['scheduled'] else '-'))
	return '\n'.join(lines)


def report_data(summaries, title):
	"""What out/report.json holds: the run's identity and every boot's summary."""
	return {'title': title, 'base': read_conf()['LINUX_VERSION'],
		'host_cpus': host_cpus(), 'date': time.strftime('%Y-%m-%dT%H:%M:%S%z'),
		'boots': summaries}


def kcsan_lines(stock):
	"""Markdown lines for the KCSAN reports in stock code, one per race."""
	if not stock:
		return []
	seen = {}
	for r in stock:
		key = (r['title'], tuple(r['where']))
		seen[key] = seen.get(key, 0) + 1
	out = ['- KCSAN reports in stock 6.12 code (listed, not failed): %d' % len(stock)]
	for (title, where), n in seen.items():
		out.append('  - %dx %s (at %s)' % (n, title, ', '.join(where) or 'unknown'))
	return out


def markdown(report):
	"""out/report.md of report_data() @report."""
	summaries = report['boots']
	md = ['# %s' % report['title'], '',
	      'Base: Linux %s; host CPUs: %d; %s' % (report['base'], report['host_cpus'],
						  report['date']), '']
	for s in summaries:
		md.append('## %s kernel, -smp %d, %s, mode %s (%.0f s)' %
			  (s['flavour'], s['smp'], s['accel'].upper() +
			   (' %s-threaded' % s['tcg_thread'] if s.get('tcg_thread') else ''),
			   s['mode'], s['seconds']))
		md.append('')
		k, t = s['kunit'], s['kselftest']
		md.append('- KUnit: %d passed, %d failed, %d skipped, %d crashed (suites: %s)' %
			  (k['passed'], k['failed'], k['skipped'], k['crashed'],
			   ', '.join(k['suites']) or 'none'))
		expected = s.get('expected_skips', {})
		for key, why in expected.items():
			if key.startswith('kunit:'):
				md.append('  - skipped (expected): %s: %s' % (key, why))
		md.append('- kselftest: %d passed, %d failed, %d skipped (%s run, %d not run); '
			  'subtests %d passed, %d failed, %d skipped' %
			  (t['passed'], t['failed'], t['skipped'], t['plan'],
			   len(s.get('not_run', {})), t['subtests_passed'], t['subtests_failed'],
			   t['subtests_skipped']))
		for name, c in s.get('targets', {}).items():
			md.append('  - %s: %d passed, %d failed, %d skipped; subtests %d passed, '
				  '%d failed, %d skipped' %
				  (name, c['passed'], c['failed'], c['skipped'], c['subtests_passed'],
				   c['subtests_failed'], c['subtests_skipped']))
			for test, why in s.get('not_run', {}).items():
				if test.split(':')[0] == name:
					md.append('    - skipped (not run): %s: %s' % (test, why))
			for key, why in expected.items():
				if key.split(':')[0] == name:
					md.append('    - skipped (expected): %s: %s' % (key, why))
		ops = s.get('dcache_oplog', {})
		if 'before' in ops and 'after' in ops:
			b, a = ops['before'], ops['after']
			md.append('- dentry OpLog during the upstream kselftests: switch %s; ' %
				  b.get('enabled') + ', '.join(
					  '%s %d -> %d (+%d)' % (k, b[k], a[k], a[k] - b[k])
					  for k in ('hits', 'misses', 'syncs', 'flushes')
					  if k in a and k in b))
		both = s.get('upstream_off')
		if both:
			md.append('- upstream kselftests with switches off and on: %d tests, %d subtests, '
				  '%s' % (both['tests'], both['subtests'],
					  'identical' if both['identical'] else 'DIFFERENT (below)'))
		md += kcsan_lines(s.get('kcsan_stock', []))
		md.append('- console: `%s`, TAP: `%s`' % (s['console'], s['tap']))
		if s['problems']:
			md.append('- **FAILED:**')
			md += ['  - ' + p for p in s['problems']]
		else:
			md.append('- no kernel splat, all tests passed')
		md.append('')
		if s.get('time'):
			md.append('Time (scheduled by tools/testing/scalable/scalable_schedule.py; '
				  'measured on the host as the TAP stream arrived):')
			md.append('')
			md.append(time_table(s['time']))
			md.append('')
		if s['results']:
			md.append(bench_table(s['results']))
			md.append('')
	if any(s['accel'] == 'tcg' for s in summaries):
		md.append('Numbers from TCG (software emulation) show ratios, not hardware speed; '
			  'run on a KVM host for real scaling numbers.')
	if any(s.get('tcg_thread') == 'single' for s in summaries):
		md.append('')
		md.append('A single-threaded TCG boot (a CONFIG_JUMP_LABEL kernel, README: '
			  '"Static keys under TCG") runs its vCPUs in turn on one host thread: '
			  'its multi-CPU numbers are not parallel.')
	return '\n'.join(md) + '\n'


def write_report(out, summaries, title, trace=None):
	"""Write report.json and report.md in @out (out/) and print the latter.

	@trace: Markdown of the cache-line tracer's table (or a line saying how
	to get one), appended after the wall-clock numbers.
	"""
	os.makedirs(out, exist_ok=True)
	report = report_data(summaries, title)
	if trace:
		report['trace'] = trace
	jpath = os.path.join(out, 'report.json')
	mpath = os.path.join(out, 'report.md')
	with open(jpath, 'w') as f:
		json.dump(report, f, indent=1)
	text = markdown(report)
	if trace:
		text += '\n' + trace.rstrip('\n') + '\n'
	with open(mpath, 'w') as f:
		f.write(text)
	print('\n' + text, flush=True)
	log('report written to %s and %s' % (os.path.relpath(mpath, common.TOP),
					     os.path.relpath(jpath, common.TOP)))


# The command that each kind of results file comes from, and the
# environment variables that shape its figures, in the order written
# (their values as the request was given them, Request.given).
RESULTS_COMMANDS = {
	'trace': ('make trace', ('TRACE_KERNEL', 'TRACE_SMP', 'TRACE_MS', 'TRACE_QUANTUM',
				 'TRACE_WORKLOADS', 'ACCEL', 'KERNEL_ARGS')),
	'run': ('make run', ('MODE', 'SMP', 'CPUS', 'ACCEL', 'KERNEL_ARGS')),
	'gate': ('make test', ('TRACE_MS', 'TRACE_GATE_QUANTUM', 'ACCEL', 'KERNEL_ARGS')),
}


def output_of(cmd):
	"""The stripped stdout of @cmd run in the checkout, or None if it failed."""
	try:
		r = subprocess.run(cmd, cwd=common.TOP, capture_output=True, text=True, timeout=30)
	except (OSError, subprocess.SubprocessError):
		return None
	return r.stdout.strip() if r.returncode == 0 else None


def git_commit():
	"""HEAD's short hash, with " + uncommitted changes" when a tracked file differs."""
	head = output_of(['git', 'rev-parse', '--short=12', 'HEAD'])
	if not head:
		return 'unknown'
	status = output_of(['git', 'status', '--porcelain', '--untracked-files=no'])
	if status is None:
		return head + ' + unknown changes'
	return head + (' + uncommitted changes' if status else '')


def qemu_version(qemu):
	"""The first line of "@qemu --version" (QEMU, Request.qemu)."""
	out = output_of([qemu, '--version'])
	return out.splitlines()[0] if out else 'unknown'


def results_command(req, kind, settings=None):
	"""The command line of @kind as a user retypes it: the variables set, then make.

	The variables are those @req was given; @settings override them (make
	run's MODE is its --mode).
	"""
	target, names = RESULTS_COMMANDS[kind]
	env = dict(req.given, **(settings or {}))
	words = ['%s=%s' % (n, shlex.quote(env[n])) for n in names if env.get(n)]
	return ' '.join(words + [target])


def utc(t):
	return time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(t))


def write_results(req, kind, parts, text, t0, accel, settings=None):
	"""Write out/results/<kind>-<parts>-<tcg|kvm>-<YYYYMMDD-HHMM>.md; return its path.

	@kind is 'trace', 'run' or 'gate'; @parts the shape measured (e.g.
	"smp1-8-16"); @t0 the start, time.time(); @accel whether the guests ran
	under KVM.  An HTML comment heads @text: the command that reproduces
	it (results_command(), with @settings), the commit, the start and end
	(UTC) and the host, so that each figure quoted in the docs can be
	traced to the one run it comes from.  out/ is @req's (SCALABLE_OUT),
	and so are the QEMU whose version the header gives and the variables
	that its command sets.
	"""
	end = time.time()
	name = 'kvm' if accel else 'tcg'
	d = os.path.join(req.out, 'results')
	os.makedirs(d, exist_ok=True)
	base = os.path.join(d, '%s-%s-%s-%s' % (kind, parts, name,
						time.strftime('%Y%m%d-%H%M', time.gmtime(t0))))
	path, n = base + '.md', 1
	while os.path.exists(path):
		n += 1
		path = '%s-%d.md' % (base, n)
	head = ['<!--',
		'command: ' + results_command(req, kind, settings),
		'commit: ' + git_commit(),
		'started: ' + utc(t0),
		'ended: ' + utc(end),
		'host: %d CPUs, %s, %s, %s' % (host_cpus(), platform.platform(),
					       qemu_version(req.qemu), name.upper()),
		'-->', '']
	with open(path, 'w') as f:
		f.write('\n'.join(head) + '\n' + text.rstrip('\n') + '\n')
	log('results written to %s' % os.path.relpath(path, common.TOP))
	return path
