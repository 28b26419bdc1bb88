// SPDX-License-Identifier: GPL-2.0
/// Every reader or writer of an inode's read-only open count: accesses to
/// the i_readcount field (only struct inode has a field of that name).
/// With CONFIG_INODE_OPLOG, i_readcount of an inode that some CPU counts
/// opens of is not the number of files open read-only on it
/// (fs/inode_oplog.c): each reader must call i_readcount_read(), which
/// folds the per-CPU counts first.  tools/testing/scalable/scalable.py
/// (make check) runs this on the assembled tree and fails on a function
/// that is not in i_readcount_readers.allow.
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
E->i_readcount@p
|
E.i_readcount@p
)
...>
}

@script:python depends on report@
p << r.p;
fn << r.fn;
@@
print("READER %s:%s:%s" % (p[0].file, p[0].line, fn))
