# SPDX-License-Identifier: GPL-2.0
#
# The tree the kernels are built from: the Debian packages the harness
# needs, the pinned base (base.conf, or the request's LINUX_TARBALL /
# LINUX_TREE) checked and unpacked into build/base/linux, the series
# definition in patches/ (which patch adds which new file), and
# build/src/linux assembled from the base, the upstream diffs and the new
# files.

import hashlib
import os
import re
import shutil
import subprocess

import scalable_common as common
from scalable_common import HarnessError, die, log, machine_lock, read_conf, run

# Debian packages the harness needs, with a file that proves each present.
PACKAGES = {
	'gcc': '/usr/bin/gcc',
	'make': '/usr/bin/make',
	'flex': '/usr/bin/flex',
	'bison': '/usr/bin/bison',
	'bc': '/usr/bin/bc',
	'libelf-dev': '/usr/include/gelf.h',
	'libssl-dev': '/usr/include/openssl/ssl.h',
	'cpio': '/usr/bin/cpio',
	'qemu-system-x86': '/usr/bin/qemu-system-x86_64',
	'busybox-static': '/bin/busybox',
	'sparse': '/usr/bin/sparse',
	'coccinelle': '/usr/bin/spatch',
	# spatch compiles the OCaml scripts of some semantic patches (coccicheck)
	'ocaml-nox': '/usr/bin/ocamlopt',
	'ccache': '/usr/bin/ccache',
	'python3': '/usr/bin/python3',
	'xz-utils': '/usr/bin/xz',
	'rsync': '/usr/bin/rsync',
	'git': '/usr/bin/git',
	'perl': '/usr/bin/perl',
	'kmod': '/usr/bin/kmod',
	# scripts/spdxcheck.py, run by checkpatch, with Debian's python3
	'python3-ply': '/usr/lib/python3/dist-packages/ply/__init__.py',
	'python3-git': '/usr/lib/python3/dist-packages/git/__init__.py',
}
# make deb: the kernel's bindeb-pkg runs dpkg-buildpackage, which checks the
# Build-Depends of the debian/control it writes (debhelper-compat).
DEB_PACKAGES = {
	'dpkg-dev': '/usr/bin/dpkg-buildpackage',
	'debhelper': '/usr/bin/dh',
}


# ---------------------------------------------------------------- packages

def missing_packages(need_base, extra=None):
	table = dict(PACKAGES, **(extra or {}))
	missing = [p for p, f in table.items() if not os.path.exists(f)]
	if need_base:
		conf = read_conf()
		if not os.path.exists(conf['TARBALL']):
			missing.append('%s=%s' % (conf['DEBIAN_PACKAGE'], conf['DEBIAN_VERSION']))
	return missing


def base_package_needed(req):
	"""Whether @req builds on base.conf's package (no LINUX_TREE or LINUX_TARBALL)."""
	return not (req.linux_tree or req.linux_tarball)


def ensure_packages(need_base=True, extra=None):
	"""Install what PACKAGES (and @extra, the same form) name and lacks.

	@need_base: the package of base.conf's tarball too
	(base_package_needed()).
	"""
	missing = missing_packages(need_base, extra)
	if not missing:
		return
	cmd = ['apt-get', 'install', '-y', '--no-install-recommends'] + missing
	if os.geteuid() != 0:
		die('missing Debian packages: %s\n'
		    '  install them as root with:\n    sudo %s' %
		    (' '.join(missing), ' '.join(cmd)))
	log('installing missing packages: ' + ' '.join(missing))
	env = dict(os.environ, DEBIAN_FRONTEND='noninteractive')
	r = subprocess.run(cmd, env=env)
	if r.returncode != 0:
		subprocess.run(['apt-get', 'update'], env=env)
		r = subprocess.run(cmd, env=env)
	if r.returncode != 0:
		conf = read_conf()
		avail = subprocess.run(['apt-cache', 'policy', conf['DEBIAN_PACKAGE']],
				       capture_output=True, text=True).stdout
		die('apt-get could not install: %s\n%s\n'
		    '  The series is pinned to %s %s (tools/testing/scalable/base.conf).\n'
		    '  If apt serves another version, either point the build at a 6.12.y tree\n'
		    '  of your own (make test LINUX_TARBALL=/path/linux-6.12.y.tar.xz or\n'
		    '  LINUX_TREE=/path/to/linux), or move the pin (all four values in\n'
		    '  base.conf) and re-run make series and make test.' %
		    (' '.join(missing), avail.strip(), conf['DEBIAN_PACKAGE'],
		     conf['DEBIAN_VERSION']))
	still = missing_packages(need_base)
	if still:
		die('packages still missing after apt-get: ' + ' '.join(still))


# ---------------------------------------------------------------- base tree

def sha256(path):
	h = hashlib.sha256()
	with open(path, 'rb') as f:
		for chunk in iter(lambda: f.read(1 << 20), b''):
			h.update(chunk)
	return h.hexdigest()


def tree_version(tree):
	v = {}
	with open(os.path.join(tree, 'Makefile')) as f:
		for line in f:
			m = re.match(r'(VERSION|PATCHLEVEL|SUBLEVEL) = (\d+)', line)
			if m:
				v[m.group(1)] = m.group(2)
			if len(v) == 3:
				break
	return '%s.%s.%s' % (v.get('VERSION'), v.get('PATCHLEVEL'), v.get('SUBLEVEL'))


def base_source(req):
	"""Return (kind, path, identity) of the base @req asks for.

	LINUX_TREE or LINUX_TARBALL (scalable_request.py checked that at most
	one is set, and that it exists), else base.conf's tarball.
	"""
	tree = req.linux_tree
	tarball = req.linux_tarball
	if tree:
		return 'tree', os.path.realpath(tree), 'tree:' + os.path.realpath(tree)
	if tarball:
		return 'tarball', os.path.realpath(tarball), 'tarball:' + sha256(tarball)
	conf = read_conf()
	path = conf['TARBALL']
	if not os.path.isfile(path):
		die('%s is missing: install %s=%s (make prepare does it as root)' %
		    (path, conf['DEBIAN_PACKAGE'], conf['DEBIAN_VERSION']))
	digest = sha256(path)
	if digest != conf['SHA256']:
		installed = subprocess.run(['dpkg-query', '-W', '-f=${Version}', conf['DEBIAN_PACKAGE']],
					   capture_output=True, text=True).stdout.strip()
		die('%s has sha256 %s, but base.conf pins %s (%s %s).\n'
		    '  The installed package is version %s.  Install the pinned one with\n'
		    '    apt-get install %s=%s\n'
		    '  or build on your own tree with LINUX_TARBALL=... or LINUX_TREE=...' %
		    (path, digest, conf['SHA256'], conf['DEBIAN_PACKAGE'], conf['DEBIAN_VERSION'],
		     installed or 'unknown', conf['DEBIAN_PACKAGE'], conf['DEBIAN_VERSION']))
	return 'tarball', path, 'tarball:' + digest


def unpack_base(req):
	"""Unpack the pristine base of @req into build/base/linux; return its path.

	The new base is unpacked beside the old one and checked before it
	replaces it, so a wrong tarball or tree leaves the previous base alone.
	"""
	kind, path, ident = base_source(req)
	dst = os.path.join(common.BUILD, 'base')
	stamp = os.path.join(dst, '.identity')
	tree = os.path.join(dst, 'linux')
	if os.path.exists(stamp) and open(stamp).read() == ident:
		return tree
	if kind == 'tree':
		check_base_version(path, path)
	log('unpacking base %s' % path)
	new = os.path.join(common.BUILD, 'base.new')
	shutil.rmtree(new, ignore_errors=True)
	os.makedirs(new)
	if kind == 'tree':
		run(['rsync', '-a', '--exclude=.git', path + '/', os.path.join(new, 'linux') + '/'])
	else:
		tmp = os.path.join(new, 'unpack')
		os.makedirs(tmp)
		run(['tar', '-xf', path, '-C', tmp])
		entries = os.listdir(tmp)
		if len(entries) != 1 or not os.path.isdir(os.path.join(tmp, entries[0])):
			shutil.rmtree(new, ignore_errors=True)
			die('%s does not unpack into a single directory' % path)
		os.rename(os.path.join(tmp, entries[0]), os.path.join(new, 'linux'))
		os.rmdir(tmp)
	try:
		check_base_version(os.path.join(new, 'linux'), path)
	except SystemExit:
		shutil.rmtree(new, ignore_errors=True)
		raise
	with open(os.path.join(new, '.identity'), 'w') as f:
		f.write(ident)
	shutil.rmtree(dst, ignore_errors=True)
	os.rename(new, dst)
	return tree


def check_base_version(tree, what):
	if not os.path.exists(os.path.join(tree, 'Makefile')):
		die('%s is not a kernel source tree (no Makefile)' % what)
	ver = tree_version(tree)
	if not ver.startswith('6.12.'):
		die('%s is Linux %s, but this series is for 6.12.y' % (what, ver))
	conf = read_conf()
	if ver != conf['LINUX_VERSION']:
		log('note: the base is %s; the series is pinned to and tested on %s' %
		    (ver, conf['LINUX_VERSION']))


# ---------------------------------------------------------------- series

def series_patches():
	"""The series, in order: list of dicts (dir, message, files, diff, series_diff).

	upstream.diff changes files of the base; series.diff changes new files
	that an earlier patch of the series adds (a selftests Makefile that each
	patch adds its programs to).  The repository holds every new file's
	final content: the owner's commit gets it with the later patches'
	series.diff reversed (commit_series()).
	"""
	out = []
	for name in sorted(os.listdir(common.PATCHES)):
		d = os.path.join(common.PATCHES, name)
		if not os.path.isdir(d):
			continue
		with open(os.path.join(d, 'message')) as f:
			msg = f.read()
		files = []
		fpath = os.path.join(d, 'files')
		if os.path.exists(fpath):
			with open(fpath) as f:
				for line in f:
					line = line.split('#', 1)[0].strip()
					if line:
						files.append(line)
		diff = os.path.join(d, 'upstream.diff')
		sdiff = os.path.join(d, 'series.diff')
		out.append({'name': name, 'dir': d, 'message': msg, 'files': files,
			    'diff': diff if os.path.exists(diff) else None,
			    'series_diff': sdiff if os.path.exists(sdiff) else None})
	return out


def tracked_files():
	"""Files of the checkout: committed ones and new ones git does not ignore."""
	r = subprocess.run(['git', 'ls-files', '-z', '--cached', '--others', '--exclude-standard'],
			   cwd=common.TOP, capture_output=True)
	if r.returncode != 0:
		# Not a git checkout (a tarball of the repo): walk the tree instead.
		files = []
		for root, dirs, names in os.walk(common.TOP):
			dirs[:] = [d for d in dirs if d not in ('.git', 'build', 'out')]
			for n in names:
				files.append(os.path.relpath(os.path.join(root, n), common.TOP))
		return files
	return [f for f in r.stdout.decode().split('\0') if f]


# Paths in this repository that are not part of the kernel series.
NOT_IN_SERIES = ('README.md', 'Makefile', '.gitignore', '.ci/', 'patches/',
		 'tools/testing/scalable/')


def series_files(patches):
	"""Map every new in-tree file to the patch that adds it; check coverage."""
	owner = {}
	tracked = [f for f in tracked_files() if not f.startswith(NOT_IN_SERIES)]
	for p in patches:
		for entry in p['files']:
			matched = [f for f in tracked
				   if f == entry or (entry.endswith('/') and f.startswith(entry))]
			if not matched:
				raise HarnessError('%s/files lists %s, which is not in the repository' %
						   (p['name'], entry))
			for f in matched:
				if f in owner:
					raise HarnessError('%s is claimed by both %s and %s' %
							   (f, owner[f], p['name']))
				owner[f] = p['name']
	orphans = [f for f in tracked if f not in owner]
	if orphans:
		raise HarnessError('files not in any patch of patches/*/files: ' + ' '.join(orphans))
	order = [p['name'] for p in patches]
	for p in patches:
		for f in diff_paths(p.get('series_diff')):
			if f not in owner or order.index(owner[f]) >= order.index(p['name']):
				raise HarnessError('%s/series.diff changes %s, which no earlier patch '
						   'adds (a file of the base goes in upstream.diff, '
						   'a file of this patch in its files)' % (p['name'], f))
	return owner


def diff_paths(path):
	"""The files a unified diff changes, in order (b/ side)."""
	if not path:
		return []
	out = []
	with open(path) as f:
		for line in f:
			if line.startswith('+++ '):
				name = line[4:].split('\t', 1)[0].strip()
				if name.startswith('b/'):
					name = name[2:]
				if name not in out:
					out.append(name)
	return out


# Bump when the way the tree is assembled changes, to re-assemble old trees.
ASSEMBLY_VERSION = b'2: patch --fuzz=0 --no-backup-if-mismatch'


def prepare_src(req):
	"""Build build/src/linux = base + upstream diffs + new files; incremental."""
	with machine_lock(req, 'assembling the tree'):
		return _prepare_src(req)


def _prepare_src(req):
	base = unpack_base(req)
	patches = series_patches()
	owner = series_files(patches)
	src = os.path.join(common.BUILD, 'src', 'linux')
	h = hashlib.sha256(open(os.path.join(common.BUILD, 'base', '.identity'), 'rb').read())
	h.update(ASSEMBLY_VERSION)
	for p in patches:
		if p['diff']:
			h.update(open(p['diff'], 'rb').read())
	h.update('\n'.join(sorted(owner)).encode())
	ident = h.hexdigest()
	stamp = os.path.join(common.BUILD, 'src', '.identity')
	if not (os.path.exists(stamp) and open(stamp).read() == ident):
		log('assembling the patched tree in build/src/linux')
		shutil.rmtree(os.path.join(common.BUILD, 'src'), ignore_errors=True)
		os.makedirs(os.path.join(common.BUILD, 'src'))
		# Hard links: unchanged files keep their inode and mtime, so the
		# O= build dirs stay incremental across re-assembly.  patch(1) and
		# rsync replace files instead of writing through the link.
		run(['cp', '-al', base, src], quiet=True)
		for p in patches:
			if p['diff']:
				# Exactly as git apply/am will: no fuzz, no backup files.
				r = subprocess.run(['patch', '-p1', '-N', '-s', '--fuzz=0',
						    '--no-backup-if-mismatch', '-d', src, '-i',
						    p['diff']])
				if r.returncode != 0:
					shutil.rmtree(os.path.join(common.BUILD, 'src'), ignore_errors=True)
					raise HarnessError('%s/upstream.diff does not apply to the base' % p['name'])
		for f in owner:
			if os.path.exists(os.path.join(base, f)):
				raise HarnessError('%s exists in the base tree: edit it through an '
						   'upstream.diff instead' % f)
	# New files: copy only those whose content changed (checksum).  No -t: a
	# copied file gets the time of the copy, so it is always newer than the
	# objects built from its previous content, whatever its mtime here (a
	# checkout or merge can carry a file's time backwards).
	listing = os.path.join(common.BUILD, 'src', '.overlay')
	with open(listing, 'w') as f:
		f.write('\n'.join(sorted(owner)) + '\n')
	run(['rsync', '-rl', '--checksum', '--files-from=' + listing, common.TOP + '/', src + '/'],
	    quiet=True)
	with open(stamp, 'w') as f:
		f.write(ident)
	return src

