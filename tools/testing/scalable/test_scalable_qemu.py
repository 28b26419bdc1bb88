#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Unit tests of scalable_qemu: the accelerator choice, the QEMU and kernel
# command lines, extra QEMU arguments (a TCG plugin) threaded through
# boot(), and the KVM-silent retry.  No guest is started: watch_guest() and
# the machine lock are replaced.

import contextlib
import io
import os
import sys
import tempfile
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scalable_common as common  # noqa: E402
import scalable_qemu as Q  # noqa: E402
import scalable_schedule as schedule  # noqa: E402
from scalable_request import Request  # noqa: E402

PLUGIN = ('-plugin', '/b/c2c.so,window=1', '-d', 'plugin', '-D', '/o/trace.log')


def option(cmd, name):
	"""The values of QEMU option @name in @cmd, in order."""
	return [cmd[i + 1] for i, c in enumerate(cmd[:-1]) if c == name]


class QemuCmdTest(unittest.TestCase):
	def cmd(self, accel, extra=()):
		return Q.qemu_cmd(Request(), '/b/release', 4, accel, 'console=ttyS0', '/o/c.log',
				  '/o/t.log', '2G', extra)

	def test_tcg(self):
		cmd = self.cmd('tcg')
		self.assertEqual(cmd[0], 'qemu-system-x86_64')
		self.assertEqual(option(cmd, '-smp'), ['4'])
		self.assertEqual(option(cmd, '-m'), ['2G'])
		self.assertEqual(option(cmd, '-kernel'), ['/b/release/arch/x86/boot/bzImage'])
		self.assertEqual(option(cmd, '-initrd'), ['/b/release/initramfs.cpio.gz'])
		self.assertEqual(option(cmd, '-append'), ['console=ttyS0'])
		# the console on the first serial port (ttyS0), the TAP on the second
		self.assertEqual(option(cmd, '-chardev'), ['file,id=con,path=/o/c.log',
							   'file,id=tap,path=/o/t.log'])
		self.assertEqual(option(cmd, '-serial'), ['chardev:con', 'chardev:tap'])
		self.assertEqual(option(cmd, '-accel'), ['tcg,thread=multi'])
		self.assertEqual(option(cmd, '-cpu'), ['max'])

	def test_kvm(self):
		cmd = self.cmd('kvm')
		self.assertEqual(option(cmd, '-accel'), ['kvm'])
		self.assertEqual(option(cmd, '-cpu'), ['host'])

	def test_extra_args_last(self):
		plain = self.cmd('tcg')
		cmd = self.cmd('tcg', PLUGIN)
		self.assertEqual(cmd, plain + list(PLUGIN))
		self.assertEqual(self.cmd('tcg', iter(PLUGIN)), cmd)

	def test_qemu_env(self):
		cmd = Q.qemu_cmd(Request(qemu='/opt/qemu/bin/qemu-system-x86_64'), '/b', 1, 'tcg', '',
				 '/c', '/t', '1G')
		self.assertEqual(cmd[0], '/opt/qemu/bin/qemu-system-x86_64')


class TcgThreadTest(unittest.TestCase):
	"""A kernel whose static keys patch text boots single-threaded TCG."""

	def obj(self, d, config):
		if config is not None:
			with open(os.path.join(d, '.config'), 'w') as f:
				f.write(config)
		return d

	def thread(self, config, forced=None):
		req = Request(tcg_thread=forced)
		with tempfile.TemporaryDirectory() as d:
			obj = self.obj(d, config)
			cmd = Q.qemu_cmd(req, obj, 2, 'tcg', '', '/c', '/t', '1G')
			self.assertEqual(option(cmd, '-accel'), ['tcg,thread=' + Q.tcg_thread(req, obj)])
			return Q.tcg_thread(req, obj)

	def test_by_config(self):
		self.assertEqual(self.thread('CONFIG_SMP=y\nCONFIG_JUMP_LABEL=y\n'), 'single')
		self.assertEqual(self.thread('CONFIG_SMP=y\n# CONFIG_JUMP_LABEL is not set\n'),
				 'multi')
		# a longer option's name is not the option
		self.assertEqual(self.thread('CONFIG_JUMP_LABEL_FOO=y\n'), 'multi')
		self.assertEqual(self.thread(None), 'multi')

	def test_forced(self):
		"""TCG_THREAD (test_scalable_request.py: a bad value)."""
		self.assertEqual(self.thread('CONFIG_JUMP_LABEL=y\n', 'multi'), 'multi')
		self.assertEqual(self.thread('', 'single'), 'single')

	def test_kvm_unaffected(self):
		with tempfile.TemporaryDirectory() as d:
			cmd = Q.qemu_cmd(Request(), self.obj(d, 'CONFIG_JUMP_LABEL=y\n'), 2, 'kvm', '',
					 '/c', '/t', '1G')
		self.assertEqual(option(cmd, '-accel'), ['kvm'])


class AccelTest(unittest.TestCase):
	def test_forced(self):
		"""ACCEL decides (test_scalable_request.py: a bad value)."""
		with mock.patch('os.access', return_value=True):
			self.assertFalse(Q.kvm_works(Request(accel='tcg')))
		with mock.patch('os.access', return_value=False):
			self.assertTrue(Q.kvm_works(Request(accel='kvm')))
			self.assertFalse(Q.kvm_works(Request()))

	def test_tsc_param(self):
		self.assertEqual(Q.tcg_tsc_param('kvm'), '')
		self.assertIn(Q.tcg_tsc_param('tcg'), ('', ' oplog.clock=tsc'))


class BootTest(unittest.TestCase):
	"""boot() with a stand-in for QEMU: what it runs and what it returns."""

	def boot(self, watch_results, req=None, **kw):
		"""boot() with @req, by default Request(accel='tcg'); (its dict, QEMU commands)."""
		cmds = []
		req = req or Request(accel='tcg')

		def watch(cmd, console, tap, accel, timeout, progress=None):
			cmds.append(cmd)
			with open(console, 'w') as f:
				f.write('SCALABLE: done\n')
			proc = mock.Mock(returncode=0)
			return proc, watch_results[len(cmds) - 1], 0

		with tempfile.TemporaryDirectory() as d, \
		     mock.patch.object(Q, 'watch_guest', side_effect=watch), \
		     mock.patch.object(Q, 'machine_lock',
				       side_effect=lambda req, what: contextlib.nullcontext()), \
		     contextlib.redirect_stdout(io.StringIO()):
			b = Q.boot(req, os.path.join(d, 'release'), kw.pop('flavour', 'release'), 2,
				   'test', os.path.join(d, 'logs'), 60, **kw)
			b['logdir'] = os.path.relpath(os.path.dirname(b['console']), d)
		# The temporary directory's name out of the commands, to compare them.
		return b, [[c.replace(d, '/tmp/D') for c in cmd] for cmd in cmds]

	def test_boot(self):
		b, cmds = self.boot([None], cpus='1,2')
		self.assertEqual(len(cmds), 1)
		self.assertEqual(b['name'], 'release-smp2')
		self.assertEqual(b['logdir'], 'logs')
		self.assertEqual((b['accel'], b['ended'], b['qemu_rc']), ('tcg', 'exit', 0))
		self.assertEqual(b['console_text'], 'SCALABLE: done\n')
		self.assertIn('scalable_mode=test scalable_inject=none scalable_kmemleak=0', b['append'])
		self.assertIn('scalable_cpus=1,2', b['append'])
		self.assertEqual(option(cmds[0], '-append')[0][:len(b['append'])], b['append'])
		self.assertEqual(option(cmds[0], '-accel'), ['tcg,thread=multi'])
		self.assertEqual(b['tcg_thread'], 'multi')

	def test_debug_and_kernel_args(self):
		b, cmds = self.boot([None], Request(accel='tcg', kernel_args=' dcache_oplog=off  x=1'),
				    flavour='debug', inject='warn')
		self.assertEqual(b['name'], 'debug-smp2-inject-warn-dcache_oplog_off_x_1')
		self.assertTrue(b['append'].endswith(' kmemleak=on no5lvl dcache_oplog=off x=1'))
		self.assertIn('scalable_kmemleak=1', b['append'])

	def test_upstream_off(self):
		"""upstream_off (make test's release boot) adds scalable_upstream_off=1,
		and the boot's schedule holds the off pass; no other boot has it."""
		b, _ = self.boot([None], upstream_off=True)
		self.assertIn(' scalable_upstream_off=1', b['append'])
		self.assertTrue([k for k, _ in b['schedule'] if k.startswith('upstream-off:')])
		b, _ = self.boot([None])
		self.assertNotIn('scalable_upstream_off', b['append'])
		self.assertFalse([k for k, _ in b['schedule'] if k.startswith('upstream-off:')])

	def test_extra_qemu_args(self):
		"""A TCG plugin's arguments reach the QEMU command line unchanged, last."""
		b, cmds = self.boot([None], Request(accel='kvm'), extra_qemu_args=PLUGIN,
				    accel='tcg')
		self.assertEqual(cmds[0][-len(PLUGIN):], list(PLUGIN))
		self.assertEqual(option(cmds[0], '-accel'), ['tcg,thread=multi'])
		self.assertEqual(b['accel'], 'tcg')
		_, plain = self.boot([None])
		self.assertEqual(cmds[0][:-len(PLUGIN)], plain[0])

	def test_bad_accel(self):
		with self.assertRaises(common.HarnessError):
			self.boot([None], accel='xen')

	def test_numa(self):
		"""The KCSAN kernel boots as two nodes; NUMA_NODES overrides."""
		b, cmds = self.boot([None], flavour='kcsan')
		self.assertEqual(b['numa_nodes'], 2)
		self.assertEqual(option(cmds[0], '-numa'), ['node,nodeid=0,cpus=0-0,memdev=mem0',
							    'node,nodeid=1,cpus=1-1,memdev=mem1'])
		self.assertEqual(option(cmds[0], '-m'), ['3072M'])
		self.assertEqual(option(cmds[0], '-smp'), ['2,sockets=2,cores=1,threads=1'])
		b, cmds = self.boot([None], Request(accel='tcg', numa_nodes=1), flavour='kcsan')
		self.assertEqual((b['numa_nodes'], option(cmds[0], '-numa')), (1, []))
		b, cmds = self.boot([None], Request(accel='tcg', numa_nodes=8))
		self.assertEqual(b['numa_nodes'], 2)
		_, plain = self.boot([None])
		self.assertEqual(option(plain[0], '-numa'), [])
		self.assertEqual(option(plain[0], '-smp'), ['2'])
		req = Request(numa_nodes=4)
		self.assertEqual(Q.numa_nodes(req, 'release', 6), 3)
		self.assertEqual(Q.numa_nodes(req, 'release', 5), 1)
		self.assertEqual(Q.numa_nodes(req, 'release', 8), 4)
		self.assertEqual(Q.numa_nodes(Request(), 'kcsan', 8), 2)
		self.assertEqual(Q.numa_nodes(Request(), 'release', 8), 1)

	def test_numa_needs_config_numa(self):
		"""A NUMA guest of a kernel without CONFIG_NUMA is refused."""
		with tempfile.TemporaryDirectory() as d:
			Q.check_numa_config(d, 'release', 2)	# no .config: not judged
			with open(os.path.join(d, '.config'), 'w') as f:
				f.write('CONFIG_SMP=y\n# CONFIG_NUMA is not set\n')
			Q.check_numa_config(d, 'release', 1)
			with self.assertRaises(common.HarnessError):
				Q.check_numa_config(d, 'release', 2)
			with open(os.path.join(d, '.config'), 'a') as f:
				f.write('CONFIG_NUMA=y\n')
			Q.check_numa_config(d, 'kcsan', 2)

	def test_guest_mem(self):
		"""MEM (test_scalable_request.py: a bad value), split among the nodes."""
		_, cmds = self.boot([None], Request(accel='tcg', mem=8192))
		self.assertEqual(option(cmds[0], '-m'), ['8192M'])
		_, cmds = self.boot([None], Request(accel='tcg', mem=1000), flavour='kcsan')
		self.assertEqual(option(cmds[0], '-object'), ['memory-backend-ram,id=mem0,size=500M',
							      'memory-backend-ram,id=mem1,size=500M'])

	def test_numa_args(self):
		args = Q.numa_qemu_args(3, 8, 2048)
		self.assertEqual(option(args, '-numa'), ['node,nodeid=0,cpus=0-1,memdev=mem0',
							 'node,nodeid=1,cpus=2-4,memdev=mem1',
							 'node,nodeid=2,cpus=5-7,memdev=mem2'])
		self.assertEqual(option(args, '-object'), ['memory-backend-ram,id=mem0,size=682M',
							   'memory-backend-ram,id=mem1,size=682M',
							   'memory-backend-ram,id=mem2,size=684M'])
		self.assertEqual(Q.numa_qemu_args(1, 8, 2048), [])

	def test_kvm_silent_retries_with_tcg(self):
		b, cmds = self.boot(['kvm-silent', None], Request(accel='kvm'),
				    extra_qemu_args=('-d', 'guest_errors'))
		self.assertEqual(len(cmds), 2)
		self.assertEqual(option(cmds[0], '-accel'), ['kvm'])
		self.assertEqual(option(cmds[1], '-accel'), ['tcg,thread=multi'])
		self.assertEqual(cmds[1][-2:], ['-d', 'guest_errors'])
		self.assertEqual(b['accel'], 'tcg')

	def test_timeout(self):
		b, _ = self.boot(['timeout'])
		self.assertEqual(b['ended'], 'timeout')


class ProgressTest(unittest.TestCase):
	def test_echo_progress(self):
		with tempfile.TemporaryDirectory() as d:
			path = os.path.join(d, 'tap')
			with open(path, 'w') as f:
				f.write('TAP version 13\nok 1 selftests: a: b\n# ok 2 sub\n'
					'# # RESULT bench=x cpus=1 ops_per_ms=1\nnot ok 3 partial')
			out = io.StringIO()
			with contextlib.redirect_stdout(out):
				seen = Q.echo_progress(path, 0)
				again = Q.echo_progress(path, seen)
		self.assertEqual(seen, len('TAP version 13\nok 1 selftests: a: b\n# ok 2 sub\n'
					   '# # RESULT bench=x cpus=1 ops_per_ms=1\n'))
		self.assertEqual(again, seen)
		self.assertEqual(out.getvalue().splitlines(),
				 ['  | ok 1 selftests: a: b', '  | # ok 2 sub',
				  '  | # # RESULT bench=x cpus=1 ops_per_ms=1'])

	def test_echo_progress_crlf(self):
		"""The serial port's CR LF: every line once, the offset in bytes."""
		with tempfile.TemporaryDirectory() as d:
			path = os.path.join(d, 'tap')
			text = b''.join(b'ok %d selftests: a: t%d\r\n' % (i, i) for i in range(1, 40))
			with open(path, 'wb') as f:
				f.write(text[:500])
			out = io.StringIO()
			with contextlib.redirect_stdout(out):
				seen = Q.echo_progress(path, 0)
				with open(path, 'ab') as f:
					f.write(text[500:])
				seen = Q.echo_progress(path, seen)
				self.assertEqual(Q.echo_progress(path, seen), seen)
		self.assertEqual(seen, len(text))
		self.assertEqual(out.getvalue().splitlines(),
				 ['  | ok %d selftests: a: t%d' % (i, i) for i in range(1, 40)])

	def test_boot_timeout(self):
		req = Request(smp=2)
		self.assertEqual(Q.boot_timeout(req, 'release', 'test'), 900)
		self.assertEqual(Q.boot_timeout(req, 'release', 'test'), schedule.TEST_TIMEOUT_S)
		self.assertEqual(Q.boot_timeout(req, 'debug', 'test'), 2700)
		self.assertEqual(Q.boot_timeout(req, 'release', 'quick'),
				 schedule.timeout('quick', 2, 'release'))
		self.assertEqual(Q.boot_timeout(req, 'kcsan', 'full'),
				 schedule.timeout('full', 2, 'kcsan'))
		self.assertGreater(schedule.timeout('full', 2, 'kcsan'),
				   schedule.timeout('full', 2, 'release'))
		# CPUS: the benchmarks' worker counts, which the schedule sweeps
		self.assertEqual(Q.boot_timeout(Request(smp=2, cpus='1'), 'release', 'quick'),
				 schedule.timeout('quick', 2, 'release', '1'))
		self.assertLess(schedule.timeout('quick', 2, 'release', '1'),
				schedule.timeout('quick', 2, 'release'))
		self.assertEqual(Q.boot_timeout(Request(boot_timeout=0, smp=2), 'release', 'test'),
				 900)
		self.assertEqual(Q.boot_timeout(Request(boot_timeout=42), 'debug', 'full'), 42)


if __name__ == '__main__':
	unittest.main()
