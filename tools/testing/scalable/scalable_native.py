#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# The report of a native run: run_scalable.sh (run_native.sh here), which
# make selftests-tar packs with this file, ran the kselftests on a machine
# booted into the patched kernel and left its logs in a directory; this
# reads them as scalable_parser.analyze() reads a guest's boot and writes
# make run's report, report.md and report.json, beside them.  It runs in
# the unpacked tarball, which has no kernel tree (analyze() with no source:
# KUnit is parsed with the copy of tools/testing/kunit/ packed there), and
# needs only the standard library.
#
#   python3 tools/testing/scalable/scalable_native.py LOGDIR

import os
import sys

import scalable_common as common
from scalable_parser import analyze
from scalable_report import write_report

# The tarball carries the release flavour's kselftests (its EXCLUDED_TESTS
# out of the run list); the release flavour's tables judge the run.
FLAVOUR = 'release'
# The boot's name: analyze() names its KTAP and KUnit JSON files after it.
NAME = 'native'
# What run_scalable.sh joins into console.log, in this order: KUnit's KTAP
# before the "init start" marker, as on a guest's console, then dmesg.
CONSOLE_PARTS = ('kunit.ktap', 'markers.log', 'dmesg.log')


def read_env(path):
	"""run.env: the "key=value" lines run_scalable.sh writes, as a dict."""
	env = {}
	with open(path) as f:
		for line in f:
			k, sep, v = line.rstrip('\n').partition('=')
			if sep:
				env[k] = v
	return env


def read(path):
	with open(path, errors='replace') as f:
		return f.read()


def native_boot(logdir):
	"""The run of run_scalable.sh in @logdir, as the boot dict of analyze().

	A run that was stopped before it joined its console log is read from
	the parts it has: the report then says it did not finish.
	"""
	env = read_env(os.path.join(logdir, 'run.env'))
	console = os.path.join(logdir, 'console.log')
	tap = os.path.join(logdir, 'tap.log')
	if os.path.exists(console):
		con = read(console)
	else:
		con = ''.join(read(os.path.join(logdir, p)) for p in CONSOLE_PARTS
			      if os.path.exists(os.path.join(logdir, p)))
		with open(console, 'w') as f:
			f.write(con)
	start, end = env.get('start', ''), env.get('end', '')
	return {'name': NAME, 'flavour': FLAVOUR, 'smp': int(env.get('nproc') or 0),
		'accel': 'native', 'mode': env.get('mode', 'full'), 'console': console,
		'tap': tap, 'console_text': con, 'tap_text': read(tap) if os.path.exists(tap) else '',
		'ended': 'exit', 'qemu_rc': 'none, native run',
		'seconds': int(end) - int(start) if start.isdigit() and end.isdigit() else 0,
		'append': env.get('append', ''), 'host': env.get('host', '?'),
		'kernel': env.get('kernel', '?')}


def title(b):
	"""make run's title, and where the run was."""
	return 'Scalable series: benchmark report (%s mode), native on %s, Linux %s' % (
		b['mode'], b['host'], b['kernel'])


def report(logdir):
	"""Judge the run in @logdir, write its report there; True if it passed."""
	b = native_boot(logdir)
	ok, problems, summary = analyze(None, b, logdir)
	write_report(logdir, [summary], title(b))
	return ok


def main(argv):
	if len(argv) != 2 or argv[1].startswith('-'):
		print('usage: %s LOGDIR  (the -o directory of run_scalable.sh)' % argv[0],
		      file=sys.stderr)
		return 2
	logdir = os.path.abspath(argv[1])
	if not os.path.exists(os.path.join(logdir, 'run.env')):
		common.die('%s has no run.env: not a log directory of run_scalable.sh' % logdir)
	return 0 if report(logdir) else 1


if __name__ == '__main__':
	sys.exit(main(sys.argv))
