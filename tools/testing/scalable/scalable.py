#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Host-side harness of the scalable-subsystems series: prepares the patched
# 6.12 tree, builds the release and debug kernels, boots them in QEMU with a
# busybox initramfs, checks KUnit/kselftest results and the console for
# kernel splats, and reports the benchmark numbers.  The top-level Makefile
# is a thin wrapper around the subcommands here; run "make help".
#
# This file only drives: the subcommands and their arguments.  The work is
# in the modules beside it, the way tools/testing/kunit/ is split, each
# importing only those before it in this list (test_scalable.py checks):
#
#   scalable_common.py  paths, the test tables, log/run, the machine lock
#   scalable_request.py the settings of a run (the environment variables,
#                       make's): parsed and checked once into a Request
#                       that main() passes down
#   scalable_tree.py    packages, the pinned base, patches/, build/src/linux
#   scalable_build.py   kernel config and build, kselftests, initramfs
#   scalable_schedule.py what a boot schedules and how long it takes: the
#                       timeout of make run's boots, their progress, the
#                       budget check of the full sweep
#   scalable_qemu.py    the QEMU command line, boot and watch
#   scalable_parser.py  splats, KUnit KTAP, kselftest TAP, RESULT lines
#   scalable_report.py  the benchmark table, out/report.md and report.json,
#                       the results files of out/results/
#   scalable_trace.py   the c2c tracer's records: per-operation figures,
#                       attribution, its checks and its table (stdlib only)
#   scalable_figures.py make figures: every figure in the docs is in a
#                       committed results file that its text names
#   scalable_series.py  git format-patch export, make check's static checks
#   scalable_configs.py real configs: x86_64_defconfig with each option on
#                       and off and PREEMPT_RT, make deb and its boot test
#   scalable_native.py  the report of a native run of make selftests-tar's
#                       tarball (packed in it, with what it imports)
#   scalable_tar.py     make selftests-tar: pack the tarball, its guest test

import argparse
import dataclasses
import glob
import json
import os
import re
import sys
import time

import scalable_common as common
import scalable_configs
import scalable_figures
import scalable_series
import scalable_tar
import scalable_trace
from scalable_build import build_kernel, build_plugin
from scalable_common import FLAVOURS, HarnessError, default_smp, die, host_cpus, log
from scalable_parser import analyze, find_splats, parse_keyflip, parse_torture_totals
from scalable_qemu import boot, boot_timeout
from scalable_report import write_report, write_results
from scalable_request import MODES, request_from_env
from scalable_tree import base_package_needed, ensure_packages, prepare_src

# Each cmd_*() below takes the run's Request (@req, main() makes it from
# the environment) and its subcommand's arguments (@args).


def cmd_prepare(req, args):
	ensure_packages(need_base=base_package_needed(req))
	prepare_src(req)
	log('build/src/linux is ready')


def cmd_build(req, args):
	ensure_packages(need_base=base_package_needed(req))
	for fl in args.flavours:
		build_kernel(req, fl)


def boot_and_judge(req, flavour, mode, smp, logdir, cpus=None, upstream_off=False):
	src = os.path.join(common.BUILD, 'src', 'linux')
	obj = os.path.join(common.BUILD, flavour)
	b = boot(req, obj, flavour, smp, mode, logdir, boot_timeout(req, flavour, mode), cpus=cpus,
		 upstream_off=upstream_off)
	ok, problems, summary = analyze(src, b, logdir)
	verdict = 'PASS' if ok else 'FAIL'
	log('%s: %s in %.0f s' % (b['name'], verdict, b['seconds']))
	for p in problems:
		log('  ' + p)
	for key, why in summary['expected_skips'].items():
		log('  expected skip: %s: %s' % (key, why))
	return ok, summary


# ---------------------------------------------------------------- tracing

# What a traced boot may run (TRACE_WORKLOADS, in the order make trace
# runs them) and the most vCPUs it may have (TRACE_MAX_SMP) are
# scalable_request.py's, which checks TRACE_WORKLOADS and TRACE_SMP.


def trace_quantum(req, default):
	"""@req's TRACE_QUANTUM, else @default (make trace's 100, make test's 5)."""
	return default if req.trace_quantum is None else req.trace_quantum


# Above this many vCPUs a traced boot turns off the RCU stall reports
# and the soft- and hard-lockup detectors (nowatchdog): TCG runs the
# vCPUs in turn, paced by the plugin, so at 64 a vCPU waits seconds for
# its turn and they report the emulator's starvation (RCU stalls, soft
# lockups of migration/N), not the kernel's.  The hung-task detector
# stays on.  Such traces are report-only; the gates (8 vCPUs) and every
# checking boot keep every detector.
TRACE_DETECTORS_SMP = 32


def trace_detectors(smp):
	"""Kernel parameters for a traced boot at @smp vCPUs ('' up to 32)."""
	if smp <= TRACE_DETECTORS_SMP:
		return ''
	return ' rcupdate.rcu_cpu_stall_suppress=1 nowatchdog'


def trace_append(workloads, ms, smp):
	"""The kernel command line that a traced boot adds for @workloads."""
	return ('kunit.enable=0 scalable_trace=%s scalable_trace_ms=%d' % (','.join(workloads), ms) +
		trace_detectors(smp))


def trace_boot(req, smp, workloads, ms, logdir, quantum=None, stock=False):
	"""Boot the release kernel at @smp vCPUs under the c2c plugin.

	Returns (the analysis of scalable_trace.analyze() or None, problems).
	The guest runs only @workloads, with KUnit off; a splat, a program that
	failed, a guest that did not finish or windows that do not join are
	problems.  @stock: boot unpatched 6.12 (build/stock, built by
	scalable_configs.build_stock()) with the release initramfs instead;
	its modes are renamed "<mode>@6.12".  @quantum None: @req's
	TRACE_QUANTUM, else 100.
	"""
	obj = os.path.join(common.BUILD, scalable_configs.STOCK_OBJ if stock else 'release')
	plugin = build_plugin()
	sysmap = os.path.join(obj, 'System.map')
	entries = scalable_trace.write_entries(sysmap, os.path.join(os.path.dirname(plugin),
								      'entries'),
					       os.path.join(obj, 'vmlinux'))
	os.makedirs(logdir, exist_ok=True)
	record = os.path.join(logdir, 'release-trace-smp%d.c2c' % smp)
	if quantum is None:
		quantum = trace_quantum(req, 100)
	qemu_args = ['-plugin', '%s,out=%s,quantum=%d,entries=%s' % (plugin, record, quantum,
								     entries)]
	append = trace_append(workloads, ms, smp)
	# about 2 s of guest time per window, slower at many vCPUs
	timeout = req.trace_timeout or 300 + 60 * smp
	if os.path.exists(record):
		os.unlink(record)
	b = boot(req, obj, 'release', smp, 'test', logdir, timeout, extra_qemu_args=qemu_args,
		 accel='tcg', extra_append=append, tag='trace-stock' if stock else 'trace',
		 initrd=os.path.join(common.BUILD, 'release', 'initramfs.cpio.gz') if stock else None)
	name = 'traced %sboot at %d vCPUs' % ('stock 6.12 ' if stock else '', smp)
	problems = []
	if b['ended'] != 'exit' or 'SCALABLE: done' not in b['console_text']:
		problems.append('%s did not finish (%s); console: %s' %
				(name, b['ended'], os.path.relpath(b['console'], common.TOP)))
	for kind, line in find_splats(b['console_text']):
		problems.append('%s: kernel splat (%s): %s' % (name, kind, line))
	for prog, rc in re.findall(r'SCALABLE: trace (\S+) rc=(\d+)', b['console_text']):
		if rc != '0':
			problems.append('%s: %s exited with status %s' % (name, prog, rc))
	try:
		with open(record) as f:
			text = f.read()
		res = scalable_trace.analyze(text, b['tap_text'], sysmap, obj,
					     os.path.join(obj, 'vmlinux'), stock=stock)
	except (OSError, scalable_trace.TraceError) as e:
		problems.append('%s: no trace: %s' % (name, e))
		return None, problems
	for w in res['warnings']:
		problems.append('%s: plugin: %s' % (name, w))
	# the gates that need inline chains fail on their own without them
	log('%s: mechanisms charged by %s%s' % (name, res['attribution'],
						': ' + res['attribution_note']
						if res['attribution_note'] else ''))
	if stock:
		for r in res['results']:
			r['mode'] += '@6.12'
	for r in res['results']:
		if not r['ok']:
			problems.append('%s: %s %s failed in its window' % (name, r['bench'], r['mode']))
		if r['dropped_sites']:
			problems.append('%s: %s %s: %d transfer sites did not fit the plugin\'s table '
					'(attrib=): the attribution is incomplete' %
					(name, r['bench'], r['mode'], r['dropped_sites']))
		if r['pace_timeouts']:
			log('%s: %s %s: %d pacing waits gave up (interleaving coarser there)' %
			    (name, r['bench'], r['mode'], r['pace_timeouts']))
	log('%s: %d windows traced in %.0f s' % (name, len(res['results']), b['seconds']))
	return res, problems


def trace_paths(req):
	return (os.path.join(req.out, 'trace.json'), os.path.join(req.out, 'trace.md'))


def cmd_trace(req, args):
	"""Boot the release kernel under the tracer at each TRACE_SMP; report.

	TRACE_KERNEL=stock (@req.trace_kernel) traces unpatched 6.12 instead
	of the release kernel; each boot runs TRACE_WORKLOADS.
	"""
	counts = list(req.trace_smp)
	stock = req.trace_kernel == 'stock'
	cmd_build(req, argparse.Namespace(flavours=['release']))
	if stock:
		scalable_configs.build_stock(req)
	logdir = os.path.join(req.out, 'logs')
	ms = req.trace_ms
	results, problems = [], []
	t0 = time.time()
	for n in counts:
		res, p = trace_boot(req, n, req.trace_workloads, ms, logdir, stock=stock)
		problems += p
		if res:
			results += res['results']
	jpath, mpath = trace_paths(req)
	os.makedirs(req.out, exist_ok=True)
	with open(jpath, 'w') as f:
		json.dump({'host_cpus': host_cpus(), 'date': time.strftime('%Y-%m-%dT%H:%M:%S%z'),
			   'kernel': 'stock 6.12' if stock else 'patched',
			   'quantum': trace_quantum(req, 100), 'window_ms': ms,
			   'seconds': time.time() - t0, 'problems': problems,
			   'results': results}, f, indent=1)
	text = scalable_trace.markdown(results) if results else '(nothing traced)'
	if problems:
		text += '\n**Problems:**\n\n' + '\n'.join('- ' + p for p in problems) + '\n'
	with open(mpath, 'w') as f:
		f.write(text + '\n')
	print('\n' + text, flush=True)
	# The tracer's boots run under TCG whatever ACCEL says (a plugin needs it).
	write_results(req, 'trace', 'smp' + '-'.join(map(str, counts)), text, t0, False)
	log('traced %s vCPUs in %.0f s; written to %s and %s' %
	    (','.join(map(str, counts)), time.time() - t0, os.path.relpath(mpath, common.TOP),
	     os.path.relpath(jpath, common.TOP)))
	return 1 if problems else 0


def trace_check(req, logdir):
	"""make test: the instrument at 2, 4 and 8 vCPUs, the stat gate at 4,
	every OpLog user's traced gate at 8 (scalable_trace.GATES), and inotify's
	at 16 (scalable_trace.WIDE_GATES)."""
	problems = []
	results = []
	# A quantum of 5 instructions (less than a block) forces the vCPUs to take
	# turns block by block, about once
	# per cacheline_bench operation even when the host is busy; at 100 the
	# interleaving of such short operations depends on the host's scheduler.
	quantum = trace_quantum(req, 5)
	for n, work in ((2, ('cacheline_bench',)), (4, ('cacheline_bench', 'stat_bench'))):
		res, p = trace_boot(req, n, work, 500, logdir, quantum)
		problems += p
		if res:
			results += res['results']
	problems += scalable_trace.instrument_problems(results, cpus=(2, 4))
	problems += scalable_trace.stat_gate_problems(results, 4)
	for r in results:
		if r['bench'] in ('cacheline_bench', 'stat_bench'):
			own = r['mechanism_transfers_per_op'].get('oplog')
			log('traced: %s %s at %d vCPUs: %s transfers/op (user %s), OpLog\'s own %s' %
			    (r['bench'], r['mode'], r['cpus'], scalable_trace.fmt(r['transfers_per_op']),
			     scalable_trace.fmt(r['user_transfers_per_op']),
			     scalable_trace.fmt(own, 4)))
	# The gates, at the quantum and window that make trace publishes, with
	# the instrument checked in the same boot.
	n = scalable_trace.GATE_CPUS
	t0 = time.time()
	res, p = trace_boot(req, n, scalable_trace.GATE_WORKLOADS, req.trace_ms, logdir,
			    req.trace_gate_quantum)
	gated = res['results'] if res else []
	p += scalable_trace.instrument_problems(gated, cpus=(n,))
	rows = scalable_trace.gate_rows(gated, n)
	p += scalable_trace.gate_problems(gated, n)
	for name, verdict, detail in rows:
		log('gate at %d vCPUs: %s: %s (%s)' % (n, name, verdict.upper(), detail))
	# What shows only at more vCPUs, in a boot of its own.
	w = scalable_trace.WIDE_GATE_CPUS
	res, pw = trace_boot(req, w, scalable_trace.WIDE_GATE_WORKLOADS, req.trace_ms, logdir,
			     req.trace_gate_quantum)
	wide = res['results'] if res else []
	wrows = scalable_trace.gate_rows(wide, w)
	pw += scalable_trace.gate_problems(wide, w)
	for name, verdict, detail in wrows:
		log('gate at %d vCPUs: %s: %s (%s)' % (w, name, verdict.upper(), detail))
	p += pw
	problems += p
	write_results(req, 'gate', 'smp%d' % n, gate_text(rows + wrows, gated + wide, p), t0,
		      False)
	os.makedirs(req.out, exist_ok=True)
	with open(os.path.join(req.out, 'gate.json'), 'w') as f:
		json.dump({'host_cpus': host_cpus(), 'date': time.strftime('%Y-%m-%dT%H:%M:%S%z'),
			   'cpus': n, 'wide_cpus': w, 'gates': rows + wrows, 'problems': problems,
			   'results': gated + wide}, f, indent=1)
	for p in problems:
		log('  ' + p)
	log('tracer checks: %s' % ('FAIL' if problems else 'PASS'))
	return not problems


def gate_text(rows, gated, problems):
	"""The results file of make test's traced gates: verdicts, table, problems."""
	lines = ['| gate | verdict | detail |', '|---|---|---|']
	lines += ['| %s | %s | %s |' % (name, verdict.upper(), detail)
		  for name, verdict, detail in rows]
	text = '\n'.join(lines) + '\n\n' + \
	       (scalable_trace.markdown(gated) if gated else '(nothing traced)')
	if problems:
		text += '\n**Problems:**\n\n' + '\n'.join('- ' + p for p in problems) + '\n'
	return text


def cmd_run(req, args):
	"""The main job: build the release kernel, boot, test, benchmark, report."""
	mode = args.mode
	if mode not in MODES:
		die('MODE must be full, quick or long, not "%s"' % mode)
	cmd_build(req, argparse.Namespace(flavours=['release']))
	smp = default_smp(req)
	logdir = os.path.join(req.out, 'logs')
	t0 = time.time()
	ok, summary = boot_and_judge(req, 'release', mode, smp, logdir, cpus=req.cpus)
	write_report(req.out, [summary], 'Scalable series: benchmark report (%s mode)' % mode,
		     trace=traced_section(req))
	with open(os.path.join(req.out, 'report.md')) as f:
		text = f.read()
	# The boot's accelerator: kvm_works() (ACCEL), less a KVM that stayed silent.
	write_results(req, 'run', 'smp%d' % smp, text, t0, summary['accel'] == 'kvm',
		      settings={'MODE': mode})
	return 0 if ok else 1


def traced_section(req):
	"""The last make trace's table for the report, or how to get one."""
	jpath, mpath = trace_paths(req)
	try:
		with open(mpath) as f:
			return f.read()
	except OSError:
		return ('Cache-line transfers per operation at 1-16 vCPUs (the scaling figures '
			'that 2 TCG vCPUs cannot show): run `make trace`.')


def cmd_test(req, args):
	"""What CI runs: release and debug kernels, all tests, splat check."""
	flavours = args.flavours
	cmd_build(req, argparse.Namespace(flavours=flavours))
	smp = default_smp(req)
	logdir = os.path.join(req.out, 'logs')
	results, summaries = [], []
	if not args.no_harness_check:
		results.append(('harness self-check', harness_selfcheck(req, logdir)))
	for fl in flavours:
		# The release boot also runs the upstream kselftests with the
		# series' switches off, and compares (scalable_upstream_off=1).
		ok, summary = boot_and_judge(req, fl, 'test', smp, logdir,
					     upstream_off=fl == 'release')
		results.append((fl, ok))
		summaries.append(summary)
	if 'release' in flavours and not args.no_trace:
		results.append(('tracer checks', trace_check(req, logdir)))
	if 'release' in flavours and not args.no_selftests_tar:
		results.append(('selftests-tar test', selftests_tar_test(req, logdir)))
	write_report(req.out, summaries, 'Scalable series: test report')
	failed = [n for n, ok in results if not ok]
	if failed:
		log('FAILED: ' + ', '.join(failed))
		return 1
	log('all tests passed')
	return 0


def harness_selfcheck(req, logdir):
	"""Boot with injected faults: each must be caught, or the harness is broken."""
	src = os.path.join(common.BUILD, 'src', 'linux')
	obj = os.path.join(common.BUILD, 'release')
	ok = True
	for inject, timeout, want in (('warn', 300, 'kernel splat (WARNING)'),
				      ('panic', 300, 'kernel panic'),
				      ('hang', 25, 'did not finish within the timeout')):
		b = boot(req, obj, 'release', 2, 'test', logdir, timeout, inject=inject)
		passed, problems, _ = analyze(src, b, logdir, expect_done=False) \
			if inject != 'warn' else analyze(src, b, logdir)
		caught = any(want in p for p in problems)
		log('harness self-check: injected %s -> %s' %
		    (inject, 'caught' if caught else 'NOT CAUGHT: %s' % problems))
		ok = ok and caught and not passed
	return ok


def cmd_boot(req, args):
	"""Boot an already built kernel once (for debugging the harness)."""
	smp = default_smp(req)
	logdir = os.path.join(req.out, 'logs')
	if args.inject != 'none':
		timeout = 60 if req.boot_timeout is None else req.boot_timeout
		b = boot(req, os.path.join(common.BUILD, args.flavour), args.flavour, smp,
			 args.mode, logdir, timeout, inject=args.inject)
		ok, problems, _ = analyze(os.path.join(common.BUILD, 'src', 'linux'), b, logdir,
					  expect_done=False)
		for p in problems:
			log(p)
		return 0 if ok else 1
	ok, summary = boot_and_judge(req, args.flavour, args.mode, smp, logdir, cpus=req.cpus)
	write_report(req.out, [summary], 'Scalable series: boot report')
	return 0 if ok else 1


def cmd_check(req, args):
	"""make check (and check-full): the static checks, then real configs.

	make check builds the series' objects on x86_64_defconfig in every
	variant of scalable_configs.variants(); make check-full builds whole
	kernels instead, then the Debian packages, and boots the packaged
	kernel against the harness's guest.
	"""
	t0 = time.time()
	failures = scalable_series.static_checks(req)
	level = 'full' if args.full else 'objects'
	failures += ['real config ' + p for p in scalable_configs.real_config_builds(req, level)]
	if args.full:
		debs = scalable_configs.build_deb(req)
		failures += ['make deb: ' + p for p in scalable_configs.deb_test(req, debs)]
	name = 'make check-full' if args.full else 'make check'
	if failures:
		for f in failures:
			print(f)
		log('%s FAILED (%.0f s)' % (name, time.time() - t0))
		return 1
	log('%s passed in %.0f s' % (name, time.time() - t0))
	return 0


def cmd_figures(req, args):
	"""make figures: every figure in the docs has its committed results file."""
	problems = scalable_figures.problems(common.TOP)
	for p in problems:
		print(p)
	if problems:
		log('make figures: %d figures without their results file' % len(problems))
		return 1
	log('make figures: every figure in the docs is in a results file its text names')
	return 0


def cmd_deb(req, args):
	"""make deb: Debian packages of the patched kernel (bindeb-pkg)."""
	debs = scalable_configs.build_deb(req)
	for d in debs:
		print('  ' + os.path.relpath(d, common.TOP))
	if args.test:
		problems = scalable_configs.deb_test(req, debs)
		for p in problems:
			log(p)
		return 1 if problems else 0
	log('install with: dpkg -i ' + ' '.join(
		os.path.relpath(d, common.TOP) for d in debs
		if os.path.basename(d).startswith(('linux-image-', 'linux-headers-'))
		and '-dbg_' not in d))
	return 0


def pack_selftests_tar():
	"""Pack build/release's kselftests with run_scalable.sh; (obj, src, tarball)."""
	obj = os.path.join(common.BUILD, 'release')
	src = os.path.join(common.BUILD, 'src', 'linux')
	if not os.path.exists(os.path.join(obj, 'kselftest-install', 'kselftest-list.txt')):
		die('no release kselftests in %s: run make build FLAVOURS=release' %
		    os.path.relpath(obj, common.TOP))
	tar = scalable_tar.pack(obj, src, os.path.join(common.BUILD, 'selftests-tar',
							'kselftest-install'))
	log('packed %s (%.1f MiB): unpack it on a machine booted into the patched kernel and '
	    'run ./%s as root' % (os.path.relpath(tar, common.TOP), os.path.getsize(tar) / 2**20,
				  scalable_tar.SCRIPT))
	return obj, src, tar


def selftests_tar_test(req, logdir):
	"""The tarball's test boot (make test): True if the two reports agree."""
	obj, src, tar = pack_selftests_tar()
	return scalable_tar.test(req, obj, src, tar, logdir)


def cmd_selftests_tar(req, args):
	"""make selftests-tar: the release kselftests and run_scalable.sh as a tarball.

	With @args.test, also boot it natively in the release guest (mode
	test) and check that the report written there matches the host's
	analysis of the same boot.
	"""
	if not args.no_build:
		cmd_build(req, argparse.Namespace(flavours=['release']))
	if args.test:
		return 0 if selftests_tar_test(req, os.path.join(req.out, 'logs')) else 1
	pack_selftests_tar()
	return 0


def soak_boot_from_logs(req):
	"""The boot of the last make soak, read back from its logs.

	For --rejudge: judging again (after a fix to the harness) costs no
	new 30-minute boot.  The logs are those soak.json names, or else the
	newest soak console log in out/logs.
	"""
	logdir = os.path.join(req.out, 'logs')
	try:
		with open(os.path.join(req.out, 'soak.json')) as f:
			last = json.load(f)
	except (OSError, ValueError):
		last = {}
	console = last.get('console')
	if not console:
		found = sorted(glob.glob(os.path.join(logdir, 'debug-smp*-*scalable_soak_*.console.log')),
			       key=os.path.getmtime)
		if not found:
			die('soak --rejudge: no soak console log in %s (run make soak first)' %
			    os.path.relpath(logdir, common.TOP))
		console = found[-1]
	tap = console[:-len('.console.log')] + '.tap.log'
	con = open(console, errors='replace').read()
	m = re.search(r'Command line: (.*)', con)
	smp = re.search(r'-smp(\d+)', os.path.basename(console))
	return {'name': os.path.basename(console)[:-len('.console.log')], 'flavour': 'debug',
		'smp': int(smp.group(1)) if smp else default_smp(req),
		'accel': last.get('accel', 'tcg'),
		'mode': 'test', 'console': console, 'tap': tap, 'console_text': con,
		'tap_text': open(tap, errors='replace').read(),
		'ended': 'exit' if 'SCALABLE: done' in con else 'timeout', 'qemu_rc': 0,
		'seconds': last.get('wall_seconds', 0), 'append': m.group(1).strip() if m else ''}


def cmd_soak(req, args):
	"""make soak: the kselftest torture on the debug kernel for a given time.

	Its hotplug and faults phases alternate (the ast_mutex stress and
	fuzzer run in both) for @args.seconds, then ast_mutex_test's SIGKILL
	storm runs as long again (half on each kind of word); the boot is
	judged like a test boot, and out/soak.md and out/soak.json give the
	summed totals: operations of each kind, hotplug rounds and offlines,
	faults injected, waiters killed in ast_mutex_lock() (kill_storm), and
	the kernel reports found (any fails the soak).  With @args.rejudge,
	the last soak's logs are judged again, with no boot.
	"""
	seconds = args.seconds
	if seconds < 60:
		die('soak: --seconds must be at least 60')
	logdir = os.path.join(req.out, 'logs')
	if args.rejudge:
		b = soak_boot_from_logs(req)
		m = re.search(r'scalable_soak=(\d+)', b['append'])
		seconds = int(m.group(1)) if m else seconds
		smp = b['smp']
	else:
		cmd_build(req, argparse.Namespace(flavours=['debug']))
		smp = default_smp(req)
		soak = dataclasses.replace(req, kernel_args=' '.join([
			req.kernel_args, 'scalable_soak=%d' % seconds,
			'scalable_tests=torture,ast_mutex_test', 'scalable_upstream=none']))
		b = boot(soak, os.path.join(common.BUILD, 'debug'), 'debug', smp, 'test', logdir,
			 2 * seconds + boot_timeout(soak, 'debug', 'test'))
	ok, problems, _ = analyze(os.path.join(common.BUILD, 'src', 'linux'), b, logdir)
	totals = parse_torture_totals(b['tap_text'])
	splats = find_splats(b['console_text'])
	if not totals.get('passes'):
		ok = False
		problems.append('soak: no "totals: passes" line (torture did not finish)')
	if not totals.get('kill_storm kills'):
		ok = False
		problems.append('soak: no "totals: phase kill_storm" line (ast_mutex_test\'s '
				'kill storm did not run)')
	elif totals.get('kill_storm failures'):
		ok = False
		problems.append('soak: the kill storm failed %d times (a killed waiter owned '
				'the word, or the word could not be taken back)' %
				totals['kill_storm failures'])
	res = {'verdict': 'PASS' if ok else 'FAIL', 'seconds_asked': seconds,
	       'wall_seconds': round(b['seconds']), 'smp': smp, 'flavour': 'debug',
	       'accel': b['accel'], 'console': b['console'], 'append': b['append'],
	       'rejudged': bool(args.rejudge),
	       'totals': totals, 'reports': len(splats), 'problems': problems}
	os.makedirs(req.out, exist_ok=True)
	with open(os.path.join(req.out, 'soak.json'), 'w') as f:
		json.dump(res, f, indent=1)
	with open(os.path.join(req.out, 'soak.md'), 'w') as f:
		f.write('# Soak: kselftest torture on the debug kernel\n\n')
		f.write('%s%s; asked %d s, boot took %d s, %d vCPUs, %s; kernel reports: %d\n\n' %
			(res['verdict'], ' (judged again from the logs)' if args.rejudge else '',
			 seconds, res['wall_seconds'], smp, b['accel'].upper(), len(splats)))
		f.write('| total | value |\n|---|---|\n')
		for k, v in totals.items():
			f.write('| %s | %d |\n' % (k, v))
		for p in problems:
			f.write('\n- %s' % p)
		f.write('\n')
	log('soak: %s; %s' % (res['verdict'], ', '.join('%s %d' % kv for kv in totals.items())))
	for p in problems:
		log('  ' + p)
	return 0 if ok else 1


def cmd_tcg_check(req, args):
	"""Whether this QEMU's TCG runs stale code after a static-key flip.

	Boots the debug kernel (CONFIG_JUMP_LABEL, CONFIG_SCHED_DEBUG) with
	scalable_keyflip=@args.rounds, once per TCG thread mode: /init flips
	the scheduler's stock feature keys while the other vCPUs run through
	their sites (init.sh).  Multi-threaded TCG that runs stale translated
	code dies "Oops: int3"; that is why a JUMP_LABEL kernel boots
	single-threaded (scalable_qemu.tcg_thread()).  Fails if the
	single-threaded boot does not finish cleanly, which would make that
	choice wrong; the multi-threaded result is reported either way.
	"""
	cmd_build(req, argparse.Namespace(flavours=['debug']))
	obj = os.path.join(common.BUILD, 'debug')
	logdir = os.path.join(req.out, 'logs')
	smp = max(2, default_smp(req))
	ok = True
	for thread in ('multi', 'single'):
		b = boot(dataclasses.replace(req, tcg_thread=thread), obj, 'debug', smp, 'test',
			 logdir, args.timeout, accel='tcg',
			 extra_append='kunit.enable=0 scalable_keyflip=%d' % args.rounds,
			 tag='keyflip-' + thread)
		rounds, int3 = parse_keyflip(b['console_text'])
		others = [s for s in find_splats(b['console_text'])
			  if s[0] != 'stack trace' and 'int3' not in s[1]]
		clean = rounds == args.rounds and not int3 and not others
		log('tcg-check: %s-threaded TCG, %d vCPUs: %s after %.0f s' %
		    (thread, smp, 'clean, %d rounds of %d key flips' % (rounds, 10 * rounds)
		     if clean else '; '.join(int3 + [s[1] for s in others]) or
		     'did not finish (%s)' % b['ended'], b['seconds']))
		if thread == 'single' and not clean:
			ok = False
	return 0 if ok else 1


def main():
	# The settings first, all of them checked before anything runs; some
	# are the defaults of options below (MODE, SOAK_SECONDS).
	try:
		req = request_from_env(os.environ)
	except HarnessError as e:
		die(str(e))
	ap = argparse.ArgumentParser(description=__doc__)
	sub = ap.add_subparsers(dest='cmd', required=True)
	sub.add_parser('prepare', help='install packages, unpack and patch the base')
	p = sub.add_parser('build', help='build kernels, selftests and initramfs')
	p.add_argument('flavours', nargs='*', default=list(FLAVOURS))
	p = sub.add_parser('run', help='main job: build, boot, test and benchmark the release kernel')
	p.add_argument('--mode', default=req.mode or 'full')
	p = sub.add_parser('test', help='CI: build and boot release and debug, fail on any failure')
	p.add_argument('flavours', nargs='*', default=list(FLAVOURS))
	p.add_argument('--no-harness-check', action='store_true')
	p.add_argument('--no-trace', action='store_true', help='skip the tracer checks')
	p.add_argument('--no-selftests-tar', action='store_true',
		       help='skip the native run of the selftests-tar tarball in the guest')
	p = sub.add_parser('boot', help='boot a built kernel once')
	p.add_argument('flavour', choices=FLAVOURS)
	p.add_argument('--mode', default=req.mode or 'test')
	p.add_argument('--inject', default='none', choices=('none', 'warn', 'panic', 'hang'))
	p = sub.add_parser('series', help='export the series with git format-patch')
	p.add_argument('--build', action='store_true', help='build every step of the series')
	p = sub.add_parser('check', help='checkpatch, sparse, W=1, coccicheck, kernel-doc and '
			   'the series\' objects on x86_64_defconfig variants')
	p.add_argument('--full', action='store_true',
		       help='whole kernels for every variant, then make deb and its boot test')
	sub.add_parser('figures', help='every figure in the docs is in a committed results file '
		       'that its text names')
	p = sub.add_parser('deb', help='Debian packages of the patched kernel (bindeb-pkg)')
	p.add_argument('--test', action='store_true',
		       help='boot the packaged kernel against the harness\'s guest')
	sub.add_parser('trace', help='cache-line transfers per operation at TRACE_SMP vCPUs')
	p = sub.add_parser('selftests-tar', help='the release kselftests and run_scalable.sh, '
			   'to run natively on a booted host, as a tarball')
	p.add_argument('--test', action='store_true',
		       help='boot it in the release guest and compare the reports')
	p.add_argument('--no-build', action='store_true',
		       help='pack what build/release has, without building it first')
	p = sub.add_parser('tcg-check', help='whether multi-threaded TCG runs stale code after '
			   'a static-key flip (boots the debug kernel twice)')
	p.add_argument('--rounds', type=int, default=200)
	p.add_argument('--timeout', type=int, default=900)
	p = sub.add_parser('soak', help='the kselftest torture on the debug kernel for a while')
	p.add_argument('--seconds', type=int, default=req.soak_seconds)
	p.add_argument('--rejudge', action='store_true',
		       help='judge the last soak\'s logs again, without a boot')
	args = ap.parse_args()
	for fl in getattr(args, 'flavours', []) or []:
		if fl not in FLAVOURS:
			die('unknown config "%s": choose one of %s' % (fl, ', '.join(FLAVOURS)))
	try:
		return {'prepare': cmd_prepare, 'build': cmd_build, 'run': cmd_run, 'test': cmd_test,
			'boot': cmd_boot, 'trace': cmd_trace, 'soak': cmd_soak,
			'selftests-tar': cmd_selftests_tar, 'tcg-check': cmd_tcg_check,
			'series': scalable_series.cmd_series, 'figures': cmd_figures,
			'check': cmd_check, 'deb': cmd_deb}[args.cmd](req, args) or 0
	except HarnessError as e:
		die(str(e), 1)
	except KeyboardInterrupt:
		die('interrupted', 130)


if __name__ == '__main__':
	sys.exit(main())
