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
#   scalable_tree.py    packages, the pinned base, patches/, build/src/linux
#   scalable_build.py   kernel config and build, kselftests, initramfs
#   scalable_qemu.py    the QEMU command line, boot and watch
#   scalable_parser.py  splats, KUnit KTAP, kselftest TAP, RESULT lines
#   scalable_report.py  the benchmark table, out/report.md and report.json
#   scalable_series.py  git format-patch export, make check

import argparse
import os
import sys

import scalable_common as common
import scalable_series
from scalable_build import build_kernel
from scalable_common import FLAVOURS, HarnessError, default_smp, die, env_int, log
from scalable_parser import analyze
from scalable_qemu import boot, boot_timeout
from scalable_report import write_report
from scalable_tree import ensure_packages, prepare_src


def cmd_prepare(args):
	ensure_packages(need_base=not (os.environ.get('LINUX_TREE') or
				       os.environ.get('LINUX_TARBALL')))
	prepare_src()
	log('build/src/linux is ready')


def cmd_build(args):
	ensure_packages(need_base=not (os.environ.get('LINUX_TREE') or
				       os.environ.get('LINUX_TARBALL')))
	for fl in args.flavours:
		build_kernel(fl)


def boot_and_judge(flavour, mode, smp, logdir, cpus=None):
	src = os.path.join(common.BUILD, 'src', 'linux')
	obj = os.path.join(common.BUILD, flavour)
	b = boot(obj, flavour, smp, mode, logdir, boot_timeout(flavour, mode), cpus=cpus)
	ok, problems, summary = analyze(src, b, logdir)
	verdict = 'PASS' if ok else 'FAIL'
	log('%s: %s in %.0f s' % (b['name'], verdict, b['seconds']))
	for p in problems:
		log('  ' + p)
	return ok, summary


def cmd_run(args):
	"""The main job: build the release kernel, boot, test, benchmark, report."""
	mode = args.mode
	if mode not in ('quick', 'full', 'test'):
		die('MODE must be quick or full, not "%s"' % mode)
	cmd_build(argparse.Namespace(flavours=['release']))
	smp = default_smp()
	logdir = os.path.join(common.OUT, 'logs')
	ok, summary = boot_and_judge('release', mode, smp, logdir, cpus=os.environ.get('CPUS'))
	write_report([summary], 'Scalable series: benchmark report (%s mode)' % mode)
	return 0 if ok else 1


def cmd_test(args):
	"""What CI runs: release and debug kernels, all tests, splat check."""
	flavours = args.flavours
	cmd_build(argparse.Namespace(flavours=flavours))
	smp = default_smp()
	logdir = os.path.join(common.OUT, 'logs')
	results, summaries = [], []
	if not args.no_harness_check:
		results.append(('harness self-check', harness_selfcheck(logdir)))
	for fl in flavours:
		ok, summary = boot_and_judge(fl, 'test', smp, logdir)
		results.append((fl, ok))
		summaries.append(summary)
	write_report(summaries, 'Scalable series: test report')
	failed = [n for n, ok in results if not ok]
	if failed:
		log('FAILED: ' + ', '.join(failed))
		return 1
	log('all tests passed')
	return 0


def harness_selfcheck(logdir):
	"""Boot with injected faults: each must be caught, or the harness is broken."""
	src = os.path.join(common.BUILD, 'src', 'linux')
	obj = os.path.join(common.BUILD, 'release')
	ok = True
	for inject, timeout, want in (('warn', 300, 'kernel splat (WARNING)'),
				      ('panic', 300, 'kernel panic'),
				      ('hang', 25, 'did not finish within the timeout')):
		b = boot(obj, 'release', 2, 'test', logdir, timeout, inject=inject)
		passed, problems, _ = analyze(src, b, logdir, expect_done=False) \
			if inject != 'warn' else analyze(src, b, logdir)
		caught = any(want in p for p in problems)
		log('harness self-check: injected %s -> %s' %
		    (inject, 'caught' if caught else 'NOT CAUGHT: %s' % problems))
		ok = ok and caught and not passed
	return ok


def cmd_boot(args):
	"""Boot an already built kernel once (for debugging the harness)."""
	smp = default_smp()
	logdir = os.path.join(common.OUT, 'logs')
	if args.inject != 'none':
		b = boot(os.path.join(common.BUILD, args.flavour), args.flavour, smp, args.mode,
			 logdir, env_int('BOOT_TIMEOUT', 60), inject=args.inject)
		ok, problems, _ = analyze(os.path.join(common.BUILD, 'src', 'linux'), b, logdir,
					  expect_done=False)
		for p in problems:
			log(p)
		return 0 if ok else 1
	ok, summary = boot_and_judge(args.flavour, args.mode, smp, logdir, cpus=os.environ.get('CPUS'))
	write_report([summary], 'Scalable series: boot report')
	return 0 if ok else 1


def main():
	ap = argparse.ArgumentParser(description=__doc__)
	sub = ap.add_subparsers(dest='cmd', required=True)
	sub.add_parser('prepare', help='install packages, unpack and patch the base')
	p = sub.add_parser('build', help='build kernels, selftests and initramfs')
	p.add_argument('flavours', nargs='*', default=list(FLAVOURS))
	p = sub.add_parser('run', help='main job: build, boot, test and benchmark the release kernel')
	p.add_argument('--mode', default=os.environ.get('MODE') or 'full')
	p = sub.add_parser('test', help='CI: build and boot release and debug, fail on any failure')
	p.add_argument('flavours', nargs='*', default=list(FLAVOURS))
	p.add_argument('--no-harness-check', action='store_true')
	p = sub.add_parser('boot', help='boot a built kernel once')
	p.add_argument('flavour', choices=FLAVOURS)
	p.add_argument('--mode', default=os.environ.get('MODE') or 'test')
	p.add_argument('--inject', default='none', choices=('none', 'warn', 'panic', 'hang'))
	p = sub.add_parser('series', help='export the series with git format-patch')
	p.add_argument('--build', action='store_true', help='build every step of the series')
	sub.add_parser('check', help='checkpatch, sparse, W=1, coccicheck and kernel-doc')
	args = ap.parse_args()
	for fl in getattr(args, 'flavours', []) or []:
		if fl not in FLAVOURS:
			die('unknown config "%s": choose one of %s' % (fl, ', '.join(FLAVOURS)))
	try:
		return {'prepare': cmd_prepare, 'build': cmd_build, 'run': cmd_run, 'test': cmd_test,
			'boot': cmd_boot, 'series': scalable_series.cmd_series,
			'check': scalable_series.cmd_check}[args.cmd](args) or 0
	except HarnessError as e:
		die(str(e), 1)
	except KeyboardInterrupt:
		die('interrupted', 130)


if __name__ == '__main__':
	sys.exit(main())
