#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# The cache-line transfer tracer's host side: read the c2c plugin's window
# records (tools/testing/scalable/c2c/c2c.c), join them in order to the
# TRACE_WINDOW lines the benchmarks print for the same windows, turn the
# counts into figures per operation and attribute the transferred lines to
# kernel functions and data symbols, as perf c2c does on hardware.
#
# Leaf module: the standard library only, so that it can be unit-tested and
# run by hand on a finished trace:
#
#   scalable_trace.py <c2c.out> <tap.log> <System.map> [<obj dir>]

import bisect
import json
import os
import re
import subprocess
import sys

# Instructions at or above this address are kernel code (x86-64 Linux, with
# 4- or 5-level paging); so are data addresses at or above KERNEL_DATA.
KERNEL_HALF = 0xffff800000000000
KERNEL_DATA = 0xff00000000000000
# The label of the vmemmap, the array of struct pages
PAGE_ARRAY = 'struct page array'
# x86-64 Linux address-space regions (Documentation/arch/x86/x86_64/mm.rst),
# 4-level and 5-level paging, for data that is not in the kernel image.
REGIONS = (
	(0xffff888000000000, 0xffffc87fffffffff, 'direct map (slab, page, per-CPU)'),
	(0xffffc90000000000, 0xffffe8ffffffffff, 'vmalloc/ioremap'),
	(0xffffea0000000000, 0xffffeaffffffffff, PAGE_ARRAY),
	(0xfffffe0000000000, 0xfffffe7fffffffff, 'cpu_entry_area'),
	(0xff11000000000000, 0xff90ffffffffffff, 'direct map (slab, page, per-CPU)'),
	(0xffa0000000000000, 0xffd1ffffffffffff, 'vmalloc/ioremap'),
	(0xffd4000000000000, 0xffd5ffffffffffff, PAGE_ARRAY),
	(0xffffffff80000000, 0xffffffffffffffff, 'kernel image'),
)

# Code of the series' mechanisms: a transfer is charged to a mechanism when
# the accessing instruction or the one that last stored to the line is in
# its code.  Each entry is one of
#   an object file (relative to the build directory): its functions, by the
#       symbol (System.map) that holds the instruction, and its source file
#       (x.o: x.c), by the inline chain;
#   a source file (.c, .h): code compiled from it, wherever it is inlined
#       (the series' hit paths are static inline functions of its headers,
#       inlined into fs/namei.c, fs/dcache.c, mm/ and fs/notify/);
#   "fn:<name>": one function, out of line or inlined.
# By the inline chain (addr2line -i on vmlinux's DWARF), an instruction is
# a mechanism's when any frame of the chain, from the function it was
# inlined into out to the one that holds it, is one of its functions or
# lies in one of its source files.  Without DWARF only the symbol that
# holds the instruction is looked up, and code inlined from the series'
# headers into other objects is charged to none (see Attribution).
MECHANISMS = {
	'oplog': ('lib/oplog.o', 'lib/oplog_counter.o', 'lib/oplog_cache.o',
		  'lib/oplog_debugfs.o', 'lib/oplog_internal.h',
		  'arch/x86/include/asm/oplog.h',
		  'fs/dcache_oplog.o', 'include/linux/oplog.h',
		  'include/linux/oplog_types.h', 'fs/dcache_oplog.h', 'fs/inode_oplog.o',
		  'fs/inode_oplog.h'),
	# the dcache's own code: a dentry's lines (d_lockref above all) that
	# move are read or written there (issue 12's "dentry lines")
	'dcache': ('fs/dcache.o', 'lib/lockref.o'),
	'qdo': ('kernel/qdo/qdo.o', 'include/linux/qdo.h'),
	'clustered': ('lib/clustered.o', 'lib/clustered_counter.o', 'include/linux/clustered.h',
		      'include/linux/clustered_counter.h'),
	# the inotify queue (issue 14): fsnotify's queue code, inotify's, the
	# OpLog queue's, and the wait-queue functions that a wakeup runs
	# ("fn:": kernel/sched/'s unity-build objects hold the whole
	# scheduler, so these are named one by one)
	'inotify': ('fs/notify/notification.o', 'fs/notify/inotify/inotify_fsnotify.o',
		    'fs/notify/inotify/inotify_user.o', 'fs/notify/inotify_oplog.o',
		    'fs/notify/inotify/inotify.h', 'fs/notify/inotify_oplog.h',
		    'fn:__wake_up', 'fn:__wake_up_common', 'fn:__wake_up_common_lock',
		    'fn:add_wait_queue', 'fn:remove_wait_queue', 'fn:woken_wake_function',
		    'fn:wait_woken', 'fn:kill_fasync'),
	# the file reverse map (issue 13): the i_mmap tree, OpLog's rmap user,
	# and the write side of the rwsem functions, which the reverse map's
	# updates take i_mmap_rwsem with (inserts, removes, vma_prepare());
	# the read side is left out: the reverse map's walkers read-lock it,
	# which the benchmarks do not run, while the rw_semaphores that every
	# CPU shares in exec_bench are read-locked (a directory's i_rwsem in
	# ld.so's failed lookups).  The write side still counts a process's
	# own mmap_lock, which its mmap() and munmap() take on one CPU at a
	# time (fork_bench's workers are separate processes).
	'rmap': ('mm/oplog_rmap.o', 'mm/interval_tree.o', 'include/linux/rmap_oplog.h',
		 'fn:down_write', 'fn:up_write', 'fn:down_write_trylock', 'fn:downgrade_write',
		 'fn:rwsem_down_write_slowpath', 'fn:rwsem_wake', 'fn:rwsem_mark_wake',
		 'fn:rwsem_optimistic_spin'),
}


class TraceError(Exception):
	pass


def _kv(words):
	out = {}
	for w in words:
		if '=' in w:
			k, v = w.split('=', 1)
			out[k] = v
	return out


def _int(v):
	return int(v, 0)


def _vals(kv):
	"""Numbers as ints, words (a context name) as they are."""
	out = {}
	for k, v in kv.items():
		try:
			out[k] = int(v, 0)
		except ValueError:
			out[k] = v
	return out


# Kernel contexts of the plugin (c2c.c): the operation's path, and what the
# clock drives (inflated per operation by the emulation's slowness).
OP_CONTEXTS = ('syscall', 'exception', 'ipi')
TIME_CONTEXTS = ('interrupt', 'kthread')
ENTRY_RE = re.compile(r'^(entry_SYSCALL_64|entry_SYSCALL_compat|entry_INT80_compat|'
		      r'entry_SYSENTER_compat|asm_exc_\w+|asm_sysvec_\w+|asm_common_interrupt|'
		      r'asm_spurious_interrupt)$')
IPI_ENTRIES = ('asm_sysvec_reschedule_ipi', 'asm_sysvec_call_function',
	       'asm_sysvec_call_function_single', 'asm_sysvec_irq_work')


def entry_points(system_map):
	"""[(address, context)] of the kernel's x86-64 entry points."""
	out = []
	with open(system_map) as f:
		for line in f:
			parts = line.split()
			if len(parts) >= 3 and parts[2] == '__switch_to_asm':
				out.append((int(parts[0], 16), 'switch'))
				continue
			if len(parts) < 3 or not ENTRY_RE.match(parts[2]):
				continue
			name = parts[2]
			if name.startswith('entry_'):
				ctx = 'syscall'
			elif name in IPI_ENTRIES:
				ctx = 'ipi'
			elif name.startswith('asm_exc_') and name != 'asm_exc_spurious_interrupt_bug':
				ctx = 'exception'
			else:
				ctx = 'interrupt'
			out.append((int(parts[0], 16), ctx))
	for want, sym in (('syscall', 'entry_SYSCALL_64'), ('switch', '__switch_to_asm')):
		if not any(c == want for _, c in out):
			raise TraceError('%s has no %s: not an x86-64 System.map' % (system_map, sym))
	return out


# Functions whose calls the plugin measures ("spans", c2c.c): the OpLog's
# apply under the object lock, which max_pending bounds to a constant number
# of operations whatever the CPU count, and the reverse map's apply of
# what it took out of the logs and its spill list, under i_mmap_rwsem.
# Each must return by ret (or the return thunk), not by a tail call, so
# that its returns end every call.  Each names the functions that every
# operation a call handles runs once (its "op" entries: OpLog types'
# ->exec callbacks; the interval tree's insert and remove), so that a
# call's instructions can be divided by its operations.
SPAN_FUNCS = (
	('__oplog_sync', ('inotify_oplog_exec', 'rmap_oplog_exec')),
	('rmap_oplog_apply', ('vma_interval_tree_insert', 'vma_interval_tree_remove')),
)
SPAN_NAMES = tuple(name for name, _ in SPAN_FUNCS)
INSN_RE = re.compile(r'^\s*([0-9a-f]+):\s+(.*?)\s*$')
# Instruction prefixes objdump prints before the mnemonic
PREFIXES = ('cs', 'ds', 'notrack', 'bnd', 'rep', 'repz', 'repnz', 'lock')


def _func_addrs(system_map):
	"""Sorted [(address, name)] of the text symbols of @system_map."""
	syms = []
	with open(system_map) as f:
		for line in f:
			parts = line.split()
			if len(parts) >= 3 and parts[1] in 'tTwW':
				syms.append((int(parts[0], 16), parts[2]))
	syms.sort()
	return syms


def span_sites(system_map, vmlinux, name, run=subprocess.run):
	"""(entry, [return addresses]) of function @name, or None if the
	kernel has no such function (stock 6.12).  Refuses one that leaves by
	a jump out of its body (a tail call), whose calls would end unseen."""
	syms = _func_addrs(system_map)
	for i, (addr, sym) in enumerate(syms):
		if sym == name:
			break
	else:
		return None
	end = next((a for a, _ in syms[i + 1:] if a > addr), addr + 4096)
	try:
		r = run(['objdump', '-d', '--no-show-raw-insn', '--start-address=%#x' % addr,
			 '--stop-address=%#x' % end, vmlinux], capture_output=True, text=True)
	except OSError as e:
		raise TraceError('objdump: %s (binutils)' % e)
	if r.returncode:
		raise TraceError('objdump %s: %s' % (vmlinux, r.stderr.strip()))
	rets = []
	for line in r.stdout.splitlines():
		m = INSN_RE.match(line)
		if not m:
			continue
		words = m.group(2).split()
		while len(words) > 1 and words[0] in PREFIXES:
			words = words[1:]
		if not words:
			continue
		pc, op, arg = int(m.group(1), 16), words[0], ' '.join(words[1:])
		if op.startswith('ret') or (op.startswith('j') and
					    '<__x86_return_thunk>' in arg):
			rets.append(pc)
		elif op.startswith('j') and ('*' in arg or not re.search(
				r'<%s(\+0x[0-9a-f]+)?>' % re.escape(name), arg)):
			raise TraceError('%s leaves by a jump out of its body (%s %s): its '
					 'calls cannot be measured' % (name, op, arg))
	if not rets:
		raise TraceError('%s: no return found in %s' % (name, vmlinux))
	return addr, rets


def write_entries(system_map, path, vmlinux=None, spans=SPAN_FUNCS):
	"""The plugin's entries file: the kernel's entry points and, with
	@vmlinux, the entries and returns of @spans (span<N> and ret<N>, N
	the index in @spans) and the entries of their operations' functions
	(op<N>).  A span that cannot be measured is left out with a warning
	on stderr: the rest of the trace does not need it.  Returns @path."""
	funcs = dict((n, a) for a, n in _func_addrs(system_map)) if vmlinux else {}
	with open(path, 'w') as f:
		for addr, ctx in entry_points(system_map):
			f.write('%#x %s\n' % (addr, ctx))
		for i, (name, ops) in enumerate(spans if vmlinux else ()):
			try:
				sites = span_sites(system_map, vmlinux, name)
			except TraceError as e:
				print('scalable: span not measured: %s' % e, file=sys.stderr)
				continue
			if not sites:
				continue
			f.write('%#x span%d\n' % (sites[0], i))
			for pc in sites[1]:
				f.write('%#x ret%d\n' % (pc, i))
			for op in ops:
				if op in funcs:
					f.write('%#x op%d\n' % (funcs[op], i))
	return path


def parse_c2c(text):
	"""The plugin's output: {'header': {...}, 'windows': [...], 'warnings': [...]}.

	Each window: {'seq', 'vcpus', 'cpus': [per-vCPU dicts], 'total': {...},
	'lines': [{'phys', 'w', 't', 'kw', 'kt', 'va', 'sites': [{'pc', 'wpc',
	'store', 'n'}]}]}.  A window without its end line (QEMU killed) is
	dropped and reported in 'warnings'.
	"""
	header, windows, warnings, cur = {}, [], [], None
	for raw in text.splitlines():
		words = raw.split()
		if not words:
			continue
		tag, kv = words[0], _kv(words[1:])
		if tag == 'c2c':
			header = {k: _int(v) for k, v in kv.items()}
		elif tag == 'exit':
			if kv.get('open') not in (None, '0'):
				warnings.append('QEMU exited with a window open')
			if kv.get('outside') not in (None, '0'):
				warnings.append('%s accesses beyond the line table' % kv['outside'])
			if kv.get('switch') == '0':
				warnings.append('no __switch_to_asm entry: contexts follow vCPUs, '
						'not tasks')
		elif tag == 'window':
			if cur is not None:
				warnings.append('window %d has no end' % cur['seq'])
			cur = {'seq': _int(kv['seq']), 'vcpus': _int(kv['vcpus']), 'cpus': [],
			       'total': {}, 'contexts': {}, 'lines': [], 'spans': {}}
		elif cur is None:
			if tag in ('warning', 'error'):
				warnings.append(raw)
			continue
		elif tag == 'cpu':
			cur['cpus'].append({k: _int(v) for k, v in kv.items()})
		elif tag == 'total':
			cur['total'] = {k: _int(v) for k, v in kv.items()}
		elif tag == 'contexts':
			cur['contexts'] = {k: _int(v) for k, v in kv.items()}
		elif tag == 'span':
			sp = {k: _int(v) for k, v in kv.items()}
			cur['spans'][sp.pop('id')] = sp
		elif tag == 'line':
			line = {k: _int(v) for k, v in kv.items()}
			line['sites'] = []
			cur['lines'].append(line)
		elif tag == 'xfer':
			if not cur['lines']:
				raise TraceError('transfer site before any line in window %d' % cur['seq'])
			cur['lines'][-1]['sites'].append(_vals(kv))
		elif tag == 'end':
			if _int(kv['seq']) != cur['seq']:
				raise TraceError('window %d ends as %s' % (cur['seq'], kv['seq']))
			windows.append(cur)
			cur = None
		elif tag in ('warning', 'error'):
			warnings.append(raw)
	if cur is not None:
		warnings.append('window %d has no end (the guest was stopped inside it)' % cur['seq'])
	return {'header': header, 'windows': windows, 'warnings': warnings}


TRACE_RE = re.compile(r'TRACE_WINDOW bench=(\S+) mode=(\S+) cpus=(\d+) ops=(\d+) status=(\S+)'
		      r'(?: hits=(-?\d+))?(?: served=(\d+))?')


def parse_trace_lines(tap_text):
	"""The benchmarks' TRACE_WINDOW lines, in order.

	hits: the operations an "-oplog" mode's OpLog type took during the
	window (-1: its stats could not be read), None for a window that is
	not an OpLog mode's.  served: the operations of the window the OpLog
	should have taken, where the benchmark counts others (inotify_bench:
	events generated, against events read), else None: the counted ones.
	"""
	return [{'bench': m.group(1), 'mode': m.group(2), 'cpus': int(m.group(3)),
		 'ops': int(m.group(4)), 'ok': m.group(5) == 'ok',
		 'hits': int(m.group(6)) if m.group(6) is not None else None,
		 'served': int(m.group(7)) if m.group(7) is not None else None}
		for m in TRACE_RE.finditer(tap_text)]


def join(windows, marks):
	"""Pair the plugin's windows with the benchmarks' lines, in order.

	Both sides number the same windows in the same order (one program runs
	at a time, and each prints its line after closing its window), so the
	n-th record belongs to the n-th line.  A count mismatch means a marker
	was lost or a program died inside its window: refuse to guess.
	"""
	if len(windows) != len(marks):
		raise TraceError('%d traced windows but %d TRACE_WINDOW lines' %
				 (len(windows), len(marks)))
	return [dict(m, window=w) for m, w in zip(marks, windows)]


class Symbols:
	"""Kernel symbols from System.map: code and data, by address."""

	def __init__(self, system_map):
		text, data = [], []
		with open(system_map) as f:
			for line in f:
				parts = line.split()
				if len(parts) < 3:
					continue
				addr, kind, name = int(parts[0], 16), parts[1], parts[2]
				if kind in 'tTwW':
					text.append((addr, name))
				elif kind in 'dDbBrRvV':
					data.append((addr, name))
				if name == '_end':
					self.end = addr
				elif name == '_text':
					self.start = addr
		text.sort()
		data.sort()
		self.text_addr = [a for a, _ in text]
		self.text_name = [n for _, n in text]
		self.data_addr = [a for a, _ in data]
		self.data_name = [n for _, n in data]
		self.start = getattr(self, 'start', text[0][0] if text else 0)
		self.end = getattr(self, 'end', 0)

	def func(self, pc):
		"""(name, offset) of the function holding @pc, or (None, 0)."""
		if pc < KERNEL_HALF:
			return ('[user]', 0)
		i = bisect.bisect_right(self.text_addr, pc) - 1
		if i < 0:
			return (None, 0)
		return (self.text_name[i], pc - self.text_addr[i])

	def func_str(self, pc):
		name, off = self.func(pc)
		if name is None:
			return '%#x' % pc
		if name == '[user]':
			return name
		return '%s+%#x' % (name, off)

	def data(self, va):
		"""What the virtual address @va is: a data symbol or a region."""
		if not va:
			return 'unknown'
		if va < KERNEL_DATA:
			return 'user'
		if self.start <= va < self.end:
			i = bisect.bisect_right(self.data_addr, va) - 1
			if i >= 0:
				return '%s+%#x' % (self.data_name[i], va - self.data_addr[i])
			return 'kernel image'
		for lo, hi, name in REGIONS:
			if lo <= va <= hi:
				return name
		return 'kernel %#x' % va


def mechanism_functions(objdir, stock=False):
	"""{mechanism: set of function names} from the objects' symbol tables.

	@stock: the kernel is unpatched 6.12, whose build has none of the
	series' objects; a mechanism without functions is left out instead of
	failing the analysis.
	"""
	out = {}
	for mech, objs in MECHANISMS.items():
		names = set()
		for o in objs:
			if o.startswith('fn:'):
				names.add(o[3:])
				continue
			if not o.endswith('.o'):
				continue
			path = os.path.join(objdir, o)
			if not os.path.exists(path):
				continue
			r = subprocess.run(['nm', '--defined-only', path], capture_output=True, text=True)
			for line in r.stdout.splitlines():
				parts = line.split()
				if len(parts) == 3 and parts[1] in 'tTwW':
					names.add(parts[2])
		if not names:
			if stock:
				continue
			raise TraceError('no function of %s found in %s: cannot attribute %s\'s '
					 'transfers' % (mech, ', '.join(objs), mech))
		out[mech] = names
	return out


def mechanism_sources(mech):
	"""The source files of @mech (paths in the tree): its objects' and headers."""
	out = []
	for o in MECHANISMS.get(mech, ()):
		if o.startswith('fn:'):
			continue
		out.append(o[:-2] + '.c' if o.endswith('.o') else o)
	return tuple(out)


def mechanism_named(mech):
	"""The functions @mech names one by one ("fn:")."""
	return frozenset(o[3:] for o in MECHANISMS.get(mech, ()) if o.startswith('fn:'))


ADDR_RE = re.compile(r'^0x[0-9a-fA-F]+$')


class Lines:
	"""file:line and inline chains of kernel addresses, from vmlinux's DWARF.

	One addr2line run (-a -f -i, the addresses on its standard input)
	resolves every address not seen before; the chains are cached.
	@inline: vmlinux has .debug_info, so a chain names the functions an
	instruction was inlined from (without it addr2line gives at most the
	line tables' innermost file:line).  @run stands in for subprocess.run
	(the unit tests give addr2line's output).
	"""

	def __init__(self, vmlinux, run=subprocess.run):
		self.run = run
		self.vmlinux = vmlinux if vmlinux and os.path.exists(vmlinux) else None
		self.inline = False
		self.cache = {}
		self.problem = None
		if not vmlinux:
			self.problem = 'no vmlinux given'
		elif not self.vmlinux:
			self.problem = '%s does not exist' % vmlinux
		else:
			try:
				r = run(['readelf', '-S', self.vmlinux], capture_output=True, text=True)
				sections = r.stdout
			except OSError as e:
				sections, self.problem = '', 'readelf: %s' % e
			self.inline = '.debug_info' in sections
			if '.debug_line' not in sections:
				self.vmlinux = None
				self.problem = self.problem or '%s has no DWARF line tables' % vmlinux
			elif not self.inline:
				self.problem = '%s has no DWARF .debug_info' % vmlinux

	def load(self, pcs):
		"""Resolve the kernel addresses of @pcs that are not cached yet."""
		todo = sorted({pc for pc in pcs if pc >= KERNEL_HALF and pc not in self.cache})
		if not todo or not self.vmlinux:
			return
		try:
			r = self.run(['addr2line', '-a', '-f', '-i', '-e', self.vmlinux],
				     input=''.join('%#x\n' % p for p in todo), capture_output=True,
				     text=True)
			out = r.stdout.splitlines()
		except OSError as e:
			out, self.problem = [], 'addr2line: %s' % e
		chains, cur, want = {}, None, set(todo)
		i = 0
		while i < len(out):
			line = out[i].strip()
			if ADDR_RE.match(line) and int(line, 16) in want and int(line, 16) not in chains:
				cur = chains.setdefault(int(line, 16), [])
				i += 1
				continue
			if cur is None or i + 1 >= len(out):
				break
			func, where = line, re.sub(r' \(discriminator \d+\)', '', out[i + 1].strip())
			path = where.rpartition(":")[0]
			if func != '??' or not where.startswith('??'):
				cur.append((None if func == '??' else func,
					    None if path.startswith('??') else os.path.normpath(path),
					    where if not where.startswith('??') else None))
			i += 2
		missing = [pc for pc in todo if pc not in chains]
		if missing:
			self.inline = False
			self.problem = self.problem or ('addr2line resolved %d of %d addresses' %
							(len(todo) - len(missing), len(todo)))
		for pc in todo:
			self.cache[pc] = tuple(chains.get(pc, ()))

	def chain(self, pc):
		"""[(function, source path, "file:line")] of @pc, innermost first."""
		if pc not in self.cache:
			self.load([pc])
		return self.cache.get(pc, ())

	def resolve(self, pcs):
		"""{pc: file:line of its innermost frame, or None}."""
		self.load(pcs)
		out = {}
		for pc in pcs:
			c = self.cache.get(pc) or ()
			out[pc] = c[0][2] if c else None
		return out


def _in_sources(path, sources):
	return path is not None and any(path == s or path.endswith('/' + s) for s in sources)


class Attribution:
	"""Which mechanisms' code holds an instruction (MECHANISMS).

	@funcs: {mechanism: function names} of mechanism_functions().  By the
	symbol, a pc is a mechanism's when the System.map function that holds
	it is one of those.  With @lines that have inline chains it is also
	one when any frame of its chain is a function the mechanism names
	("fn:") or lies in one of its source files: so a store in a hit path
	inlined from include/linux/oplog.h into mm/ is OpLog's.  Frames are
	not matched against the objects' symbol names: those include local
	copies of generic header helpers (an out-of-line cpumask or atomic
	function), which are inlined everywhere else.  @kind is 'inline-chain'
	or 'symbol', and @note says why it is the latter.
	"""

	def __init__(self, syms, funcs, lines=None):
		self.syms, self.funcs = syms, dict(funcs or {})
		self.named = {m: mechanism_named(m) for m in self.funcs}
		self.sources = {m: mechanism_sources(m) for m in self.funcs}
		self.lines = lines if lines is not None and lines.inline else None
		self.kind = 'inline-chain' if self.lines else 'symbol'
		self.note = None if self.lines else (
			'mechanisms by the symbol that holds an instruction only: %s, so code '
			'inlined from a mechanism\'s headers into other objects is not charged '
			'to it' % (lines.problem if lines is not None and lines.problem else
				   'no inline chains'))
		self.cache = {}

	def prepare(self, pcs):
		"""Resolve the chains of @pcs in one addr2line run."""
		if self.lines:
			self.lines.load(pcs)
			if not self.lines.inline:
				self.kind = 'symbol'
				self.note = ('mechanisms by the symbol that holds an instruction only: %s'
					     % self.lines.problem)
				self.lines = None

	def of(self, pc):
		"""frozenset of the mechanisms whose code holds @pc."""
		if not pc or pc < KERNEL_HALF:
			return frozenset()
		got = self.cache.get(pc)
		if got is not None:
			return got
		f = self.syms.func(pc)[0]
		mine = {m for m, names in self.funcs.items() if f in names}
		if self.lines:
			for func, path, _ in self.lines.chain(pc):
				for m in self.funcs:
					if m not in mine and (func in self.named[m] or
							      _in_sources(path, self.sources[m])):
						mine.add(m)
		got = self.cache[pc] = frozenset(mine)
		return got


def popcount(x):
	return bin(x).count('1')


# A line is hot if it moves at least this many times per operation.
HOT_LINE = 0.1
# The clock's data: the timekeeper (tk_core, which every file write's
# current_time() reads) and jiffies, which only the tick writes, from a
# timer interrupt.  The emulated clock ticks hundreds of times more per
# operation than a real one, so transfers of these lines stored by an
# interrupt are time-driven, however hot: "hot shared" leaves them out.
CLOCK_DATA = ('tk_core', 'jiffies', 'jiffies_64')


def _ranked_lines(w, syms, keep, top, sites):
	"""The lines of window @w by transfers of the sites @keep accepts."""
	out = []
	for ln in w['lines']:
		by_site, n = {}, 0
		for s in ln['sites']:
			if not keep(s):
				continue
			n += s['n']
			key = (syms.func_str(s['pc']), syms.func(s['wpc'])[0] if s['wpc'] else '-',
			       'store' if s['store'] else 'load', s.get('ctx', '-'))
			by_site.setdefault(key, [0, s['pc']])
			by_site[key][0] += s['n']
		if not n:
			continue
		out.append({'phys': ln['phys'], 'transfers': n, 'data': syms.data(ln['va']),
			    'writers': popcount(ln['w']), 'accessors': popcount(ln['t']),
			    'sites': sorted(([k[0], k[1], k[2], k[3], v[0], v[1]]
					     for k, v in by_site.items()), key=lambda x: -x[4])[:sites]})
	out.sort(key=lambda x: -x['transfers'])
	return out[:top]


def on_op_path(site):
	return site['pc'] < KERNEL_HALF or site.get('ctx') in OP_CONTEXTS


def served_per_op(row, ops):
	"""The window's OpLog operations per operation, or None (no stats)."""
	hits, served = row.get('hits'), row.get('served')
	if hits is None or hits < 0:
		return None
	if served:
		return hits / served
	return hits / ops if ops else None


def analyze_window(row, syms, mech_funcs=None, lines=None, top=8, sites=4):
	"""Figures per operation and the top transferred lines of one window.

	The headline figures count the operation's path: user mode, and the
	kernel's syscall, exception and IPI contexts.  Timer interrupts and
	kthreads are reported apart (see c2c.c on why they are inflated).
	@mech_funcs: an Attribution, or {mechanism: function names}, charged by
	inline chain where @lines (a Lines) has them and by symbol otherwise.
	"""
	w = row['window']
	t, cx = w['total'], w.get('contexts', {})
	ops = row['ops']
	per = (lambda v: v / ops) if ops else (lambda v: None)
	attr = mech_funcs if isinstance(mech_funcs, Attribution) else \
		Attribution(syms, mech_funcs, lines)
	mech_op = {m: 0 for m in attr.funcs}
	mech_all = {m: 0 for m in attr.funcs}
	mech_top = {m: 0 for m in attr.funcs}
	hot_shared = hot_clock = pages = 0
	for ln in w['lines']:
		n = sum(s['n'] for s in ln['sites'] if on_op_path(s))
		clock = 0
		if syms.data(ln['va']).split('+')[0] in CLOCK_DATA:
			clock = sum(s['n'] for s in ln['sites'] if on_op_path(s) and
				    s.get('wctx') == 'interrupt')
		if popcount(ln['w']) > 1 and ops and n - clock >= HOT_LINE * ops:
			hot_shared += n - clock
		if popcount(ln['w']) > 1 and ops and clock >= HOT_LINE * ops:
			hot_clock += clock
		if syms.data(ln['va']).startswith(PAGE_ARRAY):
			pages += n
		here = {}
		for s in ln['sites']:
			for m in attr.of(s['pc']) | attr.of(s['wpc']):
				mech_all[m] += s['n']
				if on_op_path(s):
					mech_op[m] += s['n']
					here[m] = here.get(m, 0) + s['n']
		for m, v in here.items():
			mech_top[m] = max(mech_top[m], v)
	op_lines = _ranked_lines(w, syms, on_op_path, top, sites)
	time_lines = _ranked_lines(w, syms, lambda s: not on_op_path(s), 3, 2)
	if lines:
		where = lines.resolve([s[5] for ln in op_lines + time_lines for s in ln['sites']])
	for ln in op_lines + time_lines:
		ln['per_op'] = per(ln['transfers'])
		ln['sites'] = [{'function': s[0], 'writer': s[1], 'kind': s[2], 'context': s[3],
				'transfers': s[4], 'where': where.get(s[5]) if lines else None,
				# the functions the instruction was inlined from,
				# innermost first, where vmlinux has DWARF
				'inlined': [f[0] or '??' for f in lines.chain(s[5])[:-1]]
				if lines and lines.inline else []}
			       for s in ln['sites']]
	op_xfer = sum(cx.get('xfer_' + c, 0) for c in OP_CONTEXTS)
	time_xfer = sum(cx.get('xfer_' + c, 0) for c in TIME_CONTEXTS)
	op_insn = sum(cx.get('insn_' + c, 0) for c in OP_CONTEXTS)
	return {
		'bench': row['bench'], 'mode': row['mode'], 'cpus': row['cpus'], 'ops': ops,
		'ok': row['ok'], 'hits': row.get('hits'),
		# operations served by the mode's OpLog, per operation (per
		# operation it should have taken, where the benchmark says)
		'hits_per_op': served_per_op(row, ops),
		# the operation's path: kernel (syscall, exception, IPI) and user
		'transfers_per_op': per(op_xfer + t.get('xfer_u', 0)),
		'kernel_transfers_per_op': per(op_xfer),
		'user_transfers_per_op': per(t.get('xfer_u', 0)),
		'kernel_insn_per_op': per(op_insn),
		# what the clock drives, inflated by the emulation
		'time_transfers_per_op': per(time_xfer),
		'all_kernel_transfers_per_op': per(t.get('xfer_k', 0)),
		'all_kernel_insn_per_op': per(t.get('insn_k', 0)),
		'user_insn_per_op': per(t.get('insn_u', 0)),
		# window-wide (every mode and context): independent of interleaving
		'conflict_lines_per_op': per(t.get('conflict', 0)),
		'kernel_conflict_lines': t.get('conflict_k', 0),
		'contexts': cx,
		'mechanism_transfers_per_op': {m: per(v) for m, v in mech_op.items()},
		# the mechanism's busiest line alone
		'mechanism_top_line_per_op': {m: per(v) for m, v in mech_top.items()},
		# lines of struct pages (a folio's count, map count and flags):
		# per-page state that every mapping of a page cache page writes
		'page_array_transfers_per_op': per(pages),
		# how transfers were charged to mechanisms: 'inline-chain' or
		# 'symbol' (no DWARF: blind to code inlined from their headers)
		'attribution': attr.kind,
		# hot lines (HOT_LINE transfers per op or more) written by more
		# than one vCPU, on the operation's path: a shared structure that
		# every operation writes, which a per-CPU log removes (issue 14's
		# "no line written by more than one CPU per event").  Per-object
		# lines that move once or twice in their life (an event allocated
		# by its writer and freed by the reader, recycled slab memory) are
		# below the bar however many vCPUs wrote them.  Loads of the
		# clock's own data (CLOCK_DATA) that a timer interrupt stored
		# are not the operations' sharing and are counted apart.
		'hot_shared_transfers_per_op': per(hot_shared),
		'hot_shared_clock_transfers_per_op': per(hot_clock),
		'mechanism_transfers_all_contexts': mech_all,
		# calls of SPAN_FUNCS in the window, by name: calls, the
		# longest's kernel instructions (insn_max), their sum, aborted
		'spans': {SPAN_NAMES[i]: sp for i, sp in w.get('spans', {}).items()
			  if i < len(SPAN_NAMES)},
		'dropped_sites': t.get('dropped', 0),
		'pace_timeouts': t.get('pace_timeouts', 0),
		'top_lines': op_lines,
		'time_lines': time_lines,
	}


def analyze(c2c_text, tap_text, system_map, objdir=None, vmlinux=None, stock=False,
	    lines=None):
	"""Every window's figures (analyze_window()); @lines: a Lines of @vmlinux."""
	parsed = parse_c2c(c2c_text)
	rows = join(parsed['windows'], parse_trace_lines(tap_text))
	syms = Symbols(system_map)
	mech = mechanism_functions(objdir, stock) if objdir else {}
	if lines is None:
		lines = Lines(vmlinux)
	attr = Attribution(syms, mech, lines)
	attr.prepare([pc for r in rows for ln in r['window']['lines'] for s in ln['sites']
		      for pc in (s['pc'], s['wpc'])])
	return {'header': parsed['header'], 'warnings': parsed['warnings'],
		'attribution': attr.kind, 'attribution_note': attr.note,
		'results': [analyze_window(r, syms, attr, lines) for r in rows]}


def fmt(v, digits=3):
	return '-' if v is None else ('%.*f' % (digits, v))


def inlined_str(site, frames=3):
	"""The functions a site's instruction was inlined from, nearest the
	function that holds it; the innermost (atomics, list helpers) elided."""
	c = site.get('inlined') or []
	return ('... < ' if len(c) > frames else '') + ' < '.join(c[-frames:])


def text_report(res, lines_per_row=5):
	out = ['mechanisms charged by %s%s' % (res.get('attribution') or '-',
					       ': ' + res['attribution_note']
					       if res.get('attribution_note') else '')]
	for r in res['results']:
		out.append('%s %s cpus=%d ops=%d: transfers/op %s (kernel %s, user %s), kernel '
			   'insn/op %s; clock-driven transfers/op %s; %s' %
			   (r['bench'], r['mode'], r['cpus'], r['ops'], fmt(r['transfers_per_op']),
			    fmt(r['kernel_transfers_per_op']), fmt(r['user_transfers_per_op']),
			    fmt(r['kernel_insn_per_op'], 0), fmt(r['time_transfers_per_op']),
			    ' '.join('%s=%s' % (m, fmt(v, 4)) for m, v in
				     sorted(r['mechanism_transfers_per_op'].items()))))
		for ln in r['top_lines'][:lines_per_row]:
			out.append('    line %#x %s: %d transfers (%s/op), %d writers, %d accessors' %
				   (ln['phys'], ln['data'], ln['transfers'], fmt(ln['per_op']),
				    ln['writers'], ln['accessors']))
			for s in ln['sites'][:3]:
				out.append('        %6d %-5s %-9s %s%s%s (last store: %s)' %
					   (s['transfers'], s['kind'], s['context'], s['function'],
					    ' ' + s['where'] if s['where'] else '',
					    ' inlined from %s' % inlined_str(s) if s.get('inlined') else '',
					    s['writer']))
	return '\n'.join(out)


# ------------------------------------------------------------ checks

# The instrument's own check (cacheline_bench): properties of the model,
# not timings, so they are asserted.  (low, high) transfers per operation:
# an atomic add is one request for ownership when the CPUs interleave (not
# two: the plugin sees a load and a store), a plain load and store of a
# falsely shared line a HITM and an upgrade, padded counters nothing.
INSTRUMENT = {'shared': (0.5, 1.5), 'packed': (0.5, 2.5), 'padded': (0, 0.01)}


def instrument_problems(results, cpus=(2, 4)):
	"""What is wrong with the tracer, judged by cacheline_bench at @cpus."""
	problems = []
	for n in cpus:
		for mode, (low, high) in INSTRUMENT.items():
			rows = [r for r in results if r['bench'] == 'cacheline_bench' and
				r['mode'] == mode and r['cpus'] == n]
			if not rows:
				problems.append('cacheline_bench %s at %d vCPUs was not traced' % (mode, n))
				continue
			v = rows[0]['user_transfers_per_op']
			if v is None or not rows[0]['ok']:
				problems.append('cacheline_bench %s at %d vCPUs counted no operation' %
						(mode, n))
			elif not low <= v <= high:
				problems.append('tracer: cacheline_bench %s at %d vCPUs shows %.4f '
						'transfers/op, must be in [%g, %g]' % (mode, n, v, low, high))
	return problems


# The stat gate: a regression of the dentry OpLog's hit path that makes it
# move its own lines between CPUs fails, with room that noise cannot reach.
STAT_GATE_OPLOG = 0.02
STAT_GATE_STOCK = 0.5


def own_lines_blind(row):
	"""Why @row's own-lines figures cannot pass a ceiling, or None.

	Charged by symbol alone (vmlinux without DWARF), a mechanism's figure
	leaves out its hit paths inlined from its headers into other objects:
	it can only be lower than by inline chain, so a ceiling that holds
	proves nothing, and the gate fails rather than pass blind.
	"""
	a = row.get('attribution')
	if a == 'inline-chain':
		return None
	return ('own lines charged by %s, not by inline chain: code inlined from a '
		'mechanism\'s headers is not counted (the release vmlinux needs DWARF, '
		'CONFIG_DEBUG_INFO, and addr2line)' % (a or 'nothing'))


def stat_gate_problems(results, cpus):
	problems = []
	rows = {r['mode']: r for r in results if r['bench'] == 'stat_bench' and r['cpus'] == cpus}
	for mode in ('same-stock', 'same-oplog'):
		if mode not in rows or not rows[mode]['ops'] or not rows[mode]['ok']:
			problems.append('stat gate: stat_bench %s at %d vCPUs did not run' % (mode, cpus))
	if problems:
		return problems
	blind = own_lines_blind(rows['same-oplog'])
	if blind:
		problems.append('stat gate at %d vCPUs: %s' % (cpus, blind))
	stock = rows['same-stock']['kernel_transfers_per_op']
	own = rows['same-oplog']['mechanism_transfers_per_op'].get('oplog')
	if stock <= STAT_GATE_STOCK:
		problems.append('stat gate: same-stock shows %.3f transfers/op at %d vCPUs (more '
				'than %g expected): the tracer does not see the shared d_lockref' %
				(stock, cpus, STAT_GATE_STOCK))
	if own is None or own > STAT_GATE_OPLOG:
		problems.append('stat gate: same-oplog moves OpLog\'s own lines %s times per stat '
				'at %d vCPUs (at most %g)' % (fmt(own, 4), cpus, STAT_GATE_OPLOG))
	return problems


# ------------------------------------------------------------ the gates

# make test's traced gates, one row per OpLog user's workload, judged at
# GATE_CPUS vCPUs on the whole operation: transfers per operation on its path
# (user mode and the kernel's syscall, exception and IPI contexts), not only
# the mechanism's own lines.  Each row names:
#   bench, mode         the OpLog mode under test
#   stock               the same workload with the OpLog off, same boot
#   floor               the same workload on private objects (share-nothing
#                       floor), stock, same boot; None where the benchmark
#                       has no private shape; a tuple of such modes (stock
#                       and OpLog on private objects): the one with the
#                       most transfers per op is the floor, since a boot's
#                       background (the scheduler's balancing, timekeeping)
#                       shows in each of them alike and can exceed the
#                       slack where the floor is a tenth of a transfer
#   vs_floor            mode <= floor * vs_floor + GATE_SLACK, or None
#   vs_stock            mode <= stock * vs_stock, or None
#   control             (metric, factor): the negative control, stock's
#                       metric >= factor * floor's ('total': transfers per
#                       operation; a mechanism's name: its own lines), or
#                       >= factor itself where there is no floor; else the
#                       window did not measure contention
#   mech                {mechanism: most transfers per op of its own lines}
#   mech_floor          {mechanism: factor}: its own lines at most factor
#                       times the floor's (the floor mode with the most
#                       transfers per op)
#   hot                 most transfers per op on hot lines written by more
#                       than one vCPU, as a fraction of stock's, or None
#   hits                fewest operations served by the mode's OpLog type
#                       per operation (its hit path, read from the type's
#                       stats around the window): the number of references
#                       or mappings each operation takes, with 10% of room
#                       for the window's edges; None for no OpLog type
GATE_CPUS = 8
GATE_SLACK = 0.1
GATE_WORKLOADS = ('cacheline_bench', 'stat_bench', 'open_bench', 'oplog_list_bench',
		  'fork_bench', 'mmap_bench', 'exec_bench', 'inotify_bench', 'qdo_idle')
GATE_FIELDS = ('name', 'bench', 'mode', 'stock', 'floor', 'vs_floor', 'vs_stock', 'control',
	       'mech', 'hot', 'hits', 'mech_floor')
GATES = [dict(zip(GATE_FIELDS, g)) for g in (
	# a stat() takes and drops one dentry reference: 2 hits
	('stat of one name', 'stat_bench', 'same-oplog', 'same-stock',
	 ('private-stock', 'private-oplog'), 3.0, 0.1, ('total', 10),
	 {'dcache': 0.05, 'oplog': 0.05}, None, 1.8, {}),
	# open+close: two dentry references, each taken and dropped: 4 hits
	# of the dentry type; the open counts (i_readcount for O_RDONLY,
	# i_writecount for O_RDWR) are per CPU as well (fs/inode_oplog.c), so
	# both are held to their floor, whose background noise is read from
	# both private modes
	('open+close of one file, O_RDONLY', 'open_bench', 'same-rdonly-oplog',
	 'same-rdonly-stock', ('private-rdonly-stock', 'private-rdonly-oplog'), 1.1, 0.1,
	 ('total', 10), {'dcache': 0.05, 'oplog': 0.05}, None, 3.6, {}),
	('open+close of one file, O_RDWR', 'open_bench', 'same-rdwr-oplog', 'same-rdwr-stock',
	 ('private-rdwr-stock', 'private-rdwr-oplog'), 1.1, 0.1, ('total', 10),
	 {'dcache': 0.05, 'oplog': 0.05}, None, 3.6, {}),
	# a fork logs one insert per file mapping it copies: 16 shared files
	# and the test binary's own file VMAs, its written data among them
	# (an anon_vma: logged behind its parent), and its child's exit
	# cancels them, so no reverse-map line moves; its floor moves with
	# the pacing too, hence the room
	('fork+exit with 16 shared file mappings', 'fork_bench', 'shared-16f-oplog',
	 'shared-16f-stock', 'private-16f-stock', 1.3, None, ('rmap', 2),
	 {'rmap': 1, 'oplog': 1}, None, 16, {}),
	# fork+exec+wait of a dynamically linked program ("true"): the fork
	# logs the inserts of the worker's file VMAs, the exec and ld.so those
	# of the program, ld.so and libc, and the exits cancel them or log
	# their removal.  The whole exec is held to stock and its floor only
	# reported: lines that are not the reverse map's keep it above the
	# floor, the root dentry's count above all (every path walk that
	# leaves RCU-walk takes "/", which the dentry OpLog does not count;
	# issue 35).  The reverse map's lines are held to at most one per
	# exec, and to the private floor's (issue 35's target): ld.so's
	# mprotect() splits of the VMAs it has just mapped change logged
	# VMAs without i_mmap_rwsem.  About 27 logged operations per exec
	# (the inserts of the child's and the program's file VMAs and of the
	# parts that ld.so's splits cut off, the removals at exit; a split
	# leaves the VMA it changes logged where it was, so it logs nothing
	# again): a fifth of room, since libc's layout sets the count.
	# OpLog's own lines vary with the windows' few execs, hence a
	# ceiling of 5, where a shared store per logged operation would add
	# some 27
	('fork+exec of a dynamically linked program', 'exec_bench', 'shared-exec-oplog',
	 'shared-exec-stock', 'private-exec-stock', None, 1.0, ('total', 2),
	 {'oplog': 5, 'rmap': 1}, None, 22, {'rmap': 1.1}),
	# an mmap()+munmap() of one shared file: one insert logged; its floor
	# moves with how often the vCPUs' pacing gives up, hence the room
	('mmap+munmap of one shared file', 'mmap_bench', 'shared-oplog', 'shared-stock',
	 'private-stock', 1.75, None, ('total', 3), {'rmap': 0.5, 'oplog': 0.5}, None, 0.9, {}),
	# one event queued per event generated (not per event read: the reader
	# lags); how far it lags, which varies from boot to boot, decides how
	# much a synchronize batches and how often a writer takes
	# notification_lock for room, hence the room
	('inotify, a watch per file', 'inotify_bench', 'per-file-watch-oplog',
	 'per-file-watch-stock', None, None, 0.9, ('inotify', 3), {}, 0.6, 0.9, {}),
	('inotify, one directory watch', 'inotify_bench', 'dir-watch-oplog', 'dir-watch-stock',
	 None, None, 0.9, ('inotify', 3), {}, 0.6, 0.9, {}),
	# OpLog's own list benchmark: the per-CPU log against one locked list
	('oplog_list, per-CPU logs', 'oplog_list', 'local', 'locked', None, None, 0.1,
	 ('total', 1), {'oplog': 0.05}, None, None, {}),
)]


# make test's gates at WIDE_GATE_CPUS vCPUs, in a boot of their own: what
# shows only with more vCPUs.  inotify's queue lock shared its line with
# the queue until patch 0040 gave each its own line: a writer spinning on
# the lock to attach a log took the line from the reader applying the
# logs.  The gates at GATE_CPUS passed with that layout; these do not
# (README: traced gates): its hot shared lines fail them.  The whole
# event varies from boot to boot by more than the hot lines do, hence
# its room.
WIDE_GATE_CPUS = 16
WIDE_GATE_WORKLOADS = ('inotify_bench',)
WIDE_GATES = [dict(zip(GATE_FIELDS, g)) for g in (
	('inotify at 16 vCPUs, a watch per file', 'inotify_bench', 'per-file-watch-oplog',
	 'per-file-watch-stock', None, None, 0.8, ('inotify', 3), {}, 0.2, 0.9, {}),
	('inotify at 16 vCPUs, one directory watch', 'inotify_bench', 'dir-watch-oplog',
	 'dir-watch-stock', None, None, 0.8, ('inotify', 3), {}, 0.2, 0.9, {}),
)]


def gates_at(cpus):
	"""The gates judged at @cpus vCPUs."""
	return GATES if cpus == GATE_CPUS else WIDE_GATES if cpus == WIDE_GATE_CPUS else []


def _metric(row, metric):
	if metric == 'total':
		return row['transfers_per_op']
	return row['mechanism_transfers_per_op'].get(metric) or 0


def floor_modes(g):
	"""The gate's share-nothing modes: () where it has none."""
	f = g['floor']
	return () if f is None else f if isinstance(f, tuple) else (f,)


def gate_rows(results, cpus=GATE_CPUS):
	"""[(gate, verdict, measured)]: each gate's checks at @cpus, for README."""
	out = []
	for g in gates_at(cpus):
		a = _row(results, g['bench'], g['mode'], cpus)
		st = _row(results, g['bench'], g['stock'], cpus)
		fls = [(m, _row(results, g['bench'], m, cpus)) for m in floor_modes(g)]
		missing = [m for m, r in [(g['mode'], a), (g['stock'], st)] + fls
			   if m and not (r and r['ok'] and r['ops'])]
		if missing:
			out.append((g['name'], 'fail', '%s did not run at %d vCPUs' %
				    (', '.join(missing), cpus)))
			continue
		x, y = a['transfers_per_op'], st['transfers_per_op']
		fl = max((r for m, r in fls), key=lambda r: r['transfers_per_op'], default=None)
		checks = []
		if g['vs_floor'] is not None:
			z = fl['transfers_per_op']
			checks.append((x <= z * g['vs_floor'] + GATE_SLACK,
				       'whole op %.3f transfers/op, floor %.3f (%s%.2fx; at most %gx + %g)' %
				       (x, z, '%s, ' % fl['mode'] if len(fls) > 1 else '',
					x / z if z else 0, g['vs_floor'], GATE_SLACK)))
		if g['vs_stock'] is not None:
			checks.append((x <= y * g['vs_stock'],
				       'whole op %.3f transfers/op, stock %.3f (%.2fx; at most %gx)' %
				       (x, y, x / y if y else 0, g['vs_stock'])))
		if fl and g['vs_floor'] is None:
			z = fl['transfers_per_op']
			checks.append((True, 'floor %.3f (%.1fx, reported)' % (z, x / z if z else 0)))
		metric, factor = g['control']
		c = _metric(st, metric)
		if fl:
			f = _metric(fl, metric)
			checks.append((c >= factor * f, 'control: stock %s %.3f, at least %gx floor %.3f' %
				       (metric, c, factor, f)))
		else:
			checks.append((c >= factor, 'control: stock %s %.3f, at least %g' %
				       (metric, c, factor)))
		for m, most in sorted(g['mech'].items()):
			v = a['mechanism_transfers_per_op'].get(m) or 0
			checks.append((v <= most, '%s lines %.3f/op (at most %g)' % (m, v, most)))
		for m, factor in sorted(g['mech_floor'].items()):
			v = a['mechanism_transfers_per_op'].get(m) or 0
			f = _metric(fl, m) if fl else 0
			checks.append((v <= factor * f, '%s lines %.3f/op, floor %.3f (at most %gx)' %
				       (m, v, f, factor)))
		if (g['mech'] or g['mech_floor']) and own_lines_blind(a):
			checks.append((False, own_lines_blind(a)))
		if g['hot'] is not None:
			h, hs = a['hot_shared_transfers_per_op'] or 0, st['hot_shared_transfers_per_op'] or 0
			checks.append((h <= hs * g['hot'], 'hot shared lines %.3f/op, stock %.3f '
				       '(at most %gx)' % (h, hs, g['hot'])))
		if g['hits'] is not None:
			hp = a.get('hits_per_op')
			checks.append((hp is not None and hp >= g['hits'],
				       'served by the OpLog %s/op (at least %g)' %
				       ('unknown (no stats)' if hp is None else '%.2f' % hp, g['hits'])))
		ok = all(c[0] for c in checks)
		out.append((g['name'], 'pass' if ok else 'fail',
			    '; '.join(('' if c[0] else 'FAILED: ') + c[1] for c in checks)))
	if cpus != GATE_CPUS:
		return out
	q = [r for r in results if r['bench'] == 'qdo_idle' and r['cpus'] == cpus]
	if not q or not q[0]['ok']:
		out.append(('QDo idle window', 'fail', 'qdo_idle did not run at %d vCPUs' % cpus))
	else:
		n = q[0]['mechanism_transfers_all_contexts'].get('qdo', 0)
		blind = own_lines_blind(q[0])
		out.append(('QDo idle window', 'pass' if n == 0 and not blind else 'fail',
			    '%d transfers from QDo code in any context (none allowed)%s' %
			    (n, '; FAILED: ' + blind if blind else '')))
	return out


def gate_problems(results, cpus=GATE_CPUS):
	"""make test's traced gates at @cpus: one problem per failed gate."""
	return ['gate "%s" at %d vCPUs: %s' % (n, cpus, d)
		for n, v, d in gate_rows(results, cpus) if v != 'pass']


def gate_table():
	"""The gates as a markdown table (README's "Traced gates")."""
	out = ['| gate | mode | vs floor | vs stock | control | own lines | served |',
	       '|---|---|---|---|---|---|---|']
	for g in GATES + WIDE_GATES:
		out.append('| %s | `%s %s` | %s | %s | stock %s >= %g%s | %s | %s |' % (
			g['name'], g['bench'], g['mode'],
			'<= %gx %s + %g' % (g['vs_floor'], ' or '.join('`%s`' % m for m in floor_modes(g)),
					     GATE_SLACK)
			if g['vs_floor'] is not None else '-',
			'<= %gx `%s`' % (g['vs_stock'], g['stock']) if g['vs_stock'] is not None else '-',
			g['control'][0], g['control'][1], 'x floor' if g['floor'] else '',
			', '.join(['%s <= %g' % kv for kv in sorted(g['mech'].items())] +
				  ['%s <= %gx floor' % kv for kv in sorted(g['mech_floor'].items())]) +
			('%shot shared <= %gx stock' % (', ' if g['mech'] or g['mech_floor'] else '',
							 g['hot'])
			 if g['hot'] is not None else '') or '-',
			'>= %g hits/op' % g['hits'] if g['hits'] is not None else '-'))
	out.append('| QDo idle window | `qdo_idle idle` | - | - | - | qdo == 0, any context | - |')
	return '\n'.join(out)


def _row(results, bench, mode, cpus):
	for r in results:
		if r['bench'] == bench and r['mode'] == mode and r['cpus'] == cpus:
			return r
	return None


def targets(results):
	"""The issues' targets: [(target, verdict, detail)], where measured.

	Issue 11's, and issue 12's "stat of 100k distinct names: OpLog within 3%
	of stock", read as kernel instructions per stat() of stat_bench's many
	mode at 1 vCPU (the traced boot gives it 8192 names).
	"""
	out = []
	for n in (8, 16):
		a = _row(results, 'stat_bench', 'same-oplog', n)
		b = _row(results, 'stat_bench', 'private-stock', n)
		if a and b and a['ops'] and b['ops']:
			x, y = a['transfers_per_op'], b['transfers_per_op']
			out.append(('stat same-oplog within 10%% of private-stock at %d vCPUs' % n,
				    'met' if x <= y * 1.1 else 'missed',
				    '%.3f vs %.3f transfers/op (%.2fx)' % (x, y, x / y if y else 0)))
			own = a['mechanism_transfers_per_op'].get('oplog')
			out.append(('stat same-oplog: no OpLog line moves per stat at %d vCPUs' % n,
				    'met' if own is not None and own <= 0.01 else 'missed',
				    '%s OpLog transfers/op' % fmt(own, 4)))
	# Issue 12: with the OpLog on, a same-name stat() and a same-file
	# open()+close() move no dentry line (no transfer charged to the
	# dcache's code or lockref) at 8 and 16 vCPUs.
	for n in (8, 16):
		for bench, mode, what in (('stat_bench', 'same', 'stat'),
					  ('open_bench', 'same-rdonly', 'open+close')):
			a = _row(results, bench, mode + '-oplog', n)
			b = _row(results, bench, mode + '-stock', n)
			if not (a and a['ops']):
				continue
			own = a['mechanism_transfers_per_op'].get('dcache')
			stock = b['mechanism_transfers_per_op'].get('dcache') if b and b['ops'] else None
			out.append(('%s %s-oplog: no dentry line moves per op at %d vCPUs (at most 0.05)'
				    % (what, mode, n),
				    'met' if own is not None and own <= 0.05 else 'missed',
				    '%s dcache/lockref transfers/op (stock %s)' % (fmt(own, 4), fmt(stock, 3))))
	# Issue 34: with both open counts per CPU, open()+close() of one file
	# from every CPU costs at most 1.1x its floor, or the floor + 0.05
	# where that is larger, at 8 and 16 vCPUs.  The floor is the issue's,
	# private-*-stock; the gate reads the noisier private mode instead.
	for n in (8, 16):
		for mode in ('rdonly', 'rdwr'):
			a = _row(results, 'open_bench', 'same-%s-oplog' % mode, n)
			f = _row(results, 'open_bench', 'private-%s-stock' % mode, n)
			if not (a and a['ops'] and f and f['ops']):
				continue
			x, y = a['transfers_per_op'], f['transfers_per_op']
			out.append(('open+close same-%s-oplog: whole op at most 1.1x its floor '
				    '(or + 0.05) at %d vCPUs' % (mode, n),
				    'met' if x <= max(1.1 * y, y + 0.05) else 'missed',
				    '%s transfers/op, floor %s' % (fmt(x, 3), fmt(y, 3))))
	# ... and costs at most 3% more kernel instructions than stock, on one
	# CPU and, for the many-names walk, at every traced size.
	insn = [('stat_bench', m, 'stat %s' % m, 1) for m in ('same', 'private', 'many')]
	insn += [('open_bench', m, 'open+close %s' % m, 1)
		 for m in ('same-rdonly', 'private-rdonly', 'same-rdwr', 'private-rdwr')]
	insn += [('stat_bench', 'many', 'stat many', n) for n in (8, 16)]
	for bench, mode, what, n in insn:
		a = _row(results, bench, mode + '-oplog', n)
		b = _row(results, bench, mode + '-stock', n)
		if a and b and a['ops'] and b['ops']:
			x, y = a['kernel_insn_per_op'], b['kernel_insn_per_op']
			out.append(('%s: OpLog kernel instructions at most 3%% above stock, %d vCPU%s'
				    % (what, n, '' if n == 1 else 's'), 'met' if x <= y * 1.03 else 'missed',
				    '%.0f vs %.0f (%+.1f%%)' % (x, y, (x / y - 1) * 100 if y else 0)))
	for n in (8, 16):
		a = _row(results, 'oplog_list', 'local', n)
		if a and a['ops']:
			own = a['mechanism_transfers_per_op'].get('oplog')
			out.append(('oplog_list local: OpLog transfers/op at most 0.01, %d vCPUs' % n,
				    'met' if own is not None and own <= 0.01 else 'missed',
				    '%s' % fmt(own, 4)))
		b = _row(results, 'oplog_list', 'locked', n)
		if b and b['ops']:
			out.append(('oplog_list locked: at least 1 transfer/op, %d vCPUs' % n,
				    'met' if b['transfers_per_op'] >= 1 else 'missed',
				    '%.3f' % b['transfers_per_op']))
	# Issue 14: with the OpLog on, no line is written by more than one
	# CPU per event (no hot line has two writers), at 8 and 16 vCPUs; and kernel
	# instructions per event at 1 vCPU at most 5% above stock.
	for mode in ('per-file-watch', 'dir-watch'):
		for n in (8, 16):
			a = _row(results, 'inotify_bench', mode + '-oplog', n)
			b = _row(results, 'inotify_bench', mode + '-stock', n)
			if not (a and a['ops']):
				continue
			x = a.get('hot_shared_transfers_per_op')
			y = b.get('hot_shared_transfers_per_op') if b and b['ops'] else None
			out.append(('inotify %s-oplog: no hot line written by more than one vCPU at %d '
				    'vCPUs (transfers/event on lines that move %.1f times per event or '
				    'more)' % (mode, n, HOT_LINE),
				    'met' if x is not None and x == 0 else 'missed',
				    '%s (stock %s), data stored by the clock %s apart; inotify code %s '
				    '(stock %s)' %
				    (fmt(x, 3), fmt(y, 3), fmt(a.get('hot_shared_clock_transfers_per_op'), 3),
				     fmt(a['mechanism_transfers_per_op'].get('inotify'), 3),
				     fmt(b['mechanism_transfers_per_op'].get('inotify'), 3)
				     if b and b['ops'] else '-')))
		a = _row(results, 'inotify_bench', mode + '-oplog', 1)
		b = _row(results, 'inotify_bench', mode + '-stock', 1)
		if a and b and a['ops'] and b['ops']:
			x, y = a['kernel_insn_per_op'], b['kernel_insn_per_op']
			out.append(('inotify %s: OpLog kernel instructions per event at most 5%% above '
				    'stock, 1 vCPU' % mode, 'met' if x <= y * 1.05 else 'missed',
				    '%.0f vs %.0f (%+.1f%%)' % (x, y, (x / y - 1) * 100 if y else 0)))
	# Issue 35: fork+exec+wait of a dynamically linked program.  With the
	# OpLog, the reverse map's transfers per operation at most 1.1x those
	# of the private floor (8 and 16 vCPUs) and no more than 1 from the
	# OpLog's code; the whole operation at 16 vCPUs at most half of stock's,
	# or the private floor's where that is higher; kernel instructions at
	# 1 vCPU at most 3% above stock.
	for shape in ('exec', 'sh'):
		name = 'exec_bench shared-%s-oplog' % shape
		for n in (8, 16):
			a = _row(results, 'exec_bench', 'shared-%s-oplog' % shape, n)
			s = _row(results, 'exec_bench', 'shared-%s-stock' % shape, n)
			f = _row(results, 'exec_bench', 'private-%s-stock' % shape, n)
			if not (a and a['ops'] and f and f['ops']):
				continue
			x = a['mechanism_transfers_per_op'].get('rmap')
			y = f['mechanism_transfers_per_op'].get('rmap')
			out.append(('%s: reverse-map transfers/op at most 1.1x private-%s-stock\'s at %d '
				    'vCPUs' % (name, shape, n),
				    'met' if x is not None and y is not None and x <= 1.1 * y else 'missed',
				    '%s vs %s' % (fmt(x, 1), fmt(y, 1))))
			own = a['mechanism_transfers_per_op'].get('oplog')
			top = a.get('mechanism_top_line_per_op', {}).get('oplog', own)
			out.append(('%s: no OpLog-code line above 1 transfer/op at %d vCPUs' % (name, n),
				    'met' if top is not None and top <= 1 else 'missed',
				    'busiest line %s, all its lines %s' % (fmt(top, 2), fmt(own, 2))))
			if n == 16 and s and s['ops']:
				bound = max(0.5 * s['transfers_per_op'], f['transfers_per_op'])
				pa, ps, pf = (r.get('page_array_transfers_per_op') for r in (a, s, f))
				out.append(('%s: transfers/op at most 0.5x shared-%s-stock\'s (or the '
					    'private floor) at 16 vCPUs' % (name, shape),
					    'met' if a['transfers_per_op'] <= bound else 'missed',
					    '%.1f vs stock %.1f, floor %.1f' %
					    (a['transfers_per_op'], s['transfers_per_op'],
					     f['transfers_per_op']) +
					    ('; struct page lines %.1f (stock %.1f, floor %.1f), the rest '
					     '%.1f vs bound %.1f' %
					     (pa, ps, pf, a['transfers_per_op'] - pa,
					      max(0.5 * (s['transfers_per_op'] - ps),
						  f['transfers_per_op'] - pf))
					     if None not in (pa, ps, pf) else '')))
		a = _row(results, 'exec_bench', 'shared-%s-oplog' % shape, 1)
		b = _row(results, 'exec_bench', 'shared-%s-stock' % shape, 1)
		if a and b and a['ops'] and b['ops']:
			x, y = a['kernel_insn_per_op'], b['kernel_insn_per_op']
			out.append(('%s: OpLog kernel instructions at most 3%% above stock, 1 vCPU' % name,
				    'met' if x <= y * 1.03 else 'missed',
				    '%.0f vs %.0f (%+.1f%%)' % (x, y, (x / y - 1) * 100 if y else 0)))
	for r in results:
		if r['bench'] == 'qdo_idle':
			q = r['mechanism_transfers_all_contexts'].get('qdo')
			out.append(('QDo: no transfer from QDo code in an idle %d-vCPU guest' % r['cpus'],
				    'met' if q == 0 else 'missed', '%s transfers' % q))
	# Issue 36: the longest apply under the object lock does not grow with
	# the CPU count (the same kernel instructions at 16 and 64 vCPUs, 10%).
	# How many operations the longest call handles is the workload's (how
	# long the reader lagged), at most max_pending at any CPU count; so
	# its instructions are compared per operation, the raw counts beside.
	for bench, mode in sorted({(r['bench'], r['mode']) for r in results
				   if r['mode'].endswith('-oplog')}):
		a, b = _row(results, bench, mode, 16), _row(results, bench, mode, 64)
		if not (a or {}).get('spans') or not (b or {}).get('spans'):
			continue
		what = '%s %s: longest apply at 64 vCPUs within 10%% of 16, per operation' % \
			(bench, mode)
		pa, pb = span_per_op(a, '__oplog_sync'), span_per_op(b, '__oplog_sync')
		if pa is None or pb is None:
			out.append((what, 'inconclusive', 'no call with operations at %s vCPUs' %
				    ' and '.join(str(n) for n, p in ((16, pa), (64, pb)) if p is None)))
			continue
		sa, sb = a['spans']['__oplog_sync'], b['spans']['__oplog_sync']
		out.append((what, 'met' if pb <= pa * 1.1 else 'missed',
			    '%.1f vs %.1f instructions per operation (%.2fx); %d instructions for %d '
			    'operations vs %d for %d' % (pb, pa, pb / pa, sb['insn_max'],
							  sb['ops_at_max'], sa['insn_max'],
							  sa['ops_at_max'])))
	return out


# ------------------------------------------------------------ report

METRICS = (
	('transfers_per_op', 'transfers/op', 3),
	('conflict_lines_per_op', 'conflict lines/op', 4),
	('kernel_insn_per_op', 'kernel insn/op', 0),
	('time_transfers_per_op', 'clock-driven transfers/op', 3),
)


def span_per_op(r, name):
	"""Kernel instructions per operation of @name's longest call in row
	@r, or None (no call, or one that handled no operation)."""
	sp = (r or {}).get('spans', {}).get(name)
	if not sp or not sp['calls'] or not sp.get('ops_at_max'):
		return None
	return sp['insn_max'] / sp['ops_at_max']


def span_cell(r, name):
	"""'<longest> / <its ops> (<per op>; <calls> calls, <aborted>
	aborted)' of @name's calls in row @r, or None."""
	sp = (r or {}).get('spans', {}).get(name)
	if not sp or not sp['calls']:
		return None
	p = span_per_op(r, name)
	return '%d / %d (%s; %d calls, %d aborted)' % (
		sp['insn_max'], sp.get('ops_at_max', 0), '-' if p is None else '%.1f' % p,
		sp['calls'], sp.get('aborted', 0))


def span_table(results, keys, counts):
	"""Markdown lines: the longest measured call of each SPAN_FUNCS."""
	out = []
	for name in SPAN_NAMES:
		rows = []
		for bench, mode in keys:
			cells = [span_cell(_row(results, bench, mode, n), name) for n in counts]
			if any(cells):
				rows.append('| %s | %s | %s |' % (bench, mode, ' | '.join(c or '-'
											  for c in cells)))
		if rows:
			out += ['### Longest `%s` (the apply under the object lock)' % name, '',
				'Kernel instructions of the longest call in the window, in the '
				'context it ran in (interrupts excluded) / the operations it '
				'handled (instructions per operation; calls in the window, '
				'calls left by a context switch).', '',
				'| benchmark | mode | ' + ' | '.join('%d' % n for n in counts) + ' |',
				'|---|---|' + '---|' * len(counts)] + rows + ['']
	return out


def markdown(results, title='Cache-line transfers, traced (QEMU TCG, c2c plugin)', top=3):
	"""The traced table: per benchmark and mode, each metric at each N."""
	counts = sorted({r['cpus'] for r in results})
	out = ['## ' + title, '',
	       'Per operation of each benchmark\'s measured window, on the operation\'s '
	       'path (user mode; kernel syscall, exception and IPI contexts). '
	       '"clock-driven" counts timer interrupts and kthreads, inflated by the '
	       'emulation (README: tracing). Columns: guest vCPUs. A mechanism\'s lines: '
	       'transfers by its code or of data its code stored last, charged by %s.' %
	       ' and '.join(sorted({r.get('attribution') or '-' for r in results})), '',
	       '| benchmark | mode | metric | ' + ' | '.join('%d' % n for n in counts) + ' |',
	       '|---|---|---|' + '---|' * len(counts)]
	keys = []
	for r in results:
		if (r['bench'], r['mode']) not in keys:
			keys.append((r['bench'], r['mode']))
	for bench, mode in keys:
		for key, label, digits in METRICS:
			cells = []
			for n in counts:
				r = _row(results, bench, mode, n)
				cells.append(fmt(r[key], digits) if r and r['ok'] else
					     ('fail' if r else ''))
			out.append('| %s | %s | %s | %s |' % (bench, mode, label, ' | '.join(cells)))
	out.append('')
	t = targets(results)
	if t:
		out += ['### Targets', '', '| target | verdict | measured |', '|---|---|---|']
		out += ['| %s | %s | %s |' % x for x in t]
		out.append('')
	for n in (GATE_CPUS, WIDE_GATE_CPUS):
		if any(r['cpus'] == n and r['bench'] in [g['bench'] for g in gates_at(n)]
		       for r in results):
			out += ['### make test\'s gates at %d vCPUs (README: traced gates)' % n, '',
				'| gate | verdict | measured |', '|---|---|---|']
			out += ['| %s | %s | %s |' % x for x in gate_rows(results, n)]
			out.append('')
	out += span_table(results, keys, counts)
	out += ['### Top transferred lines at %d vCPUs' % counts[-1], '']
	for bench, mode in keys:
		r = _row(results, bench, mode, counts[-1])
		if not r or not r['top_lines']:
			continue
		out.append('**%s %s** (%d ops):' % (bench, mode, r['ops']))
		out.append('')
		for ln in r['top_lines'][:top]:
			out.append('- line %#x, %s: %s transfers/op, written by %d vCPUs, touched by %d' %
				   (ln['phys'], ln['data'], fmt(ln['per_op']), ln['writers'],
				    ln['accessors']))
			for s in ln['sites'][:3]:
				out.append('  - %d %s in %s%s%s, %s (data last stored by %s)' %
					   (s['transfers'], s['kind'], s['function'],
					    ' (%s)' % s['where'] if s['where'] else '',
					    ' inlined from %s' % inlined_str(s) if s.get('inlined') else '',
					    s['context'], s['writer']))
		out.append('')
	return '\n'.join(out)


def main(argv):
	if len(argv) < 4:
		print('usage: scalable_trace.py <c2c.out> <tap.log> <System.map> [<obj dir>]',
		      file=sys.stderr)
		return 2
	objdir = argv[4] if len(argv) > 4 else None
	res = analyze(open(argv[1]).read(), open(argv[2], errors='replace').read(), argv[3],
		      objdir, os.path.join(objdir, 'vmlinux') if objdir else None)
	print(text_report(res))
	for w in res['warnings']:
		print('warning:', w)
	return 0


if __name__ == '__main__':
	sys.exit(main(sys.argv))
