#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Unit tests of scalable_parser: the splat check, the kselftest TAP parser,
# KUnit's counts, the skips against EXPECTED_SKIPS, the dentry OpLog
# counters, the upstream kselftests with the switches off and on (and the
# guest's part of it, kselftests.sh, run with a stand-in runner), the
# RESULT-line parser, the benchmarks' numbers and the judgement of a boot.

import contextlib
import io
import os
import subprocess
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

RMAP_CONSOLE = """\
SCALABLE: rmap_oplog at start: enabled=1 logged=0 absorbed_local=0 absorbed_global=0 applied=0
SCALABLE: kselftest scalable rc=0
SCALABLE: upstream selftests: mm tmpfs
SCALABLE: rmap_oplog before: enabled=1 logged=800 absorbed_local=300 absorbed_global=400 applied=90
SCALABLE: kselftest upstream rc=0
SCALABLE: rmap_oplog after: enabled=1 logged=950 absorbed_local=420 absorbed_global=410 applied=95
"""


# The upstream pass of make test's release boot, cut from a real TAP log
# (out/logs/release-smp2.tap.log; each collection's block kept whole where
# short, its programs and subtests thinned, the plans made to fit): the
# normal pass; REAL_OFF_PASS() makes the off pass of scalable_upstream_off=1
# from it.  openat2's subtest 69 names a /proc/<pid> path, which differs
# between any two runs.
REAL_UPSTREAM = """\
TAP version 13
1..1
# overriding timeout to 900
# selftests: fchmodat2: fchmodat2_test
# TAP version 13
# 1..2
# ok 1 fchmodat2(regfile)
# ok 2 # SKIP fchmodat2(symlink)
# # Totals: pass:1 fail:0 xfail:0 xpass:0 skip:1 error:0
ok 1 selftests: fchmodat2: fchmodat2_test
TAP version 13
1..1
# overriding timeout to 900
# selftests: mm: mlock2-tests
# TAP version 13
# 1..3
# ok 1 test_mlock_lock: Locked
# ok 2 test_mlock_lock: Locked
# ok 3 test_mlock_onfault: VMA marked for lock on fault
# # Totals: pass:3 fail:0 xfail:0 xpass:0 skip:0 error:0
ok 1 selftests: mm: mlock2-tests
TAP version 13
1..1
# overriding timeout to 900
# selftests: openat2: resolve_test
# TAP version 13
# 1..3
# ok 1 [no_magiclinks] ordinary relative symlink gives path 'etc/passwd'
# ok 2 [no_magiclinks] normal path to magic-link fails with -40 (Too many levels of symbolic links)
# ok 3 [no_magiclinks] normal path to magic-link with O_NOFOLLOW gives path '/proc/3385/exe'
# # Totals: pass:3 fail:0 xfail:0 xpass:0 skip:0 error:0
ok 1 selftests: openat2: resolve_test
TAP version 13
1..2
# overriding timeout to 900
# selftests: proc: fd-001-lookup
ok 1 selftests: proc: fd-001-lookup
# overriding timeout to 900
# selftests: proc: proc-fsconfig-hidepid
ok 2 selftests: proc: proc-fsconfig-hidepid
TAP version 13
1..1
# overriding timeout to 900
# selftests: tmpfs: bug-link-o-tmpfile
ok 1 selftests: tmpfs: bug-link-o-tmpfile
"""

# What the guest prints around the normal upstream pass (kselftests.sh).
REAL_BEFORE = """\
# SCALABLE: kselftest scalable rc=0
# SCALABLE: upstream selftests: fchmodat2 mm openat2 proc tmpfs
"""
REAL_NORMAL = """\
# SCALABLE: dcache_oplog before: enabled=1 hits=3265952 misses=16940 evictions=3121 syncs=6301 \
flushes=6151 logs=4
# SCALABLE: rmap_oplog before: enabled=1 logged=150901 absorbed_local=137583 \
absorbed_global=4762 applied=8553
""" + REAL_UPSTREAM + """\
# SCALABLE: kselftest upstream rc=0
# SCALABLE: dcache_oplog after: enabled=1 hits=10942649 misses=57325 evictions=3125 \
syncs=32271 flushes=32120 logs=144
"""


def REAL_OFF_PASS(upstream=None):
	"""The off pass's lines of the TAP, of @upstream (REAL_UPSTREAM, with
	another pid in openat2's magic-link path)."""
	if upstream is None:
		upstream = REAL_UPSTREAM.replace('/proc/3385/exe', '/proc/2339/exe')
	return ('# SCALABLE: upstream pass off switches: dcache_oplog=0 rmap_oplog=0 '
		'inotify_oplog=0 inode_oplog=0\n' + P.UPSTREAM_OFF_BEGIN + '\n' + upstream +
		'# SCALABLE: kselftest upstream off rc=0\n' + P.UPSTREAM_OFF_END + '\n'
		'# SCALABLE: upstream pass on switches: dcache_oplog=1 rmap_oplog=1 '
		'inotify_oplog=1 inode_oplog=1\n')


def console_of(tap):
	"""The console's SCALABLE lines of a TAP's "# SCALABLE: " lines."""
	return ''.join(line[2:] + '\n' for line in tap.splitlines() if line.startswith('# SCALABLE: '))


class UpstreamOffTest(unittest.TestCase):
	"""scalable_upstream_off=1: the upstream collections with the switches
	off, then on; the results must be identical."""

	APPEND = 'scalable_mode=test scalable_inject=none scalable_kmemleak=0 scalable_upstream_off=1'

	def check(self, tap, append=APPEND, console=None):
		return P.check_upstream_off(console_of(tap) if console is None else console, tap,
					    append)

	def test_identical(self):
		tap = REAL_BEFORE + REAL_OFF_PASS() + REAL_NORMAL
		problems, summary = self.check(tap)
		self.assertEqual(problems, [])
		self.assertEqual(summary, {'tests': 6, 'subtests': 8, 'identical': True})

	def test_split(self):
		"""The normal pass parses as if the off pass had not run."""
		tap = REAL_BEFORE + REAL_OFF_PASS() + REAL_NORMAL
		normal, off, ended = P.split_upstream_off(tap)
		self.assertEqual(normal, REAL_BEFORE + REAL_OFF_PASS().split(P.UPSTREAM_OFF_BEGIN)[0] +
				 REAL_OFF_PASS().split(P.UPSTREAM_OFF_END + '\n')[1] + REAL_NORMAL)
		self.assertTrue(ended)
		self.assertIn('/proc/2339/exe', off)
		self.assertNotIn('/proc/2339/exe', normal)
		self.assertEqual(P.parse_kselftest(normal),
				 P.parse_kselftest(REAL_BEFORE + REAL_NORMAL))
		self.assertEqual(P.split_upstream_off(REAL_NORMAL), (REAL_NORMAL, None, False))
		# the serial port's CR LF, as a file read in binary would keep them
		crlf = tap.replace('\n', '\r\n')
		self.assertTrue(P.split_upstream_off(crlf)[2])

	def test_a_differing_subtest_fails(self):
		off = REAL_UPSTREAM.replace('# ok 2 test_mlock_lock: Locked',
					    '# not ok 2 test_mlock_lock: Locked')
		problems, summary = self.check(REAL_BEFORE + REAL_OFF_PASS(off) + REAL_NORMAL)
		self.assertEqual(problems, ['upstream kselftests differ with the switches off and on: '
					    'mm:mlock2-tests subtest 2 (test_mlock_lock: Locked): '
					    'off: not ok, on: ok'])
		self.assertFalse(summary['identical'])
		# a skip is not a pass either
		off = REAL_UPSTREAM.replace('# ok 1 fchmodat2(regfile)',
					    '# ok 1 # SKIP fchmodat2(regfile)')
		problems, _ = self.check(REAL_BEFORE + REAL_OFF_PASS(off) + REAL_NORMAL)
		self.assertEqual(problems, ['upstream kselftests differ with the switches off and on: '
					    'fchmodat2:fchmodat2_test subtest 1 (fchmodat2(regfile)): '
					    'off: skip, on: ok'])

	def test_a_differing_or_missing_program_fails(self):
		off = REAL_UPSTREAM.replace('ok 1 selftests: tmpfs: bug-link-o-tmpfile',
					    'not ok 1 selftests: tmpfs: bug-link-o-tmpfile # exit=1')
		problems, _ = self.check(REAL_BEFORE + REAL_OFF_PASS(off) + REAL_NORMAL)
		self.assertEqual(problems, ['upstream kselftests differ with the switches off and on: '
					    'tmpfs:bug-link-o-tmpfile: off: not ok, on: ok'])
		off = REAL_UPSTREAM.replace('1..2\n', '1..1\n').replace(
			'# overriding timeout to 900\n# selftests: proc: proc-fsconfig-hidepid\n'
			'ok 2 selftests: proc: proc-fsconfig-hidepid\n', '')
		problems, _ = self.check(REAL_BEFORE + REAL_OFF_PASS(off) + REAL_NORMAL)
		self.assertEqual(problems, ['upstream kselftests differ with the switches off and on: '
					    'proc:proc-fsconfig-hidepid: off: missing, on: ok'])
		off = REAL_UPSTREAM.replace("# ok 3 [no_magiclinks] normal path to magic-link with "
					    "O_NOFOLLOW gives path '/proc/3385/exe'\n", '')
		problems, _ = self.check(REAL_BEFORE + REAL_OFF_PASS(off) + REAL_NORMAL)
		self.assertEqual(len(problems), 1, problems)
		self.assertIn('openat2:resolve_test subtest 3 ([no_magiclinks] normal path to '
			      'magic-link with O_NOFOLLOW', problems[0])
		self.assertTrue(problems[0].endswith('off: missing, on: ok'))

	def test_missing_pass_fails(self):
		"""Asked for (scalable_upstream_off=1) and absent, or cut short: a problem."""
		problems, summary = self.check(REAL_BEFORE + REAL_NORMAL)
		self.assertEqual(problems, ['upstream kselftests with the switches off: no "%s" line '
					    'in the TAP: the pass did not run (scalable_upstream_off=1)' %
					    P.UPSTREAM_OFF_BEGIN])
		self.assertIsNone(summary)
		cut = REAL_OFF_PASS().split('TAP version 13\n1..1\n# overriding timeout to 900\n'
					    '# selftests: mm')[0]
		problems, _ = self.check(REAL_BEFORE + cut)
		self.assertIn('upstream kselftests with the switches off: no "%s" line: the pass did '
			      'not finish' % P.UPSTREAM_OFF_END, problems)
		# not asked for: neither the pass nor a summary
		self.assertEqual(self.check(REAL_BEFORE + REAL_NORMAL, append='scalable_mode=test'),
				 ([], None))
		self.assertEqual(self.check(REAL_BEFORE, append=self.APPEND +
					    ' scalable_upstream=none'), ([], None))

	def test_switches(self):
		"""Off in the pass, back on after it (off where the command line keeps
		one off); a failed write is a problem of any boot."""
		tap = REAL_BEFORE + REAL_OFF_PASS() + REAL_NORMAL
		con = console_of(tap).replace('on switches: dcache_oplog=1', 'on switches: dcache_oplog=0')
		problems, _ = self.check(tap, console=con)
		self.assertEqual(problems, ["upstream kselftests with the switches off: dcache_oplog "
					    "read '0' after the off pass, expected 1"])
		problems, _ = self.check(tap, console=con, append=self.APPEND + ' dcache_oplog=off')
		self.assertEqual(problems, [])
		con = console_of(tap).replace('inotify_oplog=0', 'inotify_oplog=1')
		problems, _ = self.check(tap, console=con)
		self.assertEqual(problems, ["upstream kselftests with the switches off: inotify_oplog "
					    "read '1' in the off pass, expected 0"])
		fail = 'SCALABLE: switch write failed: rmap_oplog: wrote 0 to /sys/kernel/debug/' \
		       'rmap_oplog/enabled, it reads \'1\'\n'
		self.assertEqual(P.check_switch_writes(fail + 'SCALABLE: done\n'),
				 ["switch write failed: rmap_oplog: wrote 0 to "
				  "/sys/kernel/debug/rmap_oplog/enabled, it reads '1'"])
		self.assertEqual(P.check_switch_writes(console_of(tap)), [])

	def guest(self, d, env, fake_cat=''):
		"""kselftests.sh's scalable_kselftests in @d with a stand-in runner
		and debugfs; returns (console, $out, the switches after)."""
		for sw in P.SWITCHES:
			os.makedirs(os.path.join(d, 'dbg', sw), exist_ok=True)
			with open(os.path.join(d, 'dbg', sw, 'enabled'), 'w') as f:
				f.write('1\n')
		with open(os.path.join(d, 'run_kselftest.sh'), 'w') as f:
			f.write('#!/bin/sh\necho "TAP version 13"\necho "# runner $*: '
				'$(cat "$debugfs/dcache_oplog/enabled")'
				'$(cat "$debugfs/inotify_oplog/enabled")"\n')
		os.chmod(os.path.join(d, 'run_kselftest.sh'), 0o755)
		with open(os.path.join(d, 'kselftest-list.txt'), 'w') as f:
			f.write('scalable:torture\nproc:self\nproc:thread-self\ntmpfs:bug\n')
		script = (fake_cat + 'say() { echo "SCALABLE: $*"; echo "# SCALABLE: $*" >> "$out"; }\n'
			  'out=%s/out\n: > "$out"\n. %s\nscalable_bench_args\nscalable_kselftests\n' %
			  (d, os.path.join(common.HARNESS, 'kselftests.sh')))
		r = subprocess.run(['sh', '-c', script], cwd=d, capture_output=True, text=True,
				   env=dict(env, PATH=os.environ.get('PATH', '/usr/bin:/bin'),
					    debugfs=os.path.join(d, 'dbg'), scalable_own='0'))
		after = {}
		for sw in P.SWITCHES:
			with open(os.path.join(d, 'dbg', sw, 'enabled')) as f:
				after[sw] = f.read().strip()
		with open(os.path.join(d, 'out')) as f:
			return r.stdout, f.read(), after

	def test_guest_runs_it(self):
		"""kselftests.sh: the off pass before the normal one, with the same
		exclusions, every switch 0 in it and 1 again after; without
		scalable_upstream_off=1, none."""
		env = {'scalable_upstream_off': '1', 'scalable_exclude': 'proc:thread-self'}
		with tempfile.TemporaryDirectory() as d:
			con, out, after = self.guest(d, env)
		self.assertEqual(after, dict.fromkeys(P.SWITCHES, '1'))
		normal, off, ended = P.split_upstream_off(out)
		self.assertTrue(ended)
		self.assertEqual(off, 'TAP version 13\n# runner -o 900 -t proc:self -t tmpfs:bug: 00\n'
				 '# SCALABLE: kselftest upstream off rc=0\n')
		self.assertIn('TAP version 13\n# runner -o 900 -t proc:self -t tmpfs:bug: 11\n', normal)
		self.assertLess(out.index(P.UPSTREAM_OFF_END), out.index('dcache_oplog before'))
		self.assertEqual(P.switch_words(con, 'off'), dict.fromkeys(P.SWITCHES, '0'))
		self.assertEqual(P.switch_words(con, 'on'), dict.fromkeys(P.SWITCHES, '1'))
		self.assertEqual(P.check_switch_writes(con), [])
		self.assertEqual(con.count('SCALABLE: excluded on the command line: proc:thread-self'),
				 1)
		with tempfile.TemporaryDirectory() as d:
			con, out, _ = self.guest(d, {})
		self.assertEqual(P.split_upstream_off(out), (out, None, False))
		self.assertEqual(out.count('# runner'), 1)

	def test_guest_failed_write(self):
		"""A switch that does not turn off: a failure line, no off pass, the
		others written back."""
		stuck = ('cat() { case "$1" in *inotify_oplog/enabled) echo 1 ;; '
			 '*) command cat "$@" ;; esac; }\n')
		with tempfile.TemporaryDirectory() as d:
			con, out, after = self.guest(d, {'scalable_upstream_off': '1'}, stuck)
		self.assertEqual(after, dict.fromkeys(P.SWITCHES, '1'))
		self.assertEqual(len(P.check_switch_writes(con)), 1)
		self.assertIn('inotify_oplog: wrote 0 to', P.check_switch_writes(con)[0])
		self.assertIsNone(P.split_upstream_off(out)[1])
		self.assertIn('SCALABLE: upstream pass off not run: a switch did not turn off', con)
		self.assertEqual(out.count('# runner'), 1)

	def test_analyze(self):
		"""analyze(): the normal pass's checks as without the off pass; the
		comparison's problems and summary on top."""
		con = CLEAN_BOOT.replace('SCALABLE: done\n', OPLOG_CONSOLE + 'SCALABLE: done\n')
		b = AnalyzeTest.boot(None, append=self.APPEND, console_text=con,
				     tap_text=KSELFTEST + UPSTREAM)
		base_ok, base, base_summary = AnalyzeTest.analyze(None, dict(b, append=''),
								 ('scalable', 'openat2', 'tmpfs'))
		self.assertFalse(base_ok)
		off = UPSTREAM.split('TAP version 13', 1)[1]
		tap = KSELFTEST + REAL_OFF_PASS('TAP version 13' + off) + UPSTREAM
		_, problems, summary = AnalyzeTest.analyze(
			None, dict(b, tap_text=tap, console_text=con.replace(
				'SCALABLE: dcache_oplog before', console_of(REAL_OFF_PASS('')) +
				'SCALABLE: dcache_oplog before')), ('scalable', 'openat2', 'tmpfs'))
		# UPSTREAM's tmpfs block is short of its plan, in both passes
		self.assertEqual(problems, ['upstream kselftests with the switches off: plan 1..2 '
					    'but 1 results'] + base)
		self.assertEqual(summary['upstream_off'], {'tests': 3, 'subtests': 4,
							   'identical': True})
		self.assertEqual(summary['kselftest'], base_summary['kselftest'])
		self.assertIsNone(base_summary['upstream_off'])
		# the off pass asked for and missing
		_, problems, _ = AnalyzeTest.analyze(None, b, ('scalable', 'openat2', 'tmpfs'))
		self.assertEqual(problems, [
			'upstream kselftests with the switches off: no "%s" line in the TAP: the pass '
			'did not run (scalable_upstream_off=1)' % P.UPSTREAM_OFF_BEGIN] + base)
		# a failed switch write fails even a boot that did not ask for the pass
		_, problems, _ = AnalyzeTest.analyze(None, dict(b, append='', console_text=con.replace(
			'SCALABLE: done', 'SCALABLE: switch write failed: x\nSCALABLE: done')),
			('scalable', 'openat2', 'tmpfs'))
		self.assertEqual(problems, ['switch write failed: x'] + base)


class KeyflipTest(unittest.TestCase):
	"""scalable.py tcg-check's reading of a scalable_keyflip boot."""

	def test_clean(self):
		self.assertEqual(P.parse_keyflip(CLEAN_BOOT + 'SCALABLE: keyflip done rounds=200\n'),
				 (200, []))

	def test_int3(self):
		# as stock 6.12 printed it under multi-threaded TCG (tcg_thread())
		text = (CLEAN_BOOT + '[    1.583154] Oops: int3: 0000 [#1] SMP\n'
			'[    1.583160] CPU: 0 UID: 0 PID: 1 Comm: init Not tainted 6.12.117 #1\n'
			'[    1.583165] RIP: 0010:pick_eevdf+0x3e/0x180\n')
		rounds, int3 = P.parse_keyflip(text)
		self.assertIsNone(rounds)
		self.assertEqual(int3, ['Oops: int3: 0000 [#1] SMP at pick_eevdf+0x3e/0x180'])
		self.assertIn('Oops', {k for k, _ in P.find_splats(text)})


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

	def test_skip_without_name(self):
		"""ksft_test_result_skip() prints "ok N # SKIP MSG": a skip, MSG its description."""
		k = P.parse_kselftest('TAP version 13\n1..1\n# selftests: fchmodat2: fchmodat2_test\n'
				      '# 1..2\n# ok 1 fchmodat2(regfile)\n'
				      '# ok 2 # SKIP fchmodat2(symlink)\n'
				      'ok 1 selftests: fchmodat2: fchmodat2_test\n')
		self.assertEqual([(t['name'], t['skip'], t['reason']) for t in k['sub']],
				 [('fchmodat2(regfile)', False, ''), ('', True, 'fchmodat2(symlink)')])
		self.assertEqual({(t['target'], t['program']) for t in k['sub'] + k['top']},
				 {('fchmodat2', 'fchmodat2_test')})
		c = P.kselftest_counts(k, 'fchmodat2')
		self.assertEqual((c['subtests_passed'], c['subtests_skipped']), (1, 1))

	def test_program_skip_reason(self):
		k = P.parse_kselftest('TAP version 13\n1..2\n# selftests: scalable: qdo_latency\n'
				      '# TAP version 13\n# 1..0 # SKIP /sys/x missing (CONFIG_TEST_QDO)\n'
				      'ok 1 selftests: scalable: qdo_latency # SKIP\n'
				      '# selftests: scalable: inotify_bench\n'
				      'ok 2 selftests: scalable: inotify_bench # SKIP\n')
		self.assertEqual([(t['program'], t['skip'], t['reason']) for t in k['top']],
				 [('qdo_latency', True, '/sys/x missing (CONFIG_TEST_QDO)'),
				  ('inotify_bench', True, '')])
		self.assertEqual(k['sub'], [])

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

	def analyze(self, b, targets, benchmarks=(), kunit_skips=(), programs=(), suites=None,
		    cases=None, **kw):
		"""P.analyze() of @b with parse_kunit() stubbed: @cases its
		kunit_cases(); @suites the series' KUnit suites, @programs the
		series' kselftest programs (none unless given)."""
		kunit_skips = list(kunit_skips)
		with tempfile.TemporaryDirectory() as d, \
		     mock.patch.object(common, 'SELFTEST_TARGETS', targets), \
		     mock.patch.object(common, 'BENCHMARKS', benchmarks), \
		     mock.patch.object(P.schedule, 'programs', return_value=list(programs)), \
		     mock.patch.object(P, 'series_kunit_suites', return_value=suites or {}), \
		     mock.patch.object(P, 'parse_kunit', return_value={
			     'rc': 0, 'passed': 1, 'failed': 0, 'skipped': len(kunit_skips),
			     'crashed': 0, 'suites': [], 'skips': kunit_skips, 'cases': cases or {},
			     'output': ''}), \
		     contextlib.redirect_stdout(io.StringIO()):
			return P.analyze(d, b, d, **kw)

	def test_missing_program_fails(self):
		"""A program of the boot's list that printed no result (not built,
		not installed) fails the boot; so does one of scalable_tests=."""
		tap = ('TAP version 13\n1..2\n# selftests: scalable: ast_mutex_test\n'
		       'ok 1 selftests: scalable: ast_mutex_test\n# selftests: scalable: torture\n'
		       'ok 2 selftests: scalable: torture\n')
		b = self.boot(append='scalable_tests=ast_mutex_test,ast_fuzz,torture '
			      'scalable_upstream=none', console_text=CLEAN_BOOT, tap_text=tap)
		ok, problems, _ = self.analyze(b, ('scalable', 'mm'))
		self.assertFalse(ok)
		self.assertEqual(problems, ['kselftest: scalable:ast_fuzz printed no result (not built, '
					    'not installed, or not run)'])
		full = tap.replace('1..2', '1..3') + ('# selftests: scalable: ast_fuzz\n'
						      'ok 3 selftests: scalable: ast_fuzz\n')
		ok, problems, _ = self.analyze(dict(b, tap_text=full), ('scalable', 'mm'))
		self.assertEqual(problems, [])
		self.assertTrue(ok)
		# without scalable_tests=: every program of the collection
		ok, problems, _ = self.analyze(self.boot(append='scalable_upstream=none',
							 console_text=CLEAN_BOOT, tap_text=full),
					       ('scalable',), programs=('ast_fuzz', 'ast_mutex_test',
									'qdo_hotplug', 'torture'))
		self.assertEqual(problems, ['kselftest: scalable:qdo_hotplug printed no result (not '
					    'built, not installed, or not run)'])

	def test_missing_kunit_suite_or_case_fails(self):
		suites = {'qdo': ('kernel/qdo/qdo_test.c', ['qdo_test_a', 'qdo_test_b']),
			  'oplog': ('lib/oplog_test.c', ['oplog_test_x'])}
		b = self.boot(append='scalable_tests=torture scalable_upstream=none',
			      console_text=CLEAN_BOOT)
		all_ran = {'qdo': {'qdo_test_a': 'PASS', 'qdo_test_b': 'PASS'},
			   'oplog': {'oplog_test_x': 'PASS'}}
		_, problems, _ = self.analyze(b, ('scalable',), suites=suites, cases=all_ran)
		self.assertFalse([p for p in problems if p.startswith('KUnit')])
		_, problems, _ = self.analyze(b, ('scalable',), suites=suites,
					      cases={'qdo': {'qdo_test_a': 'PASS'}})
		self.assertIn('KUnit: case qdo.qdo_test_b (kernel/qdo/qdo_test.c) reported no result',
			      problems)
		self.assertIn('KUnit: series suite oplog (lib/oplog_test.c) is not in the boot\'s '
			      'KTAP: not built, or it did not run', problems)
		# a boot with KUnit off (traced boots) is not asked for suites
		_, problems, _ = self.analyze(dict(b, append=b['append'] + ' kunit.enable=0'),
					      ('scalable',), suites=suites)
		self.assertFalse([p for p in problems if p.startswith('KUnit: series')])

	def test_kmemleak_marker_required(self):
		"""scalable_kmemleak=1 (the debug flavour): no marker, no pass."""
		b = self.boot(append='scalable_kmemleak=1 kmemleak=on scalable_tests=torture '
			      'scalable_upstream=none', console_text=CLEAN_BOOT)
		_, problems, _ = self.analyze(b, ('scalable',))
		self.assertIn('kmemleak: no "SCALABLE: kmemleak scan finished" line: the scan for '
			      'leaks did not run (scalable_kmemleak=1)', problems)
		con = CLEAN_BOOT.replace('SCALABLE: done', 'SCALABLE: kmemleak scan finished\n'
					 'SCALABLE: done')
		_, problems, _ = self.analyze(dict(b, console_text=con), ('scalable',))
		self.assertFalse([p for p in problems if 'kmemleak' in p])
		# a release boot (scalable_kmemleak=0) needs none
		_, problems, _ = self.analyze(dict(b, append='scalable_kmemleak=0 scalable_tests=torture '
						   'scalable_upstream=none'), ('scalable',))
		self.assertFalse([p for p in problems if 'kmemleak' in p])

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

	def test_boot_exclusions(self):
		"""scalable_exclude: not run, counted as skipped, and announced by the guest."""
		self.assertEqual(P.boot_exclusions(''), {})
		self.assertEqual(list(P.boot_exclusions('x=1 scalable_exclude=proc:read,tmpfs:a y')),
				 ['proc:read', 'tmpfs:a'])
		con = CLEAN_BOOT + OPLOG_CONSOLE.replace(
			'SCALABLE: dcache_oplog before', 'SCALABLE: excluded on the command line: '
			'openat2:rename_attack_test\nSCALABLE: dcache_oplog before')
		b = self.boot(append='scalable_exclude=openat2:rename_attack_test', console_text=con)
		_, problems, summary = self.analyze(b, ('scalable', 'openat2'))
		self.assertIn('openat2:rename_attack_test', summary['not_run'])
		self.assertEqual(summary['targets']['openat2']['skipped'], 1)
		self.assertFalse([p for p in problems if 'scalable_exclude' in p])
		# a name the guest did not exclude (a typo, or not of this boot) is a problem
		b = self.boot(append='scalable_exclude=openat2:no_such_test', console_text=con)
		_, problems, _ = self.analyze(b, ('scalable', 'openat2'))
		self.assertIn('scalable_exclude names openat2:no_such_test, which the guest did not '
			      'exclude (not an upstream test of this boot?)', problems)

	def test_timeout_and_missing_benchmark(self):
		ok, problems, _ = self.analyze(self.boot(ended='timeout'), ('scalable',),
					       ('stat_bench', 'fork_bench'))
		self.assertFalse(ok)
		self.assertIn('the guest did not finish within the timeout and was killed', problems)
		self.assertIn('benchmark fork_bench printed no RESULT line', problems)
		self.assertNotIn('benchmark stat_bench printed no RESULT line', problems)

	def test_only_some_tests_need_no_sweep(self):
		"""A boot with scalable_tests= (diagnostic, make soak) runs no benchmark sweep."""
		ok, problems, _ = self.analyze(self.boot(append='scalable_tests=torture'),
					       ('scalable',), ('stat_bench', 'fork_bench'))
		self.assertFalse([p for p in problems if 'printed no RESULT line' in p])

	def test_no_upstream_no_switch_check(self):
		"""scalable_upstream=none (make soak): no upstream run, no switch check."""
		_, problems, _ = self.analyze(self.boot(append='scalable_tests=torture '
						     'scalable_upstream=none',
						     console_text=CLEAN_BOOT),
					      ('scalable', 'openat2'))
		self.assertFalse([p for p in problems if p.startswith('dcache_oplog')])
		self.assertFalse([p for p in problems if 'no result from target openat2' in p])
		_, problems, _ = self.analyze(self.boot(append='scalable_tests=torture',
						     console_text=CLEAN_BOOT),
					      ('scalable', 'openat2'))
		self.assertTrue([p for p in problems if p.startswith('dcache_oplog')])

	def test_no_kernel_tree(self):
		"""src None (make selftests-tar's tarball): kunit.py from the copy
		under TOP, and a KCSAN report, which cannot be located, fails."""
		stub = ('import json, sys\n'
			'out = [a for a in sys.argv if a.startswith("--json=")][0][7:]\n'
			'json.dump({"test_cases": [{"name": __file__, "status": "PASS"}]}, open(out, "w"))\n')
		with tempfile.TemporaryDirectory() as top:
			os.makedirs(os.path.join(top, 'tools', 'testing', 'kunit'))
			kunit_py = os.path.join(top, 'tools', 'testing', 'kunit', 'kunit.py')
			with open(kunit_py, 'w') as f:
				f.write(stub)
			with mock.patch.object(common, 'TOP', top):
				k = P.parse_kunit(None, self.boot(name='n'), top)
				with open(os.path.join(top, 'n.kunit.json')) as f:
					ran = f.read()
				race = ('BUG: KCSAN: data-race in a / b\n\nread to 0x1 of 4 bytes by task 1 '
					'on cpu 0:\n a+0x1/0x2\n\n====\n')
				with mock.patch.object(common, 'SELFTEST_TARGETS', ('scalable',)), \
				     mock.patch.object(common, 'BENCHMARKS', ()), \
				     contextlib.redirect_stdout(io.StringIO()):
					ok, problems, _ = P.analyze(None, self.boot(
						console_text=CLEAN_BOOT + race), top)
		self.assertEqual((k['rc'], k['passed']), (0, 1))
		self.assertIn(kunit_py, ran)
		self.assertIn('KCSAN report in the series\' code: data-race in a / b '
			      '(at a+0x1: not located)', problems)

	def test_strip_cpu_announcements(self):
		text = ('[    1.262074]     ok 7 qdo_test_poll\n[    1.275845]  #1 #1 #1\n'
			'[    1.306474]     # qdo_test_cpu_dead: 3 ran #1\n')
		self.assertEqual(P.strip_cpu_announcements(text),
				 '[    1.262074]     ok 7 qdo_test_poll\n'
				 '[    1.306474]     # qdo_test_cpu_dead: 3 ran #1\n')
		text = ('[    1.400344]     KTAP version 1\n'
			'[    1.400395] Freeing initrd memory: 22420K\n'
			'[    1.400406]     # Subtest: clustered\n[    1.4] ok 8 clustered\n'
			'[    1.4] 1..9\n[    1.4] # Totals: pass:8\n')
		self.assertNotIn('Freeing', P.strip_cpu_announcements(text))
		self.assertEqual(len(P.strip_cpu_announcements(text).splitlines()), 5)

	def test_torture_totals(self):
		tap = ('# # totals: phase hotplug rounds 8 offlines 8\n'
		       '# # totals: phase hotplug stat 100 fork 3 inotify 7 ast 9 ast_fuzz 1\n'
		       '# # totals: phase faults failslab 50 fail_page_alloc 2\n'
		       '# # totals: phase hotplug rounds 8 offlines 7\n'
		       '# # totals: passes 2 seconds 61\n# # not totals: x 1\n')
		self.assertEqual(P.parse_torture_totals(tap), {
			'hotplug rounds': 16, 'hotplug offlines': 15, 'hotplug stat': 100,
			'hotplug fork': 3, 'hotplug inotify': 7, 'hotplug ast': 9,
			'hotplug ast_fuzz': 1, 'faults failslab': 50, 'faults fail_page_alloc': 2,
			'passes': 2, 'seconds': 61})

	def test_torture_totals_of_the_harness(self):
		"""torture's "totals:" lines as kselftest_harness.h's tests print them
		(ksft_print_msg(), nested by the runner), among its other lines."""
		tap = ('# selftests: scalable: torture\n# TAP version 13\n# 1..1\n'
		       '# # Starting 1 tests from 1 test cases.\n#  RUN           torture.soak ...\n'
		       '# # seed 1\n# # totals: phase hotplug rounds 8 offlines 8\n'
		       '# # hotplug: stat: 5 calls, 0 failed by faults; no dentry log left\n'
		       '# # torture.c:1117:soak:Expected 0 (0) == sh->errors[K_STAT] (1)\n'
		       '# # totals: phase hotplug list 3 qdo 4 rmap_checks 5\n'
		       '# # totals: phase faults failslab 50 fail_page_alloc 2\n'
		       '# # totals: phase hotplug rounds 8 offlines 7\n'
		       '# # totals: passes 2 seconds 61\n#          FAIL  torture.soak\n'
		       '# not ok 1 torture.soak\nnot ok 1 selftests: scalable: torture # exit=1\n')
		self.assertEqual(P.parse_torture_totals(tap), {
			'hotplug rounds': 16, 'hotplug offlines': 15, 'hotplug list': 3,
			'hotplug qdo': 4, 'hotplug rmap_checks': 5, 'faults failslab': 50,
			'faults fail_page_alloc': 2, 'passes': 2, 'seconds': 61})

	def test_skips(self):
		"""Skips fail the boot unless EXPECTED_SKIPS expects them; those are listed."""
		with mock.patch.object(common, 'EXPECTED_SKIPS', {
				'openat2:openat2_test:openat2 with RESOLVE_CACHED': (('release',), 'x'),
				'kunit:qdo': (('release',), 'y')}):
			ok, problems, summary = self.analyze(self.boot(), ('scalable',),
							     kunit_skips=[['qdo', 'qdo_test_a'],
									  ['oplog', 'oplog_test_b']])
		self.assertFalse(ok)
		self.assertIn('kselftest skipped: scalable:inotify_bench, not expected on release '
			      '(EXPECTED_SKIPS)', problems)
		self.assertIn('  subtest skipped: scalable:inotify_bench:inotify_bench '
			      'per-file-watch cpus=1 (no inotify), not expected on release '
			      '(EXPECTED_SKIPS)', problems)
		self.assertIn('kselftest skipped: tmpfs:bug-link-o-tmpfile, not expected on release '
			      '(EXPECTED_SKIPS)', problems)
		self.assertIn('KUnit skipped: kunit:oplog.oplog_test_b, not expected on release '
			      '(EXPECTED_SKIPS)', problems)
		self.assertFalse([p for p in problems if 'RESOLVE_CACHED' in p or 'kunit:qdo' in p])
		self.assertEqual(summary['expected_skips'],
				 {'openat2:openat2_test:openat2 with RESOLVE_CACHED': 'x',
				  'kunit:qdo': 'y'})

	def test_zero_ops_fails(self):
		tap = ('TAP version 13\n1..1\n# selftests: scalable: stat_bench\n'
		       '# # RESULT bench=stat_bench mode=same-oplog cpus=1 ops_per_ms=0.000 runs=1 '
		       'stddev=0.000\n# ok 1 stat_bench same-oplog cpus=1\n'
		       'ok 1 selftests: scalable: stat_bench\n')
		ok, problems, _ = self.analyze(self.boot(tap_text=tap), ('scalable',), ('stat_bench',))
		self.assertFalse(ok)
		self.assertIn('benchmark stat_bench same-oplog cpus=1: ops_per_ms=0.0, no operation '
			      'counted', problems)


class SkipTest(unittest.TestCase):
	KST = P.parse_kselftest(
		'TAP version 13\n1..2\n# selftests: scalable: dcache_oplog_test\n'
		'# ok 1 dcache_oplog.oplog.umount\n'
		'# ok 2 dcache_oplog.oplog.shrink # SKIP needs CPU 1\n'
		'ok 1 selftests: scalable: dcache_oplog_test\n'
		'# selftests: scalable: qdo_latency\n# 1..0 # SKIP no debugfs\n'
		'ok 2 selftests: scalable: qdo_latency # SKIP\n')
	KUNIT = [['qdo', 'qdo_test_hotplug'], ['oplog', 'oplog_test_param', 'cpus=4'],
		 ['clustered']]

	def check(self, table, flavour='release'):
		with mock.patch.object(common, 'EXPECTED_SKIPS', table):
			return P.check_skips(self.KST, self.KUNIT, flavour)

	def test_keys(self):
		self.assertEqual([keys for keys, _ in P.skips(self.KST, self.KUNIT)], [
			['scalable:qdo_latency'],
			['scalable:dcache_oplog_test',
			 'scalable:dcache_oplog_test:dcache_oplog.oplog.shrink'],
			['kunit:qdo', 'kunit:qdo.qdo_test_hotplug'],
			['kunit:oplog', 'kunit:oplog.oplog_test_param',
			 'kunit:oplog.oplog_test_param.cpus=4'],
			['kunit:clustered']])

	def test_every_skip_fails_without_table(self):
		problems, expected = self.check({})
		self.assertEqual(problems, [
			'kselftest skipped: scalable:qdo_latency (no debugfs), not expected on release '
			'(EXPECTED_SKIPS)',
			'  subtest skipped: scalable:dcache_oplog_test:dcache_oplog.oplog.shrink '
			'(needs CPU 1), not expected on release (EXPECTED_SKIPS)',
			'KUnit skipped: kunit:qdo.qdo_test_hotplug, not expected on release '
			'(EXPECTED_SKIPS)',
			'KUnit skipped: kunit:oplog.oplog_test_param.cpus=4, not expected on release '
			'(EXPECTED_SKIPS)',
			'KUnit skipped: kunit:clustered, not expected on release (EXPECTED_SKIPS)'])
		self.assertEqual(expected, {})

	def test_expected(self):
		table = {'scalable:qdo_latency': (('release', 'debug'), 'a'),
			 'scalable:dcache_oplog_test:dcache_oplog.oplog.shrink': (('release',), 'b'),
			 'kunit:qdo.qdo_test_hotplug': (('release',), 'c'),
			 'kunit:oplog': (('release',), 'd'),
			 'kunit:clustered': (('release',), 'e')}
		self.assertEqual(self.check(table), ([], {
			'scalable:qdo_latency': 'a',
			'scalable:dcache_oplog_test:dcache_oplog.oplog.shrink': 'b',
			'kunit:qdo.qdo_test_hotplug': 'c', 'kunit:oplog': 'd', 'kunit:clustered': 'e'}))
		# Only on the flavours listed.
		problems, expected = self.check(table, 'debug')
		self.assertEqual(expected, {'scalable:qdo_latency': 'a'})
		self.assertEqual(len(problems), 4)

	def test_harness_names(self):
		"""kselftest_harness.h names a case FIXTURE.VARIANT.TEST, the key's last part:
		rmap_oplog_test's migrate case skips in both variants where the guest has
		one NUMA node, as EXPECTED_SKIPS expects on those flavours only."""
		kst = P.parse_kselftest(
			'TAP version 13\n1..1\n# selftests: scalable: rmap_oplog_test\n'
			'# TAP version 13\n# 1..4\n# # Starting 4 tests from 2 test cases.\n'
			'# #  RUN           rmap_oplog.stock.truncate ...\n'
			'# #            OK  rmap_oplog.stock.truncate\n'
			'# ok 1 rmap_oplog.stock.truncate\n'
			'# #  RUN           rmap_oplog.stock.migrate ...\n'
			'# #      SKIP      needs two NUMA nodes\n'
			'# #            OK  rmap_oplog.stock.migrate\n'
			'# ok 2 rmap_oplog.stock.migrate # SKIP needs two NUMA nodes\n'
			'# ok 3 rmap_oplog.oplog.truncate\n'
			'# ok 4 rmap_oplog.oplog.migrate # SKIP needs two NUMA nodes\n'
			'# # PASSED: 4 / 4 tests passed.\n'
			'# # Totals: pass:2 fail:0 xfail:0 xpass:0 skip:2 error:0\n'
			'ok 1 selftests: scalable: rmap_oplog_test\n')
		self.assertEqual([(t['name'], t['skip'], t['reason']) for t in kst['sub']], [
			('rmap_oplog.stock.truncate', False, ''),
			('rmap_oplog.stock.migrate', True, 'needs two NUMA nodes'),
			('rmap_oplog.oplog.truncate', False, ''),
			('rmap_oplog.oplog.migrate', True, 'needs two NUMA nodes')])
		keys = ['scalable:rmap_oplog_test:rmap_oplog.%s.migrate' % v for v in ('stock', 'oplog')]
		for fl in ('release', 'debug'):
			problems, expected = P.check_skips(kst, [], fl)
			self.assertEqual(problems, [])
			self.assertEqual(sorted(expected), sorted(keys))
		problems, expected = P.check_skips(kst, [], 'kcsan')
		self.assertEqual(expected, {})
		self.assertEqual(problems, [
			'  subtest skipped: %s (needs two NUMA nodes), not expected on kcsan '
			'(EXPECTED_SKIPS)' % k for k in keys])

	def test_program_covers_subtests_not_siblings(self):
		problems, expected = self.check({'scalable:dcache_oplog_test': (('release',), 'a'),
						 'kunit:qdo.qdo_test_other': (('release',), 'b')})
		self.assertEqual(expected, {'scalable:dcache_oplog_test': 'a'})
		self.assertFalse([p for p in problems if 'dcache_oplog_test' in p])
		self.assertIn('kunit:qdo.qdo_test_hotplug', ' '.join(problems))
		self.assertIn('scalable:qdo_latency', ' '.join(problems))

	def test_torture_faults_is_expected_without_fault_injection(self):
		"""torture.faults skips on the flavours without fault injection, under
		the real table; its hotplug test skipping is never expected."""
		k = P.parse_kselftest(
			'TAP version 13\n1..1\n# selftests: scalable: torture\n# TAP version 13\n'
			'# 1..2\n# ok 1 torture.hotplug\n'
			'# #      SKIP      no fault injection (CONFIG_FAILSLAB, '
			'CONFIG_FAIL_PAGE_ALLOC, CONFIG_FAULT_INJECTION_DEBUG_FS)\n'
			'# ok 2 torture.faults # SKIP no fault injection (CONFIG_FAILSLAB, '
			'CONFIG_FAIL_PAGE_ALLOC, CONFIG_FAULT_INJECTION_DEBUG_FS)\n'
			'ok 1 selftests: scalable: torture\n')
		self.assertEqual([keys for keys, _ in P.skips(k, [])],
				 [['scalable:torture', 'scalable:torture:torture.faults']])
		key = 'scalable:torture:torture.faults'
		for fl in ('release', 'kcsan'):
			self.assertEqual(P.check_skips(k, [], fl),
					 ([], {key: common.EXPECTED_SKIPS[key][1]}))
		problems, _ = P.check_skips(k, [], 'debug')
		self.assertEqual(problems, [
			'  subtest skipped: scalable:torture:torture.faults (no fault injection '
			'(CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC, '
			'CONFIG_FAULT_INJECTION_DEBUG_FS)), not expected on debug (EXPECTED_SKIPS)'])
		hp = P.parse_kselftest(
			'TAP version 13\n1..1\n# selftests: scalable: torture\n# 1..2\n'
			'# ok 1 torture.hotplug # SKIP ast: no ast_mutex syscalls\n'
			'# ok 2 torture.faults # SKIP no fault injection (CONFIG_FAILSLAB)\n'
			'ok 1 selftests: scalable: torture\n')
		problems, _ = P.check_skips(hp, [], 'release')
		self.assertEqual(len(problems), 1)
		self.assertIn('scalable:torture:torture.hotplug', problems[0])

	def test_fchmodat2_symlink_is_expected(self):
		"""The one skip of the passing boots, under the real table."""
		k = P.parse_kselftest('TAP version 13\n1..1\n# selftests: fchmodat2: fchmodat2_test\n'
				      '# ok 1 fchmodat2(regfile)\n# ok 2 # SKIP fchmodat2(symlink)\n'
				      'ok 1 selftests: fchmodat2: fchmodat2_test\n')
		for fl in common.FLAVOURS:
			problems, expected = P.check_skips(k, [], fl)
			self.assertEqual(problems, [])
			self.assertEqual(list(expected), ['fchmodat2:fchmodat2_test:fchmodat2(symlink)'])


class KmemleakTest(unittest.TestCase):
	DEBUG = 'scalable_mode=test scalable_kmemleak=1 kmemleak=on'

	def test_marker(self):
		self.assertEqual(P.check_kmemleak('SCALABLE: kmemleak scan finished\n', self.DEBUG), [])
		self.assertEqual(len(P.check_kmemleak('SCALABLE: done\n', self.DEBUG)), 1)
		self.assertEqual(P.check_kmemleak('SCALABLE: done\n', 'scalable_kmemleak=0'), [])
		self.assertEqual(P.check_kmemleak('', ''), [])

	def test_failed_write(self):
		"""A scan kmemleak refused is reported as such, and there is no marker."""
		con = 'SCALABLE: kmemleak failed: cannot write scan to /sys/kernel/debug/kmemleak\n'
		self.assertEqual(P.check_kmemleak(con, self.DEBUG), [
			'kmemleak: cannot write scan to /sys/kernel/debug/kmemleak',
			'kmemleak: no "SCALABLE: kmemleak scan finished" line: the scan for leaks did '
			'not run (scalable_kmemleak=1)'])

	def test_init_prints_them(self):
		"""init.sh prints the marker after the scans and the read, a failure otherwise."""
		with open(os.path.join(common.HARNESS, 'init.sh')) as f:
			init = f.read()
		scan = init.index('echo scan > $kmemleak')
		self.assertLess(scan, init.index('cat $kmemleak > /dev/console'))
		self.assertLess(init.index('cat $kmemleak > /dev/console'),
				init.index('say "%s"' % P.KMEMLEAK_DONE[len('SCALABLE: '):]))
		self.assertIn('say "%s: cannot write scan' % P.KMEMLEAK_FAILED[len('SCALABLE: '):],
			      init)
		self.assertNotIn('-w /sys/kernel/debug/kmemleak', init)

	def test_init_sh_runs(self):
		"""The kmemleak part of init.sh: its lines for a writable file, a refused one."""
		with open(os.path.join(common.HARNESS, 'init.sh')) as f:
			init = f.read()
		start = init.index('if [ "${scalable_kmemleak:-0}" = 1 ]; then\n\tif ! echo scan')
		part = init[start:init.index('\nfi\n', start) + 4]
		with tempfile.TemporaryDirectory() as d:
			def run(path):
				script = ('say() { echo "SCALABLE: $*"; }\nscalable_kmemleak=1\n'
					  'kmemleak=%s\n%s' % (path, part))
				return subprocess.run(['sh', '-c', script.replace('/dev/console', '/dev/null')],
						      capture_output=True, text=True).stdout
			leak = os.path.join(d, 'kmemleak')
			open(leak, 'w').close()
			self.assertEqual(run(leak), P.KMEMLEAK_DONE + '\n')
			self.assertEqual(run(os.path.join(d, 'none', 'kmemleak')),
					 '%s: cannot write scan to %s\n' %
					 (P.KMEMLEAK_FAILED, os.path.join(d, 'none', 'kmemleak')))


KUNIT_SRC = """\
static struct oplog_type ot_a = {
	.name = "kunit_ordered", .kind = OPLOG_ORDERED, .ops = &ot_ops,
};

static struct kunit_case demo_test_cases[] = {
	KUNIT_CASE(demo_test_one),
	KUNIT_CASE_PARAM(demo_test_param, demo_gen_params),
	KUNIT_CASE_SLOW(demo_test_slow),
	{}
};

static struct kunit_suite demo_test_suite = {
	.name = "demo",
	.init = demo_init,
	.test_cases = demo_test_cases,
};

kunit_test_suite(demo_test_suite);
"""


class KunitSuitesTest(unittest.TestCase):
	def test_parse_source(self):
		"""The suite's .name, not another struct's; its array's cases, in order."""
		self.assertEqual(P.kunit_suites_of(KUNIT_SRC),
				 {'demo': ['demo_test_one', 'demo_test_param', 'demo_test_slow']})

	def test_series_sources(self):
		"""The series' suites, from lib, kernel, mm and fs of the tree, each
		with the cases of its KUNIT_CASE() list."""
		suites = P.series_kunit_suites()
		self.assertLessEqual({'ast_sync', 'qdo', 'clustered', 'oplog', 'dcache_oplog',
				      'inotify_oplog', 'rmap_oplog'}, set(suites))
		where, cases = suites['oplog']
		self.assertEqual(where, os.path.join('lib', 'oplog_kunit.c'))
		self.assertIn('oplog_test_order_cpus', cases)
		self.assertNotIn('kunit_ordered', suites)
		for name, (where, cases) in suites.items():
			self.assertTrue(cases, name)
			with open(os.path.join(common.TOP, where)) as f:
				text = f.read()
			self.assertEqual(len(cases), text.count('KUNIT_CASE'), where)

	def test_tarball_top(self):
		"""Under another top (the tarball's), the files found there."""
		with tempfile.TemporaryDirectory() as top:
			self.assertEqual(P.series_kunit_suites(top), {})
			os.makedirs(os.path.join(top, 'mm'))
			with open(os.path.join(top, 'mm', 'demo_test.c'), 'w') as f:
				f.write(KUNIT_SRC)
			self.assertEqual(P.series_kunit_suites(top), {
				'demo': (os.path.join('mm', 'demo_test.c'),
					 ['demo_test_one', 'demo_test_param', 'demo_test_slow'])})

	def test_cases_of_json(self):
		data = {'name': 'KUnit Test Group', 'test_cases': [
				{'name': 'clustered', 'status': 'SKIP'}],
			'sub_groups': [
				{'name': 'qdo', 'sub_groups': [], 'test_cases': [
					{'name': 'qdo_test_a', 'status': 'PASS'},
					{'name': 'qdo_test_b', 'status': 'SKIP'}]},
				{'name': 'oplog',
				 'test_cases': [{'name': 'oplog_test_x', 'status': 'FAIL'}],
				 'sub_groups': [{'name': 'oplog_test_param', 'sub_groups': [],
						 'test_cases': [
							 {'name': 'cpus=1', 'status': 'PASS'},
							 {'name': 'cpus=4', 'status': 'SKIP'}]}]}]}
		self.assertEqual(P.kunit_cases(data), {
			'clustered': {None: 'SKIP'},
			'qdo': {'qdo_test_a': 'PASS', 'qdo_test_b': 'SKIP'},
			'oplog': {'oplog_test_x': 'FAIL', 'oplog_test_param': 'SKIP'}})

	def test_check(self):
		suites = {'qdo': ('kernel/qdo/qdo_test.c', ['qdo_test_a', 'qdo_test_b']),
			  'clustered': ('lib/clustered_test.c', ['clustered_test_a']),
			  'oplog': ('lib/oplog_test.c', ['oplog_test_x', 'oplog_test_param'])}
		cases = {'clustered': {None: 'SKIP'},
			 'qdo': {'qdo_test_a': 'PASS', 'qdo_test_b': 'SKIP'},
			 'oplog': {'oplog_test_x': 'FAIL', 'oplog_test_param': 'PASS'}}
		# all reported: a failure or a skip is judged by the counts and
		# EXPECTED_SKIPS, a suite skipped as a whole likewise
		self.assertEqual(P.check_kunit_suites(cases, suites), [])
		del cases['oplog']['oplog_test_param']
		del cases['qdo']
		self.assertEqual(P.check_kunit_suites(cases, suites), [
			'KUnit: case oplog.oplog_test_param (lib/oplog_test.c) reported no result',
			'KUnit: series suite qdo (kernel/qdo/qdo_test.c) is not in the boot\'s KTAP: '
			'not built, or it did not run'])


class ProgramsTest(unittest.TestCase):
	def test_expected(self):
		with mock.patch.object(common, 'SELFTEST_TARGETS', ('scalable', 'mm', 'proc')), \
		     mock.patch.object(common, 'PROGRAM_TARGETS', {'mm': ('cow', 'mkdirty')}), \
		     mock.patch.object(P.schedule, 'programs', return_value=['ast_fuzz', 'torture']):
			self.assertEqual(P.expected_programs('scalable_mode=test', 'release'),
					 ['scalable:ast_fuzz', 'scalable:torture', 'mm:cow', 'mm:mkdirty'])
			self.assertEqual(P.expected_programs('scalable_own=0 scalable_upstream=proc',
							     'release'), [])
			self.assertEqual(P.expected_programs('scalable_tests=torture '
							     'scalable_exclude=mm:cow', 'debug'),
					 ['scalable:torture', 'mm:mkdirty'])
			kst = P.parse_kselftest('1..2\nok 1 selftests: scalable: torture\n'
						'ok 2 selftests: mm: mkdirty\n')
			self.assertEqual(P.check_programs(kst, 'scalable_upstream=mm', 'release'), [
				'kselftest: scalable:ast_fuzz printed no result (not built, not '
				'installed, or not run)',
				'kselftest: mm:cow printed no result (not built, not installed, or not run)'])

	def test_series_programs(self):
		"""Without scalable_tests=, every program of the collection, ast_fuzz too."""
		self.assertIn('scalable:ast_fuzz', P.expected_programs('', 'release'))


class KunitCountsTest(unittest.TestCase):
	def test_counts_and_skips(self):
		data = {'name': 'KUnit Test Group', 'test_cases': [
				{'name': 'clustered', 'status': 'SKIP'}],
			'sub_groups': [
				{'name': 'qdo', 'sub_groups': [], 'test_cases': [
					{'name': 'qdo_test_a', 'status': 'PASS'},
					{'name': 'qdo_test_b', 'status': 'SKIP'}]},
				{'name': 'oplog',
				 'test_cases': [{'name': 'oplog_test_x', 'status': 'FAIL'}],
				 'sub_groups': [{'name': 'oplog_test_param', 'sub_groups': [],
						 'test_cases': [
							 {'name': 'cpus=1', 'status': 'PASS'},
							 {'name': 'cpus=4', 'status': 'SKIP'},
							 {'name': 'cpus=8', 'status': 'ERROR'}]}]}]}
		self.assertEqual(P.kunit_counts(data), {
			'passed': 2, 'failed': 1, 'skipped': 3, 'crashed': 1, 'suites': ['qdo', 'oplog'],
			'skips': [['clustered'], ['qdo', 'qdo_test_b'],
				  ['oplog', 'oplog_test_param', 'cpus=4']]})


class RmapOplogTest(unittest.TestCase):
	def test_parse(self):
		st = P.parse_dcache_oplog(RMAP_CONSOLE, 'rmap_oplog')
		self.assertEqual(st['before']['logged'], 800)
		self.assertEqual(st['after']['absorbed_local'], 420)
		self.assertEqual(P.check_rmap_oplog(st, '', True), [])
		self.assertEqual(P.parse_dcache_oplog(RMAP_CONSOLE), {})

	def test_nothing_logged(self):
		st = P.parse_dcache_oplog(RMAP_CONSOLE.replace('logged=950', 'logged=800'),
					  'rmap_oplog')
		self.assertIn('no insert was logged', ' '.join(P.check_rmap_oplog(st, '', True)))
		# without the mm programs, nothing need be logged
		self.assertEqual(P.check_rmap_oplog(st, '', False), [])

	def test_switch_off(self):
		st = P.parse_dcache_oplog(RMAP_CONSOLE.replace('before: enabled=1',
							       'before: enabled=0'), 'rmap_oplog')
		p = ' '.join(P.check_rmap_oplog(st, '', True))
		self.assertIn('left the switch at 0', p)
		self.assertIn('switch 0 during the upstream selftests', p)
		st = P.parse_dcache_oplog(RMAP_CONSOLE.replace('enabled=1', 'enabled=0').
					  replace('logged=950', 'logged=800'), 'rmap_oplog')
		self.assertEqual(P.check_rmap_oplog(st, 'rmap_oplog=off', True), [])

	def test_missing(self):
		self.assertTrue(P.check_rmap_oplog(P.parse_dcache_oplog(CLEAN_BOOT, 'rmap_oplog'),
						   '', True))


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


class CheckResultsTest(unittest.TestCase):
	def result(self, **kw):
		r = {'bench': 'stat_bench', 'mode': 'same-oplog', 'cpus': 2, 'ops_per_ms': 150.0,
		     'runs': 1, 'stddev': 0.0}
		r.update(kw)
		return r

	def test_good(self):
		self.assertEqual(P.check_results([self.result(), self.result(oplog_hits=10)], []), [])

	def test_zero_ops(self):
		"""0 ops/ms fails, also in the short runs of a checking boot."""
		self.assertEqual(P.check_results(P.parse_results(
			'# # RESULT bench=open_bench mode=same-rdonly-stock cpus=1 ops_per_ms=0.000 '
			'runs=1 stddev=0.000\n'), []),
			['benchmark open_bench same-rdonly-stock cpus=1: ops_per_ms=0.0, no operation '
			 'counted'])
		self.assertEqual(len(P.check_results([self.result(ops_per_ms=0)], [])), 1)
		self.assertEqual(len(P.check_results([self.result(ops_per_ms='-nan')], [])), 1)
		# The smallest number qdo_latency prints is not 0.
		self.assertEqual(P.check_results([self.result(ops_per_ms=0.001)], []), [])

	def test_status_fail(self):
		self.assertEqual(P.check_results([self.result(status='fail', ops_per_ms=0.0,
							       runs=0)], []),
				 ['benchmark stat_bench same-oplog cpus=2: status=fail (0 runs completed)'])

	def test_oplog_hits_field(self):
		"""oplog_hits=0 fails an -oplog mode, not a stock or cold one, nor its absence."""
		self.assertEqual(P.check_results([self.result(oplog_hits=0)], []),
				 ['benchmark stat_bench same-oplog cpus=2: oplog_hits=0, the OpLog '
				  'counted no hit'])
		self.assertEqual(P.check_results([self.result(mode='same-stock', oplog_hits=0),
						  self.result(mode='many-oplog', oplog_hits=0)], []), [])
		with mock.patch.object(common, 'OPLOG_COLD_MODES', {}):
			self.assertEqual(len(P.check_results([self.result(mode='many-oplog',
									  oplog_hits=0)], [])), 1)

	STATS = """\
# # inotify_bench: per-file-watch-stock cpus=1 oplog stats: logs=+0 queued=+0 hits=+0 misses=+0
# # inotify_bench: per-file-watch-oplog cpus=1 oplog stats: logs=+1 queued=+99 hits=+98 misses=+1
# # inotify_bench: per-file-watch-oplog cpus=1: 99 read, 49 mods, merged=0
# # inotify_bench: dir-watch-oplog cpus=2 oplog stats: logs=+1 queued=+0 hits=+0 misses=+0
"""

	def test_parse_oplog_stats(self):
		st = P.parse_oplog_stats(self.STATS)
		self.assertEqual(len(st), 3)
		self.assertEqual(st[1], {'bench': 'inotify_bench', 'mode': 'per-file-watch-oplog',
					 'cpus': 1, 'logs': 1, 'queued': 99, 'hits': 98, 'misses': 1})

	def test_oplog_stats_no_hits(self):
		"""A run of an -oplog mode whose OpLog counted no hit fails; a stock one not."""
		self.assertEqual(P.check_results([], P.parse_oplog_stats(self.STATS)),
				 ['benchmark inotify_bench dir-watch-oplog cpus=2: the OpLog counted no '
				  'hit in a run (oplog stats: hits=+0)'])


if __name__ == '__main__':
	unittest.main()
