# SPDX-License-Identifier: GPL-2.0
#
# Export of the patch series (git format-patch with a cover letter), its
# apply/bisect check, and the static checks (make figures, checkpatch
# --strict, sparse, W=1, coccicheck) over the project's own files.

import glob
import os
import re
import shutil
import subprocess

import scalable_common as common
import scalable_figures
from scalable_build import build_env, build_kernel, fragments, make_cmd
from scalable_common import HarnessError, log, machine_lock, run
from scalable_tree import (base_package_needed, diff_paths, ensure_packages, prepare_src,
			   series_files, series_patches, tree_version, unpack_base)

GIT_ID = ['-c', 'user.name=Scalable Series Developers',
	  '-c', 'user.email=scalable-dev@lists.example.org',
	  '-c', 'commit.gpgsign=false', '-c', 'core.autocrlf=false']
GIT_AM = ['am', '-q', '--whitespace=error-all']


def git(repo, *args, capture=False, check=True):
	r = subprocess.run(['git', '-C', repo] + GIT_ID + list(args),
			   capture_output=capture, text=True)
	if check and r.returncode != 0:
		raise HarnessError('git %s failed in %s%s' %
				   (' '.join(args), repo, (':\n' + r.stderr) if capture else ''))
	return r.stdout.strip() if capture else r


def series_out(req):
	"""Where the series is exported: out/series."""
	return os.path.join(req.out, 'series')


def base_repo(req):
	"""A git repository holding the pristine base as its one commit."""
	base = unpack_base(req)
	repo = os.path.join(common.BUILD, 'series', 'linux')
	ident = open(os.path.join(common.BUILD, 'base', '.identity')).read()
	stamp = os.path.join(common.BUILD, 'series', '.identity')
	if os.path.exists(stamp) and open(stamp).read() == ident:
		git(repo, 'checkout', '-q', '-f', 'base')
		git(repo, 'clean', '-q', '-fdx')
		return repo
	log('creating a git repository of the base in build/series/linux (once)')
	shutil.rmtree(os.path.join(common.BUILD, 'series'), ignore_errors=True)
	os.makedirs(os.path.join(common.BUILD, 'series'))
	run(['cp', '-a', base, repo], quiet=True)
	git(repo, 'init', '-q')
	git(repo, 'add', '-A', '-f')
	git(repo, 'commit', '-q', '-m', 'Linux %s (base of the series)' % tree_version(repo))
	git(repo, 'tag', 'base')
	with open(stamp, 'w') as f:
		f.write(ident)
	return repo


def commit_series(repo, patches, owner):
	"""One commit per patch: its upstream.diff, its series.diff and its new
	files.  A new file that later patches change through their series.diff
	is committed as the repository's final content with those diffs
	reversed, newest first, so that each commit holds what its patch adds."""
	git(repo, 'checkout', '-q', '-B', 'series', 'base')
	for i, p in enumerate(patches):
		if p['diff']:
			git(repo, 'apply', '--index', p['diff'])
		if p['series_diff']:
			git(repo, 'apply', '--index', p['series_diff'])
		later = [q['series_diff'] for q in patches[i + 1:] if q['series_diff']]
		for f, who in sorted(owner.items()):
			if who != p['name']:
				continue
			dst = os.path.join(repo, f)
			os.makedirs(os.path.dirname(dst), exist_ok=True)
			shutil.copy2(os.path.join(common.TOP, f), dst)
			for d in reversed(later):
				if f in diff_paths(d):
					r = subprocess.run(['git', '-C', repo, 'apply', '-R',
							    '--include=' + f, d],
							   capture_output=True, text=True)
					if r.returncode != 0:
						raise HarnessError('%s does not reverse-apply to %s\'s '
								   'final content:\n%s' %
								   (os.path.relpath(d, common.TOP), f,
								    r.stderr))
			git(repo, 'add', '-f', f)
		git(repo, 'commit', '-q', '-s', '-F', os.path.join(p['dir'], 'message'))


def cover_letter(path):
	cover = open(os.path.join(common.PATCHES, 'cover-letter')).read().split('\n', 1)
	text = open(path).read()
	text = text.replace('*** SUBJECT HERE ***', cover[0].strip())
	text = text.replace('*** BLURB HERE ***', cover[1].strip() if len(cover) > 1 else '')
	with open(path, 'w') as f:
		f.write(text)


def export(req):
	"""Commit the series onto the base and write it to out/series/."""
	patches = series_patches()
	owner = series_files(patches)
	repo = base_repo(req)
	commit_series(repo, patches, owner)
	dest = series_out(req)
	shutil.rmtree(dest, ignore_errors=True)
	os.makedirs(dest)
	git(repo, 'format-patch', '-q', '--cover-letter', '--base=base', '-o', dest,
	    'base..series')
	files = sorted(glob.glob(os.path.join(dest, '*.patch')))
	cover_letter(files[0])
	log('exported %d patches and a cover letter to %s' %
	    (len(files) - 1, os.path.relpath(dest, common.TOP)))
	return repo, files


def verify_apply(req, repo, files, build):
	"""git am the exported files onto a fresh base; optionally build each."""
	exported = git(repo, 'rev-parse', 'series', capture=True)
	git(repo, 'checkout', '-q', '-B', 'applied', 'base')
	r = subprocess.run(['git', '-C', repo] + GIT_AM + files[1:], capture_output=True, text=True)
	if r.returncode != 0:
		subprocess.run(['git', '-C', repo, 'am', '--abort'], capture_output=True)
		raise HarnessError('the exported series does not apply with git am:\n' +
				   r.stdout + r.stderr)
	if git(repo, 'diff', '--stat', exported, 'applied', capture=True):
		raise HarnessError('git am of the export differs from the series commits')
	src = os.path.join(common.BUILD, 'src', 'linux')
	diff = subprocess.run(['diff', '-r', '-q', '-x', '.git', repo, src], capture_output=True,
			      text=True)
	if diff.returncode != 0:
		raise HarnessError('the series does not reproduce build/src/linux:\n' +
				   diff.stdout[-3000:])
	log('the series applies with git am to a fresh base and reproduces the build tree')
	if not build:
		return
	commits = git(repo, 'rev-list', '--reverse', 'base..applied', capture=True).split()
	obj = os.path.join(common.BUILD, 'series-obj')
	for i, c in enumerate(commits, 1):
		git(repo, 'checkout', '-q', c)
		cfg = os.path.join(repo, 'kernel', 'configs', 'scalable.config')
		os.makedirs(obj, exist_ok=True)
		with machine_lock(req, 'building patch %d' % i):
			if os.path.exists(cfg):
				run(make_cmd(req, repo, obj, 'tinyconfig', *fragments('release')),
				    env=build_env())
			else:
				shutil.copy(os.path.join(common.BUILD, 'release', '.config'),
					    os.path.join(obj, '.config'))
				run(make_cmd(req, repo, obj, 'olddefconfig'), env=build_env())
			run(make_cmd(req, repo, obj, 'bzImage'), env=build_env())
		log('patch %d/%d builds' % (i, len(commits)))
	git(repo, 'checkout', '-q', 'applied')


def cmd_series(req, args):
	ensure_packages(need_base=base_package_needed(req))
	prepare_src(req)
	repo, files = export(req)
	verify_apply(req, repo, files, args.build)
	for f in files:
		print('  ' + os.path.relpath(f, common.TOP))
	return 0


def debian_python_env():
	# checkpatch runs scripts/spdxcheck.py with the first python3 on PATH;
	# its modules (ply, git) come from Debian's packages, so use Debian's.
	return dict(os.environ, PATH='/usr/bin:/bin:' + os.environ.get('PATH', ''))


def kernel_c_files(owner):
	return sorted(f for f in owner if f.endswith('.c') and
		      not f.startswith(('tools/', 'Documentation/', 'samples/', 'scripts/')))


def kernel_doc_files(owner):
	return sorted(f for f in owner if f.endswith(('.c', '.h')) and
		      not f.startswith(('tools/', 'Documentation/', 'samples/', 'scripts/')))


COCCI_DIR = os.path.join(common.TOP, 'tools', 'testing', 'scalable', 'cocci')


def read_allow(name):
	"""{(path, function): why} from cocci/@name (a reviewed list)."""
	allowed = {}
	with open(os.path.join(COCCI_DIR, name)) as f:
		for line in f:
			if line.strip() and not line.startswith('#'):
				path, fn, why = (line.split(None, 2) + ['', ''])[:3]
				allowed[(path, fn)] = why.strip()
	return allowed


def run_cocci_rule(src, pattern, cocci):
	"""Run cocci/@cocci on the C files of @src whose text matches @pattern.

	Returns (files searched, spatch's stdout, problems: a failed spatch).
	"""
	r = subprocess.run(['grep', '-rlE', '--include=*.c', '--include=*.h',
			    '--exclude-dir=tools', '--exclude-dir=Documentation',
			    '--exclude-dir=scripts', pattern, '.'],
			   cwd=src, capture_output=True, text=True)
	files = sorted(f[2:] for f in r.stdout.split())
	r = subprocess.run(['spatch', '--very-quiet', '-D', 'report', '--no-includes',
			    '--include-headers', '--cocci-file',
			    os.path.join(COCCI_DIR, cocci)] + files,
			   cwd=src, capture_output=True, text=True)
	problems = []
	if r.returncode != 0:
		problems.append('spatch failed: ' + r.stderr[-2000:])
	return files, r.stdout, problems


def unparsed_uses(src, files, parsed, pattern, what):
	"""Files whose code (not comments) matches @pattern where coccinelle
	found nothing (a parse failure), or only in a macro it does not read."""
	problems = []
	for path in files:
		code = [l for l in open(os.path.join(src, path), errors='replace')
			if re.search(pattern, l) and not re.match(r'\s*(\*|/\*|//)', l)]
		if path in parsed:
			# Coccinelle does not look into macros.
			code = [l for l in code if re.match(r'\s*#\s*define', l)]
		if code:
			problems.append('%s: names %s where coccinelle found none: %s' %
					(path, what, code[0].strip()))
	return problems


def check_dcount_readers(src):
	"""Find every reader of d_count() and d_lockref.count in @src.

	The dentry OpLog makes d_lockref.count inexact for the dentries of a
	superblock with SB_I_DCACHE_OPLOG (fs/dcache_oplog.c).  Runs
	cocci/dcount_readers.cocci on the files that mention either, and
	returns the problems: a reader missing from cocci/dcount_readers.allow,
	a listed one that is gone, or a file whose code (not comments) names
	them where coccinelle found no reader (a macro, or a parse failure).
	"""
	pattern = r'\bd_count\s*\(|\bd_lockref\s*\.\s*count'
	allowed = read_allow('dcount_readers.allow')
	files, out, problems = run_cocci_rule(src, pattern, 'dcount_readers.cocci')
	found = {}
	for m in re.finditer(r'^READER (?:\./)?(\S+):(\d+):(\S+)$', out, re.M):
		found.setdefault((m.group(1), m.group(3)), m.group(2))
	for (path, fn), line in sorted(found.items()):
		if (path, fn) not in allowed:
			problems.append('%s:%s: %s() reads a dentry count: make it fold the '
					'per-CPU counts (dcache_oplog_sync()) or keep its filesystem '
					'out of SB_I_DCACHE_OPLOG, then list it in dcount_readers.allow'
					% (path, line, fn))
		elif not allowed[(path, fn)]:
			problems.append('%s %s: dcount_readers.allow gives no reason' % (path, fn))
	for path, fn in sorted(set(allowed) - set(found)):
		problems.append('%s %s: listed in dcount_readers.allow but reads no count '
				'any more: remove it' % (path, fn))
	parsed = {path for path, fn in found}
	problems += unparsed_uses(src, files, parsed, pattern, 'd_count() or d_lockref.count')
	log('dentry count readers: %d in %d files, %d reviewed' %
	      (len(found), len(parsed), len(allowed)))
	return problems


def check_i_mmap_users(src):
	"""Find every user of a file's i_mmap tree or i_mmap_rwsem in @src.

	With CONFIG_RMAP_OPLOG a fork's insert into i_mmap may still be logged
	per CPU (mm/oplog_rmap.c); only the i_mmap_lock_*() helpers and
	rmap_oplog_sync() put it into the tree.  Runs cocci/i_mmap_users.cocci
	on the files that mention either field, and returns the problems: a
	function that uses them without a helper or lock assertion and is not
	in cocci/i_mmap_users.allow, a listed one that no longer needs it, or
	a file whose code names the fields where coccinelle found no user.
	"""
	pattern = r'(->|\.)\s*i_mmap(_rwsem)?\b'
	allowed = read_allow('i_mmap_users.allow')
	files, out, problems = run_cocci_rule(src, pattern, 'i_mmap_users.cocci')
	users, guarded = {}, set()
	for m in re.finditer(r'^(USER|GUARD) (?:\./)?(\S+):(\d+):(\S+)$', out, re.M):
		if m.group(1) == 'USER':
			users.setdefault((m.group(2), m.group(4)), m.group(3))
		else:
			guarded.add((m.group(2), m.group(4)))
	# The implementation itself is what the rule protects.
	unguarded = {k: v for k, v in users.items()
		     if k not in guarded and k[0] != 'mm/oplog_rmap.c'}
	for (path, fn), line in sorted(unguarded.items()):
		if (path, fn) not in allowed:
			problems.append('%s:%s: %s() uses i_mmap without taking i_mmap_rwsem through '
					'an i_mmap_lock_*() helper, which synchronizes the per-CPU logs '
					'of mm/oplog_rmap.c, or asserting that its caller did '
					'(i_mmap_assert_locked()); fix it or list it in '
					'i_mmap_users.allow' % (path, line, fn))
		elif not allowed[(path, fn)]:
			problems.append('%s %s: i_mmap_users.allow gives no reason' % (path, fn))
	for path, fn in sorted(set(allowed) - set(unguarded)):
		problems.append('%s %s: listed in i_mmap_users.allow but %s: remove it' %
				(path, fn, 'takes the lock or asserts it now'
				 if (path, fn) in users else 'uses no i_mmap any more'))
	parsed = {path for path, fn in users}
	problems += unparsed_uses(src, files, parsed, pattern, 'i_mmap or i_mmap_rwsem')
	log('i_mmap users: %d functions in %d files, %d with a helper or assertion, '
	    '%d reviewed' % (len(users), len(parsed), len(set(users) & guarded), len(allowed)))
	return problems


# The implementation of the per-CPU open counts and its KUnit test: what
# cocci/i_readcount_readers.cocci and cocci/i_writecount_readers.cocci
# protect.
I_OPEN_COUNTS_OWN = ('fs/inode_oplog.c', 'fs/inode_oplog.h', 'fs/inode_oplog_kunit.c')


def check_open_count_readers(src, field):
	"""Find every use of an inode's open count @field in @src.

	@field is 'i_readcount' or 'i_writecount'.  With CONFIG_INODE_OPLOG, the
	field misses the opens counted per CPU (fs/inode_oplog.c); only
	<field>_read() folds them.  Runs cocci/<field>_readers.cocci on the
	files that name the field, and returns the problems: a function
	outside the implementation that uses it and is not in
	cocci/<field>_readers.allow, a listed one that no longer does, or a
	file whose code names it where coccinelle found no function, unless
	the allow list names the whole file ("*": macros).
	"""
	pattern = r'(->|\.)\s*%s\b' % field
	allow = '%s_readers.allow' % field
	allowed = read_allow(allow)
	files, out, problems = run_cocci_rule(src, pattern, '%s_readers.cocci' % field)
	found = {}
	for m in re.finditer(r'^READER (?:\./)?(\S+):(\d+):(\S+)$', out, re.M):
		if m.group(1) not in I_OPEN_COUNTS_OWN:
			found.setdefault((m.group(1), m.group(3)), m.group(2))
	for (path, fn), line in sorted(found.items()):
		if (path, fn) not in allowed:
			problems.append('%s:%s: %s() reads %s: call %s_read(), which folds '
					'the per-CPU counts, or list it in %s' %
					(path, line, fn, field, field, allow))
		elif not allowed[(path, fn)]:
			problems.append('%s %s: %s gives no reason' % (path, fn, allow))
	whole = {path for path, fn in allowed if fn == '*'}
	for path, fn in sorted(set(allowed) - set(found)):
		if fn != '*':
			problems.append('%s %s: listed in %s but uses no %s any more: '
					'remove it' % (path, fn, allow, field))
		elif path not in files:
			problems.append('%s: listed in %s but names no %s any more: '
					'remove it' % (path, allow, field))
	parsed = {path for path, fn in found} | set(I_OPEN_COUNTS_OWN) | whole
	problems += unparsed_uses(src, [f for f in files if f not in parsed], parsed,
				  pattern, field)
	log('%s readers: %d functions in %d files, %d reviewed' %
	    (field, len(found), len({p for p, f in found}), len(allowed)))
	return problems


def static_checks(req):
	"""make figures, checkpatch, kernel-doc, the d_count() readers, sparse,
	W=1, coccicheck.

	Returns the failures, one text each.
	"""
	# First, and without the tree: every figure in the docs has its
	# committed results file (scalable_figures.py).
	failures = ['figures: ' + p for p in scalable_figures.problems(common.TOP)]
	log('make figures: %d problems' % len(failures))
	ensure_packages(need_base=base_package_needed(req))
	src = prepare_src(req)
	repo, files = export(req)
	verify_apply(req, repo, files, False)

	# checkpatch --strict on every patch of the series.
	for f in files[1:]:
		r = subprocess.run(['perl', os.path.join(repo, 'scripts', 'checkpatch.pl'), '--strict',
				    '--no-summary', '--terse', '--show-types', f],
				   cwd=repo, capture_output=True, text=True, env=debian_python_env())
		out = (r.stdout + r.stderr).strip()
		if r.returncode != 0 or out:
			failures.append('checkpatch --strict %s:\n%s' % (os.path.basename(f), out))
	log('checkpatch --strict: %d patches checked' % (len(files) - 1))

	# sparse (C=2 forces a check of each file) and W=1 on our kernel C files.
	owner = series_files(series_patches())
	cfiles = kernel_c_files(owner)

	# kernel-doc -Wall on our kernel sources and headers: every documented
	# symbol must describe all its parameters and its return value.
	docfiles = kernel_doc_files(owner)
	if docfiles:
		r = subprocess.run(['perl', os.path.join(src, 'scripts', 'kernel-doc'), '-none',
				    '-Wall'] + docfiles, cwd=common.TOP, capture_output=True, text=True)
		out = (r.stdout + r.stderr).strip()
		if r.returncode != 0 or out:
			failures.append('kernel-doc -Wall:\n' + out)
		log('kernel-doc -Wall: %d files checked' % len(docfiles))
	failures += ['d_count() readers: ' + p for p in check_dcount_readers(src)]
	failures += ['i_mmap users: ' + p for p in check_i_mmap_users(src)]
	for field in ('i_readcount', 'i_writecount'):
		failures += ['%s readers: %s' % (field, p)
			     for p in check_open_count_readers(src, field)]
	# Build first: the objects must come from the current .config.
	obj = build_kernel(req, 'release')
	if cfiles:
		objs = [f[:-2] + '.o' for f in cfiles]
		with machine_lock(req, 'sparse and W=1'):
			r = subprocess.run(make_cmd(req, src, obj, *objs, extra=['C=2', 'W=1']),
					   capture_output=True, text=True, env=build_env())
		out = '\n'.join(l for l in (r.stdout + r.stderr).splitlines()
				if re.search(r'(warning|error):', l))
		if r.returncode != 0 or out:
			failures.append('sparse / W=1:\n' + (out or r.stderr[-3000:]))
		dirs = sorted({os.path.dirname(f) for f in cfiles})
		for d in dirs:
			r = subprocess.run(make_cmd(req, src, obj, 'coccicheck',
						    extra=['MODE=report', 'M=' + d]),
					   capture_output=True, text=True)
			hits = [l for l in r.stdout.splitlines()
				if re.match(r'\S+\.[ch]:\d+', l)]
			if r.returncode != 0 or hits:
				failures.append('coccicheck %s:\n%s' %
						(d, '\n'.join(hits) or r.stderr[-3000:]))
		log('sparse, W=1 and coccicheck: %d kernel C files in %d directories' %
		    (len(cfiles), len(dirs)))
	else:
		log('sparse, W=1, coccicheck: the series has no kernel C files yet')
	return failures
