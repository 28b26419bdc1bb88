// SPDX-License-Identifier: GPL-2.0
/// Every reader or writer of an inode's write count: accesses to
/// the i_writecount field (only struct inode has a field of that name).
/// With CONFIG_INODE_OPLOG, i_writecount of an inode that some CPU counts
/// write accesses of is neither the number of write accesses nor of
/// denials, and carries a bias (fs/inode_oplog.c): each reader must call
/// i_writecount_read(), which folds the per-CPU counts and takes the bias
/// off.  tools/testing/scalable/scalable.py
/// (make check) runs this on the assembled tree and fails on a function
/// that is not in i_writecount_readers.allow.
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
E->i_writecount@p
|
E.i_writecount@p
)
...>
}

@script:python depends on report@
p << r.p;
fn << r.fn;
@@
print("READER %s:%s:%s" % (p[0].file, p[0].line, fn))
