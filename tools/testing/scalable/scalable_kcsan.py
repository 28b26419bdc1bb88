# SPDX-License-Identifier: GPL-2.0
#
# KCSAN data-race reports on a guest's console: which are in the series'
# code and fail the boot, and which are in stock 6.12 code and are listed.
#
# A report names the two racing accesses, each with its stack.  The access
# is where the first frame of its stack points; with the line tables of
# vmlinux, addr2line -i expands that address into its chain of inlined
# locations, innermost first.  A report is the series' when any location of
# either chain is in a file the series adds or on a line it adds to an
# upstream file: a race in an OpLog helper inlined into dput() is the
# series', a race in list_add() inlined into an OpLog function too.

import difflib
import glob
import os
import re
import subprocess

import scalable_common as common

BAR = re.compile(r'^=+$')
TITLE = re.compile(r'BUG: KCSAN: (.*)$')
ACCESS = re.compile(r'^(read|write|read-write|watchpoint|race at unknown origin)\b.*:$')
FRAME = re.compile(r'^\s*([A-Za-z_][\w.]*)\+(0x[0-9a-f]+)/0x[0-9a-f]+')
STAMP = re.compile(r'^\[\s*\d+\.\d+\]\s?')


def parse(text):
	"""KCSAN reports on @text: [{'title', 'line', 'accesses': [[(func, off)]]}]."""
	reports, cur, acc = [], None, None
	for raw in text.splitlines():
		line = STAMP.sub('', raw).rstrip()
		m = TITLE.search(line)
		if m:
			cur = {'title': m.group(1), 'line': line.strip(), 'accesses': []}
			reports.append(cur)
			acc = None
			continue
		if cur is None:
			continue
		if BAR.match(line.strip()):
			cur, acc = None, None
			continue
		if ACCESS.match(line.strip()):
			acc = []
			cur['accesses'].append(acc)
			continue
		m = FRAME.match(line)
		if m and acc is not None:
			acc.append((m.group(1), int(m.group(2), 16)))
		elif not line.strip():
			acc = None
	return reports


def series_lines(base, src, files):
	"""{path: set of line numbers} that the series adds to upstream @files.

	@files are paths relative to the trees @base (the pinned 6.12) and @src
	(the assembled series); a file only in @src is the series' as a whole
	and maps to None.
	"""
	out = {}
	for rel in files:
		new = os.path.join(src, rel)
		old = os.path.join(base, rel)
		if not os.path.exists(new):
			continue
		if not os.path.exists(old):
			out[rel] = None
			continue
		a = open(old, errors='replace').read().splitlines()
		b = open(new, errors='replace').read().splitlines()
		added = set()
		sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
		for tag, _, _, j1, j2 in sm.get_opcodes():
			if tag in ('replace', 'insert'):
				added.update(range(j1 + 1, j2 + 1))
		out[rel] = added
	return out


class Locator:
	"""file:line chains of func+offset, from System.map and vmlinux."""

	def __init__(self, system_map, vmlinux, src):
		self.addr = {}
		with open(system_map) as f:
			for line in f:
				parts = line.split()
				if len(parts) >= 3 and parts[1] in 'tTwW':
					self.addr.setdefault(parts[2], int(parts[0], 16))
		self.vmlinux = vmlinux
		self.src = os.path.realpath(src)

	def chain(self, func, off):
		"""[(path relative to the tree, line)] of the access, innermost first."""
		if func not in self.addr:
			return []
		r = subprocess.run(['addr2line', '-i', '-e', self.vmlinux,
				    '%#x' % (self.addr[func] + max(off - 1, 0))],
				   capture_output=True, text=True)
		out = []
		for where in r.stdout.splitlines():
			where = re.sub(r' \(discriminator \d+\)', '', where)
			path, _, num = where.rpartition(':')
			if not path or path.startswith('??') or not num.isdigit():
				continue
			path = os.path.realpath(path)
			if path.startswith(self.src + os.sep):
				path = path[len(self.src) + 1:]
			out.append((path, int(num)))
		return out


def classify(reports, locate, lines):
	"""Split @reports into (series, stock), each report given 'where'.

	@locate(func, off) gives the inline chain of an access, @lines is
	series_lines().  A report with an access that cannot be located (no
	stack, a function missing from System.map, no line tables) cannot be
	shown to be stock, so it goes with the series' and fails the boot.
	"""
	series, stock = [], []
	for r in reports:
		where, mine = [], not r['accesses']
		for acc in r['accesses']:
			chain = locate(*acc[0]) if acc else []
			if not chain:
				where.append('%s: not located' % ('%s+%#x' % acc[0] if acc else 'no stack'))
				mine = True
			for path, num in chain:
				where.append('%s:%d' % (path, num))
				if path in lines and (lines[path] is None or num in lines[path]):
					mine = True
		r['where'] = where
		(series if mine else stock).append(r)
	return series, stock


def series_paths(patches):
	"""The paths the series adds or changes: patches/*/files, upstream.diff."""
	paths = []
	for p in patches:
		paths += [f for f in p['files'] if not f.endswith('/')]
		if p['diff']:
			with open(p['diff']) as f:
				for line in f:
					if line.startswith('+++ b/'):
						paths.append(line[6:].split('\t')[0].strip())
	return sorted(set(paths))


def patches_of(top):
	"""patches/*/ of the checkout at @top, as series_paths() takes them."""
	out = []
	for d in sorted(glob.glob(os.path.join(top, 'patches', '*', ''))):
		files = []
		if os.path.exists(os.path.join(d, 'files')):
			with open(os.path.join(d, 'files')) as f:
				files = [ln.split('#', 1)[0].strip() for ln in f]
		diff = os.path.join(d, 'upstream.diff')
		out.append({'files': [f for f in files if f],
			    'diff': diff if os.path.exists(diff) else None})
	return out


def judge(console, flavour, src):
	"""The KCSAN reports of a boot: {'series': [...], 'stock': [...]}.

	Each report is a dict with 'title', 'line' and 'where' (the file:line
	chains of its accesses, when vmlinux has line tables).  Without a
	kernel tree (@src None) no access can be located, and every report is
	the series'.
	"""
	reports = parse(console)
	if not reports:
		return {'series': [], 'stock': []}
	if src is None:
		series, stock = classify(reports, lambda func, off: [], {})
		return {'series': series, 'stock': stock}
	obj = os.path.join(common.BUILD, flavour)
	smap, vmlinux = os.path.join(obj, 'System.map'), os.path.join(obj, 'vmlinux')
	if os.path.exists(smap) and os.path.exists(vmlinux):
		loc = Locator(smap, vmlinux, src)
		locate = loc.chain
	else:
		def locate(func, off):
			return []
	base = os.path.join(common.BUILD, 'base', 'linux')
	lines = series_lines(base, src, series_paths(patches_of(common.TOP)))
	series, stock = classify(reports, locate, lines)
	return {'series': series, 'stock': stock}
