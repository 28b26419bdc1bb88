#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Unit tests of scalable_request: the settings of a run parsed from the
# environment in one place, their defaults, the message of each bad value,
# a setting changed for a callee, and that no other module reads a setting
# from the environment.

import ast
import dataclasses
import glob
import os
import re
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scalable_common as common  # noqa: E402
import scalable_report as R  # noqa: E402
import scalable_request as RQ  # noqa: E402
from scalable_common import HarnessError  # noqa: E402
from scalable_request import Request, request_from_env  # noqa: E402

# Where a harness module may name os.environ: to hand the environment on
# to a subprocess (or PATH to find its tools), and main(), which gives it
# to request_from_env().  (module, function) pairs.
ENVIRON_USERS = {
	('scalable', 'main'),
	('scalable_build', 'build_env'),
	('scalable_series', 'debian_python_env'),
	('scalable_tree', 'ensure_packages'),
	('scalable_schedule', 'bench_env'),
}


def environ_users(path):
	"""{(module, function)} of @path that name os.environ or os.getenv."""
	name = os.path.basename(path)[:-3]
	with open(path) as f:
		tree = ast.parse(f.read())
	found = set()

	def walk(node, func):
		for child in ast.iter_child_nodes(node):
			if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
				walk(child, child.name)
				continue
			if isinstance(child, ast.Attribute) and isinstance(child.value, ast.Name) and \
			   child.value.id == 'os' and child.attr in ('environ', 'environb', 'getenv'):
				found.add((name, func))
			if isinstance(child, ast.ImportFrom) and child.module == 'os' and \
			   {a.name for a in child.names} & {'environ', 'environb', 'getenv'}:
				found.add((name, func))
			walk(child, func)
	walk(tree, None)
	return found


class DefaultsTest(unittest.TestCase):
	def test_defaults(self):
		req = request_from_env({})
		self.assertEqual(req, Request())
		self.assertEqual((req.linux_tree, req.linux_tarball, req.jobs, req.smp, req.cpus,
				  req.accel, req.tcg_thread, req.boot_timeout, req.mode,
				  req.trace_quantum, req.deb_config), (None,) * 11)
		self.assertEqual(req.qemu, 'qemu-system-x86_64')
		self.assertEqual((req.mem, req.numa_nodes, req.kernel_args, req.soak_seconds),
				 (3072, 0, '', 1800))
		self.assertEqual(req.trace_smp, (1, 2, 4, 8, 16))
		self.assertEqual(req.trace_workloads, RQ.TRACE_WORKLOADS)
		self.assertEqual((req.trace_kernel, req.trace_ms, req.trace_gate_quantum,
				  req.trace_timeout), ('patched', 1000, 100, 0))
		self.assertEqual(req.out, os.path.join(common.TOP, 'out'))
		self.assertEqual(req.lock, '/tmp/scalable-machine.lock')
		self.assertEqual(req.given, ())

	def test_empty_is_unset(self):
		self.assertEqual(request_from_env({name: '' for name in RQ.VARIABLES}), Request())

	def test_other_variables_ignored(self):
		self.assertEqual(request_from_env({'PATH': '/bin', 'HOME': '/root', 'FLAVOURS': 'x',
						   'smp': '3'}), Request())

	def test_every_field_has_one_variable(self):
		fields = [f.name for f in dataclasses.fields(Request) if f.name != 'given']
		named = [field for field, _ in RQ.VARIABLES.values()]
		self.assertEqual(sorted(named), sorted(fields))
		for name in RQ.VARIABLES:
			self.assertRegex(name, r'^[A-Z][A-Z0-9_]*$')

	def test_makefile_exports_are_settings(self):
		"""What the Makefile exports and lists as variables is parsed here."""
		with open(os.path.join(common.TOP, 'Makefile')) as f:
			text = f.read()
		m = re.search(r'^export ((?:.*\\\n)*.*)$', text, re.M)
		exported = m.group(1).replace('\\\n', ' ').split()
		self.assertIn('SMP', exported)
		self.assertEqual([v for v in exported if v not in RQ.VARIABLES], [])
		m = re.search(r'^# Variables: (.*?)\n\n', text, re.M | re.S)
		listed = set(re.findall(r'\b([A-Z][A-Z_]+)=', m.group(1)))
		self.assertEqual(listed - set(RQ.VARIABLES), {'FLAVOURS'})


class ValuesTest(unittest.TestCase):
	# (variable, a value not allowed, what the message says)
	BAD = (
		('LINUX_TREE', '/nonexistent', 'LINUX_TREE=/nonexistent is not a kernel source '
		 'tree (no Makefile)'),
		('LINUX_TARBALL', '/nonexistent.tar.xz', 'LINUX_TARBALL=/nonexistent.tar.xz '
		 'does not exist'),
		('JOBS', '0', 'JOBS must be a whole number of make jobs, at least 1, not "0"'),
		('JOBS', '-j4', 'JOBS must be a whole number of make jobs, at least 1'),
		('MODE', 'fast', 'MODE must be full, quick or long, not "fast"'),
		('SMP', 'many', 'SMP must be a number from 1 to 64, not "many"'),
		('SMP', '0', 'SMP must be a number from 1 to 64, not "0"'),
		('SMP', '65', 'SMP must be a number from 1 to 64, not "65"'),
		('CPUS', '1, 2', 'CPUS is a comma list of benchmark worker counts'),
		('CPUS', '0,2', 'CPUS is a comma list of benchmark worker counts'),
		('CPUS', '1,,2', 'CPUS is a comma list of benchmark worker counts'),
		('ACCEL', 'xen', 'ACCEL must be kvm or tcg, not "xen"'),
		('TCG_THREAD', 'many', 'TCG_THREAD must be multi or single, not "many"'),
		('MEM', '8G', 'MEM must be the guest memory in MiB, at least 256, not "8G"'),
		('MEM', '100', 'MEM must be the guest memory in MiB, at least 256, not "100"'),
		('NUMA_NODES', 'two', 'NUMA_NODES must be a whole number of NUMA nodes'),
		('BOOT_TIMEOUT', '1.5', 'BOOT_TIMEOUT must be a whole number of seconds, '
		 'not "1.5"'),
		('SOAK_SECONDS', '1h', 'SOAK_SECONDS must be a whole number of seconds'),
		('TRACE_KERNEL', 'old', 'TRACE_KERNEL is patched or stock, not "old"'),
		('TRACE_SMP', '0', 'TRACE_SMP is a comma list of vCPU counts from 1 to 64, '
		 'not "0"'),
		('TRACE_SMP', '65', 'TRACE_SMP is a comma list of vCPU counts from 1 to 64'),
		('TRACE_SMP', '8,x', 'TRACE_SMP is a comma list of vCPU counts from 1 to 64, '
		 'not "8,x"'),
		('TRACE_MS', '1s', 'TRACE_MS must be a whole number of milliseconds'),
		('TRACE_QUANTUM', '-5', 'TRACE_QUANTUM must be a whole number of instructions'),
		('TRACE_GATE_QUANTUM', 'x', 'TRACE_GATE_QUANTUM must be a whole number of '
		 'instructions'),
		('TRACE_TIMEOUT', '5m', 'TRACE_TIMEOUT must be a whole number of seconds'),
		('TRACE_WORKLOADS', 'nope', 'TRACE_WORKLOADS is a comma list of cacheline_bench, '
		 'stat_bench'),
		('TRACE_WORKLOADS', ',', 'TRACE_WORKLOADS is a comma list of'),
		('DEB_CONFIG', '/nonexistent/config', 'DEB_CONFIG=/nonexistent/config: no such '
		 'file (give a kernel .config, "defconfig" or "guest")'))

	def test_values(self):
		with tempfile.TemporaryDirectory() as d:
			open(os.path.join(d, 'Makefile'), 'w').close()
			tarball = os.path.join(d, 'linux.tar.xz')
			open(tarball, 'w').close()
			config = os.path.join(d, 'config')
			open(config, 'w').close()
			rel = os.path.relpath(config)
			for var, text, value in (
				('LINUX_TREE', d, d),
				('LINUX_TARBALL', tarball, tarball),
				('JOBS', '12', 12),
				('QEMU', '/opt/qemu/bin/qemu-system-x86_64',
				 '/opt/qemu/bin/qemu-system-x86_64'),
				('MODE', 'quick', 'quick'),
				('MODE', 'test', 'test'),
				('SMP', '1', 1),
				('SMP', '64', 64),
				('CPUS', '1,2,16', '1,2,16'),
				('ACCEL', 'kvm', 'kvm'),
				('TCG_THREAD', 'single', 'single'),
				('MEM', '256', 256),
				('NUMA_NODES', '0', 0),
				('NUMA_NODES', '4', 4),
				('KERNEL_ARGS', ' dcache_oplog=off  x=1', ' dcache_oplog=off  x=1'),
				('BOOT_TIMEOUT', '0', 0),
				('BOOT_TIMEOUT', '42', 42),
				('SOAK_SECONDS', '60', 60),
				('TRACE_KERNEL', 'stock', 'stock'),
				('TRACE_SMP', '32,64', (32, 64)),
				('TRACE_SMP', '1, 8', (1, 8)),
				('TRACE_MS', '0', 0),
				('TRACE_QUANTUM', '5', 5),
				('TRACE_GATE_QUANTUM', '50', 50),
				('TRACE_TIMEOUT', '600', 600),
				('TRACE_WORKLOADS', 'stat_bench, qdo_idle,', ('stat_bench', 'qdo_idle')),
				('TRACE_WORKLOADS', 'exec_bench,stat_bench', ('exec_bench', 'stat_bench')),
				('DEB_CONFIG', 'defconfig', 'defconfig'),
				('DEB_CONFIG', 'guest', 'guest'),
				('DEB_CONFIG', rel, config),
				('SCALABLE_OUT', '/x/out', '/x/out'),
				('SCALABLE_LOCK', '/x/lock', '/x/lock')):
				req = request_from_env({var: text})
				field = RQ.VARIABLES[var][0]
				self.assertEqual(getattr(req, field), value, var)
				# that one field, and nothing else
				self.assertEqual(req, Request(**{field: value, 'given': ((var, text),)}))

	def test_bad_values(self):
		"""Each value not allowed: HarnessError, with the variable and what is allowed."""
		for var, text, msg in self.BAD:
			with self.assertRaises(HarnessError, msg=var) as cm:
				request_from_env({var: text})
			self.assertIn(msg, str(cm.exception))
			self.assertTrue(str(cm.exception).startswith(var), str(cm.exception))

	def test_every_checked_variable_has_a_bad_value(self):
		"""BAD holds every variable but the free ones (commands, paths, words),
		and none takes the digits that str.isdigit() takes and int() does not."""
		free = {'QEMU', 'KERNEL_ARGS', 'SCALABLE_OUT', 'SCALABLE_LOCK'}
		self.assertEqual({var for var, _, _ in self.BAD}, set(RQ.VARIABLES) - free)
		for name, (_, parse) in RQ.VARIABLES.items():
			if name not in free:
				self.assertRaises(HarnessError, parse, name, '\u00b2')

	def test_only_one_base(self):
		with tempfile.TemporaryDirectory() as d:
			open(os.path.join(d, 'Makefile'), 'w').close()
			with self.assertRaises(HarnessError) as cm:
				request_from_env({'LINUX_TREE': d, 'LINUX_TARBALL': d + '/Makefile'})
		self.assertEqual(str(cm.exception), 'set only one of LINUX_TREE and LINUX_TARBALL')

	def test_first_bad_variable_named(self):
		with self.assertRaises(HarnessError) as cm:
			request_from_env({'TRACE_MS': 'x', 'SMP': 'y', 'MEM': '8192'})
		self.assertIn('SMP must be', str(cm.exception))


class GivenTest(unittest.TestCase):
	def test_given(self):
		"""The variables set, as given, in VARIABLES' order."""
		req = request_from_env({'TRACE_SMP': '1, 8', 'SMP': '4', 'ACCEL': '', 'PATH': '/bin'})
		self.assertEqual(req.given, (('SMP', '4'), ('TRACE_SMP', '1, 8')))
		self.assertEqual((req.smp, req.trace_smp), (4, (1, 8)))

	def test_results_files_name_settings(self):
		"""What a results file's command repeats is a setting of the request."""
		for kind, (_, names) in R.RESULTS_COMMANDS.items():
			self.assertLessEqual(set(names), set(RQ.VARIABLES), kind)


class ReplaceTest(unittest.TestCase):
	def test_replace_one_field(self):
		"""A callee gets a changed copy; the request itself does not change."""
		req = request_from_env({'KERNEL_ARGS': 'dcache_oplog=off', 'SMP': '4'})
		soak = dataclasses.replace(req, kernel_args=req.kernel_args + ' scalable_soak=60')
		self.assertEqual(soak.kernel_args, 'dcache_oplog=off scalable_soak=60')
		self.assertEqual(req.kernel_args, 'dcache_oplog=off')
		self.assertEqual(dataclasses.replace(soak, kernel_args=req.kernel_args), req)
		self.assertEqual((soak.smp, soak.given), (4, req.given))
		with self.assertRaises(dataclasses.FrozenInstanceError):
			req.tcg_thread = 'multi'


class NoOtherReaderTest(unittest.TestCase):
	"""No module but scalable_request.py parses a setting from the environment."""

	def test_environ_users(self):
		found = set()
		for path in glob.glob(os.path.join(common.HARNESS, 'scalable*.py')):
			found |= environ_users(path)
		self.assertLessEqual(found, ENVIRON_USERS)
		# the request itself is given its environment
		self.assertNotIn('scalable_request', {m for m, _ in found})

	def test_finds_a_reader(self):
		with tempfile.TemporaryDirectory() as d:
			path = os.path.join(d, 'scalable_x.py')
			with open(path, 'w') as f:
				f.write('import os\nfrom os import getenv\nSMP = os.environ.get("SMP")\n'
					'def f():\n\treturn os.getenv("MEM")\n')
			self.assertEqual(environ_users(path), {('scalable_x', None),
							       ('scalable_x', 'f')})


if __name__ == '__main__':
	unittest.main()
