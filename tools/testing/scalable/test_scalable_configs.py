#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Unit tests of scalable_configs: the series' Kconfig options read from its
# diffs and new Kconfig files, the real-config matrix and what each variant
# must hold, build diagnostics, and the comparison of a packaged kernel's
# boot with the harness's guest.  The builds themselves: make check,
# make check-full.

import json
import os
import sys
import tempfile
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scalable_common as common  # noqa: E402
import scalable_configs as C  # noqa: E402
from scalable_common import HarnessError  # noqa: E402
from scalable_request import Request  # noqa: E402

DIFF = '''--- a/lib/Kconfig
+++ b/lib/Kconfig
@@ -1,3 +1,12 @@ menu "Library routines"
 config A_STOCK
 	bool
+
+config ARCH_HAS_OPLOG_CLOCK
+	bool
+	help
+	  Selected by an architecture.
+
+config OPLOG
+	bool "OpLog"
+	depends on CLUSTERED_OBJECTS && !PREEMPT_RT
+
+config OPLOG_KUNIT_TEST
+	bool "KUnit tests" if !KUNIT_ALL_TESTS
+	depends on OPLOG && KUNIT=y
 config GLOB
--- a/fs/Makefile
+++ b/fs/Makefile
@@ -1,2 +1,3 @@
+obj-$(CONFIG_DCACHE_OPLOG) += dcache_oplog.o
 obj-y += dcache.o
--- a/fs/Kconfig
+++ b/fs/Kconfig
@@ -1,2 +1,6 @@
 config FS_STOCK
+config DCACHE_OPLOG
+	bool "dentry OpLog"
+	depends on OPLOG && SMP
+	default n
'''

NEW_KCONFIG = '''# SPDX-License-Identifier: GPL-2.0
config QDO
	bool "QDo"
	depends on SMP && TREE_RCU

config CLUSTERED_OBJECTS
	bool "Clustered objects"
	depends on QDO
	depends on !PREEMPT_RT

config TEST_QDO
	bool "stress"
	depends on CLUSTERED_OBJECTS && DEBUG_FS
'''


def options():
	return C.parse_options([NEW_KCONFIG] + C.added_kconfig_text(DIFF))


class StockTest(unittest.TestCase):
	"""The stock 6.12 build: the series' options drop out, nothing else may."""

	def test_stock_config_problems(self):
		with tempfile.TemporaryDirectory() as d:
			frag = os.path.join(d, 'scalable.config')
			with open(frag, 'w') as f:
				f.write('CONFIG_SMP=y\nCONFIG_OPLOG=y\nCONFIG_GUP_TEST=y\n'
					'# CONFIG_HID is not set\n')
			with open(os.path.join(d, '.config'), 'w') as f:
				f.write('CONFIG_SMP=y\n# CONFIG_GUP_TEST is not set\n')
			bad = C.stock_config_problems(d, [frag], {'OPLOG': {}})
		self.assertEqual(bad, ['scalable.config: CONFIG_GUP_TEST=y requested, got n'])


class OptionsTest(unittest.TestCase):
	def test_added_kconfig_text_only_kconfig_files(self):
		texts = C.added_kconfig_text(DIFF)
		self.assertEqual(len(texts), 2)
		self.assertIn('config OPLOG\n', texts[0])
		self.assertNotIn('A_STOCK', texts[0])
		self.assertNotIn('GLOB', texts[0])
		self.assertNotIn('dcache_oplog.o', ''.join(texts))
		self.assertNotIn('FS_STOCK', texts[1])

	def test_parse_options(self):
		o = options()
		self.assertEqual(list(o), ['QDO', 'CLUSTERED_OBJECTS', 'TEST_QDO', 'OPLOG',
					   'OPLOG_KUNIT_TEST', 'DCACHE_OPLOG'])
		self.assertEqual(o['QDO']['deps'], set())
		self.assertEqual(o['CLUSTERED_OBJECTS']['deps'], {'QDO'})
		self.assertTrue(o['CLUSTERED_OBJECTS']['not_rt'])
		self.assertTrue(o['OPLOG']['not_rt'])
		self.assertFalse(o['DCACHE_OPLOG']['not_rt'])
		self.assertEqual(o['OPLOG_KUNIT_TEST']['deps'], {'OPLOG'})
		self.assertTrue(o['OPLOG_KUNIT_TEST']['test'])
		self.assertTrue(o['OPLOG_KUNIT_TEST']['kunit'])
		self.assertFalse(o['TEST_QDO']['kunit'])
		self.assertTrue(o['TEST_QDO']['test'])
		self.assertFalse(o['DCACHE_OPLOG']['test'])

	def test_dependents(self):
		o = options()
		self.assertEqual(C.dependents(o, ['OPLOG']),
				 {'OPLOG', 'OPLOG_KUNIT_TEST', 'DCACHE_OPLOG'})
		self.assertEqual(C.dependents(o, ['QDO']), set(o))

	def test_no_options_is_an_error(self):
		with mock.patch.object(C, 'series_patches', return_value=[]), \
		     mock.patch.object(C, 'series_files', return_value={}):
			self.assertRaises(HarnessError, C.series_options)


class VariantsTest(unittest.TestCase):
	def test_matrix(self):
		o = options()
		v = {name: (req, exp) for name, req, exp in C.variants(o)}
		self.assertEqual(list(v), ['all-on', 'no-qdo', 'no-clustered-objects', 'no-oplog',
					   'no-dcache-oplog', 'no-tests', 'kunit-module', 'all-off',
					   'preempt-rt'])
		req, exp = v['no-tests']
		self.assertEqual(req['CONFIG_KUNIT'], 'n')
		self.assertEqual((exp['CONFIG_OPLOG'], exp['CONFIG_TEST_QDO'],
				  exp['CONFIG_OPLOG_KUNIT_TEST']), ('y', 'n', 'n'))
		req, exp = v['kunit-module']
		self.assertEqual(req['CONFIG_KUNIT'], 'm')
		self.assertEqual((exp['CONFIG_OPLOG'], exp['CONFIG_TEST_QDO'],
				  exp['CONFIG_OPLOG_KUNIT_TEST']), ('y', 'y', 'n'))
		req, exp = v['all-on']
		self.assertTrue(all(exp['CONFIG_' + n] == 'y' for n in o))
		self.assertEqual(req['CONFIG_KUNIT'], 'y')
		self.assertEqual(req['CONFIG_KUNIT_DEFAULT_ENABLED'], 'n')
		req, exp = v['no-oplog']
		self.assertEqual(req['CONFIG_OPLOG'], 'n')
		self.assertEqual(req['CONFIG_DCACHE_OPLOG'], 'n')
		self.assertEqual(exp['CONFIG_DCACHE_OPLOG'], 'n')
		self.assertEqual(exp['CONFIG_CLUSTERED_OBJECTS'], 'y')
		req, exp = v['all-off']
		self.assertTrue(all(exp['CONFIG_' + n] == 'n' for n in o))
		self.assertEqual(req['CONFIG_EXPERT'], 'y')
		req, exp = v['preempt-rt']
		self.assertEqual(req['CONFIG_PREEMPT_RT'], 'y')
		self.assertEqual(exp['CONFIG_QDO'], 'y')
		for n in ('CLUSTERED_OBJECTS', 'OPLOG', 'DCACHE_OPLOG', 'TEST_QDO'):
			self.assertEqual(exp['CONFIG_' + n], 'n', n)

	def test_fragment_and_mismatches(self):
		text = C.fragment_text({'CONFIG_A': 'y', 'CONFIG_B': 'n'})
		self.assertEqual(text, 'CONFIG_A=y\n# CONFIG_B is not set\n')
		self.assertEqual(C.config_mismatches({'CONFIG_A': 'y'},
						     {'CONFIG_A': 'y', 'CONFIG_B': 'n'}), [])
		self.assertEqual(C.config_mismatches({'CONFIG_A': 'n'}, {'CONFIG_A': 'y'}),
				 ['CONFIG_A=y expected, got n'])
		# An unmet dependency leaves the symbol out of .config: "n".
		self.assertEqual(C.config_mismatches({}, {'CONFIG_A': 'y'}),
				 ['CONFIG_A=y expected, got n'])


class DiagnosticsTest(unittest.TestCase):
	def test_warnings_and_errors(self):
		out = ('  CC      fs/dcache.o\n'
		       'fs/dcache_oplog.c:12:5: warning: unused variable \'x\' [-Wunused-variable]\n'
		       'lib/oplog.c:3:1: error: expected \';\'\n'
		       'make[2]: *** [scripts/Makefile.build:229: lib/oplog.o] Error 1\n'
		       'ld: warning: ignoring unsupported section\n'
		       'vmlinux.o: warning: objtool: qdo_tick()+0x12: call to foo() leaves .noinstr.text section\n')
		d = C.diagnostics(out)
		self.assertEqual(len(d), 5)
		self.assertIn('objtool', d[4])
		self.assertEqual(C.diagnostics('  LD      vmlinux\n  CC      lib/warning_helpers.o\n'), [])


class KbuildTest(unittest.TestCase):
	FILES = {
		'kernel/Makefile': 'obj-y = fork.o \\\n\texit.o sched/\nobj-$(CONFIG_QDO) += qdo/\n',
		'fs/Makefile': 'obj-y :=\tramfs/ dcache.o\n',
		'kernel/qdo/Makefile': '# obj-y += old.o\nobj-y += qdo.o\n'
				       'obj-$(CONFIG_QDO_KUNIT_TEST) += qdo_test.o\n',
		'kernel/qdo/qdo.c': '', 'kernel/qdo/qdo_test.c': '',
		'kernel/sched/Makefile': 'obj-y += build_policy.o\n',
		'kernel/sched/build_policy.c': '#include "idle.c"\n',
		'kernel/sched/idle.c': '',
		'fs/ramfs/Makefile': 'ramfs-objs += inode.o file-mmu.o\n'
				     'obj-$(CONFIG_RAMFS) += ramfs.o\n',
		'fs/ramfs/inode.c': '',
		'mm/Makefile': 'mmu-y\t\t\t:= nommu.o\nmmu-$(CONFIG_MMU)\t:= memory.o \\\n\t\t\t   vma.o\n'
			       'obj-y\t\t\t:= filemap.o $(mmu-y)\n',
	}

	def tree(self, d):
		for path, text in self.FILES.items():
			os.makedirs(os.path.join(d, os.path.dirname(path)), exist_ok=True)
			with open(os.path.join(d, path), 'w') as f:
				f.write(text)

	def test_conditions(self):
		with tempfile.TemporaryDirectory() as d:
			self.tree(d)
			self.assertEqual(C.kbuild_condition(d, 'kernel/exit.o'), [])
			self.assertEqual(C.kbuild_condition(d, 'kernel/qdo/qdo.o'), ['QDO'])
			self.assertEqual(C.kbuild_condition(d, 'kernel/qdo/qdo_test.o'),
					 ['QDO_KUNIT_TEST', 'QDO'])
			self.assertEqual(C.kbuild_condition(d, 'fs/ramfs/inode.o'), ['RAMFS'])
			self.assertIsNone(C.kbuild_condition(d, 'kernel/qdo/old.o'))
			# A member of a list that obj-y names as a variable.
			self.assertEqual(C.kbuild_condition(d, 'mm/vma.o'), ['MMU'])
			self.assertIsNone(C.kbuild_condition(d, 'kernel/sched/idle.o'))
			self.assertEqual(C.includer(d, 'kernel/sched/idle.c'),
					 'kernel/sched/build_policy.o')
			self.assertIsNone(C.includer(d, 'kernel/qdo/qdo.c'))

	def test_series_objects(self):
		with tempfile.TemporaryDirectory() as d:
			self.tree(d)
			patches = [{'name': 'p', 'diff': None}]
			owner = {'kernel/qdo/qdo.c': 'p', 'kernel/qdo/qdo_test.c': 'p',
				 'kernel/sched/idle.c': 'p', 'tools/x.c': 'p', 'kernel/qdo/gone.c': 'p'}
			with open(os.path.join(d, 'kernel/qdo/gone.c'), 'w'):
				pass
			with mock.patch.object(C, 'series_patches', return_value=patches), \
			     mock.patch.object(C, 'series_files', return_value=owner):
				objs, skipped = C.series_objects(d, {'CONFIG_QDO': 'y'})
		self.assertEqual(objs, ['kernel/qdo/qdo.o', 'kernel/sched/build_policy.o'])
		self.assertEqual(skipped, [('kernel/qdo/gone.c', 'no Makefile builds it'),
					   ('kernel/qdo/qdo_test.c',
					    'needs CONFIG_QDO_KUNIT_TEST CONFIG_QDO')])


class DebTest(unittest.TestCase):
	def test_kunit_suite_counts(self):
		data = {'name': 'main', 'test_cases': [], 'sub_groups': [
			{'name': 'qdo', 'test_cases': [{'name': 'a', 'status': 'PASS'},
						       {'name': 'b', 'status': 'SKIP'}],
			 'sub_groups': [{'name': 'param', 'test_cases': [
				 {'name': 'p1', 'status': 'FAIL'}], 'sub_groups': []}]},
			{'name': 'oplog', 'test_cases': [{'name': 'c', 'status': 'TEST_CRASHED'}],
			 'sub_groups': []}]}
		with tempfile.NamedTemporaryFile('w', suffix='.json') as f:
			json.dump(data, f)
			f.flush()
			self.assertEqual(C.kunit_suite_counts(f.name),
					 {'qdo': (1, 1, 1, 0), 'oplog': (0, 0, 0, 1)})
		self.assertEqual(C.kunit_suite_counts('/nonexistent.json'), {})

	def test_compare_summaries(self):
		targets = {'scalable': {'passed': 20, 'failed': 0, 'skipped': 0}}
		guest = {'kunit_suites': {'qdo': (12, 0, 0, 0), 'list': (40, 0, 0, 0)},
			 'targets': targets}
		same = {'kunit_suites': {'qdo': (12, 0, 0, 0)}, 'targets': dict(targets)}
		self.assertEqual(C.compare_summaries(guest, same, ('qdo',)), [])
		fewer = {'kunit_suites': {'qdo': (11, 0, 1, 0)},
			 'targets': {'scalable': {'passed': 19, 'failed': 1, 'skipped': 0}}}
		diff = C.compare_summaries(guest, fewer, ('qdo',))
		self.assertEqual(len(diff), 2)
		self.assertIn('KUnit suite qdo', diff[0])
		self.assertIn('kselftest target scalable', diff[1])
		self.assertEqual(len(C.compare_summaries(guest, {'kunit_suites': {},
								 'targets': targets}, ('qdo',))), 1)

	def test_deb_base_config(self):
		"""DEB_CONFIG (test_scalable_request.py checks it), else /boot's, else defconfig."""
		self.assertEqual(C.deb_base_config(Request(deb_config='defconfig')), 'defconfig')
		self.assertEqual(C.deb_base_config(Request(deb_config='guest')), 'guest')
		with tempfile.NamedTemporaryFile() as f:
			self.assertEqual(C.deb_base_config(Request(deb_config=f.name)), f.name)
		running = '/boot/config-' + os.uname().release
		with mock.patch('os.path.isfile', side_effect=lambda p: p == running):
			self.assertEqual(C.deb_base_config(Request()), running)
		with mock.patch('os.path.isfile', return_value=False), \
		     mock.patch('glob.glob', return_value=['/boot/config-6.1.0-1', '/boot/config-6.1.0-2']):
			self.assertEqual(C.deb_base_config(Request()), '/boot/config-6.1.0-2')
		with mock.patch('os.path.isfile', return_value=False), \
		     mock.patch('glob.glob', return_value=[]):
			self.assertEqual(C.deb_base_config(Request()), 'defconfig')

	def test_deb_excluded(self):
		"""What deb_test() leaves out names upstream tests the guest runs, with a reason."""
		for t, why in C.DEB_EXCLUDED.items():
			self.assertIn(t.split(':')[0], common.SELFTEST_TARGETS)
			self.assertNotIn(t, common.EXCLUDED_TESTS)
			self.assertGreater(len(why), 40)

	def test_deb_config(self):
		"""The package's config beside its vmlinuz, which deb_test() boots by."""
		with tempfile.TemporaryDirectory() as d:
			vmlinuz = os.path.join(d, 'vmlinuz-6.12.117-scalable')
			open(vmlinuz, 'w').close()
			self.assertRaises(HarnessError, C.deb_config, vmlinuz)
			config = os.path.join(d, 'config-6.12.117-scalable')
			open(config, 'w').close()
			self.assertEqual(C.deb_config(vmlinuz), config)


if __name__ == '__main__':
	unittest.main()
