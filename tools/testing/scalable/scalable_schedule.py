# SPDX-License-Identifier: GPL-2.0
#
# What a boot's kselftests schedule, and how long that takes: the model
# behind a boot's timeout (scalable_qemu.boot_timeout()), the progress the
# host prints while a guest runs (Progress), the time section of the report,
# and the check that make test runs without booting (test_scalable_schedule.py:
# a full make run on the project's 2-vCPU TCG host must fit FULL_BUDGET_S).
#
# The schedule is not written twice: the benchmarks' arguments per mode are
# what kselftests.sh's scalable_bench_args exports (bench_env() sources it),
# the programs are the .c files of tools/testing/selftests/scalable (as its
# Makefile finds them), and each benchmark's modes are checked at run time
# against the plan line the program prints ("<name>: M modes x N counts,
# about S s of windows"; plan_problems()).  What the model
# adds are the costs that are not warm-up and measurement windows: per run
# (starting and joining the workers), per program (setup), and the programs
# and collections whose time does not depend on the mode (COSTS).  Those
# were measured at 2 TCG vCPUs on the project's 2-core host; README.md
# gives the run they come from.

import glob
import math
import os
import re
import shlex
import subprocess

import scalable_common as common

# The longest timeout a full make run may get on the reference host (2 TCG
# vCPUs, the project's 2-core machine): make test fails when the full
# sweep's schedule, times MARGIN, exceeds it (test_scalable_schedule.py).
FULL_BUDGET_S = 45 * 60
REFERENCE_SMP = 2
# A boot's timeout is its schedule times MARGIN: a run up to 1.125x its
# schedule still ends with a quarter of its timeout to spare.
MARGIN = 1.5
# The debug and KCSAN kernels run everything slower (lockdep, KASAN,
# KCSAN's watchpoints); scalable_qemu.boot_timeout() multiplies by these.
FLAVOUR_FACTOR = {'debug': 3, 'kcsan': 2}

# Benchmarks: how many modes they register (checked against the program's
# plan line at run time), and what a run costs beyond its warm-up and
# measurement: run_s per run, worker_s per worker of a run, setup_s once
# (RUN_S, WORKER_S and SETUP_S where a benchmark names none).
#   kind bench  the bench.c engine: counts 1, 2, 4, ... below nproc, then
#               nproc (-c: the listed counts up to nproc)
#   kind list   oplog_list_bench: counts 1 .. nproc
#   kind ast    ast_bench: modes are implementations (-i) x thread counts
#               x buffer sizes
#   kind T      fork_truncate: two modes per value of -T (default T of them)
BENCH = {
	'cacheline_bench': {'kind': 'bench', 'modes': 3},
	'create_bench': {'kind': 'bench', 'modes': 4},
	'fork_bench': {'kind': 'bench', 'modes': 8},
	'exec_bench': {'kind': 'bench', 'modes': 4, 'setup_s': 2},
	'fork_truncate': {'kind': 'T', 'T': 10},
	'inotify_bench': {'kind': 'bench', 'modes': 4},
	'mmap_bench': {'kind': 'bench', 'modes': 4},
	'open_bench': {'kind': 'bench', 'modes': 12},
	# "many" creates 100000 names (8192 in a checking boot)
	'stat_bench': {'kind': 'bench', 'modes': 6, 'setup_s': 6},
	'oplog_list_bench': {'kind': 'list', 'modes': 4},
	# Beyond its window, a run of t threads costs about thread2_s * t^2 to
	# start, stop and join, by implementation (measured at 1000 threads;
	# the hand-off and cv-pair stops serialize every queued thread).
	'ast_bench': {'kind': 'ast', 'run_s': 0.06,
		      'impls': {'ast': 3e-6, 'ast-handoff': 4e-5, 'ast-compete': 4e-7,
				'cv-bcast': 5e-7, 'cv-pair': 4e-5, 'futex-bitset': 8e-6}},
}
RUN_S, WORKER_S, SETUP_S = 0.05, 0.01, 1

# Seconds of everything else, at 2 TCG vCPUs in the release kernel,
# whatever the mode: 'boot' is from QEMU's start to the first kselftest
# (kernel boot, KUnit, /init), 'end' from the last one to the guest's
# power-off; the series' programs that are not benchmarks; each upstream
# collection as a whole.
COSTS = {
	'boot': 10, 'end': 2,
	'ast_fuzz': 18, 'ast_mutex_test': 9, 'dcache_oplog_test': 5, 'inotify_test': 3,
	'lease_test': 8,
	'qdo_hotplug': 5, 'qdo_latency': 22, 'rmap_oplog_test': 3, 'torture': 7,
	'upstream:fchmodat2': 2, 'upstream:openat2': 14, 'upstream:proc': 5,
	'upstream:tmpfs': 1, 'upstream:mm': 7,
}

# A checking boot's timeout (MODE=test; scalable_qemu.boot_timeout(),
# times FLAVOUR_FACTOR), a fixed one: test_scalable_schedule.py checks that
# the release boot of make test, the upstream pass with the switches off
# included, fits it with MARGIN to spare.
TEST_TIMEOUT_S = 900

BENCH_DEFAULTS = {'w': 1000, 'm': 5000, 'r': 3}
QUICK = {'w': 100, 'm': 400, 'r': 2}


def programs():
	"""The series' kselftest programs, as its Makefile finds them, sorted."""
	d = os.path.join(common.TOP, 'tools', 'testing', 'selftests', 'scalable')
	return sorted(os.path.basename(p)[:-2] for p in glob.glob(os.path.join(d, '*.c'))
		      if os.path.basename(p) != 'bench.c')


def bench_env(mode, cpus=None, ast_bench=None):
	"""What kselftests.sh's scalable_bench_args() sets for @mode.

	Returns ({program: [arguments]}, the runner's per-test timeout).
	@cpus is scalable_cpus (a comma list of worker counts) or None;
	@ast_bench is scalable_ast_bench (ast_bench's arguments, '_' for
	spaces) or None.
	"""
	script = os.path.join(common.HARNESS, 'kselftests.sh')
	cmd = ('scalable_mode=%s; scalable_cpus=%s; scalable_ast_bench=%s; . %s; '
	       'scalable_bench_args; echo "tmo=$tmo"; env' %
	       (shlex.quote(mode), shlex.quote(cpus or ''), shlex.quote(ast_bench or ''),
		shlex.quote(script)))
	r = subprocess.run(['sh', '-c', cmd], capture_output=True, text=True, check=True,
			   env={'PATH': os.environ.get('PATH', '/usr/bin:/bin')})
	args, tmo = {}, None
	for line in r.stdout.splitlines():
		m = re.match(r'KSELFTEST_([A-Z0-9_]+)_ARGS=(.*)$', line)
		if m:
			args[m.group(1).lower()] = shlex.split(m.group(2))
		elif line.startswith('tmo='):
			tmo = int(line[4:])
	return args, tmo


def parse_args(prog, argv):
	"""The settings @prog derives from @argv, as its own option parser does."""
	o = dict(BENCH_DEFAULTS, c=None, T=None, t=None, b=None, i=None, q=False)
	explicit = set()
	i = 0
	while i < len(argv):
		a = argv[i]
		if a == '-q':
			o['q'] = True
			if prog == 'ast_bench':
				# ast_bench's -q sets the three at once, where it
				# stands; bench.c's yields to an explicit -w/-m/-r
				o.update(QUICK)
			i += 1
			continue
		if a in ('-W', '-x', '-v'):
			i += 1
			continue
		if len(a) == 2 and a[0] == '-' and i + 1 < len(argv):
			k, v = a[1], argv[i + 1]
			if k in 'wmr':
				o[k] = int(v)
				explicit.add(k)
			elif k in 'cTtb':
				o[k] = [int(x) for x in v.split(',') if x]
			elif k == 'i':
				o[k] = [x for x in v.split(',') if x]
			i += 2
			continue
		i += 1
	if o['q'] and prog != 'ast_bench':
		for k in 'wmr':
			if k not in explicit:
				o[k] = QUICK[k]
	return o


def counts(kind, smp, listed):
	"""Worker counts a benchmark of @kind sweeps on @smp CPUs."""
	if listed:
		return [c for c in listed if c <= smp]
	if kind == 'list':
		return list(range(1, smp + 1))
	out, n = [], 1
	while n < smp:
		out.append(n)
		n *= 2
	return out + [smp]


def bench_plan(prog, argv, smp):
	"""(modes, counts, runs, window seconds per run, seconds) of benchmark @prog."""
	b = BENCH[prog]
	o = parse_args(prog, argv)
	cs = counts(b['kind'], smp, o['c'])
	window = (o['w'] + o['m']) / 1000.0
	setup = b.get('setup_s', SETUP_S)
	if b['kind'] == 'ast':
		quick = o['q'] or o['m'] <= 250
		threads = o['t'] or ([10, 100] if quick else [10, 100, 1000])
		sizes = o['b'] or ([1, 16] if o['m'] <= 250 else [1, 10, 100])
		impls = o['i'] or list(b['impls'])
		modes = len(impls) * len(threads) * len(sizes)
		per_count = sum(len(sizes) * o['r'] *
				(window + b['run_s'] + b['impls'][i] * t * t)
				for t in threads for i in impls)
		return modes, cs, o['r'], window, setup + per_count * len(cs)
	if b['kind'] == 'T':
		modes = 2 * len(o['T'] or range(b['T']))
	else:
		modes = b['modes']
	run = b.get('run_s', RUN_S)
	worker = b.get('worker_s', WORKER_S)
	secs = setup + sum(modes * o['r'] * (window + run + worker * c) for c in cs)
	return modes, cs, o['r'], window, secs


def schedule(mode, smp, cpus=None, tests=None, upstream=None, ast_bench=None,
	     upstream_off=False):
	"""The boot's work in run order: [(item, seconds)], release kernel, TCG.

	Items are 'boot', each program of the series' collection, each
	upstream collection ('upstream:<target>'), and 'end'.  @tests: the
	series' programs to run (None: all; () none), @upstream likewise the
	upstream collections; @ast_bench as for bench_env().  @upstream_off
	(scalable_upstream_off=1): the upstream collections run once more
	before their normal pass, with the series' switches off, each an
	'upstream-off:<target>' item that costs what its normal pass does.
	"""
	args, _ = bench_env(mode, cpus, ast_bench)
	items = [('boot', COSTS['boot'])]
	for p in programs():
		if tests is None or p in tests:
			if p in BENCH:
				items.append((p, bench_plan(p, args.get(p, []), smp)[4]))
			else:
				items.append((p, COSTS[p]))
	cols = [t for t in sorted(common.SELFTEST_TARGETS)
		if t != 'scalable' and (upstream is None or t in upstream)]
	for prefix in ('upstream-off:', 'upstream:') if upstream_off else ('upstream:',):
		items += [(prefix + t, COSTS['upstream:' + t]) for t in cols]
	items.append(('end', COSTS['end']))
	return items


def boot_schedule(mode, smp, cpus, append):
	"""schedule() of a boot with kernel command line @append, or None.

	None where the boot runs something else than the kselftests of /init
	(a traced boot, make selftests-tar's native run, a soak, a static-key
	flip test, an injected fault): the model does not cover those.
	"""
	words = dict(w.split('=', 1) for w in append.split() if '=' in w)
	if any(k in words for k in ('scalable_trace', 'scalable_native', 'scalable_soak',
				    'scalable_keyflip')) or \
	   words.get('scalable_inject', 'none') != 'none':
		return None
	tests = upstream = None
	if words.get('scalable_own') == '0':
		tests = ()
	elif 'scalable_tests' in words:
		tests = tuple(words['scalable_tests'].split(','))
	if 'scalable_upstream' in words:
		v = words['scalable_upstream']
		upstream = () if v == 'none' else tuple(v.split(','))
	return schedule(mode, smp, cpus, tests, upstream, words.get('scalable_ast_bench'),
			words.get('scalable_upstream_off') == '1')


def total(items):
	return sum(s for _, s in items)


def timeout(mode, smp, flavour='release', cpus=None, upstream_off=False):
	"""A boot's timeout in seconds: its schedule times MARGIN."""
	return int(math.ceil(MARGIN * total(schedule(mode, smp, cpus,
						     upstream_off=upstream_off)) *
			     FLAVOUR_FACTOR.get(flavour, 1)))


def unmodelled():
	"""Programs of the collection that the model has no cost for."""
	return [p for p in programs() if p not in BENCH and p not in COSTS]


PLAN_RE = re.compile(r'^#\s*(?:#\s*)?(\w+): (\d+) modes x (\d+) counts, about ([\d.]+) s')


def plan_problems(tap_text, mode, smp, cpus=None, ast_bench=None):
	"""Benchmarks whose printed plan is not the model's (modes, counts)."""
	args, _ = bench_env(mode, cpus, ast_bench)
	problems = []
	for line in tap_text.splitlines():
		m = PLAN_RE.match(line.strip())
		if not m:
			continue
		name, modes, ncounts = m.group(1), int(m.group(2)), int(m.group(3))
		prog = 'oplog_list_bench' if name == 'oplog_list' else name
		if prog not in BENCH:
			problems.append('%s printed a plan but has no entry in the schedule '
					'(scalable_schedule.BENCH)' % name)
			continue
		want_modes, cs, _, _, _ = bench_plan(prog, args.get(prog, []), smp)
		if (modes, ncounts) != (want_modes, len(cs)):
			problems.append('%s runs %d modes x %d counts, the schedule expects %d x %d '
					'(scalable_schedule.BENCH)' % (name, modes, ncounts,
									want_modes, len(cs)))
	return problems


def fmt(secs):
	secs = int(round(secs))
	if secs < 60:
		return '%d s' % secs
	if secs < 3600:
		return '%d min %02d s' % (secs // 60, secs % 60)
	return '%d h %02d min' % (secs // 3600, secs % 3600 // 60)


class Progress:
	"""What the host prints as the guest's TAP stream arrives.

	feed() takes each complete line of the stream with the host's time;
	it returns the lines to print (the start of each program with its share
	of the schedule and the time left, its end with the time it took).
	timeline holds [item, start, end] in seconds from the boot's start,
	for the report (report_rows()).
	"""

	START_RE = re.compile(r'^# selftests: (\S+): (\S+)$')
	END_RE = re.compile(r'^(?:not )?ok \d+ selftests: (\S+): (\S+)')
	# kselftests.sh's upstream_pass_off() (scalable_upstream_off=1)
	OFF_RE = re.compile(r'^# SCALABLE: upstream pass off (begin|end)$')

	def __init__(self, items, t0):
		self.items = dict(items)
		self.total = total(items) or 1
		self.t0 = t0
		self.done = 0.0
		self.current = None
		self.timeline = []
		self.seen_upstream = set()
		self.off = False

	def key(self, col, prog):
		if col == 'scalable':
			return prog
		return ('upstream-off:' if self.off else 'upstream:') + col

	def feed(self, line, now):
		out = []
		line = line.rstrip()
		m = self.OFF_RE.match(line)
		if m:
			self.off = m.group(1) == 'begin'
			return out
		m = self.START_RE.match(line)
		if m:
			key = self.key(*m.groups())
			if key.startswith('upstream'):
				if key in self.seen_upstream:
					return out
				self.seen_upstream.add(key)
			elif self.current and self.current[0] == key:
				return out
			self.finish(now)
			if not self.timeline:
				self.done += self.items.get('boot', 0)
				self.timeline.append(['boot', 0.0, now - self.t0])
			self.current = (key, now)
			sched = self.items.get(key)
			left = self.total - self.done
			out.append('%s %s started at %s: scheduled %s (%d%% of the run), '
				   'about %s left' %
				   ('>>', key, fmt(now - self.t0),
				    fmt(sched) if sched is not None else 'nothing',
				    100 * (sched or 0) / self.total, fmt(left)))
			return out
		m = self.END_RE.match(line)
		if m and self.current and self.current[0] == self.key(*m.groups()) and \
		   not self.current[0].startswith('upstream'):
			key, start = self.current
			self.finish(now)
			out.append('%s %s done in %s (scheduled %s)' %
				   ('<<', key, fmt(now - start), fmt(self.items.get(key, 0))))
		return out

	def finish(self, now):
		if not self.current:
			return
		key, start = self.current
		self.timeline.append([key, start - self.t0, now - self.t0])
		self.done += self.items.get(key, 0)
		self.current = None

	def close(self, now):
		self.finish(now)
		if self.timeline:
			self.timeline.append(['end', self.timeline[-1][2], now - self.t0])


def report_rows(items, timeline):
	"""[(item, scheduled s, measured s or None)] for the report."""
	measured = {}
	for key, start, end in timeline:
		measured[key] = measured.get(key, 0) + (end - start)
	return [(k, s, measured.get(k)) for k, s in items]
