// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the OpLog dentry reference counts (fs/dcache_oplog.c), on
 * a private kernel-internal tmpfs mount.
 */
#include <kunit/test.h>
#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/seqlock.h>

#include "dcache_oplog.h"

struct dcache_oplog_test {
	struct file_system_type	*fs;
	struct vfsmount		*mnt;
	bool			was_on;
};

static int dcache_oplog_test_init(struct kunit *test)
{
	struct dcache_oplog_test *t;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	t->fs = get_fs_type("tmpfs");
	KUNIT_ASSERT_NOT_NULL(test, t->fs);
	t->mnt = kern_mount(t->fs);
	if (IS_ERR(t->mnt)) {
		put_filesystem(t->fs);
		KUNIT_FAIL(test, "kern_mount(tmpfs): %ld", PTR_ERR(t->mnt));
		return PTR_ERR(t->mnt);
	}
	test->priv = t;
	/* The cases need the per-CPU counts, whatever the boot switch. */
	t->was_on = static_key_enabled(&dcache_oplog_key);
	dcache_oplog_switch(true);
	return 0;
}

static void dcache_oplog_test_exit(struct kunit *test)
{
	struct dcache_oplog_test *t = test->priv;

	/* umount with logged dentries: must neither warn nor leak */
	kern_unmount(t->mnt);
	put_filesystem(t->fs);
	if (!t->was_on)
		dcache_oplog_switch(false);
}

/*
 * A new regular file (@dir false) or directory in @parent (NULL: the root
 * of the test mount); returns a referenced dentry.
 */
static struct dentry *make_in(struct kunit *test, struct dentry *parent,
			      const char *name, bool dir)
{
	struct dcache_oplog_test *t = test->priv;
	struct dentry *root = parent ? parent : t->mnt->mnt_root;
	struct dentry *dentry;
	int err;

	inode_lock(d_inode(root));
	dentry = lookup_one_len(name, root, strlen(name));
	if (IS_ERR(dentry)) {
		inode_unlock(d_inode(root));
		KUNIT_FAIL(test, "lookup %s: %ld", name, PTR_ERR(dentry));
		return NULL;
	}
	if (dir)
		err = vfs_mkdir(&nop_mnt_idmap, d_inode(root), dentry, 0755);
	else
		err = vfs_create(&nop_mnt_idmap, d_inode(root), dentry,
				 S_IFREG | 0644, true);
	inode_unlock(d_inode(root));
	if (err) {
		dput(dentry);
		KUNIT_FAIL(test, "create %s: %d", name, err);
		return NULL;
	}
	return dentry;
}

static struct dentry *make_file(struct kunit *test, const char *name)
{
	return make_in(test, NULL, name, false);
}

/* The exact count, after folding every CPU's count. */
static int exact_count(struct dentry *dentry)
{
	int count;

	spin_lock(&dentry->d_lock);
	dcache_oplog_sync(dentry);
	count = dentry->d_lockref.count;
	spin_unlock(&dentry->d_lock);
	return count;
}

static enum dcache_oplog_ref get_once(struct dentry *dentry, int seq_skew)
{
	enum dcache_oplog_ref ret;
	unsigned int seq;

	rcu_read_lock();
	seq = raw_seqcount_begin(&dentry->d_seq) + seq_skew;
	ret = dcache_oplog_get(dentry, seq);
	rcu_read_unlock();
	return ret;
}

/*
 * A path-walk reference as a CPU takes it the second time in a row: the
 * first miss of a CPU on a dentry only marks it hot (and takes nothing:
 * the caller would take the reference on d_lockref), the second attaches
 * a log.
 * Both on one CPU.
 */
static enum dcache_oplog_ref get_ref(struct dentry *dentry, int seq_skew)
{
	enum dcache_oplog_ref ret;

	migrate_disable();
	ret = get_once(dentry, seq_skew);
	if (ret == DCACHE_OPLOG_LOCKREF)
		ret = get_once(dentry, seq_skew);
	migrate_enable();
	return ret;
}

/*
 * get_ref() for a case that needs a log of @dentry on this CPU (migration
 * disabled by the caller): false, with the failure recorded, if the
 * reference was not taken or went to no log (the log could not be
 * allocated, or was evicted at once).  No KUNIT_ASSERT with migration
 * disabled: a case that ends there leaves its CPU pinned, and a later
 * remove_cpu() of it would wait for ever.
 */
static bool get_logged(struct kunit *test, struct dentry *dentry)
{
	enum dcache_oplog_ref ret = get_ref(dentry, 0);

	KUNIT_EXPECT_EQ(test, ret, DCACHE_OPLOG_GOT);
	if (ret != DCACHE_OPLOG_GOT)
		return false;
	if (!oplog_obj_has_logs(&dentry->d_oplog)) {
		KUNIT_FAIL(test, "a reference counted by no log");
		dput(dentry);
		return false;
	}
	return true;
}

/* A logged reference pins the dentry once and is folded exactly. */
static void dcache_oplog_test_get_put(struct kunit *test)
{
	struct dentry *dentry = make_file(test, "a");
	int base, i;

	KUNIT_ASSERT_NOT_NULL(test, dentry);
	base = exact_count(dentry);
	KUNIT_EXPECT_FALSE(test, dcache_oplog_maybe_logged(dentry));

	KUNIT_ASSERT_EQ(test, get_ref(dentry, 0), DCACHE_OPLOG_GOT);
	KUNIT_EXPECT_TRUE(test, dcache_oplog_maybe_logged(dentry));
	/* shared part unchanged, plus this CPU's pin */
	KUNIT_EXPECT_EQ(test, READ_ONCE(dentry->d_lockref.count), base + 1);
	KUNIT_EXPECT_EQ(test, exact_count(dentry), base + 1);
	KUNIT_EXPECT_FALSE(test, dcache_oplog_maybe_logged(dentry));

	/* many references: only the pin shows in d_lockref */
	for (i = 0; i < 10; i++)
		KUNIT_ASSERT_EQ(test, get_ref(dentry, 0), DCACHE_OPLOG_GOT);
	KUNIT_EXPECT_LE(test, READ_ONCE(dentry->d_lockref.count),
			base + 1 + (int)num_online_cpus());
	for (i = 0; i < 10; i++)
		dput(dentry);
	KUNIT_EXPECT_EQ(test, exact_count(dentry), base + 1);

	dput(dentry);	/* the test's reference from before */
	dput(dentry);	/* make_file()'s */

	/* leave a log attached: the suite's exit unmounts with it */
	KUNIT_ASSERT_EQ(test, get_ref(dentry, 0), DCACHE_OPLOG_GOT);
	dput(dentry);
	KUNIT_EXPECT_EQ(test, exact_count(dentry), base - 1);
	KUNIT_ASSERT_EQ(test, get_ref(dentry, 0), DCACHE_OPLOG_GOT);
	dput(dentry);
}

/* A d_seq change after the increment undoes it (thesis section 4.2). */
static void dcache_oplog_test_seq_undo(struct kunit *test)
{
	struct dentry *dentry = make_file(test, "b");
	int base;

	KUNIT_ASSERT_NOT_NULL(test, dentry);
	base = exact_count(dentry);
	KUNIT_EXPECT_EQ(test, get_ref(dentry, 2), DCACHE_OPLOG_UNDONE);
	KUNIT_EXPECT_EQ(test, exact_count(dentry), base);
	dput(dentry);
}

/* Unhashed and negative dentries take the lockref path. */
static void dcache_oplog_test_refuse(struct kunit *test)
{
	struct dcache_oplog_test *t = test->priv;
	struct dentry *dentry = make_file(test, "c");
	struct dentry *neg;
	int base;

	KUNIT_ASSERT_NOT_NULL(test, dentry);
	/* dropping flushes: the logged reference becomes a shared one */
	KUNIT_ASSERT_EQ(test, get_ref(dentry, 0), DCACHE_OPLOG_GOT);
	base = READ_ONCE(dentry->d_lockref.count);
	d_drop(dentry);
	KUNIT_EXPECT_FALSE(test, dcache_oplog_maybe_logged(dentry));
	KUNIT_EXPECT_EQ(test, READ_ONCE(dentry->d_lockref.count), base);
	KUNIT_EXPECT_EQ(test, get_ref(dentry, 0), DCACHE_OPLOG_LOCKREF);
	KUNIT_EXPECT_FALSE(test, dcache_oplog_maybe_logged(dentry));
	dput(dentry);
	dput(dentry);
	dput(dentry);	/* tmpfs's pin: unhashed, umount would not drop it */

	neg = d_alloc_name(t->mnt->mnt_root, "negative");
	KUNIT_ASSERT_NOT_NULL(test, neg);
	d_add(neg, NULL);
	KUNIT_EXPECT_EQ(test, get_ref(neg, 0), DCACHE_OPLOG_LOCKREF);
	KUNIT_EXPECT_FALSE(test, dcache_oplog_maybe_logged(neg));
	dput(neg);
}

/* d_delete() decides on the exact count, with logged references folded. */
static void dcache_oplog_test_delete(struct kunit *test)
{
	struct dentry *dentry = make_file(test, "d");
	struct dentry *only = make_file(test, "d2");

	KUNIT_ASSERT_NOT_NULL(test, dentry);
	KUNIT_ASSERT_NOT_NULL(test, only);

	/* busy: make_file()'s reference, tmpfs's pin and a logged one */
	KUNIT_ASSERT_EQ(test, get_ref(dentry, 0), DCACHE_OPLOG_GOT);
	d_delete(dentry);
	KUNIT_EXPECT_TRUE(test, d_unhashed(dentry));
	KUNIT_EXPECT_TRUE(test, d_really_is_positive(dentry));
	KUNIT_EXPECT_FALSE(test, dcache_oplog_maybe_logged(dentry));
	KUNIT_EXPECT_EQ(test, READ_ONCE(dentry->d_lockref.count), 3);
	dput(dentry);
	dput(dentry);
	dput(dentry);	/* tmpfs's pin: unhashed, umount would not drop it */

	/*
	 * The only user: drop tmpfs's pin, take and drop a logged reference,
	 * which leaves this CPU's pin in d_lockref.count (2), and the exact
	 * count (1) must make d_delete() turn the dentry negative.
	 */
	dput(only);
	KUNIT_EXPECT_EQ(test, exact_count(only), 1);
	KUNIT_ASSERT_EQ(test, get_ref(only, 0), DCACHE_OPLOG_GOT);
	dput(only);
	if (static_key_enabled(&dcache_oplog_key))
		KUNIT_EXPECT_EQ(test, READ_ONCE(only->d_lockref.count), 2);
	d_delete(only);
	KUNIT_EXPECT_TRUE(test, d_really_is_negative(only));
	KUNIT_EXPECT_FALSE(test, dcache_oplog_maybe_logged(only));
	KUNIT_EXPECT_EQ(test, READ_ONCE(only->d_lockref.count), 1);
	dput(only);
}

/*
 * Turning the switch off with a log present folds and detaches it, and
 * no log can be attached until it is on again: fast_dput() then need not
 * read d_oplog (dcache_oplog_logged_key is off).
 */
static void dcache_oplog_test_switch(struct kunit *test)
{
	struct dentry *dentry = make_file(test, "e");
	int base;

	KUNIT_ASSERT_NOT_NULL(test, dentry);
	base = exact_count(dentry);
	KUNIT_ASSERT_EQ(test, get_ref(dentry, 0), DCACHE_OPLOG_GOT);
	KUNIT_EXPECT_TRUE(test, oplog_obj_has_logs(&dentry->d_oplog));
	KUNIT_ASSERT_EQ(test, dcache_oplog_switch(false), 0);
	KUNIT_EXPECT_FALSE(test, static_key_enabled(&dcache_oplog_logged_key));
	KUNIT_EXPECT_FALSE(test, oplog_obj_has_logs(&dentry->d_oplog));
	/* the per-CPU reference is folded into d_lockref, the pin dropped */
	KUNIT_EXPECT_EQ(test, READ_ONCE(dentry->d_lockref.count), base + 1);
	/* ->attach refuses while off */
	KUNIT_EXPECT_EQ(test, get_ref(dentry, 0), DCACHE_OPLOG_LOCKREF);
	KUNIT_EXPECT_FALSE(test, oplog_obj_has_logs(&dentry->d_oplog));
	dput(dentry);	/* the lockref path, without a look at d_oplog */
	KUNIT_EXPECT_EQ(test, READ_ONCE(dentry->d_lockref.count), base);
	KUNIT_ASSERT_EQ(test, dcache_oplog_switch(true), 0);
	KUNIT_EXPECT_TRUE(test, static_key_enabled(&dcache_oplog_logged_key));
	dput(dentry);
}

/*
 * The hotness filter: a CPU's first miss on a dentry takes nothing and
 * attaches no log, its second attaches one; a walk of more names than
 * the filter holds, each referenced once, attaches none.
 */
static void dcache_oplog_test_hot(struct kunit *test)
{
	const int n = 2 << DCACHE_OPLOG_RECENT_BITS;
	struct dentry **many;
	char name[16];
	int i, logged = 0;

	many = kunit_kcalloc(test, n, sizeof(*many), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, many);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "h%d", i);
		many[i] = make_file(test, name);
		KUNIT_ASSERT_NOT_NULL(test, many[i]);
	}
	migrate_disable();
	dcache_oplog_hot_reset();
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ(test, get_once(many[i], 0), DCACHE_OPLOG_LOCKREF);
	for (i = 0; i < n; i++)
		logged += oplog_obj_has_logs(&many[i]->d_oplog);
	KUNIT_EXPECT_EQ(test, logged, 0);

	/* the same CPU again, at once: hot */
	dcache_oplog_hot_reset();
	KUNIT_EXPECT_EQ(test, get_once(many[0], 0), DCACHE_OPLOG_LOCKREF);
	KUNIT_EXPECT_FALSE(test, oplog_obj_has_logs(&many[0]->d_oplog));
	KUNIT_EXPECT_EQ(test, get_once(many[0], 0), DCACHE_OPLOG_GOT);
	KUNIT_EXPECT_TRUE(test, oplog_obj_has_logs(&many[0]->d_oplog));
	/* a hit needs no filter */
	dcache_oplog_hot_reset();
	KUNIT_EXPECT_EQ(test, get_once(many[0], 0), DCACHE_OPLOG_GOT);
	migrate_enable();
	dput(many[0]);
	dput(many[0]);
	for (i = 0; i < n; i++)
		dput(many[i]);
}

/*
 * path_get() on a dentry this CPU logs goes to the counter: d_lockref is
 * not written, the exact count still sees the reference.  Without a log
 * it is dget() on d_lockref.
 */
static void dcache_oplog_test_path_get(struct kunit *test)
{
	struct dcache_oplog_test *t = test->priv;
	struct dentry *dentry = make_file(test, "pg");
	struct path path;
	int base, shared;

	KUNIT_ASSERT_NOT_NULL(test, dentry);
	path.mnt = t->mnt;
	path.dentry = dentry;
	base = exact_count(dentry);

	path_get(&path);	/* no log anywhere: d_lockref */
	KUNIT_EXPECT_EQ(test, READ_ONCE(dentry->d_lockref.count), base + 1);
	KUNIT_EXPECT_FALSE(test, oplog_obj_has_logs(&dentry->d_oplog));
	path_put(&path);
	KUNIT_EXPECT_EQ(test, exact_count(dentry), base);

	migrate_disable();
	if (!get_logged(test, dentry)) {
		migrate_enable();
		dput(dentry);
		return;
	}
	shared = READ_ONCE(dentry->d_lockref.count);
	path_get(&path);
	path_get(&path);
	KUNIT_EXPECT_EQ(test, READ_ONCE(dentry->d_lockref.count), shared);
	path_put(&path);
	KUNIT_EXPECT_EQ(test, READ_ONCE(dentry->d_lockref.count), shared);
	migrate_enable();
	/* the walk's reference and one path_get() are left */
	KUNIT_EXPECT_EQ(test, exact_count(dentry), base + 2);
	path_put(&path);
	dput(dentry);
	KUNIT_EXPECT_EQ(test, exact_count(dentry), base);
	dput(dentry);
}

/* dget_parent() of a parent this CPU logs takes no shared reference. */
static void dcache_oplog_test_dget_parent(struct kunit *test)
{
	struct dentry *dir = make_in(test, NULL, "dp", true);
	struct dentry *child, *parent;
	int base, shared;

	KUNIT_ASSERT_NOT_NULL(test, dir);
	child = make_in(test, dir, "c", false);
	KUNIT_ASSERT_NOT_NULL(test, child);
	base = exact_count(dir);

	migrate_disable();
	if (!get_logged(test, dir)) {
		migrate_enable();
		dput(child);
		dput(dir);
		return;
	}
	shared = READ_ONCE(dir->d_lockref.count);
	parent = dget_parent(child);
	KUNIT_EXPECT_PTR_EQ(test, parent, dir);
	KUNIT_EXPECT_EQ(test, READ_ONCE(dir->d_lockref.count), shared);
	migrate_enable();
	KUNIT_EXPECT_EQ(test, exact_count(dir), base + 2);
	dput(parent);
	dput(dir);
	KUNIT_EXPECT_EQ(test, exact_count(dir), base);
	dput(child);
	dput(dir);
}

/*
 * dget_parent() of a parent that no CPU logs attaches this CPU's log on
 * its second miss (dcache_oplog_get_parent()), as fsnotify_parent() of a
 * watched directory does on every event; the count stays exact.
 */
static void dcache_oplog_test_dget_parent_attach(struct kunit *test)
{
	struct dentry *dir = make_in(test, NULL, "pa", true);
	struct dentry *child, *parent;
	int base, i;

	KUNIT_ASSERT_NOT_NULL(test, dir);
	child = make_in(test, dir, "c", false);
	KUNIT_ASSERT_NOT_NULL(test, child);
	base = exact_count(dir);
	KUNIT_ASSERT_FALSE(test, oplog_obj_has_logs(&dir->d_oplog));

	migrate_disable();
	dcache_oplog_hot_reset();
	for (i = 0; i < 2; i++) {
		parent = dget_parent(child);
		KUNIT_EXPECT_PTR_EQ(test, parent, dir);
		dput(parent);
	}
	KUNIT_EXPECT_TRUE(test, oplog_obj_has_logs(&dir->d_oplog));
	parent = dget_parent(child);
	migrate_enable();
	/* folds and detaches the log: the held reference is left */
	KUNIT_EXPECT_EQ(test, exact_count(dir), base + 1);
	dput(parent);
	KUNIT_EXPECT_EQ(test, exact_count(dir), base);
	dput(child);
	dput(dir);
}

/*
 * Killing a child puts its parent without flushing the parent's logs:
 * the log survives, the pin keeps the parent alive, the count is exact.
 */
static void dcache_oplog_test_parent_kill(struct kunit *test)
{
	struct dentry *dir = make_in(test, NULL, "pk", true);
	struct dentry *neg;
	int base, shared;

	KUNIT_ASSERT_NOT_NULL(test, dir);
	base = exact_count(dir);
	migrate_disable();
	if (!get_logged(test, dir)) {
		migrate_enable();
		dput(dir);
		return;
	}
	migrate_enable();
	KUNIT_ASSERT_TRUE(test, oplog_obj_has_logs(&dir->d_oplog));

	/* an unhashed child: killed by its last dput() */
	neg = d_alloc_name(dir, "gone");
	KUNIT_ASSERT_NOT_NULL(test, neg);
	shared = READ_ONCE(dir->d_lockref.count);
	dput(neg);	/* __dentry_kill(): puts the parent */
	KUNIT_EXPECT_EQ(test, READ_ONCE(dir->d_lockref.count), shared - 1);
	KUNIT_EXPECT_TRUE(test, oplog_obj_has_logs(&dir->d_oplog));
	KUNIT_EXPECT_EQ(test, exact_count(dir), base + 1);
	dput(dir);
	dput(dir);
}

/*
 * The root of a filesystem and a dentry marked not to be cached are never
 * logged (dcache_oplog_eligible()): the walk takes the reference on
 * d_lockref.
 */
static void dcache_oplog_test_ineligible(struct kunit *test)
{
	struct dcache_oplog_test *t = test->priv;
	struct dentry *root = t->mnt->mnt_root;
	struct dentry *dentry = make_file(test, "dc");
	enum dcache_oplog_ref ret;
	int base;

	KUNIT_ASSERT_NOT_NULL(test, dentry);
	/* Never hashed either, so ->attach would refuse it too: ask directly. */
	KUNIT_EXPECT_FALSE(test, dcache_oplog_eligible(root));
	KUNIT_EXPECT_TRUE(test, dcache_oplog_eligible(dentry));
	base = exact_count(root);
	ret = get_ref(root, 0);
	KUNIT_EXPECT_EQ(test, ret, DCACHE_OPLOG_LOCKREF);
	KUNIT_EXPECT_FALSE(test, oplog_obj_has_logs(&root->d_oplog));
	if (ret == DCACHE_OPLOG_GOT)
		dput(root);
	KUNIT_EXPECT_EQ(test, exact_count(root), base);

	base = exact_count(dentry);
	spin_lock(&dentry->d_lock);
	dentry->d_flags |= DCACHE_DONTCACHE;
	spin_unlock(&dentry->d_lock);
	KUNIT_EXPECT_FALSE(test, dcache_oplog_eligible(dentry));
	ret = get_ref(dentry, 0);
	KUNIT_EXPECT_EQ(test, ret, DCACHE_OPLOG_LOCKREF);
	KUNIT_EXPECT_FALSE(test, oplog_obj_has_logs(&dentry->d_oplog));
	if (ret == DCACHE_OPLOG_GOT)
		dput(dentry);
	KUNIT_EXPECT_EQ(test, exact_count(dentry), base);
	spin_lock(&dentry->d_lock);
	dentry->d_flags &= ~DCACHE_DONTCACHE;
	spin_unlock(&dentry->d_lock);
	dput(dentry);
}

/*
 * A dentry whose last reference is a log's pin: detaching the log (here
 * the switch turned off) leaves it hashed and positive with a count of
 * zero, on the LRU (d_oplog_unpinned()), and not marked referenced, as
 * tmpfs's ->d_delete() asks for it to go at once.  Tmpfs pins its own
 * dentries; the test drops that pin to get there, and gives it back.
 */
static void dcache_oplog_test_unpinned(struct kunit *test)
{
	struct dentry *dentry = make_file(test, "up");
	unsigned int flags;
	int count;

	KUNIT_ASSERT_NOT_NULL(test, dentry);
	dput(dentry);	/* tmpfs's pin: make_file()'s reference is left */
	KUNIT_EXPECT_EQ(test, exact_count(dentry), 1);
	migrate_disable();
	if (!get_logged(test, dentry)) {
		migrate_enable();
		dput(dentry);
		return;
	}
	dput(dentry);	/* the walk's */
	if (!oplog_obj_has_logs(&dentry->d_oplog)) {
		/* evicted meanwhile: the last dput() would free it */
		migrate_enable();
		KUNIT_FAIL(test, "the log went away before the last put");
		dput(dentry);
		return;
	}
	dput(dentry);	/* make_file()'s: only this CPU's pin is left */
	migrate_enable();
	KUNIT_EXPECT_EQ(test, READ_ONCE(dentry->d_lockref.count), 2);
	KUNIT_EXPECT_FALSE(test, READ_ONCE(dentry->d_flags) & DCACHE_LRU_LIST);

	KUNIT_ASSERT_EQ(test, dcache_oplog_switch(false), 0);
	spin_lock(&dentry->d_lock);
	count = dentry->d_lockref.count;
	flags = dentry->d_flags;
	/*
	 * tmpfs's pin back: kill_litter_super() drops one reference of every
	 * hashed positive dentry (d_genocide()), and a count below zero would
	 * keep umount's shrink_dcache_parent() looking for ever.
	 */
	dget_dlock(dentry);
	spin_unlock(&dentry->d_lock);
	KUNIT_EXPECT_EQ(test, count, 0);
	KUNIT_EXPECT_FALSE(test, d_unhashed(dentry));
	KUNIT_EXPECT_TRUE(test, d_really_is_positive(dentry));
	KUNIT_EXPECT_TRUE(test, flags & DCACHE_LRU_LIST);
	KUNIT_EXPECT_TRUE(test, flags & DCACHE_OP_DELETE);
	KUNIT_EXPECT_FALSE(test, flags & DCACHE_REFERENCED);
	KUNIT_EXPECT_EQ(test, dcache_oplog_switch(true), 0);
}

/*
 * The undo of a reference whose d_seq went stale cannot always be logged:
 * if ___d_drop() flushed this CPU's log in between (which is what moved
 * d_seq), the dentry is unhashed and ->attach refuses it.  The reference
 * then stays held, folded into d_lockref (%DCACHE_OPLOG_STALE), and the
 * walk drops it with dput().  The race is played step by step: the
 * increment of dcache_oplog_get(), another CPU's d_drop(), the undo.
 */
static void dcache_oplog_test_stale(struct kunit *test)
{
	struct dentry *dentry = make_file(test, "st");
	enum dcache_oplog_ref ret;
	unsigned int seq;
	int base;

	KUNIT_ASSERT_NOT_NULL(test, dentry);
	base = exact_count(dentry);
	migrate_disable();
	seq = raw_seqcount_begin(&dentry->d_seq);
	if (!get_logged(test, dentry)) {
		migrate_enable();
		dput(dentry);
		return;
	}
	d_drop(dentry);
	KUNIT_EXPECT_TRUE(test, read_seqcount_retry(&dentry->d_seq, seq));
	ret = __dcache_oplog_undo(dentry);
	migrate_enable();
	KUNIT_EXPECT_EQ(test, ret, DCACHE_OPLOG_STALE);
	KUNIT_EXPECT_FALSE(test, oplog_obj_has_logs(&dentry->d_oplog));
	/* the walk's reference is held, in d_lockref */
	KUNIT_EXPECT_EQ(test, READ_ONCE(dentry->d_lockref.count), base + 1);
	if (READ_ONCE(dentry->d_lockref.count) == base + 1)
		dput(dentry);	/* what the walk does with it */
	dput(dentry);
	dput(dentry);	/* tmpfs's pin: unhashed, umount would not drop it */
}

static struct kunit_case dcache_oplog_test_cases[] = {
	KUNIT_CASE(dcache_oplog_test_get_put),
	KUNIT_CASE(dcache_oplog_test_seq_undo),
	KUNIT_CASE(dcache_oplog_test_refuse),
	KUNIT_CASE(dcache_oplog_test_delete),
	KUNIT_CASE(dcache_oplog_test_switch),
	KUNIT_CASE(dcache_oplog_test_hot),
	KUNIT_CASE(dcache_oplog_test_path_get),
	KUNIT_CASE(dcache_oplog_test_dget_parent),
	KUNIT_CASE(dcache_oplog_test_dget_parent_attach),
	KUNIT_CASE(dcache_oplog_test_parent_kill),
	KUNIT_CASE(dcache_oplog_test_ineligible),
	KUNIT_CASE(dcache_oplog_test_unpinned),
	KUNIT_CASE(dcache_oplog_test_stale),
	{}
};

static struct kunit_suite dcache_oplog_test_suite = {
	.name = "dcache_oplog",
	.init = dcache_oplog_test_init,
	.exit = dcache_oplog_test_exit,
	.test_cases = dcache_oplog_test_cases,
};

kunit_test_suite(dcache_oplog_test_suite);

MODULE_DESCRIPTION("KUnit tests of OpLog dentry reference counts");
MODULE_LICENSE("GPL");
