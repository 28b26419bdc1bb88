# SPDX-License-Identifier: GPL-2.0
#
# The series on real configurations: x86_64_defconfig with every option the
# series adds both on and off and with PREEMPT_RT (make check builds the
# series' objects, make check-full whole kernels), and the Debian packages
# of make deb (the kernel's own bindeb-pkg), whose image is booted under
# QEMU against the harness's guest.
#
# The options come from the series itself (every "config" block it adds to
# a Kconfig file), so an option that lands later (the rmap OpLog) joins the
# matrix without an edit here.

import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

import scalable_common as common
from scalable_build import build_env, build_kernel, config_values, make_cmd
from scalable_build import configure as guest_configure
from scalable_common import HarnessError, log, machine_lock, run
from scalable_parser import analyze, series_kunit_suites
from scalable_qemu import boot, boot_timeout
from scalable_tree import (DEB_PACKAGES, base_package_needed, ensure_packages, prepare_src,
			   series_files, series_patches, unpack_base)

# Options of the base kernel that the series' options need on every real
# config: KUnit for the test suites (which then run only when booted with
# kunit.enable=1, and leave their results in /sys/kernel/debug/kunit for
# make selftests-tar's script), debugfs for the switches, stats and
# debugfs tests.
SUPPORT = {'CONFIG_KUNIT': 'y', 'CONFIG_KUNIT_DEFAULT_ENABLED': 'n', 'CONFIG_KUNIT_DEBUGFS': 'y',
	   'CONFIG_DEBUG_FS': 'y'}


def kconfig_blocks(text):
	"""The "config NAME" blocks of Kconfig @text: {NAME: [lines]}."""
	blocks, cur = {}, None
	for line in text.splitlines():
		m = re.match(r'(?:menu)?config\s+(\w+)\s*$', line)
		if m:
			cur = blocks.setdefault(m.group(1), [])
		elif re.match(r'(?:choice|endchoice|menu|endmenu|if|endif|source|comment)\b',
			      line):
			cur = None
		elif cur is not None:
			cur.append(line)
	return blocks


def parse_options(texts):
	"""The series' Kconfig options from the Kconfig @texts it adds.

	Returns {NAME: {'deps': set of series options it depends on,
	'not_rt': it depends on !PREEMPT_RT, 'test': a test (KUnit or debugfs
	test) option, 'kunit': it needs KUNIT=y (built-in KUnit)}}, in the
	order of the texts.  A symbol without a prompt (an architecture's
	ARCH_HAS_* capability, set by its "select") is not an option: no
	configuration can switch it.
	"""
	blocks = {}
	for t in texts:
		blocks.update(kconfig_blocks(t))
	opts = {}
	for name, lines in blocks.items():
		if not any(re.match(r'\s*(?:(?:bool|tristate|int|hex|string)\s+"|prompt\s)', l)
			   for l in lines):
			continue
		deps = ' '.join(re.sub(r'^\s*depends\s+on\s+', '', l) for l in lines
				if re.match(r'\s*depends\s+on\s', l))
		syms = re.findall(r'(!?)\s*\b([A-Z][A-Z0-9_]*)\b', deps)
		opts[name] = {'deps': {s for neg, s in syms if not neg and s in blocks},
			      'not_rt': ('!', 'PREEMPT_RT') in syms,
			      'test': 'KUNIT' in name or name.startswith('TEST_'),
			      'kunit': 'KUNIT=y' in deps.replace(' ', '')}
	return opts


def added_kconfig_text(diff_text):
	"""The lines that @diff_text adds to Kconfig files, one text per file."""
	out, cur, lines = [], None, []
	for line in diff_text.splitlines():
		if line.startswith('+++ '):
			if cur and lines:
				out.append('\n'.join(lines))
			path = line[4:].split('\t')[0]
			cur = path if re.search(r'(^|/)Kconfig[^/]*$', path) else None
			lines = []
		elif cur and line.startswith('+'):
			lines.append(line[1:])
		elif cur and line.startswith((' ', '-')):
			# A context or removed line ends the added block.
			if lines and lines[-1] != '':
				lines.append('')
	if cur and lines:
		out.append('\n'.join(lines))
	return out


def series_options():
	"""parse_options() of the Kconfig text the series adds, in series order."""
	patches = series_patches()
	owner = series_files(patches)
	texts = []
	for p in patches:
		if p['diff']:
			with open(p['diff']) as f:
				texts += added_kconfig_text(f.read())
		for path in sorted(f for f, who in owner.items() if who == p['name']):
			if re.search(r'(^|/)Kconfig[^/]*$', path):
				with open(os.path.join(common.TOP, path)) as f:
					texts.append(f.read())
	opts = parse_options(texts)
	if not opts:
		raise HarnessError('the series adds no Kconfig option: nothing to build')
	return opts


STOCK_OBJ = 'stock'


def stock_config_problems(obj, frags, series):
	"""The @frags settings that did not take effect in @obj/.config.

	The series' own options (@series) do not exist in the base's Kconfig
	and are expected to drop out; any other setting must hold.
	"""
	final = config_values(os.path.join(obj, '.config'))
	bad = []
	for f in frags:
		for sym, want in config_values(f).items():
			if sym[len('CONFIG_'):] in series:
				continue
			if final.get(sym, 'n') != want:
				bad.append('%s: %s=%s requested, got %s' %
					   (os.path.basename(f), sym, want, final.get(sym, 'n')))
	return bad


def build_stock(req):
	"""Unpatched 6.12 with the release guest's configuration, in build/stock.

	For measurements against stock 6.12 (make trace TRACE_KERNEL=stock):
	tinyconfig plus the release fragments, merged on the pristine base
	(scripts/kconfig/merge_config.sh); the series' options do not exist
	there and drop out, every other setting must take effect.  The kernel
	boots the release flavour's initramfs: the kselftests are user space,
	and without the series' switches the benchmarks register their
	"-stock" modes only.  Returns the object directory.
	"""
	build_kernel(req, 'release')
	with machine_lock(req, 'building stock'):
		src = prepare_src(req)
		base = unpack_base(req)
		obj = os.path.join(common.BUILD, STOCK_OBJ)
		frags = [os.path.join(src, 'kernel', 'configs', f)
			 for f in ('scalable.config', 'scalable-release.config')]
		h = hashlib.sha256(open(os.path.join(common.BUILD, 'base', '.identity'), 'rb').read())
		for f in frags:
			h.update(open(f, 'rb').read())
		stamp = os.path.join(obj, '.scalable-config')
		if not (os.path.exists(stamp) and open(stamp).read() == h.hexdigest() and
			os.path.exists(os.path.join(obj, '.config'))):
			os.makedirs(obj, exist_ok=True)
			run_quiet(make_cmd(req, base, obj, 'tinyconfig'))
			run_quiet([os.path.join(base, 'scripts', 'kconfig', 'merge_config.sh'), '-m',
				   '-O', obj, os.path.join(obj, '.config')] + frags, cwd=base)
			run_quiet(make_cmd(req, base, obj, 'olddefconfig'))
			bad = stock_config_problems(obj, frags, series_options())
			if bad:
				raise HarnessError('the release fragments did not take effect on the '
						   'base:\n  ' + '\n  '.join(bad))
			with open(stamp, 'w') as f:
				f.write(h.hexdigest())
		t0 = time.time()
		log('building stock 6.12 (the base, release config) in build/%s' % STOCK_OBJ)
		run(make_cmd(req, base, obj, 'bzImage'), env=build_env())
		log('stock kernel built in %.0f s' % (time.time() - t0))
	return obj


def run_quiet(cmd, cwd=None):
	r = subprocess.run(cmd, capture_output=True, text=True, env=build_env(), cwd=cwd)
	if r.returncode != 0:
		raise HarnessError('%s failed:\n%s' % (' '.join(cmd[:4]), r.stdout + r.stderr))


def dependents(opts, names):
	"""@names and every series option that depends on one, transitively."""
	out = set(names)
	grew = True
	while grew:
		grew = False
		for n, o in opts.items():
			if n not in out and o['deps'] & out:
				out.add(n)
				grew = True
	return out


def variants(opts):
	"""The real-config matrix: [(name, requested, expected)].

	requested maps CONFIG_ symbols to 'y'/'n' (merged onto defconfig);
	expected is what the final .config must hold for every series option:
	an option switched off takes its dependents with it, and PREEMPT_RT
	turns off the options that depend on !PREEMPT_RT.
	"""
	names = list(opts)
	feats = [n for n in names if not opts[n]['test']]

	def cfg(on, extra=()):
		req = dict(SUPPORT)
		req.update(('CONFIG_' + n, 'y' if n in on else 'n') for n in names)
		req.update(extra)
		return req

	def expect(off):
		return {'CONFIG_' + n: 'n' if n in off else 'y' for n in names}

	out = [('all-on', cfg(names), expect(set()))]
	for f in feats:
		off = dependents(opts, [f])
		out.append(('no-' + f.lower().replace('_', '-'),
			    cfg([n for n in names if n not in off], [('CONFIG_EXPERT', 'y')]),
			    expect(off)))
	# What a distribution builds: the features without their tests, and
	# KUnit as a module (Debian's), where the bool test options drop out
	# and VISIBLE_IF_KUNIT functions are still visible.
	tests = {n for n in names if opts[n]['test']}
	out.append(('no-tests', cfg(feats, [('CONFIG_KUNIT', 'n')]), expect(tests)))
	out.append(('kunit-module', cfg(names, [('CONFIG_KUNIT', 'm')]),
		    expect({n for n in names if opts[n]['kunit']})))
	out.append(('all-off', cfg([], [('CONFIG_EXPERT', 'y')]), expect(set(names))))
	rt_off = dependents(opts, [n for n in names if opts[n]['not_rt']])
	out.append(('preempt-rt', cfg(names, [('CONFIG_EXPERT', 'y'), ('CONFIG_PREEMPT_RT', 'y')]),
		    expect(rt_off)))
	return out


def fragment_text(requested):
	return ''.join('%s=%s\n' % (k, v) if v != 'n' else '# %s is not set\n' % k
		       for k, v in requested.items())


def config_mismatches(final, want):
	"""The CONFIG_ symbols of @want that the final .config (@final) lacks."""
	return ['%s=%s expected, got %s' % (k, v, final.get(k, 'n'))
		for k, v in want.items() if final.get(k, 'n') != v]


def configure(req, src, obj, base, requested):
	"""@base ('defconfig' or a config file) plus @requested, in @obj.

	Uses the kernel's merge_config.sh and olddefconfig.  Returns the
	final .config's values.
	"""
	os.makedirs(obj, exist_ok=True)
	if base == 'defconfig':
		r = subprocess.run(make_cmd(req, src, obj, 'defconfig'), capture_output=True,
				   text=True, env=build_env())
	else:
		shutil.copy(base, os.path.join(obj, '.config'))
		r = subprocess.run(make_cmd(req, src, obj, 'olddefconfig'), capture_output=True,
				   text=True, env=build_env())
	if r.returncode != 0:
		raise HarnessError('configuring %s failed:\n%s' % (base, r.stdout + r.stderr))
	with tempfile.NamedTemporaryFile('w', suffix='.config', dir=obj, delete=False) as f:
		f.write(fragment_text(requested))
		frag = f.name
	try:
		r = subprocess.run(['sh', os.path.join(src, 'scripts', 'kconfig', 'merge_config.sh'),
				    '-m', '-O', obj, os.path.join(obj, '.config'), frag],
				   cwd=src, capture_output=True, text=True, env=build_env())
		if r.returncode != 0:
			raise HarnessError('merge_config.sh failed:\n' + r.stdout + r.stderr)
	finally:
		os.unlink(frag)
	r = subprocess.run(make_cmd(req, src, obj, 'olddefconfig'), capture_output=True,
			   text=True, env=build_env())
	if r.returncode != 0:
		raise HarnessError('olddefconfig failed:\n' + r.stdout + r.stderr)
	return config_values(os.path.join(obj, '.config'))


def edited_c_files(patches):
	"""Upstream C files that the series' upstream.diff files edit."""
	out = set()
	for p in patches:
		if p['diff']:
			with open(p['diff']) as f:
				out |= set(re.findall(r'^\+\+\+ b/(\S+\.c)\b', f.read(), re.M))
	return out


def makefile_lines(path):
	"""The assignments of Makefile @path, continuation lines joined."""
	try:
		with open(path) as f:
			text = f.read()
	except OSError:
		return []
	return [l for l in text.replace('\\\n', ' ').splitlines() if not l.startswith('#')]


def kbuild_condition(src, rel, depth=0):
	"""The CONFIG_ symbols kbuild needs set to build @rel (a .o or a dir/).

	Read from the Makefile of @rel's directory and, for that directory,
	its parent's, up to the top-level directories (always built).  A
	member of a composite object (foo-y += bar.o) takes foo.o's condition,
	and a member of a list that obj-y names as a variable (mm/Makefile's
	mmu-$(CONFIG_MMU) += vma.o, then obj-y += $(mmu-y)) that list's.
	Returns None when no Makefile names @rel.
	"""
	rel = rel.rstrip('/')
	parent, name = os.path.dirname(rel), os.path.basename(rel)
	if not parent or depth > 8:
		return []
	want = name + ('' if name.endswith('.o') else '/')
	return _kbuild_token_condition(src, parent, want, depth)


def _kbuild_token_condition(src, parent, want, depth):
	"""kbuild_condition() of the word @want in the Makefile of @parent."""
	lines = makefile_lines(os.path.join(src, parent, 'Makefile')) or \
		makefile_lines(os.path.join(src, parent, 'Kbuild'))
	for line in lines:
		m = re.match(r'\s*([\w-]+?)-(y|objs|\$\(CONFIG_(\w+)\))\s*[:+]?=(.*)', line)
		if not m or want not in m.group(4).split():
			continue
		here = [m.group(3)] if m.group(3) else []
		if m.group(1) in ('obj', 'lib'):
			up = kbuild_condition(src, parent + '/', depth + 1)
		else:
			up = kbuild_condition(src, os.path.join(parent, m.group(1) + '.o'), depth + 1)
			if up is None and depth < 8:
				up = _kbuild_token_condition(src, parent, '$(%s-y)' % m.group(1),
							     depth + 1)
		return None if up is None else here + up
	return None


def includer(src, rel):
	"""The object that compiles @rel (a .c) by #include, or None."""
	d, name = os.path.dirname(rel), os.path.basename(rel)
	for c in sorted(glob.glob(os.path.join(src, d, '*.c'))):
		with open(c, errors='replace') as f:
			if re.search(r'^#\s*include\s+"%s"' % re.escape(name), f.read(), re.M):
				return os.path.join(d, os.path.basename(c)[:-2] + '.o')
	return None


def series_objects(src, config):
	"""The objects that compile the series' kernel C code under @config.

	@config maps CONFIG_ symbols to values (config_values()).  Returns
	(objects to build, [(C file, why it is not built)]).
	"""
	patches = series_patches()
	owner = series_files(patches)
	files = {f for f in owner if f.endswith('.c') and
		 not f.startswith(('tools/', 'Documentation/', 'samples/', 'scripts/'))}
	files |= {f for f in edited_c_files(patches) if not f.startswith(('tools/', 'scripts/'))}
	objs, skipped = set(), []
	for f in sorted(files):
		o = f[:-2] + '.o'
		cond = kbuild_condition(src, o)
		if cond is None:
			o = includer(src, f)
			cond = kbuild_condition(src, o) if o else None
		if cond is None:
			skipped.append((f, 'no Makefile builds it'))
		elif all(config.get('CONFIG_' + c) == 'y' for c in cond):
			objs.add(o)
		else:
			skipped.append((f, 'needs ' + ' '.join('CONFIG_' + c for c in cond)))
	return sorted(objs), skipped


def diagnostics(text):
	"""Compiler and linker warnings and errors in build output @text."""
	return [l for l in text.splitlines()
		if re.search(r'\b(warning|error|Error)\b[: ]', l)]


def build_variant(req, src, obj, name, requested, expected, level):
	"""Configure and build one variant; returns (problems, seconds)."""
	t0 = time.time()
	final = configure(req, src, obj, 'defconfig', requested)
	problems = ['%s: %s' % (name, m) for m in config_mismatches(final, expected)]
	if problems:
		return problems, time.time() - t0
	if level == 'objects':
		# A lone .o target builds only what the config builds: list what
		# this variant compiles and check each object appeared.
		objs, skipped = series_objects(src, final)
		for f, why in skipped:
			if 'Makefile' in why:
				problems.append('%s: %s: %s' % (name, f, why))
		for o in objs:
			path = os.path.join(obj, o)
			if os.path.exists(path):
				os.unlink(path)
		targets = objs
	else:
		targets = ['all']
	r = subprocess.run(make_cmd(req, src, obj, *targets), capture_output=True, text=True,
			   env=build_env())
	out = r.stdout + r.stderr
	diag = diagnostics(out)
	if r.returncode != 0 or diag:
		problems.append('%s: build %s:\n  %s' % (name, 'failed' if r.returncode else
							 'warned', '\n  '.join(diag[:40] or
									       out.splitlines()[-30:])))
	if level == 'objects' and r.returncode == 0:
		missing = [o for o in targets if not os.path.exists(os.path.join(obj, o))]
		if missing:
			problems.append('%s: not built: %s' % (name, ' '.join(missing)))
		log('%s: %d objects built, %d files not in this config' %
		    (name, len(targets) - len(missing), len(skipped)))
	return problems, time.time() - t0


def real_config_builds(req, level):
	"""Build every variant at @level ('objects' or 'full'); returns problems.

	The variants share one object directory per preemption model
	(build/defconfig, build/defconfig-rt), so that kbuild's per-symbol
	dependencies rebuild only what a switched option touches.
	"""
	src = prepare_src(req)
	problems, times = [], []
	for name, requested, expected in variants(series_options()):
		obj = os.path.join(common.BUILD, 'defconfig-rt' if name == 'preempt-rt' else 'defconfig')
		with machine_lock(req, 'building x86_64_defconfig %s' % name):
			log('x86_64_defconfig %s: building %s' %
			    (name, 'the series\' objects' if level == 'objects' else 'the kernel'))
			p, secs = build_variant(req, src, obj, name, requested, expected, level)
		problems += p
		times.append((name, secs))
		log('x86_64_defconfig %s: %s in %.0f s' % (name, 'FAILED' if p else 'ok', secs))
	log('real-config builds (%s): %s' % (level, ', '.join('%s %.0f s' % t for t in times)))
	return problems


# ---------------------------------------------------------------- make deb

# bindeb-pkg writes the packages beside its object tree, build/deb, in
# build/; they are moved to build/debs.  The object tree sits at the same
# depth as build/defconfig, so that ccache (CCACHE_BASEDIR, paths relative
# to the object tree) reuses check-full's all-on objects for a defconfig
# package.
DEB_OBJ = os.path.join(common.BUILD, 'deb')
DEB_DIR = os.path.join(common.BUILD, 'debs')
DEB_OUTPUTS = ('*.deb', '*.buildinfo', '*.changes')


def deb_base_config(req):
	"""@req's DEB_CONFIG, else the running Debian kernel's, else defconfig."""
	if req.deb_config:
		return req.deb_config
	running = '/boot/config-' + os.uname().release
	if os.path.isfile(running):
		return running
	found = sorted(glob.glob('/boot/config-*'))
	return found[-1] if found else 'defconfig'


def deb_packages():
	return sorted(glob.glob(os.path.join(DEB_DIR, '*.deb')))


def build_deb(req):
	"""bindeb-pkg of the patched tree; returns the .deb paths."""
	ensure_packages(need_base=base_package_needed(req), extra=DEB_PACKAGES)
	src = prepare_src(req)
	base = deb_base_config(req)
	obj = DEB_OBJ
	matrix = variants(series_options())
	requested = matrix[0][1]
	with machine_lock(req, 'building the Debian packages'):
		for d in (DEB_DIR, common.BUILD):
			for pattern in DEB_OUTPUTS:
				for old in glob.glob(os.path.join(d, pattern)):
					os.unlink(old)
		if base == 'guest':
			guest_configure(req, src, obj, 'release')
			final = config_values(os.path.join(obj, '.config'))
		else:
			final = configure(req, src, obj, base, requested)
		want = matrix[-1][2] if final.get('CONFIG_PREEMPT_RT') == 'y' else matrix[0][2]
		bad = config_mismatches(final, want)
		if bad:
			raise HarnessError('the series\' options did not take effect on %s:\n  %s' %
					   (base, '\n  '.join(bad)))
		log('building Debian packages from %s plus the series\' options in %s' %
		    (base, os.path.relpath(obj, common.TOP)))
		t0 = time.time()
		common.run(make_cmd(req, src, obj, 'bindeb-pkg', extra=['LOCALVERSION=-scalable']),
			   env=build_env())
		log('bindeb-pkg took %.0f s' % (time.time() - t0))
		os.makedirs(DEB_DIR, exist_ok=True)
		for pattern in DEB_OUTPUTS:
			for f in glob.glob(os.path.join(common.BUILD, pattern)):
				shutil.move(f, os.path.join(DEB_DIR, os.path.basename(f)))
	debs = deb_packages()
	if not any(os.path.basename(d).startswith('linux-image-') for d in debs):
		raise HarnessError('bindeb-pkg produced no linux-image package in %s' % DEB_DIR)
	return debs


def deb_image(debs, dest):
	"""Unpack the linux-image package into @dest; returns its vmlinuz path."""
	image = [d for d in debs if os.path.basename(d).startswith('linux-image-') and
		 '-dbg_' not in d]
	if not image:
		raise HarnessError('no linux-image package among %s' % ', '.join(debs))
	shutil.rmtree(dest, ignore_errors=True)
	common.run(['dpkg-deb', '-x', image[0], dest], quiet=True)
	found = glob.glob(os.path.join(dest, 'boot', 'vmlinuz-*'))
	if len(found) != 1:
		raise HarnessError('%s holds %d /boot/vmlinuz-* files, not one' %
				   (os.path.basename(image[0]), len(found)))
	return found[0]


def deb_config(vmlinuz):
	"""The /boot/config-<release> that the package installs beside @vmlinuz."""
	boot, name = os.path.split(vmlinuz)
	config = os.path.join(boot, 'config-' + name[len('vmlinuz-'):])
	if not os.path.exists(config):
		raise HarnessError('the linux-image package has %s but no %s' %
				   (name, os.path.basename(config)))
	return config


def compare_summaries(guest, deb, suites):
	"""Where the deb boot's results differ from the harness guest's.

	Compares the KUnit counts of the series' @suites (the packaged kernel
	may build other suites too) and the kselftest counts of every target.
	"""
	out = []
	for s in suites:
		g = guest['kunit_suites'].get(s)
		d = deb['kunit_suites'].get(s)
		if g != d:
			out.append('KUnit suite %s: guest %s, package %s' % (s, g, d))
	for t in sorted(set(guest['targets']) | set(deb['targets'])):
		g, d = guest['targets'].get(t), deb['targets'].get(t)
		if g != d:
			out.append('kselftest target %s: guest %s, package %s' % (t, g, d))
	return out


def kunit_suite_counts(path):
	"""{suite: (passed, failed, skipped, crashed)} from kunit.py's JSON @path."""
	try:
		with open(path) as f:
			data = json.load(f)
	except (OSError, ValueError):
		return {}
	out = {}

	def walk(group, suite):
		for case in group.get('test_cases', []):
			st = case.get('status', '')
			i = {'PASS': 0, 'FAIL': 1, 'SKIP': 2}.get(st, 3)
			c = out.setdefault(suite, [0, 0, 0, 0])
			c[i] += 1
		for g in group.get('sub_groups', []):
			walk(g, suite or g.get('name'))
	walk(data, None)
	return {k: tuple(v) for k, v in out.items()}


def boot_summary(req, obj, tag, logdir, extra_append=''):
	"""Boot @obj's bzImage and initramfs in test mode; returns (ok, summary)."""
	src = os.path.join(common.BUILD, 'src', 'linux')
	b = boot(req, obj, 'release', common.default_smp(req), 'test', logdir,
		 boot_timeout(req, 'release', 'test') + 300, extra_append=extra_append, tag=tag)
	ok, problems, summary = analyze(src, b, logdir)
	summary['kunit_suites'] = kunit_suite_counts(os.path.join(logdir, b['name'] +
								  '.kunit.json'))
	log('%s: %s in %.0f s' % (b['name'], 'PASS' if ok else 'FAIL', b['seconds']))
	for p in problems:
		log('  ' + p)
	return ok, summary


def series_suites():
	"""The KUnit suites of the series, by the names they print, from their
	sources (scalable_parser.series_kunit_suites())."""
	return tuple(sorted(series_kunit_suites()))


# Upstream kselftests that a packaged kernel's boot leaves out, on both
# sides of the comparison: {collection:test: why}.  Each would be a stock
# race of a distribution config that the guest flavours cannot show; none
# is left since proc:read, whose /proc/<pid>/net of an exiting task failed
# here, is in EXCLUDED_TESTS for every flavour (the same walk of exiting
# tasks' directories).
DEB_EXCLUDED = {}


def deb_test(req, debs):
	"""Boot the packaged image and the harness's release guest; compare.

	Both boot with the release flavour's initramfs (its kselftests and
	/init) in test mode; the package's kernel is told kunit.enable=1 (the
	series' fragment builds KUnit without running it at every boot).
	Both leave out DEB_EXCLUDED (scalable_exclude), so that their counts
	compare.  Returns the problems (a failed boot, or a difference in the series'
	KUnit suites or in any kselftest target's counts).
	"""
	guest_obj = build_kernel(req, 'release')
	logdir = os.path.join(req.out, 'logs')
	boot_obj = os.path.join(DEB_DIR, 'boot')
	vmlinuz = deb_image(debs, os.path.join(DEB_DIR, 'image'))
	shutil.rmtree(boot_obj, ignore_errors=True)
	os.makedirs(os.path.join(boot_obj, 'arch', 'x86', 'boot'))
	os.symlink(vmlinuz, os.path.join(boot_obj, 'arch', 'x86', 'boot', 'bzImage'))
	os.symlink(os.path.join(guest_obj, 'initramfs.cpio.gz'),
		   os.path.join(boot_obj, 'initramfs.cpio.gz'))
	# The package's config, so that the boot knows what the kernel is
	# (a JUMP_LABEL kernel boots single-threaded under TCG: tcg_thread()).
	os.symlink(deb_config(vmlinuz), os.path.join(boot_obj, '.config'))
	problems = []
	exclude = 'scalable_exclude=' + ','.join(sorted(DEB_EXCLUDED)) if DEB_EXCLUDED else ''
	for t, why in sorted(DEB_EXCLUDED.items()):
		log('left out of both boots: %s: %s' % (t, why))
	gok, guest = boot_summary(req, guest_obj, '', logdir, extra_append=exclude)
	dok, deb = boot_summary(req, boot_obj, 'deb', logdir,
				extra_append=('kunit.enable=1 ' + exclude).strip())
	if not gok:
		problems.append('the harness\'s release guest failed: ' + '; '.join(guest['problems']))
	if not dok:
		problems.append('the packaged kernel failed: ' + '; '.join(deb['problems']))
	suites = series_suites()
	missing = [s for s in suites if s not in deb['kunit_suites']]
	if missing:
		problems.append('the packaged kernel ran no KUnit suite ' + ', '.join(missing))
	problems += compare_summaries(guest, deb, suites)
	if not problems:
		log('the packaged kernel (%s) booted to the same results as the harness\'s guest: '
		    'KUnit %s; kselftest %d passed, %d skipped' %
		    (os.path.basename(vmlinuz), ', '.join('%s %d/%d' % (s, deb['kunit_suites'][s][0],
								     sum(deb['kunit_suites'][s]))
							 for s in suites),
		     deb['kselftest']['passed'], deb['kselftest']['skipped']))
	return problems
