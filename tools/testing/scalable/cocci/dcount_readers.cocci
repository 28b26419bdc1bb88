// SPDX-License-Identifier: GPL-2.0
/// Every reader of a dentry's reference count: calls of d_count() and
/// accesses to the d_lockref.count field (only struct dentry has a field
/// named d_lockref).  With CONFIG_DCACHE_OPLOG, d_lockref.count of a
/// dentry that some CPU counts references to is not the number of
/// references (fs/dcache_oplog.c): each reader must either fold the
/// per-CPU counts first or only ever see dentries of filesystems that do
/// not opt in (SB_I_DCACHE_OPLOG).  tools/testing/scalable/scalable.py
/// (make check) runs this on the assembled tree and fails on a reader that
/// is not in dcount_readers.allow.
//
// Confidence: High
// Options: --no-includes --include-headers

virtual report

@r depends on report@
identifier fn;
expression E;
position p;
@@
fn(...) {
<...
(
d_count@p(E)
|
E->d_lockref.count@p
|
E.d_lockref.count@p
)
...>
}

@script:python depends on report@
p << r.p;
fn << r.fn;
@@
print("READER %s:%s:%s" % (p[0].file, p[0].line, fn))
