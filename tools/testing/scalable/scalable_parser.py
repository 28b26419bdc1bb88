# SPDX-License-Identifier: GPL-2.0
#
# Reading what a boot left: kernel splats on the console, the KTAP of the
# KUnit suites (through the tree's own tools/testing/kunit/kunit.py parse),
# the kselftest TAP 13 of run_kselftest.sh with its nested subtests, the
# benchmarks' RESULT lines and OpLog statistics, the dentry OpLog
# counters that init.sh prints, and the upstream kselftests' pass with the
# series' switches off against their normal pass; analyze() judges one
# boot from them.

import json
import os
import re
import subprocess
import sys

import scalable_common as common
import scalable_kcsan as kcsan
import scalable_schedule as schedule

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


# Kernel log lines that land inside KUnit's KTAP: asynchronous ones at
# the top level ("Freeing initrd memory", printed by populate_rootfs()
# whenever it is done, once between a suite's "KTAP version 1" and its
# "# Subtest:"), and announce_cpu()'s " #1" per CPU brought online before
# SYSTEM_RUNNING, when a KUnit case hotplugs a CPU.  kunit.py reads either
# as the end of the suite.  A line is KTAP if it is indented (a nested
# test, or the continuation of a failed expectation) or starts with a
# KTAP token.
KTAP_LINE = re.compile(r'^(\[[ \d.]+\] ?)?(\s*$|    |KTAP version|TAP version|\d+\.\.\d+|ok |not ok |#)')
CPU_ANNOUNCE = re.compile(r'^(\[[ \d.]+\])? *(#\d+ *)+$')


def strip_cpu_announcements(text):
	"""@text without the kernel log lines that are not KTAP (see above)."""
	return ''.join(line for line in text.splitlines(True)
		       if KTAP_LINE.match(line) and not CPU_ANNOUNCE.match(line.rstrip('\n')))


def parse_kunit(src, b, logdir):
	"""Parse the KTAP on the console with kunit.py; return a summary dict.

	kunit.py is the kernel tree @src's, or with @src None (no kernel tree:
	the tarball of make selftests-tar) the copy of tools/testing/kunit/
	packed beside the harness, at the same path under common.TOP.
	"""
	con = b['console_text']
	cut = con.find('SCALABLE: init start')
	ktap = strip_cpu_announcements(con[:cut] if cut >= 0 else con)
	path = os.path.join(logdir, b['name'] + '.ktap.log')
	with open(path, 'w') as f:
		f.write(ktap)
	jpath = os.path.join(logdir, b['name'] + '.kunit.json')
	kunit = os.path.join(src or common.TOP, 'tools', 'testing', 'kunit', 'kunit.py')
	r = subprocess.run([sys.executable, kunit, 'parse', '--json=' + jpath, path],
			   capture_output=True, text=True)
	summary = {'rc': r.returncode, 'passed': 0, 'failed': 0, 'skipped': 0, 'crashed': 0,
		   'suites': [], 'skips': [], 'cases': {},
		   'output': r.stdout[-4000:] + r.stderr[-2000:]}
	try:
		data = json.load(open(jpath))
	except (OSError, ValueError):
		return summary
	summary.update(kunit_counts(data))
	summary['cases'] = kunit_cases(data)
	return summary


def kunit_counts(data):
	"""Count the cases of kunit.py's JSON @data.

	skips lists the skipped ones by path: [suite, case] or, for a
	parameterised case, [suite, case, parameter]; a suite skipped as a
	whole (no cases) is [suite].
	"""
	counts = {'passed': 0, 'failed': 0, 'skipped': 0, 'crashed': 0, 'suites': [],
		  'skips': []}

	def walk(group, path):
		for case in group.get('test_cases', []):
			st = case.get('status', '')
			key = {'PASS': 'passed', 'FAIL': 'failed', 'SKIP': 'skipped'}.get(st, 'crashed')
			counts[key] += 1
			if path and path[0] not in counts['suites']:
				counts['suites'].append(path[0])
			if key == 'skipped':
				counts['skips'].append(path + [case.get('name')])
		for g in group.get('sub_groups', []):
			walk(g, path + [g.get('name')])
	walk(data, [])
	return counts


def kunit_cases(data):
	"""{suite: {case: status}} of kunit.py's JSON @data.

	A parameterised case is one case, with the worst status of its
	parameters (PASS < SKIP < FAIL < any other); a suite that reported
	no case (skipped or crashed as a whole) is {None: its status}.
	"""
	rank = {'PASS': 0, 'SKIP': 1, 'FAIL': 2}
	cases = {}

	def put(suite, case, st):
		got = cases.setdefault(suite, {})
		if case not in got or rank.get(st, 3) > rank.get(got[case], 3):
			got[case] = st

	def walk(group, path):
		for case in group.get('test_cases', []):
			st = case.get('status', '')
			if not path:
				put(case.get('name'), None, st)
			else:
				put(path[0], path[1] if len(path) > 1 else case.get('name'), st)
		for g in group.get('sub_groups', []):
			walk(g, path + [g.get('name')])
	walk(data, [])
	return cases


# Where the series' KUnit suites are, under the project's top directory
# (common.TOP: the series' files at their kernel paths; in the tarball of
# make selftests-tar, the copies packed there): each .c file that calls
# kunit_test_suite().
KUNIT_DIRS = ('lib', 'kernel', 'mm', 'fs')
KUNIT_SUITE_RE = re.compile(r'struct\s+kunit_suite\s+\w+\s*=\s*\{(.*?)\n\}\s*;', re.S)
KUNIT_CASES_RE = re.compile(r'struct\s+kunit_case\s+(\w+)\s*\[\s*\]\s*=\s*\{(.*?)\n\}\s*;',
			    re.S)
KUNIT_CASE_RE = re.compile(r'\bKUNIT_CASE(?:_PARAM|_SLOW|_ATTR|_PARAM_ATTR)?\s*\(\s*(\w+)')


def series_kunit_files(top=None):
	"""The series' KUnit source files under @top (common.TOP), sorted."""
	top = top or common.TOP
	found = []
	for d in KUNIT_DIRS:
		for dirpath, _, names in os.walk(os.path.join(top, d)):
			for n in names:
				if not n.endswith('.c'):
					continue
				path = os.path.join(dirpath, n)
				with open(path, errors='replace') as f:
					if 'kunit_test_suite' in f.read():
						found.append(path)
	return sorted(found)


def kunit_suites_of(text):
	"""{suite name: [case names]} of the KUnit source @text.

	Each struct kunit_suite's .name, with the KUNIT_CASE*() entries of the
	kunit_case array its .test_cases names; a case's name is its function's,
	as KUnit prints it.
	"""
	arrays = {m.group(1): KUNIT_CASE_RE.findall(m.group(2))
		  for m in KUNIT_CASES_RE.finditer(text)}
	suites = {}
	for m in KUNIT_SUITE_RE.finditer(text):
		name = re.search(r'\.name\s*=\s*"([^"]+)"', m.group(1))
		cases = re.search(r'\.test_cases\s*=\s*(\w+)', m.group(1))
		if name:
			suites[name.group(1)] = arrays.get(cases.group(1), []) if cases else []
	return suites


def series_kunit_suites(top=None):
	"""{suite: (source file relative to @top, [cases])} of the series."""
	top = top or common.TOP
	suites = {}
	for path in series_kunit_files(top):
		with open(path, errors='replace') as f:
			for name, cases in kunit_suites_of(f.read()).items():
				suites[name] = (os.path.relpath(path, top), cases)
	return suites


def check_kunit_suites(cases, suites):
	"""Problems: series KUnit suites or cases that reported nothing.

	@cases: kunit_cases() of the boot; @suites: series_kunit_suites().
	Every suite of the series is built in every flavour
	(kernel/configs/scalable.config), so each must be in the boot's KTAP
	with every case its source lists.  A case that failed or skipped is
	judged elsewhere (the counts, EXPECTED_SKIPS); a suite that reported
	as a whole, without cases, likewise.
	"""
	problems = []
	for suite, (where, want) in sorted(suites.items()):
		got = cases.get(suite)
		if got is None:
			problems.append('KUnit: series suite %s (%s) is not in the boot\'s KTAP: not '
					'built, or it did not run' % (suite, where))
			continue
		if None in got:
			continue
		for case in want:
			if case not in got:
				problems.append('KUnit: case %s.%s (%s) reported no result' %
						(suite, case, where))
	return problems


# The line init.sh prints once kmemleak's scans ran and their report was
# read (scalable_kmemleak=1, the debug flavour), and the one it prints
# instead when kmemleak refused them.
KMEMLEAK_DONE = 'SCALABLE: kmemleak scan finished'
KMEMLEAK_FAILED = 'SCALABLE: kmemleak failed'


def check_kmemleak(console, append):
	"""Problems of a boot's kmemleak scan: none unless @append asks for it."""
	if 'scalable_kmemleak=1' not in (append or '').split():
		return []
	problems = ['kmemleak: ' + line[len(KMEMLEAK_FAILED):].strip(' :')
		    for line in console.splitlines() if line.startswith(KMEMLEAK_FAILED)]
	if not re.search('^%s$' % re.escape(KMEMLEAK_DONE), console, re.M):
		problems.append('kmemleak: no "%s" line: the scan for leaks did not run '
				'(scalable_kmemleak=1)' % KMEMLEAK_DONE)
	return problems


def expected_programs(append, flavour):
	"""The kselftest programs a boot with command line @append must run.

	The series' programs (those of scalable_tests=, or all that
	tools/testing/selftests/scalable builds unless scalable_own=0) and
	the upstream programs of PROGRAM_TARGETS whose target runs, less
	EXCLUDED_TESTS of @flavour and scalable_exclude=: ["target:program"].
	"""
	words = dict(w.split('=', 1) for w in (append or '').split() if '=' in w)
	want = []
	if words.get('scalable_own', '1') != '0' and 'scalable' in common.SELFTEST_TARGETS:
		if words.get('scalable_tests'):
			progs = [t for t in words['scalable_tests'].split(',') if t]
		else:
			progs = schedule.programs()
		want += ['scalable:' + p for p in progs]
	only = words.get('scalable_upstream')
	for t, progs in sorted(common.PROGRAM_TARGETS.items()):
		if t in common.SELFTEST_TARGETS and (only is None or t in only.split(',')):
			want += ['%s:%s' % (t, p) for p in progs]
	gone = set(common.excluded_tests(flavour)) | set(boot_exclusions(append))
	return [t for t in want if t not in gone]


def check_programs(kst, append, flavour):
	"""Problems: programs the boot must run (expected_programs()) that
	printed no result, as a program not built or not installed does."""
	ran = {'%s:%s' % (t['target'], t['program']) for t in kst['top']}
	return ['kselftest: %s printed no result (not built, not installed, or not run)' % t
		for t in expected_programs(append, flavour) if t not in ran]


def parse_kselftest(text):
	"""Results of run_kselftest.sh (TAP 13) and their nested subtests.

	The runner prints one TAP plan per collection (target), and init.sh runs
	it more than once, so the output is a sequence of blocks, each with its
	plan.  Every result carries its target and program; a subtest (a line
	indented by the runner's "# ") belongs to the program whose "# selftests:
	T: P" header precedes it.  A SKIP directive marks a skip, never a pass;
	its text is the reason, and for a program that skipped before its plan
	("1..0 # SKIP MSG") MSG is.  kselftest.h's ksft_test_result_skip()
	prints "ok N # SKIP MSG": no name, MSG is the description.
	"""
	top, sub, blocks = [], [], []
	target = program = plan_skip = None
	for line in text.splitlines():
		m = re.match(r'1\.\.(\d+)$', line)
		if m:
			blocks.append({'plan': int(m.group(1)), 'results': 0})
			continue
		m = re.match(r'# selftests: (\S+): (\S+)', line)
		if m:
			target, program, plan_skip = m.group(1), m.group(2), None
			continue
		m = re.match(r'# 1\.\.0\s+#\s*SKIP\s*(.*)$', line, re.I)
		if m:
			plan_skip = m.group(1).strip()
			continue
		m = re.match(r'(# )?(not ok|ok) (\d+)(?: (.*))?$', line)
		if m:
			name, directive = re.match(r'(.*?)(?:(?:^|\s+)#\s*(.*))?$',
						   m.group(4) or '').groups()
			directive = directive or ''
			t = {'ok': m.group(2) == 'ok', 'name': name,
			     'skip': directive.upper().startswith('SKIP')}
			t['reason'] = directive[4:].strip() if t['skip'] else ''
			if m.group(1):
				t['target'], t['program'] = target, program
				sub.append(t)
			else:
				mt = re.match(r'selftests: (\S+): (\S+)', name)
				t['target'], t['program'] = mt.groups() if mt else (target, program)
				if t['skip'] and not t['reason']:
					t['reason'] = plan_skip or ''
				top.append(t)
				if blocks:
					blocks[-1]['results'] += 1
	plan = sum(b['plan'] for b in blocks) if blocks else None
	return {'plan': plan, 'blocks': blocks, 'top': top, 'sub': sub}


# scalable_upstream_off=1 (make test's release boot): kselftests.sh's
# upstream_pass_off() runs the upstream collections once with every series
# switch off, before the normal pass, between these lines of the TAP; it
# prints the switches after turning them off and after writing them back,
# and a line for every switch write that failed.
UPSTREAM_OFF_BEGIN = '# SCALABLE: upstream pass off begin'
UPSTREAM_OFF_END = '# SCALABLE: upstream pass off end'
SWITCH_FAILED = 'SCALABLE: switch write failed:'
SWITCHES = ('dcache_oplog', 'rmap_oplog', 'inotify_oplog', 'inode_oplog')


def upstream_off_asked(append):
	"""Whether command line @append runs the off pass: scalable_upstream_off=1
	on a boot that runs upstream collections."""
	words = (append or '').split()
	return 'scalable_upstream_off=1' in words and 'scalable_upstream=none' not in words


def split_upstream_off(tap):
	"""(@tap without the off pass, the off pass's TAP or None, whether it ended).

	The off pass is what lies between UPSTREAM_OFF_BEGIN and
	UPSTREAM_OFF_END, marker lines included; one with no end (the guest
	stopped in it) runs to the end of @tap.  The rest is what the TAP of
	a boot without the off pass would be, parsed as such.
	"""
	line = r'^%s[ \t\r]*(?:\n|\Z)'
	begin = re.search(line % re.escape(UPSTREAM_OFF_BEGIN), tap, re.M)
	if not begin:
		return tap, None, False
	end = re.compile(line % re.escape(UPSTREAM_OFF_END), re.M).search(tap, begin.end())
	if not end:
		return tap[:begin.start()], tap[begin.end():], False
	return tap[:begin.start()] + tap[end.end():], tap[begin.end():end.start()], True


def result_word(t):
	"""A parse_kselftest() result as the comparison names it."""
	return 'skip' if t['skip'] else 'ok' if t['ok'] else 'not ok'


def upstream_results(kst):
	"""{collection:program: (result, [(subtest name, result)])} of the
	upstream programs of parse_kselftest() @kst, in run order; a result is
	result_word()'s."""
	progs = {}
	for t in kst['top']:
		if t['target'] != 'scalable':
			progs['%s:%s' % (t['target'], t['program'])] = (result_word(t), [])
	for t in kst['sub']:
		key = '%s:%s' % (t['target'], t['program'])
		if key in progs:
			progs[key][1].append((t['name'] or t['reason'], result_word(t)))
	return progs


def compare_upstream_passes(off, on):
	"""Problems where the off pass @off and the normal pass @on differ, and
	{'tests': N, 'subtests': M} compared.

	@off, @on: upstream_results().  Per collection:program, the top-level
	result and every subtest's, by position (a subtest's name may differ
	between the passes: openat2's name a /proc/<pid> path); a program or a
	subtest that only one pass reported differs from "missing".
	"""
	problems = []
	n = m = 0
	for prog in list(on) + [p for p in off if p not in on]:
		a, b = off.get(prog), on.get(prog)
		if a is None or b is None:
			problems.append('upstream kselftests differ with the switches off and on: %s: '
					'off: %s, on: %s' % (prog, a[0] if a else 'missing',
							      b[0] if b else 'missing'))
			continue
		n += 1
		if a[0] != b[0]:
			problems.append('upstream kselftests differ with the switches off and on: %s: '
					'off: %s, on: %s' % (prog, a[0], b[0]))
		for i in range(max(len(a[1]), len(b[1]))):
			sa = a[1][i] if i < len(a[1]) else None
			sb = b[1][i] if i < len(b[1]) else None
			m += 1
			if sa and sb and sa[1] == sb[1]:
				continue
			problems.append('upstream kselftests differ with the switches off and on: %s '
					'subtest %d (%s): off: %s, on: %s' %
					(prog, i + 1, (sb or sa)[0], sa[1] if sa else 'missing',
					 sb[1] if sb else 'missing'))
	return problems, {'tests': n, 'subtests': m}


def switch_words(console, when):
	"""{switch: value} of the guest's "upstream pass @when switches:" line."""
	m = re.search(r'^SCALABLE: upstream pass %s switches:(.*)$' % when, console, re.M)
	if not m:
		return None
	return dict(w.partition('=')[::2] for w in m.group(1).split())


def check_switch_writes(console):
	"""Problems: every "switch write failed" line of the guest."""
	return ['switch write failed: ' + line[len(SWITCH_FAILED):].strip()
		for line in console.splitlines() if line.startswith(SWITCH_FAILED)]


def check_upstream_off(console, tap, append):
	"""The off pass of a boot with command line @append: (problems, summary).

	@tap is the boot's whole TAP.  Where the boot asked for the off pass
	(upstream_off_asked()), it must be there and complete, the switches
	must read 0 in it and be back on (or off where the command line says
	<switch>=off) after it, and its results must be the normal pass's
	(compare_upstream_passes()); summary is then {'tests', 'subtests',
	'identical'}, else None.
	"""
	problems = []
	if not upstream_off_asked(append):
		return problems, None
	normal, off, ended = split_upstream_off(tap)
	if off is None:
		return problems + ['upstream kselftests with the switches off: no "%s" line in the '
				   'TAP: the pass did not run (scalable_upstream_off=1)' %
				   UPSTREAM_OFF_BEGIN], None
	if not ended:
		problems.append('upstream kselftests with the switches off: no "%s" line: the pass '
				'did not finish' % UPSTREAM_OFF_END)
	words = (append or '').split()
	for when, want in (('off', lambda s: '0'),
			   ('on', lambda s: '0' if '%s=off' % s in words else '1')):
		got = switch_words(console, when) or {}
		for s in SWITCHES:
			if got.get(s) != want(s):
				problems.append('upstream kselftests with the switches off: %s read %r %s the '
						'off pass, expected %s' %
						(s, got.get(s), 'in' if when == 'off' else 'after',
						 want(s)))
	off_kst = parse_kselftest(off)
	for blk in off_kst['blocks']:
		if blk['results'] != blk['plan']:
			problems.append('upstream kselftests with the switches off: plan 1..%d but %d '
					'results' % (blk['plan'], blk['results']))
	diff, counts = compare_upstream_passes(upstream_results(off_kst),
					       upstream_results(parse_kselftest(normal)))
	problems += diff
	return problems, dict(counts, identical=not diff)


def boot_exclusions(append):
	"""{test: why} of the scalable_exclude= word of a kernel command line."""
	m = re.search(r'(?:^|\s)scalable_exclude=(\S+)', append or '')
	return {t: 'excluded on this boot\'s command line (scalable_exclude)'
		for t in (m.group(1).split(',') if m else []) if t}


def kselftest_counts(kst, target=None, flavour=None, extra=()):
	"""Pass/skip/fail counts of tests and subtests, of one target or all.

	The tests that EXCLUDED_TESTS keeps from running on @flavour, and the
	@extra ones (boot_exclusions()), count as skipped.
	"""
	top = [t for t in kst['top'] if target is None or t['target'] == target]
	sub = [t for t in kst['sub'] if target is None or t['target'] == target]
	names = set(common.excluded_tests(flavour) if flavour else {}) | set(extra)
	excluded = [t for t in names
		    if t.split(':')[0] in common.SELFTEST_TARGETS and
		    (target is None or t.split(':')[0] == target)]
	return {'passed': sum(1 for t in top if t['ok'] and not t['skip']),
		'failed': sum(1 for t in top if not t['ok']),
		'skipped': sum(1 for t in top if t['skip']) + len(excluded),
		'subtests_passed': sum(1 for t in sub if t['ok'] and not t['skip']),
		'subtests_failed': sum(1 for t in sub if not t['ok'] and not t['skip']),
		'subtests_skipped': sum(1 for t in sub if t['skip'])}


def skips(kst, kunit_skips):
	"""Every skip of a boot: [(keys, what)].

	@keys: the EXPECTED_SKIPS keys that would cover it, the broadest first
	(the program of a subtest, the suite of a case); @what: the skip, for a
	problem line.
	"""
	out = []
	for t in kst['top']:
		if t['skip']:
			key = '%s:%s' % (t['target'], t['program'])
			out.append(([key], 'kselftest skipped: %s%s' %
				    (key, ' (%s)' % t['reason'] if t['reason'] else '')))
	for t in kst['sub']:
		if t['skip']:
			prog = '%s:%s' % (t['target'], t['program'])
			key = '%s:%s' % (prog, t['name'] or t['reason'])
			why = ' (%s)' % t['reason'] if t['name'] and t['reason'] else ''
			out.append(([prog, key], '  subtest skipped: %s%s' % (key, why)))
	for path in kunit_skips:
		keys = ['kunit:' + '.'.join(path[:i + 1]) for i in range(len(path))]
		out.append((keys, 'KUnit skipped: ' + keys[-1]))
	return out


def check_skips(kst, kunit_skips, flavour):
	"""Judge the skips of a boot of @flavour against EXPECTED_SKIPS.

	Returns (problems, expected): a problem for every skip that no key of
	EXPECTED_SKIPS covers on @flavour, and {key: why} of the expected ones
	that happened.
	"""
	want = common.expected_skips(flavour)
	problems, expected = [], {}
	for keys, what in skips(kst, kunit_skips):
		hit = [k for k in keys if k in want]
		if hit:
			expected[hit[0]] = want[hit[0]]
		else:
			problems.append('%s, not expected on %s (EXPECTED_SKIPS)' % (what, flavour))
	return problems, expected


def parse_dcache_oplog(console, which='dcache_oplog'):
	"""init.sh's "@which <when>: enabled=1 hits=N ..." lines, by <when>."""
	states = {}
	for m in re.finditer(r'SCALABLE: %s (at start|before|after): (.*)' % which, console):
		st = {}
		for kv in m.group(2).split():
			k, _, v = kv.partition('=')
			if v.isdigit():
				st[k] = int(v)
		states[m.group(1)] = st
	return states


def check_switch_markers(states, append, which, counter, expect_growth, what):
	"""Problems with an OpLog's switch and counter around the upstream selftests.

	@states: parse_dcache_oplog(console, @which).  The series' tests must
	leave the switch as they found it; the upstream tests must run with it
	on (unless the boot asked for @which=off) and, if @expect_growth,
	@counter must have grown meanwhile (@what says what it counts).
	"""
	problems = []
	start, before, after = (states.get(k) for k in ('at start', 'before', 'after'))
	if not (start and before and after):
		return ['%s: init.sh printed no switch and counters around the upstream '
			'selftests (is CONFIG_%s on and debugfs mounted?)' % (which, which.upper())]
	if start.get('enabled') != before.get('enabled'):
		problems.append('%s: the series\' kselftests left the switch at %s, found at %s' %
				(which, before.get('enabled'), start.get('enabled')))
	off = '%s=off' % which in append.split()
	if before.get('enabled') != (0 if off else 1):
		problems.append('%s: switch %s during the upstream selftests, expected %s' %
				(which, before.get('enabled'), 0 if off else 1))
	if expect_growth and not off and after.get(counter, 0) <= before.get(counter, 0):
		problems.append('%s: %s during the upstream selftests (%s %s -> %s)' %
				(which, what, counter, before.get(counter), after.get(counter)))
	return problems


def check_dcache_oplog(states, append):
	"""The dentry OpLog: on during the upstream tests, and it counted references."""
	return check_switch_markers(states, append, 'dcache_oplog', 'hits', True,
				    'no per-CPU reference was counted')


def check_rmap_oplog(states, append, mm_ran):
	"""The reverse-map OpLog: on during the upstream tests and, when the mm
	programs ran (@mm_ran), forks logged inserts meanwhile."""
	return check_switch_markers(states, append, 'rmap_oplog', 'logged', mm_ran,
				    'no insert was logged by the mm programs')


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


def parse_oplog_stats(text):
	"""The OpLog statistics a benchmark prints per run, e.g. inotify_bench's
	"inotify_bench: <mode> cpus=N oplog stats: ... hits=+N ..." (the growth
	of /sys/kernel/debug/oplog/<type>/stats over the run): a list of dicts
	with bench, mode, cpus and the counters.
	"""
	runs = []
	for m in re.finditer(r'^[# ]*(\w+): (\S+) cpus=(\d+) oplog stats:(.*)$', text, re.M):
		st = {'bench': m.group(1), 'mode': m.group(2), 'cpus': int(m.group(3))}
		for kv in m.group(4).split():
			k, _, v = kv.partition('=')
			if re.fullmatch(r'[+-]?\d+', v):
				st[k] = int(v)
		runs.append(st)
	return runs


def is_oplog_hot_mode(bench, mode):
	"""A "-oplog" mode whose OpLog must count hits (not in OPLOG_COLD_MODES)."""
	return str(mode).endswith('-oplog') and \
		'%s:%s' % (bench, mode) not in common.OPLOG_COLD_MODES


def check_results(results, oplog_runs):
	"""Problems of the benchmarks' numbers.

	A RESULT line fails with status=fail (a run failed) and otherwise when
	ops_per_ms is not above 0: no operation was counted, short checking
	runs included.  A "-oplog" mode (bench_add_oplog_mode() in
	tools/testing/selftests/scalable/bench.c) fails when its OpLog counted
	no hit: oplog_hits=0 on its RESULT line, or hits=+0 in a run's "oplog
	stats" line (@oplog_runs, parse_oplog_stats()).
	"""
	problems = []
	for r in results:
		what = 'benchmark %s %s cpus=%s' % (r['bench'], r.get('mode', '-'), r.get('cpus'))
		v = r.get('ops_per_ms')
		if r.get('status') == 'fail':
			problems.append('%s: status=fail (%s runs completed)' % (what, r.get('runs')))
		elif not isinstance(v, (int, float)) or v <= 0:
			problems.append('%s: ops_per_ms=%s, no operation counted' % (what, v))
		if is_oplog_hot_mode(r['bench'], r.get('mode')) and r.get('oplog_hits') == 0:
			problems.append('%s: oplog_hits=0, the OpLog counted no hit' % what)
	for st in oplog_runs:
		if is_oplog_hot_mode(st['bench'], st['mode']) and st.get('hits') == 0:
			problems.append('benchmark %s %s cpus=%d: the OpLog counted no hit in a '
					'run (oplog stats: hits=+0)' %
					(st['bench'], st['mode'], st['cpus']))
	return problems


def analyze(src, b, logdir, expect_done=True):
	"""Judge one boot: returns (ok, problems, summary).

	@src is the kernel tree, None where there is none (a native run of
	make selftests-tar's tarball): KUnit is parsed with the packed copy of
	kunit.py, and a KCSAN report, which cannot be located, fails.
	"""
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
	if expect_done and 'kunit.enable=0' not in b.get('append', '').split():
		problems += check_kunit_suites(kunit.get('cases', {}), series_kunit_suites())
	if expect_done:
		problems += check_kmemleak(con, b.get('append', ''))
	# The off pass (scalable_upstream_off=1) is judged on its own; the rest
	# of the TAP is what a boot without it would print.
	tap = split_upstream_off(b['tap_text'])[0]
	off_problems, upstream_off = check_upstream_off(con, b['tap_text'], b.get('append', ''))
	problems += check_switch_writes(con)
	if expect_done:
		problems += off_problems
	kst = parse_kselftest(tap)
	oplog = parse_dcache_oplog(con)
	rmap = parse_dcache_oplog(con, 'rmap_oplog')
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
		problems += check_programs(kst, b.get('append', ''), b['flavour'])
		# No upstream collection ran (scalable_upstream=none: make soak).
		if any(t != 'scalable' for t in common.SELFTEST_TARGETS) and \
		   not (only and only[0] == 'none'):
			problems += check_dcache_oplog(oplog, b.get('append', ''))
			problems += check_rmap_oplog(rmap, b.get('append', ''),
						     any(r['target'] == 'mm' for r in kst['top']))
	results = parse_results(tap)
	if expect_done:
		# A boot that runs only some of the series' kselftests
		# (scalable_tests=: diagnostic boots, make soak) runs no sweep.
		own = 'scalable_own=0' not in args and \
			not any(a.startswith('scalable_tests=') for a in args)
		for bench in common.BENCHMARKS if own else ():
			if not any(r['bench'] == bench for r in results):
				problems.append('benchmark %s printed no RESULT line' % bench)
	problems += check_results(results, parse_oplog_stats(tap))
	if expect_done and b.get('schedule'):
		ast = [a.split('=', 1)[1] for a in args if a.startswith('scalable_ast_bench=')]
		problems += schedule.plan_problems(tap, b['mode'], b['smp'], b.get('cpus'),
						   ast[0] if ast else None)
	for t in kst['top']:
		if not t['ok']:
			problems.append('kselftest failed: ' + t['name'])
	for t in kst['sub']:
		if not t['ok'] and not t['skip']:
			problems.append('  subtest failed: ' + t['name'])
	skip_problems, expected_skips = check_skips(kst, kunit['skips'], b['flavour'])
	problems += skip_problems
	dropped = boot_exclusions(b.get('append'))
	if 'SCALABLE: upstream selftests:' in con:
		for t in dropped:
			if 'SCALABLE: excluded on the command line: %s\n' % t not in con:
				problems.append('scalable_exclude names %s, which the guest did not exclude '
						'(not an upstream test of this boot?)' % t)
	summary = {'boot': b['name'], 'flavour': b['flavour'], 'smp': b['smp'], 'accel': b['accel'],
		   'tcg_thread': b.get('tcg_thread'),
		   'mode': b['mode'], 'seconds': round(b['seconds'], 1), 'ended': b['ended'],
		   'kunit': {k: kunit[k] for k in ('passed', 'failed', 'skipped', 'crashed', 'suites')},
		   'kselftest': dict(kselftest_counts(kst, flavour=b['flavour'], extra=dropped),
				     plan=kst['plan']),
		   'targets': {t: kselftest_counts(kst, t, b['flavour'], dropped)
			       for t in common.SELFTEST_TARGETS},
		   'not_run': dict(common.excluded_tests(b['flavour']), **dropped),
		   'expected_skips': expected_skips,
		   'dcache_oplog': oplog,
		   'rmap_oplog': rmap,
		   'upstream_off': upstream_off,
		   'kcsan_stock': [{'title': r['title'], 'where': r['where']}
				   for r in races['stock']],
		   'results': results,
		   'console': os.path.relpath(b['console'], common.TOP),
		   'tap': os.path.relpath(b['tap'], common.TOP),
		   'problems': problems}
	if b.get('schedule'):
		summary['time'] = {'scheduled': round(schedule.total(b['schedule']), 1),
				   'rows': [[k, round(sc, 1), None if ms is None else round(ms, 1)]
					    for k, sc, ms in schedule.report_rows(b['schedule'],
										  b.get('timeline') or [])]}
	if problems:
		tail = '\n'.join(con.splitlines()[-40:])
		print('\n----- %s: last console lines -----\n%s\n-----' % (b['name'], tail), flush=True)
		if kunit['failed'] or kunit['crashed']:
			print(kunit['output'], flush=True)
	return not problems, problems, summary


def parse_keyflip(text):
	"""What a scalable_keyflip boot's console says (scalable.py tcg-check).

	Returns (rounds, int3) where @rounds is the number of flip rounds the
	guest finished (None if it did not finish) and @int3 the "Oops: int3"
	reports with the RIP line that follows each.
	"""
	m = re.search(r'SCALABLE: keyflip done rounds=(\d+)', text)
	int3 = []
	for o in re.finditer(r'Oops: int3.*', text):
		rip = re.search(r'RIP: 0010:(\S+)', text[o.end():])
		int3.append('%s at %s' % (o.group(0).strip(), rip.group(1) if rip else '?'))
	return (int(m.group(1)) if m else None), int3


def parse_torture_totals(text):
	"""Sum the "totals:" lines of the kselftest torture in TAP @text.

	Each line is "totals: [phase P] KEY N [KEY N ...]"; returns
	{"P KEY" or "KEY": sum}, in the order first seen.
	"""
	sums = {}
	for m in re.finditer(r'^[# ]*totals: (.*)$', text, re.M):
		words = m.group(1).split()
		prefix = ''
		if len(words) >= 2 and words[0] == 'phase':
			prefix, words = words[1] + ' ', words[2:]
		for k, v in zip(words[0::2], words[1::2]):
			if re.fullmatch(r'-?\d+', v):
				sums[prefix + k] = sums.get(prefix + k, 0) + int(v)
	return sums
