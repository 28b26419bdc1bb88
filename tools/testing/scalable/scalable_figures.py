# SPDX-License-Identifier: GPL-2.0
#
# make figures: every number in the docs comes from one committed results
# file of one run, with its command.
#
# The texts are README.md, the series' Documentation/**/*.rst, the cover
# letter and every patch's message.  A figure is a decimal token, \d+.\d+
# with an x, a % or a unit stuck to it or not.  Not figures: versions
# (Linux 6.12, QEMU 7.2), paths, sections of papers (section 4.1, §3.2),
# tokens with more than one dot (6.12.117, addresses), and the phrases
# of NOT_FIGURES (thresholds and configuration constants, each with its
# reason).  A figure passes when a results file that its scope names by
# file name (tools/testing/scalable/results/*.md, each headed by its
# command) holds the same value written with the same digits.  A scope
# is a whole text, except in README.md, where each "## " section is one.
# README's table of the traced gates is scalable_trace.GATES (a unit test
# keeps them equal) and is skipped.

import glob
import os
import re

import scalable_trace

RESULTS = os.path.join('tools', 'testing', 'scalable', 'results')

# Phrases whose decimal tokens are not measurements: thresholds, bounds
# and configuration constants.  Whitespace in a phrase matches any run of
# whitespace (a phrase may wrap); each entry carries its reason, and an
# entry that matches no text is reported, so the list cannot go stale.
NOT_FIGURES = (
	('0.5 s warm-up, 3 s measured, 3 runs (`ast_bench`: 0.2 s, 1 s, 2 runs)',
	 "MODE=full's windows, a setting of kselftests.sh"),
	('0.1 s, 0.4 s, 2 runs', "MODE=quick's windows, a setting of kselftests.sh"),
	('schedule times 1.5', "the boot timeout's margin, scalable_schedule.MARGIN"),
	('ops_per_ms=812.331 runs=3 stddev=4.120',
	 "an example of the RESULT line's format, not a result"),
	('must show 0.5 to 1.5 transfers per operation',
	 "make test's bounds, scalable_trace.INSTRUMENT['shared']"),
	('0.5 to 2.5 for per-CPU counters',
	 "make test's bounds, scalable_trace.INSTRUMENT['packed']"),
	('at most 0.01 for counters padded',
	 "make test's bound, scalable_trace.INSTRUMENT['padded']"),
	('at most 0.02 times per', "make test's bound, scalable_trace.STAT_GATE_OPLOG"),
	('must show more than 0.5', "make test's bound, scalable_trace.STAT_GATE_STOCK"),
	('slack of 0.1 transfers per operation', "the gates' slack, scalable_trace.GATE_SLACK"),
	('move 0.1 times per event or more', "a hot line's threshold, scalable_trace.HOT_LINE"),
)

# A decimal token, with x, % or a unit of time or size stuck to it, not
# part of a word or of a longer dotted token ("linux-6.12.y",
# "python3.11", "10.0.2.15", "4.11a"); "-1.9%" and "1.14/0.99" hold
# figures.
FIGURE = re.compile(r'(?<![\w.\\])(?<![A-Za-z_]-)(\d+\.\d+)([x%]|[mun]?s|[KMG]i?B)?'
		    r'(?!\w)(?!\.\w)')

# A path, the text around a token up to white space: from the root or
# home, with two slashes or more, or ending in a file name's extension.
PATH = re.compile(r'^[\'"`(<]*[~.]?/|/[^/]*/|\.(?:md|rst|c|h|py|sh|txt|json|conf|config|'
		  r'diff|patch|gz|xz|bz2|zst|tar|deb|so|o|ko)\b')

# What makes a decimal token a version: the software it versions, or a
# word that only precedes a release, just before it ("Linux 6.12", "QEMU
# 7.2's", "Debian's 6.18", "mainline 6.13", "since 6.13"); a ".y" or
# "-rc" just after it; or being the series' base, BASE (6.12), anywhere.
VERSIONED = re.compile(
	r"(?:\b(?:Linux|linux|QEMU|qemu|GCC|gcc|[Cc]lang|LLVM|Debian(?:'s)?|Ubuntu|"
	r'FreeBSD|Python|python3?|[Bb]usy[Bb]ox|glibc|binutils|[Ss]parse|[Cc]occinelle|pahole|'
	r'[Vv]ersion|virtme-ng|[Mm]ainline|since)'
	r'\s*v?|\bv)$')
VERSION_AFTER = re.compile(r'^(?:\.y\b|-rc\d)')
BASE = '6.12'

# A section of a paper, a thesis or a document: "§3.2", "§§ 4.11a",
# "section 4.1", "sections 3.2 and 4.1", "Table 5.1", "Figure 6-2".
SECTION = re.compile(
	r'(?:§+|\b(?:[Ss]ections?|[Ss]ect?\.|[Cc]hapters?|[Cc]h\.|[Ff]ig(?:ure)?s?\.?|[Tt]ables?|'
	r'[Aa]lgorithms?|[Ee]q\.|[Aa]ppendix|[Ll]isting))\s*'
	r'(?:\d+(?:\.\d+)*[a-z]?(?:/[a-z])?\s*(?:,|and|or|to|-|–|&)\s*)*$')

# Numbers of a results file: looser, whatever surrounds them (a table
# cell, "ops_per_ms=812.331", "4.2x"), but not inside a dotted token.
RESULT_NUMBER = re.compile(r'(?<![\d.])\d+\.\d+(?!\.?\d)')


def digits(number):
	"""@number's digits as compared: "4.20" is "4.2", "16.00" is "16.0".

	A figure and a results file's number are the same when they are the
	same value written with the same digits, give or take trailing zeros:
	0.6 is not 0.55 rounded, and 4.2x, +4.2% and 4.2 are all 4.2.
	"""
	whole, frac = number.split('.')
	return '%d.%s' % (int(whole), frac.rstrip('0') or '0')


def texts(top):
	"""The checked texts under @top, paths relative to it, in order."""
	out = []
	if os.path.isfile(os.path.join(top, 'README.md')):
		out.append('README.md')
	for p in sorted(glob.glob(os.path.join(top, 'Documentation', '**', '*.rst'),
				  recursive=True)):
		out.append(os.path.relpath(p, top))
	if os.path.isfile(os.path.join(top, 'patches', 'cover-letter')):
		out.append(os.path.join('patches', 'cover-letter'))
	for p in sorted(glob.glob(os.path.join(top, 'patches', '*', 'message'))):
		out.append(os.path.relpath(p, top))
	return out


def results_files(top):
	"""{file name: the digits of its numbers} of the committed results files."""
	out = {}
	for p in sorted(glob.glob(os.path.join(top, RESULTS, '*.md'))):
		with open(p, encoding='utf-8') as f:
			numbers = RESULT_NUMBER.findall(f.read())
		out[os.path.basename(p)] = {digits(n) for n in numbers}
	return out


def scopes(path, text):
	"""[(name, first line, text)]: README's "## " sections, else the whole file.

	README's gate table is blanked out, line for line.
	"""
	if path != 'README.md':
		return [(path, 1, text)]
	table = scalable_trace.gate_table()
	text = text.replace(table, '\n' * table.count('\n'))
	lines = text.split('\n')
	out, start, name = [], 0, "README.md's head"
	for i, line in enumerate(lines):
		if line.startswith('## '):
			if i > start:
				out.append((name, start + 1, '\n'.join(lines[start:i])))
			start, name = i, 'README.md\'s "%s"' % line[3:].strip()
	out.append((name, start + 1, '\n'.join(lines[start:])))
	return out


def named_results(text, names):
	"""The results files among @names that @text names by file name."""
	return {n for n in names if re.search(r'(?<![\w.-])%s(?![\w-])' % re.escape(n), text)}


def _phrase(phrase):
	return re.compile(r'\s+'.join(re.escape(w) for w in phrase.split()))


def figures(text, not_figures=()):
	"""The figures of @text, [(offset, token, number)], and the indexes of
	the @not_figures entries that matched it."""
	allowed, used = [], set()
	for i, (phrase, _reason) in enumerate(not_figures):
		for m in _phrase(phrase).finditer(text):
			allowed.append((m.start(), m.end()))
			used.add(i)
	out = []
	for m in FIGURE.finditer(text):
		s, e = m.start(), m.end()
		line_start = text.rfind('\n', 0, s) + 1
		before = text[line_start:s]
		word = (before[max(before.rfind(' '), before.rfind('\t')) + 1:] + text[s:e] +
			re.match(r'\S*', text[e:]).group(0))
		if PATH.search(word):
			continue
		# the phrase before it may wrap: "Linux\n6.12", "sections 3.2 and\n4.1"
		ctx = (text[max(0, line_start - 60):line_start].replace('\n', ' ') + before)[-80:]
		if m.group(0) == BASE or VERSIONED.search(ctx) or VERSION_AFTER.match(text[e:]):
			continue
		if SECTION.search(ctx):
			continue
		if any(a <= s and e <= b for a, b in allowed):
			continue
		out.append((s, m.group(0), m.group(1)))
	return out, used


def problems(top, not_figures=None):
	"""What breaks the rule under @top, one text each: every figure that no
	results file named in its scope holds, and every NOT_FIGURES entry
	that matches no text."""
	if not_figures is None:
		not_figures = NOT_FIGURES
	results = results_files(top)
	out, used = [], set()
	for path in texts(top):
		with open(os.path.join(top, path), encoding='utf-8') as f:
			text = f.read()
		for name, first, body in scopes(path, text):
			named = sorted(named_results(body, results))
			held = set().union(*(results[n] for n in named))
			found, u = figures(body, not_figures)
			used |= u
			for off, token, number in found:
				if digits(number) in held:
					continue
				line = first + body.count('\n', 0, off)
				out.append('%s:%d: %s is in no results file that %s names (%s)' %
					   (path, line, token, name, ', '.join(named) or 'it names none'))
	for i, (phrase, reason) in enumerate(not_figures):
		if i not in used:
			out.append('NOT_FIGURES: "%s" (%s) is in no text' % (phrase, reason))
	return out
