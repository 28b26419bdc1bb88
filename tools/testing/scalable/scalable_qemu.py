# SPDX-License-Identifier: GPL-2.0
#
# Booting a built kernel in QEMU: KVM or TCG, the QEMU command line (two
# serial ports: the console on ttyS0, the kselftest TAP on ttyS1), the
# kernel command line of the guest's /init, and the watch that kills a
# guest past its timeout or a KVM guest that stays silent.  What the logs
# mean is scalable_parser's business.

import json
import os
import re
import subprocess
import time

import scalable_common as common
import scalable_schedule as schedule
from scalable_common import HarnessError, default_smp, log, machine_lock


def kvm_works(req):
	"""/dev/kvm can exist without usable hardware virtualization: check both.

	@req's ACCEL (kvm or tcg) decides instead, when set.
	"""
	if req.accel:
		return req.accel == 'kvm'
	if not os.access('/dev/kvm', os.R_OK | os.W_OK):
		return False
	try:
		flags = open('/proc/cpuinfo').read()
	except OSError:
		return False
	return bool(re.search(r'^flags\s*:.*\b(vmx|svm)\b', flags, re.M))


def qemu_cmd(req, obj, smp, accel, append, console, tap, mem, extra_qemu_args=(), sockets=1,
	     initrd=None):
	"""The QEMU command line that boots build/<flavour> (@obj).

	The QEMU is @req's (QEMU), and its TCG thread mode tcg_thread()'s.

	@initrd replaces @obj's initramfs.cpio.gz (make selftests-tar's test
	boots its own).

	@sockets > 1 splits the vCPUs into that many sockets (one per NUMA
	node: a node that shares a last-level cache with another makes the
	guest's scheduler warn, topology_sane()).

	@extra_qemu_args go last, after the harness's own options, e.g. a TCG
	plugin: ('-plugin', 'lib.so,arg=...', '-d', 'plugin', '-D', 'file').
	"""
	cmd = [req.qemu, '-M', 'pc', '-m', mem,
	       '-smp', str(smp) if sockets <= 1 else
	       '%d,sockets=%d,cores=%d,threads=1' % (smp, sockets, smp // sockets), '-nodefaults', '-display', 'none', '-no-reboot',
	       '-kernel', os.path.join(obj, 'arch', 'x86', 'boot', 'bzImage'),
	       '-initrd', initrd or os.path.join(obj, 'initramfs.cpio.gz'),
	       '-append', append,
	       '-chardev', 'file,id=con,path=' + console, '-serial', 'chardev:con',
	       '-chardev', 'file,id=tap,path=' + tap, '-serial', 'chardev:tap']
	if accel == 'kvm':
		cmd += ['-accel', 'kvm', '-cpu', 'host']
	else:
		cmd += ['-accel', 'tcg,thread=' + tcg_thread(req, obj), '-cpu', 'max']
	return cmd + list(extra_qemu_args)


def kernel_config_has(obj, option):
	"""Whether @obj's .config sets CONFIG_@option=y (False without one)."""
	try:
		text = open(os.path.join(obj, '.config')).read()
	except OSError:
		return False
	return re.search(r'^CONFIG_%s=y$' % option, text, re.M) is not None


def tcg_thread(req, obj):
	"""TCG's thread mode for the kernel of @obj: "multi" or "single".

	Multi-threaded TCG (a host thread per vCPU) executes stale translated
	code after cross-modifying code: a vCPU that translates a block while
	another vCPU patches it keeps the int3 that text_poke_bp() wrote for a
	moment, and runs it after the patch is done, when poke_int3_handler()
	no longer knows the address: "Oops: int3" at a static-key site.  Stock
	6.12 with CONFIG_JUMP_LABEL=y does it within seconds when sched_feat
	keys are flipped while the other vCPU schedules; single-threaded TCG
	(one host thread, vCPUs in turn, so no translation overlaps a write)
	never did (QEMU 7.2, both measured: README, "Static keys under TCG";
	the overlap is our reading of the results, not traced in QEMU).  So a
	kernel whose static keys patch text boots single-threaded; @req's
	TCG_THREAD=multi|single overrides.
	"""
	if req.tcg_thread:
		return req.tcg_thread
	return 'single' if kernel_config_has(obj, 'JUMP_LABEL') else 'multi'


# Flavours booted as a NUMA guest by default: two nodes, so that the
# per-node degree of clustered objects meets more than one node.  Their
# config must have CONFIG_NUMA (scalable-kcsan.config does).
NUMA_FLAVOURS = {'kcsan': 2}


def numa_nodes(req, flavour, smp):
	"""How many NUMA nodes a guest of @flavour at @smp vCPUs gets.

	@req's NUMA_NODES overrides (1: a flat machine).  Each node is a socket
	of its own with an equal share of the vCPUs, so the count is lowered to
	the largest that divides @smp.
	"""
	n = max(1, min(req.numa_nodes or NUMA_FLAVOURS.get(flavour, 1), smp))
	while smp % n:
		n -= 1
	return n


def check_numa_config(obj, flavour, nodes):
	"""Refuse a NUMA guest of a kernel built without CONFIG_NUMA.

	Such a kernel ignores the firmware's nodes and runs as one node, so
	the per-node degree of clustered objects would silently go untested.
	"""
	if nodes <= 1 or not os.path.exists(os.path.join(obj, '.config')):
		return
	if not kernel_config_has(obj, 'NUMA'):
		raise HarnessError('NUMA_NODES=%d: the %s kernel is built without CONFIG_NUMA and '
				   'would run as one node; boot the kcsan kernel '
				   '(FLAVOURS=kcsan), or add CONFIG_NUMA=y to its config' %
				   (nodes, flavour))


def numa_qemu_args(nodes, smp, mem_mib):
	"""QEMU options splitting @smp vCPUs and @mem_mib MiB into @nodes nodes.

	Each node gets a contiguous block of vCPUs and an equal share of the
	memory (the last node the remainder), as a memory backend of its own,
	which is what -numa needs on current machine types.  One node: none.
	"""
	if nodes <= 1:
		return []
	args = []
	for i in range(nodes):
		lo, hi = i * smp // nodes, (i + 1) * smp // nodes - 1
		size = mem_mib // nodes + (mem_mib % nodes if i == nodes - 1 else 0)
		args += ['-object', 'memory-backend-ram,id=mem%d,size=%dM' % (i, size),
			 '-numa', 'node,nodeid=%d,cpus=%d-%d,memdev=mem%d' % (i, lo, hi, i)]
	return args


def tcg_tsc_param(accel):
	"""OpLog's clock under TCG.

	TCG gives every vCPU the same TSC, derived from the host's and kept
	monotonic across vCPUs (QEMU's cpu_get_ticks()), but it cannot advertise
	the invariant-TSC CPUID bit, so the guest kernel would not trust it and
	OpLog would fall back to its global sequence counter.  Where the host
	TSC itself is constant and synchronized, say so on the command line.
	Under KVM (-cpu host) the guest decides by itself.
	"""
	if accel != 'tcg':
		return ''
	try:
		flags = open('/proc/cpuinfo').read()
	except OSError:
		return ''
	if re.search(r'^flags\s*:.*\bconstant_tsc\b.*\bnonstop_tsc\b', flags, re.M):
		return ' oplog.clock=tsc'
	return ''


def boot(req, obj, flavour, smp, mode, logdir, timeout, inject='none', cpus=None,
	 extra_qemu_args=(), accel=None, extra_append='', tag='', initrd=None,
	 upstream_off=False):
	"""Boot once; return dict with console and tap logs and how it ended.

	@req gives QEMU, its accelerator and TCG thread mode, the guest's
	memory and NUMA nodes, and KERNEL_ARGS.
	@extra_qemu_args are appended to the QEMU command line (qemu_cmd()).
	@accel 'kvm' or 'tcg' forces the accelerator (a TCG plugin needs TCG);
	None detects it (kvm_works(), which honours ACCEL).
	@extra_append is added to the kernel command line, and @tag to the
	names of the logs (e.g. "trace" for the tracer's boots).  @initrd
	boots another initramfs than @obj's (qemu_cmd()).  @upstream_off
	(make test's release boot) adds scalable_upstream_off=1: the guest
	runs the upstream kselftests once more, first, with the series'
	switches off, and the host compares the two passes
	(scalable_parser.check_upstream_off()).
	"""
	os.makedirs(logdir, exist_ok=True)
	# KERNEL_ARGS: extra kernel command-line words, e.g. dcache_oplog=off to
	# run the tests on the stock dentry path; their logs get their own names.
	kargs = ' '.join(req.kernel_args.split())
	name = '%s%s-smp%d%s%s' % (flavour, '-' + tag if tag else '', smp,
				   '' if inject == 'none' else '-inject-' + inject,
				   '-' + re.sub(r'[^A-Za-z0-9]+', '_', kargs) if kargs else '')
	console = os.path.join(logdir, name + '.console.log')
	tap = os.path.join(logdir, name + '.tap.log')
	append = ('console=ttyS0 panic=-1 oops=panic loglevel=7 '
		  'scalable_mode=%s scalable_inject=%s '
		  'scalable_kmemleak=%d' % (mode, inject, 1 if flavour == 'debug' else 0))
	if cpus:
		append += ' scalable_cpus=' + cpus
	if flavour == 'debug':
		# 4-level paging for the KASAN kernel: 6.12's identify_cpu()
		# clears boot_cpu_data's X86_FEATURE_LA57 until it reads CPUID
		# again, and before alternatives are patched pgtable_l5_enabled()
		# reads that bit, so an interrupt in the window has KASAN take
		# the 5-level direct map for addresses without shadow and report
		# a "wild-memory-access" that is not one (rcu_is_watching(), in
		# an interrupt taken in identify_cpu(); results/kasan-la57-*).
		# With 4-level paging the bit reading set for a while only
		# widens what KASAN takes to have shadow.
		append += ' kmemleak=on no5lvl'
	if upstream_off:
		append += ' scalable_upstream_off=1'
	if extra_append:
		append += ' ' + extra_append
	if kargs:
		append += ' ' + kargs
	if accel is None:
		accel = 'kvm' if kvm_works(req) else 'tcg'
	elif accel not in ('kvm', 'tcg'):
		raise HarnessError('boot(): accel must be kvm, tcg or None, not %r' % (accel,))
	mem_mib = req.mem
	mem = '%dM' % mem_mib
	nodes = numa_nodes(req, flavour, smp)
	check_numa_config(obj, flavour, nodes)
	numa = numa_qemu_args(nodes, smp, mem_mib)
	items = schedule.boot_schedule(mode, smp, cpus, append)
	if items:
		log('scheduled: about %s at %d TCG vCPUs in the release kernel; timeout %s' %
		    (schedule.fmt(schedule.total(items)), smp, schedule.fmt(timeout)))
	progress = None
	for attempt in (1, 2):
		for p in (console, tap):
			open(p, 'w').close()
		cmd = qemu_cmd(req, obj, smp, accel, append + tcg_tsc_param(accel), console, tap,
			       mem, numa + list(extra_qemu_args), sockets=nodes, initrd=initrd)
		log('booting %s kernel, -smp %d%s, %s, mode %s (console: %s)' %
		    (flavour, smp, ', %d NUMA nodes' % nodes if nodes > 1 else '',
		     accel.upper() + (' ' + tcg_thread(req, obj) + '-threaded' if accel == 'tcg'
				      else ''),
		     mode, os.path.relpath(console, common.TOP)))
		t0 = time.time()
		with machine_lock(req, 'booting'):
			# Time the guest, not the wait for the lock.
			t0 = time.time()
			progress = schedule.Progress(items, t0) if items else None
			proc, ended, seen_tap = watch_guest(cmd, console, tap, accel, timeout,
							    progress)
		if ended == 'kvm-silent' and attempt == 1:
			log('KVM guest printed nothing in 30 s: KVM does not really work here, '
			    'retrying with TCG')
			accel = 'tcg'
			continue
		break
	secs = time.time() - t0
	timeline = None
	if progress:
		progress.close(t0 + secs)
		timeline = progress.timeline
		with open(os.path.join(logdir, name + '.timeline.json'), 'w') as f:
			json.dump({'schedule': items, 'timeline': timeline, 'seconds': secs}, f,
				  indent=1)
	con = open(console, errors='replace').read()
	taptext = open(tap, errors='replace').read()
	return {'name': name, 'flavour': flavour, 'smp': smp, 'accel': accel, 'mode': mode,
		'console': console, 'tap': tap, 'console_text': con, 'tap_text': taptext,
		'ended': ended or 'exit', 'qemu_rc': proc.returncode, 'seconds': secs,
		'append': append, 'numa_nodes': nodes, 'schedule': items, 'timeline': timeline,
		'cpus': cpus,
		'tcg_thread': tcg_thread(req, obj) if accel == 'tcg' else None}


def watch_guest(cmd, console, tap, accel, timeout, progress=None):
	"""Run QEMU; kill it on timeout, or when a KVM guest stays silent.

	@progress (a scalable_schedule.Progress) is fed the TAP stream's lines
	as they arrive, and what it answers is printed.
	"""
	t0 = time.time()
	proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
				stderr=subprocess.STDOUT)
	ended, seen_tap = None, 0
	try:
		while True:
			try:
				proc.wait(timeout=1)
				break
			except subprocess.TimeoutExpired:
				pass
			elapsed = time.time() - t0
			seen_tap = echo_progress(tap, seen_tap, progress)
			if accel == 'kvm' and elapsed > 30 and os.path.getsize(console) == 0:
				ended = 'kvm-silent'
				break
			if elapsed > timeout:
				ended = 'timeout'
				break
	finally:
		if proc.poll() is None:
			proc.kill()
			proc.wait()
	seen_tap = echo_progress(tap, seen_tap, progress)
	out = proc.stdout.read().decode(errors='replace').strip()
	if out:
		log('qemu: ' + out[-2000:])
	return proc, ended, seen_tap


def echo_progress(path, seen, progress=None):
	"""Print the TAP results and RESULT lines that @path gained after byte @seen.

	Returns the new offset, in bytes: the file is read as bytes, since the
	serial port writes CR LF and a text-mode read would count the CRs it
	drops as unread and read the same lines again.  @progress, if any, sees
	every complete line.
	"""
	now = time.time()
	try:
		with open(path, 'rb') as f:
			f.seek(seen)
			data = f.read()
	except OSError:
		return seen
	end = data.rfind(b'\n')
	if end < 0:
		return seen
	for line in data[:end].decode(errors='replace').split('\n'):
		line = line.rstrip('\r')
		for msg in progress.feed(line, now) if progress else ():
			print(msg, flush=True)
		if re.match(r'(not )?ok \d+ ', line) or 'RESULT ' in line or \
		   re.match(r'# (not )?ok \d+ ', line):
			print('  | ' + line, flush=True)
	return seen + end + 1


def boot_timeout(req, flavour, mode):
	"""Seconds a boot of @flavour in @mode may take (@req's BOOT_TIMEOUT overrides).

	make run's modes (quick, full) get their schedule times
	scalable_schedule.MARGIN (the benchmarks sweep 1..SMP workers, or
	CPUS); a checking boot (test) gets scalable_schedule.TEST_TIMEOUT_S
	(900 s, which make test's release boot with its upstream pass with the
	switches off fits: test_scalable_schedule.py), three times that in the
	debug kernel and twice in the KCSAN kernel.
	"""
	if req.boot_timeout:
		return req.boot_timeout
	if mode == 'test':
		return schedule.TEST_TIMEOUT_S * schedule.FLAVOUR_FACTOR.get(flavour, 1)
	return schedule.timeout(mode, default_smp(req), flavour, req.cpus)
