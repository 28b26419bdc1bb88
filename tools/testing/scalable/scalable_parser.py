# SPDX-License-Identifier: GPL-2.0
#
# Reading what a boot left: kernel splats on the console, the KTAP of the
# KUnit suites (through the tree's own tools/testing/kunit/kunit.py parse),
# the kselftest TAP 13 of run_kselftest.sh with its nested subtests, the
# benchmarks' RESULT lines and the dentry OpLog counters that init.sh
# prints; analyze() judges one boot from them.

import json
import os
import re
import subprocess
import sys

import scalable_common as common
import scalable_kcsan as kcsan

# Console patterns that fail a boot: any kernel splat.
SPLATS = [
	(r'WARNING: CPU: \d+', 'WARNING'),
	(r'WARNING: (possible|suspicious|inconsistent|bad unlock|held lock)', 'lockdep'),
	(r'------------\[ cut here \]------------', 'WARN/BUG'),
	(r'\bBUG: ', 'BUG'),
	(r'kernel BUG at', 'BUG'),
	(r'\bOops\b', 'Oops'),
	(r'general protection fault', 'GPF'),
	(r'Kernel panic - not syncing', 'panic'),
	(r'(possible recursive locking|possible circular locking|inconsistent lock state|'
	 r'suspicious RCU usage|lock held when returning|possible irq lock inversion)', 'lockdep'),
	(r'INFO: lockdep is turned off', 'lockdep'),
	(r'DEBUG_LOCKS_WARN_ON', 'lockdep'),
	(r'\bKASAN: ', 'KASAN'),
	(r'\bUBSAN: ', 'UBSAN'),
	(r'ODEBUG: ', 'debugobjects'),
	(r'list_(add|del) corruption', 'DEBUG_LIST'),
	(r'rcu: INFO: rcu_\w+ (self-)?detected stall', 'RCU stall'),
	(r'rcu_\w+ detected stalls on CPUs', 'RCU stall'),
	(r'INFO: task \S+ blocked for more than', 'hung task'),
	(r'soft lockup - CPU#', 'soft lockup'),
	(r'Watchdog detected hard LOCKUP', 'hard lockup'),
	(r'unreferenced object 0x', 'kmemleak'),
	(r'Call Trace:', 'stack trace'),
]


def find_splats(text):
	found = []
	for pat, kind in SPLATS:
		for m in re.finditer(pat, text):
			ls = text.rfind('\n', 0, m.start()) + 1
			le = text.find('\n', m.end())
			found.append((kind, text[ls:le if le >= 0 else None].strip()))
	return found


def parse_kunit(src, b, logdir):
	"""Parse the KTAP on the console with kunit.py; return a summary dict."""
	con = b['console_text']
	cut = con.find('SCALABLE: init start')
	ktap = con[:cut] if cut >= 0 else con
	path = os.path.join(logdir, b['name'] + '.ktap.log')
	with open(path, 'w') as f:
		f.write(ktap)
	jpath = os.path.join(logdir, b['name'] + '.kunit.json')
	kunit = os.path.join(src, 'tools', 'testing', 'kunit', 'kunit.py')
	r = subprocess.run([sys.executable, kunit, 'parse', '--json=' + jpath, path],
			   capture_output=True, text=True)
	summary = {'rc': r.returncode, 'passed': 0, 'failed': 0, 'skipped': 0, 'crashed': 0,
		   'suites': [], 'output': r.stdout[-4000:] + r.stderr[-2000:]}
	try:
		data = json.load(open(jpath))
	except (OSError, ValueError):
		return summary

	def walk(group, suite):
		for case in group.get('test_cases', []):
			st = case.get('status', '')
			key = {'PASS': 'passed', 'FAIL': 'failed', 'SKIP': 'skipped'}.get(st, 'crashed')
			summary[key] += 1
			if suite and suite not in summary['suites']:
				summary['suites'].append(suite)
		for g in group.get('sub_groups', []):
			walk(g, suite or g.get('name'))
	walk(data, None)
	return summary


def parse_kselftest(text):
	"""Results of run_kselftest.sh (TAP 13) and their nested subtests.

	The runner prints one TAP plan per collection (target), and init.sh runs
	it more than once, so the output is a sequence of blocks, each with its
	plan.  Every result carries its target; a subtest (a line indented by
	the runner's "# ") belongs to the test whose "# selftests: T: N" header
	precedes it.  A SKIP directive marks a skip, never a pass.
	"""
	top, sub, blocks = [], [], []
	target = None
	for line in text.splitlines():
		m = re.match(r'1\.\.(\d+)$', line)
		if m:
			blocks.append({'plan': int(m.group(1)), 'results': 0})
			continue
		m = re.match(r'# selftests: (\S+): ', line)
		if m:
			target = m.group(1)
			continue
		m = re.match(r'(# )?(not ok|ok) (\d+) (.*?)(?:\s+#\s*(.*))?$', line)
		if m:
			name = m.group(4)
			t = {'ok': m.group(2) == 'ok', 'name': name,
			     'skip': (m.group(5) or '').upper().startswith('SKIP')}
			if m.group(1):
				t['target'] = target
				sub.append(t)
			else:
				mt = re.match(r'selftests: (\S+): ', name)
				t['target'] = mt.group(1) if mt else target
				top.append(t)
				if blocks:
					blocks[-1]['results'] += 1
	plan = sum(b['plan'] for b in blocks) if blocks else None
	return {'plan': plan, 'blocks': blocks, 'top': top, 'sub': sub}


def kselftest_counts(kst, target=None, flavour=None):
	"""Pass/skip/fail counts of tests and subtests, of one target or all.

	The tests that EXCLUDED_TESTS keeps from running on @flavour count as
	skipped.
	"""
	top = [t for t in kst['top'] if target is None or t['target'] == target]
	sub = [t for t in kst['sub'] if target is None or t['target'] == target]
	excluded = [t for t in (common.excluded_tests(flavour) if flavour else {})
		    if t.split(':')[0] in common.SELFTEST_TARGETS and
		    (target is None or t.split(':')[0] == target)]
	return {'passed': sum(1 for t in top if t['ok'] and not t['skip']),
		'failed': sum(1 for t in top if not t['ok']),
		'skipped': sum(1 for t in top if t['skip']) + len(excluded),
		'subtests_passed': sum(1 for t in sub if t['ok'] and not t['skip']),
		'subtests_failed': sum(1 for t in sub if not t['ok'] and not t['skip']),
		'subtests_skipped': sum(1 for t in sub if t['skip'])}


def parse_dcache_oplog(console):
	"""init.sh's "dcache_oplog <when>: enabled=1 hits=N ..." lines, by <when>."""
	states = {}
	for m in re.finditer(r'SCALABLE: dcache_oplog (at start|before|after): (.*)', console):
		st = {}
		for kv in m.group(2).split():
			k, _, v = kv.partition('=')
			if v.isdigit():
				st[k] = int(v)
		states[m.group(1)] = st
	return states


def check_dcache_oplog(states, append):
	"""Problems with the dentry OpLog around the upstream selftests.

	The series' tests must leave the switch as they found it; the upstream
	tests must run with it on (unless the boot asked for dcache_oplog=off)
	and the OpLog must have counted references meanwhile.
	"""
	problems = []
	start, before, after = (states.get(k) for k in ('at start', 'before', 'after'))
	if not (start and before and after):
		return ['dcache_oplog: init.sh printed no switch and counters around the '
			'upstream selftests (is CONFIG_DCACHE_OPLOG on and debugfs mounted?)']
	if start.get('enabled') != before.get('enabled'):
		problems.append('dcache_oplog: the series\' kselftests left the switch at %s, '
				'found at %s' % (before.get('enabled'), start.get('enabled')))
	off = 'dcache_oplog=off' in append.split()
	if before.get('enabled') != (0 if off else 1):
		problems.append('dcache_oplog: switch %s during the upstream selftests, '
				'expected %s' % (before.get('enabled'), 0 if off else 1))
	if not off and after.get('hits', 0) <= before.get('hits', 0):
		problems.append('dcache_oplog: no per-CPU reference was counted during the '
				'upstream selftests (hits %s -> %s)' %
				(before.get('hits'), after.get('hits')))
	return problems


def parse_results(text):
	res = []
	for m in re.finditer(r'RESULT (bench=\S+(?: \S+=\S+)*)', text):
		d = dict(kv.split('=', 1) for kv in m.group(1).split())
		for k, v in list(d.items()):
			try:
				d[k] = int(v) if re.fullmatch(r'-?\d+', v) else float(v) \
					if re.fullmatch(r'-?[\d.]+(e-?\d+)?', v) else v
			except ValueError:
				pass
		res.append(d)
	return res


def analyze(src, b, logdir, expect_done=True):
	"""Judge one boot: returns (ok, problems, summary)."""
	problems = []
	con = b['console_text']
	if b['ended'] == 'timeout':
		problems.append('the guest did not finish within the timeout and was killed')
	elif 'Kernel panic - not syncing' in con:
		problems.append('kernel panic')
	elif expect_done and 'SCALABLE: done' not in con:
		problems.append('the guest stopped before init finished (QEMU exit %s)' % b['qemu_rc'])
	splats = find_splats(con)
	for kind, line in splats:
		# KCSAN's reports are judged below: stock code's are listed.
		if 'BUG: KCSAN: ' not in line:
			problems.append('kernel splat (%s): %s' % (kind, line))
	races = kcsan.judge(con, b['flavour'], src)
	for r in races['series']:
		problems.append('KCSAN report in the series\' code: %s (at %s)' %
				(r['title'], ', '.join(r['where']) or 'no line tables'))
	kunit = parse_kunit(src, b, logdir)
	if kunit['failed'] or kunit['crashed'] or kunit['rc'] != 0:
		problems.append('KUnit: %d failed, %d crashed (kunit.py parse exit %d)' %
				(kunit['failed'], kunit['crashed'], kunit['rc']))
	if expect_done and kunit['passed'] == 0:
		problems.append('KUnit: no test ran')
	kst = parse_kselftest(b['tap_text'])
	oplog = parse_dcache_oplog(con)
	if expect_done:
		if kst['plan'] is None:
			problems.append('kselftest: no TAP plan in the output')
		for blk in kst['blocks']:
			if blk['results'] != blk['plan']:
				problems.append('kselftest: plan 1..%d but %d results' %
						(blk['plan'], blk['results']))
		# Diagnostic boots (KERNEL_ARGS) may run only some of the targets.
		args = b.get('append', '').split()
		only = [a.split('=', 1)[1] for a in args if a.startswith('scalable_upstream=')]
		for t in common.SELFTEST_TARGETS:
			if t == 'scalable' and 'scalable_own=0' in args:
				continue
			if t != 'scalable' and only and t not in only[0].split(','):
				continue
			if not any(r['target'] == t for r in kst['top']):
				problems.append('kselftest: no result from target %s' % t)
		if any(t != 'scalable' for t in common.SELFTEST_TARGETS):
			problems += check_dcache_oplog(oplog, b.get('append', ''))
	results = parse_results(b['tap_text'])
	if expect_done:
		own = 'scalable_own=0' not in b.get('append', '').split()
		for bench in common.BENCHMARKS if own else ():
			if not any(r['bench'] == bench for r in results):
				problems.append('benchmark %s printed no RESULT line' % bench)
	for t in kst['top']:
		if not t['ok']:
			problems.append('kselftest failed: ' + t['name'])
	for t in kst['sub']:
		if not t['ok'] and not t['skip']:
			problems.append('  subtest failed: ' + t['name'])
	summary = {'boot': b['name'], 'flavour': b['flavour'], 'smp': b['smp'], 'accel': b['accel'],
		   'mode': b['mode'], 'seconds': round(b['seconds'], 1), 'ended': b['ended'],
		   'kunit': {k: kunit[k] for k in ('passed', 'failed', 'skipped', 'crashed', 'suites')},
		   'kselftest': dict(kselftest_counts(kst, flavour=b['flavour']), plan=kst['plan']),
		   'targets': {t: kselftest_counts(kst, t, b['flavour'])
			       for t in common.SELFTEST_TARGETS},
		   'not_run': common.excluded_tests(b['flavour']),
		   'dcache_oplog': oplog,
		   'kcsan_stock': [{'title': r['title'], 'where': r['where']}
				   for r in races['stock']],
		   'results': results,
		   'console': os.path.relpath(b['console'], common.TOP),
		   'tap': os.path.relpath(b['tap'], common.TOP),
		   'problems': problems}
	if problems:
		tail = '\n'.join(con.splitlines()[-40:])
		print('\n----- %s: last console lines -----\n%s\n-----' % (b['name'], tail), flush=True)
		if kunit['failed'] or kunit['crashed']:
			print(kunit['output'], flush=True)
	return not problems, problems, summary
