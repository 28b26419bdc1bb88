// SPDX-License-Identifier: GPL-2.0
/// Every user of a file's reverse map: accesses to the i_mmap tree and to
/// i_mmap_rwsem of struct address_space (the only structure with fields of
/// these names), and the calls that make such a user see a complete tree.
/// With CONFIG_RMAP_OPLOG, fork and mmap() log the insert of a file VMA per
/// CPU (mm/oplog_rmap.c); the tree holds it only after a synchronize,
/// which the i_mmap_lock_*() and i_mmap_trylock_*() helpers do.  A user
/// must take the lock through a helper (or rmap_oplog_sync(),
/// rmap_oplog_sync_read(), rmap_oplog_lock_unlink(),
/// rmap_oplog_lock_insert() or rmap_oplog_prepare_vmas()), or assert that its
/// caller did
/// (i_mmap_assert_locked(), i_mmap_assert_write_locked(),
/// lockdep_assert_held()).  tools/testing/scalable/scalable.py (make check)
/// runs this on the assembled tree and fails on a function that uses the
/// tree with no such call and is not in i_mmap_users.allow.
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
E->i_mmap@p
|
E.i_mmap@p
|
E->i_mmap_rwsem@p
|
E.i_mmap_rwsem@p
)
...>
}

@script:python depends on report@
p << r.p;
fn << r.fn;
@@
print("USER %s:%s:%s" % (p[0].file, p[0].line, fn))

@g depends on report@
identifier fn;
position p;
@@
fn(...) {
<...
(
i_mmap_lock_read@p(...)
|
i_mmap_lock_write@p(...)
|
i_mmap_trylock_read@p(...)
|
i_mmap_trylock_write@p(...)
|
rmap_oplog_sync@p(...)
|
rmap_oplog_sync_read@p(...)
|
rmap_oplog_lock_unlink@p(...)
|
rmap_oplog_lock_insert@p(...)
|
rmap_oplog_prepare_vmas@p(...)
|
i_mmap_assert_locked@p(...)
|
i_mmap_assert_write_locked@p(...)
|
lockdep_assert_held@p(...)
|
lockdep_assert_held_write@p(...)
)
...>
}

@script:python depends on report@
p << g.p;
fn << g.fn;
@@
print("GUARD %s:%s:%s" % (p[0].file, p[0].line, fn))
