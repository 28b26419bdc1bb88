// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the OpLog open counts (fs/inode_oplog.c), on files of a
 * private kernel-internal tmpfs mount.
 */
#include <kunit/test.h>
#include <linux/cpumask.h>
#include <linux/dcache.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/workqueue.h>

#include "inode_oplog.h"

struct inode_oplog_test {
	struct file_system_type	*fs;
	struct vfsmount		*mnt;
	bool			was_on;
};

static int inode_oplog_test_init(struct kunit *test)
{
	struct inode_oplog_test *t;

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
	t->was_on = static_key_enabled(&inode_oplog_key);
	inode_oplog_switch(true);
	return 0;
}

static void inode_oplog_test_exit(struct kunit *test)
{
	struct inode_oplog_test *t = test->priv;

	/* umount with logged inodes: must neither warn nor leak */
	kern_unmount(t->mnt);
	put_filesystem(t->fs);
	if (!t->was_on)
		inode_oplog_switch(false);
}

/* A new regular file in the root of the test mount, referenced. */
static struct dentry *make_file(struct kunit *test, const char *name)
{
	struct inode_oplog_test *t = test->priv;
	struct dentry *root = t->mnt->mnt_root;
	struct dentry *dentry;
	int err;

	inode_lock(d_inode(root));
	dentry = lookup_one_len(name, root, strlen(name));
	if (IS_ERR(dentry)) {
		inode_unlock(d_inode(root));
		KUNIT_FAIL(test, "lookup %s: %ld", name, PTR_ERR(dentry));
		return NULL;
	}
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

/* Unlink @dentry and drop the caller's reference: the inode is freed. */
static void remove_file(struct kunit *test, struct dentry *dentry)
{
	struct inode_oplog_test *t = test->priv;
	struct inode *dir = d_inode(t->mnt->mnt_root);
	int err;

	inode_lock(dir);
	err = vfs_unlink(&nop_mnt_idmap, dir, dentry, NULL);
	inode_unlock(dir);
	KUNIT_EXPECT_EQ(test, err, 0);
	dput(dentry);
}

static bool logged(struct inode *inode)
{
	return oplog_obj_has_logs(&inode->i_readcount_oplog);
}

static bool w_logged(struct inode *inode)
{
	return oplog_obj_has_logs(&inode->i_writecount_oplog);
}

/* A read-only struct file of @dentry, for deny_write_access(). */
static struct file *open_rdonly(struct kunit *test, struct dentry *dentry)
{
	struct inode_oplog_test *t = test->priv;
	struct path path = { .mnt = t->mnt, .dentry = dentry };
	struct file *f = dentry_open(&path, O_RDONLY, current_cred());

	if (IS_ERR(f)) {
		KUNIT_FAIL(test, "dentry_open: %ld", PTR_ERR(f));
		return NULL;
	}
	return f;
}

/*
 * The first open of an inode on a CPU goes to i_readcount, the second
 * attaches this CPU's log, and later ones hit it; the exact read sums them.
 */
static void inode_oplog_test_hot(struct kunit *test)
{
	struct dentry *dentry = make_file(test, "hot");
	struct inode *inode;

	KUNIT_ASSERT_NOT_NULL(test, dentry);
	inode = d_inode(dentry);
	migrate_disable();
	inode_oplog_hot_reset();
	i_readcount_inc(inode);
	KUNIT_EXPECT_FALSE(test, logged(inode));
	KUNIT_EXPECT_EQ(test, atomic_read(&inode->i_readcount), 1);
	i_readcount_inc(inode);
	i_readcount_inc(inode);
	KUNIT_EXPECT_TRUE(test, logged(inode));
	/* The logged opens wrote no shared count. */
	KUNIT_EXPECT_EQ(test, atomic_read(&inode->i_readcount), 1);
	KUNIT_EXPECT_EQ(test, i_readcount_read(inode), 3);
	i_readcount_dec(inode);
	i_readcount_dec(inode);
	i_readcount_dec(inode);
	KUNIT_EXPECT_EQ(test, i_readcount_read(inode), 0);
	migrate_enable();
	remove_file(test, dentry);
}

/*
 * Cold inodes: a walk that opens each of many files once attaches no log
 * and leaves each count in i_readcount.
 */
static void inode_oplog_test_cold(struct kunit *test)
{
	struct dentry *d[8];
	char name[16];
	int i;

	for (i = 0; i < ARRAY_SIZE(d); i++) {
		snprintf(name, sizeof(name), "cold-%d", i);
		d[i] = make_file(test, name);
		KUNIT_ASSERT_NOT_NULL(test, d[i]);
	}
	migrate_disable();
	inode_oplog_hot_reset();
	for (i = 0; i < ARRAY_SIZE(d); i++)
		i_readcount_inc(d_inode(d[i]));
	for (i = 0; i < ARRAY_SIZE(d); i++) {
		KUNIT_EXPECT_FALSE(test, logged(d_inode(d[i])));
		KUNIT_EXPECT_EQ(test, atomic_read(&d_inode(d[i])->i_readcount), 1);
		i_readcount_dec(d_inode(d[i]));
	}
	migrate_enable();
	for (i = 0; i < ARRAY_SIZE(d); i++) {
		KUNIT_EXPECT_EQ(test, i_readcount_read(d_inode(d[i])), 0);
		remove_file(test, d[i]);
	}
}

struct remote_put {
	struct inode	*inode;
	int		n;
};

static long remote_dec(void *arg)
{
	struct remote_put *rp = arg;
	int i;

	for (i = 0; i < rp->n; i++)
		i_readcount_dec(rp->inode);
	return 0;
}

static long remote_put_write(void *arg)
{
	struct remote_put *rp = arg;
	int i;

	for (i = 0; i < rp->n; i++)
		put_write_access(rp->inode);
	return 0;
}

/*
 * Opens logged on this CPU, closed on another: the other CPU logs the
 * closes (some CPU logs the inode), and the sum is exact.
 */
static void inode_oplog_test_other_cpu(struct kunit *test)
{
	struct dentry *dentry;
	struct remote_put rp;
	struct inode *inode;
	int cpu, other, i;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two online CPUs");
	dentry = make_file(test, "other");
	KUNIT_ASSERT_NOT_NULL(test, dentry);
	inode = d_inode(dentry);
	migrate_disable();
	cpu = smp_processor_id();
	inode_oplog_hot_reset();
	for (i = 0; i < 8; i++)
		i_readcount_inc(inode);
	KUNIT_EXPECT_TRUE(test, logged(inode));
	other = cpumask_any_but(cpu_online_mask, cpu);
	rp.inode = inode;
	rp.n = 6;
	KUNIT_EXPECT_EQ(test, work_on_cpu(other, remote_dec, &rp), 0);
	KUNIT_EXPECT_EQ(test, i_readcount_read(inode), 2);
	rp.n = 2;
	KUNIT_EXPECT_EQ(test, work_on_cpu(other, remote_dec, &rp), 0);
	KUNIT_EXPECT_EQ(test, i_readcount_read(inode), 0);
	migrate_enable();
	remove_file(test, dentry);
}

/*
 * Switching off folds and detaches every log, so that i_readcount alone
 * is exact, and later opens and closes use it.
 */
static void inode_oplog_test_switch(struct kunit *test)
{
	struct dentry *dentry = make_file(test, "switch");
	struct inode *inode;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, dentry);
	inode = d_inode(dentry);
	migrate_disable();
	inode_oplog_hot_reset();
	for (i = 0; i < 5; i++)
		i_readcount_inc(inode);
	migrate_enable();
	KUNIT_EXPECT_TRUE(test, logged(inode));
	KUNIT_EXPECT_EQ(test, inode_oplog_switch(false), 0);
	KUNIT_EXPECT_FALSE(test, logged(inode));
	KUNIT_EXPECT_EQ(test, oplog_type_nr_logs(&i_readcount_oplog_type), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&inode->i_readcount), 5);
	i_readcount_inc(inode);
	KUNIT_EXPECT_EQ(test, atomic_read(&inode->i_readcount), 6);
	for (i = 0; i < 6; i++)
		i_readcount_dec(inode);
	KUNIT_EXPECT_EQ(test, i_readcount_read(inode), 0);
	KUNIT_EXPECT_EQ(test, inode_oplog_switch(true), 0);
	remove_file(test, dentry);
}

/*
 * A destroyed inode leaves no log behind: after its last close the log
 * stays attached, and freeing the inode must detach it.  Draining the type
 * afterwards would apply a stale log to freed memory (KASAN).
 */
static void inode_oplog_test_destroy(struct kunit *test)
{
	struct dentry *dentry = make_file(test, "destroy");
	struct inode *inode;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, dentry);
	inode = d_inode(dentry);
	migrate_disable();
	inode_oplog_hot_reset();
	for (i = 0; i < 3; i++) {
		i_readcount_inc(inode);
		i_readcount_dec(inode);
	}
	migrate_enable();
	KUNIT_EXPECT_TRUE(test, logged(inode));
	remove_file(test, dentry);
	oplog_type_drain(&i_readcount_oplog_type);
}

/* The release path on a live inode: logs folded and detached, count kept. */
static void inode_oplog_test_release(struct kunit *test)
{
	struct dentry *dentry = make_file(test, "release");
	struct inode *inode;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, dentry);
	inode = d_inode(dentry);
	migrate_disable();
	inode_oplog_hot_reset();
	for (i = 0; i < 3; i++)
		i_readcount_inc(inode);
	for (i = 0; i < 3; i++)
		i_readcount_dec(inode);
	migrate_enable();
	KUNIT_EXPECT_TRUE(test, logged(inode));
	inode_oplog_release(inode);
	KUNIT_EXPECT_FALSE(test, logged(inode));
	KUNIT_EXPECT_EQ(test, atomic_read(&inode->i_readcount), 0);
	remove_file(test, dentry);
}

/*
 * Open @dentry @n times with @flags into @f on this CPU, from a cold
 * hotness filter.  Return: how many were opened (< @n after a failure).
 */
static int open_files(struct kunit *test, struct dentry *dentry, int flags,
		      struct file **f, int n)
{
	struct inode_oplog_test *t = test->priv;
	struct path path = { .mnt = t->mnt, .dentry = dentry };
	int i;

	migrate_disable();
	inode_oplog_hot_reset();
	for (i = 0; i < n; i++) {
		f[i] = dentry_open(&path, flags, current_cred());
		if (IS_ERR(f[i])) {
			KUNIT_FAIL(test, "dentry_open: %ld", PTR_ERR(f[i]));
			break;
		}
	}
	migrate_enable();
	return i;
}

/* Real files: open(O_RDONLY) and close go through the counters. */
static void inode_oplog_test_files(struct kunit *test)
{
	struct dentry *dentry = make_file(test, "files");
	struct file *f[4];
	int i;

	KUNIT_ASSERT_NOT_NULL(test, dentry);
	i = open_files(test, dentry, O_RDONLY, f, ARRAY_SIZE(f));
	if (i == ARRAY_SIZE(f)) {
		KUNIT_EXPECT_TRUE(test, logged(d_inode(dentry)));
		KUNIT_EXPECT_EQ(test, i_readcount_read(d_inode(dentry)), 4);
	}
	while (i--)
		__fput_sync(f[i]);
	KUNIT_EXPECT_EQ(test, i_readcount_read(d_inode(dentry)), 0);
	remove_file(test, dentry);
}

/*
 * Write accesses: the second get on a CPU attaches its log and biases
 * i_writecount, so that the lockless deny fails; the slow deny folds the
 * logs and refuses while any write access is counted, then flushes them
 * and denies; a denied inode gets no log, and its gets fail.
 */
static void inode_oplog_test_write_deny(struct kunit *test)
{
	struct dentry *dentry = make_file(test, "wdeny");
	struct inode *inode;
	struct file *f;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, dentry);
	inode = d_inode(dentry);
	f = open_rdonly(test, dentry);
	KUNIT_ASSERT_NOT_NULL(test, f);
	migrate_disable();
	inode_oplog_hot_reset();
	/* Hot already: every get is logged, i_writecount has the bias only. */
	inode_oplog_hot(inode);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, get_write_access(inode), 0);
	KUNIT_EXPECT_TRUE(test, w_logged(inode));
	KUNIT_EXPECT_EQ(test, atomic_read(&inode->i_writecount),
			I_WRITECOUNT_BIAS);
	KUNIT_EXPECT_EQ(test, i_writecount_read(inode), 3);
	KUNIT_EXPECT_TRUE(test, inode_is_open_for_write(inode));
	KUNIT_EXPECT_EQ(test, deny_write_access(f), -ETXTBSY);
	/* A refused deny keeps the logs. */
	KUNIT_EXPECT_TRUE(test, w_logged(inode));
	for (i = 0; i < 3; i++)
		put_write_access(inode);
	KUNIT_EXPECT_EQ(test, i_writecount_read(inode), 0);
	KUNIT_EXPECT_FALSE(test, inode_is_open_for_write(inode));
	KUNIT_EXPECT_EQ(test, deny_write_access(f), 0);
	KUNIT_EXPECT_FALSE(test, w_logged(inode));
	KUNIT_EXPECT_EQ(test, atomic_read(&inode->i_writecount), -1);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, get_write_access(inode), -ETXTBSY);
	KUNIT_EXPECT_FALSE(test, w_logged(inode));
	KUNIT_EXPECT_EQ(test, i_writecount_read(inode), -1);
	allow_write_access(f);
	KUNIT_EXPECT_EQ(test, get_write_access(inode), 0);
	KUNIT_EXPECT_EQ(test, get_write_access(inode), 0);
	KUNIT_EXPECT_TRUE(test, w_logged(inode));
	put_write_access(inode);
	put_write_access(inode);
	migrate_enable();
	KUNIT_EXPECT_EQ(test, i_writecount_read(inode), 0);
	fput(f);
	remove_file(test, dentry);
}

/*
 * Write accesses logged on this CPU and put on another: the other CPU
 * logs the puts, i_writecount alone may go anywhere, and a deny decides
 * on the sum.  i_writecount_read_locked() agrees under i_lock.
 */
static void inode_oplog_test_write_other_cpu(struct kunit *test)
{
	struct dentry *dentry;
	struct remote_put rp;
	struct inode *inode;
	struct file *f;
	int cpu, i;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two online CPUs");
	dentry = make_file(test, "wother");
	KUNIT_ASSERT_NOT_NULL(test, dentry);
	inode = d_inode(dentry);
	f = open_rdonly(test, dentry);
	KUNIT_ASSERT_NOT_NULL(test, f);
	migrate_disable();
	cpu = smp_processor_id();
	inode_oplog_hot_reset();
	for (i = 0; i < 8; i++)
		KUNIT_EXPECT_EQ(test, get_write_access(inode), 0);
	KUNIT_EXPECT_TRUE(test, w_logged(inode));
	rp.inode = inode;
	rp.n = 7;
	KUNIT_EXPECT_EQ(test, work_on_cpu(cpumask_any_but(cpu_online_mask, cpu),
					  remote_put_write, &rp), 0);
	/* The other CPU logged its puts: the shared part did not move. */
	KUNIT_EXPECT_EQ(test, atomic_read(&inode->i_writecount),
			1 + I_WRITECOUNT_BIAS);
	KUNIT_EXPECT_EQ(test, i_writecount_read(inode), 1);
	spin_lock(&inode->i_lock);
	KUNIT_EXPECT_EQ(test, i_writecount_read_locked(inode), 1);
	spin_unlock(&inode->i_lock);
	KUNIT_EXPECT_EQ(test, deny_write_access(f), -ETXTBSY);
	rp.n = 1;
	KUNIT_EXPECT_EQ(test, work_on_cpu(cpumask_any_but(cpu_online_mask, cpu),
					  remote_put_write, &rp), 0);
	KUNIT_EXPECT_EQ(test, deny_write_access(f), 0);
	KUNIT_EXPECT_EQ(test, get_write_access(inode), -ETXTBSY);
	allow_write_access(f);
	migrate_enable();
	KUNIT_EXPECT_EQ(test, i_writecount_read(inode), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&inode->i_writecount), 0);
	fput(f);
	remove_file(test, dentry);
}

/*
 * A stale bit: with more CPUs than bits in ->cpus, an eviction leaves its
 * bit and the bias.  The readers take the bias off, a deny flushes and
 * settles it, and so does the release of the inode.
 */
static void inode_oplog_test_write_stale_bit(struct kunit *test)
{
	struct dentry *dentry = make_file(test, "wstale");
	struct oplog_obj *obj;
	struct inode *inode;
	struct file *f;

	KUNIT_ASSERT_NOT_NULL(test, dentry);
	inode = d_inode(dentry);
	obj = &inode->i_writecount_oplog;
	f = open_rdonly(test, dentry);
	KUNIT_ASSERT_NOT_NULL(test, f);
	KUNIT_ASSERT_FALSE(test, w_logged(inode));
	spin_lock(&inode->i_lock);
	obj->cpus = BIT(BITS_PER_LONG - 1);
	atomic_add(I_WRITECOUNT_BIAS, &inode->i_writecount);
	spin_unlock(&inode->i_lock);
	KUNIT_EXPECT_EQ(test, i_writecount_read(inode), 0);
	KUNIT_EXPECT_FALSE(test, inode_is_open_for_write(inode));
	KUNIT_EXPECT_EQ(test, deny_write_access(f), 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(obj->cpus), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&inode->i_writecount), -1);
	allow_write_access(f);
	/* The release checks that no file is open. */
	__fput_sync(f);

	spin_lock(&inode->i_lock);
	obj->cpus = BIT(BITS_PER_LONG - 1);
	atomic_add(I_WRITECOUNT_BIAS, &inode->i_writecount);
	spin_unlock(&inode->i_lock);
	inode_oplog_release(inode);
	KUNIT_EXPECT_EQ(test, READ_ONCE(obj->cpus), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&inode->i_writecount), 0);
	remove_file(test, dentry);
}

/* Switching off takes the bias off: i_writecount alone is exact again. */
static void inode_oplog_test_write_switch(struct kunit *test)
{
	struct dentry *dentry = make_file(test, "wswitch");
	struct inode *inode;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, dentry);
	inode = d_inode(dentry);
	migrate_disable();
	inode_oplog_hot_reset();
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, get_write_access(inode), 0);
	migrate_enable();
	KUNIT_EXPECT_TRUE(test, w_logged(inode));
	KUNIT_EXPECT_EQ(test, inode_oplog_switch(false), 0);
	KUNIT_EXPECT_FALSE(test, w_logged(inode));
	KUNIT_EXPECT_EQ(test, oplog_type_nr_logs(&i_writecount_oplog_type), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&inode->i_writecount), 4);
	for (i = 0; i < 4; i++)
		put_write_access(inode);
	KUNIT_EXPECT_EQ(test, atomic_read(&inode->i_writecount), 0);
	KUNIT_EXPECT_EQ(test, inode_oplog_switch(true), 0);
	remove_file(test, dentry);
}

/* Real files: open(O_RDWR) and close go through the write counters. */
static void inode_oplog_test_write_files(struct kunit *test)
{
	struct inode_oplog_test *t = test->priv;
	struct dentry *dentry = make_file(test, "wfiles");
	struct path path = { .mnt = t->mnt, .dentry = dentry };
	struct file *f[4], *ro;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, dentry);
	ro = open_rdonly(test, dentry);
	KUNIT_ASSERT_NOT_NULL(test, ro);
	i = open_files(test, dentry, O_RDWR, f, ARRAY_SIZE(f));
	if (i == ARRAY_SIZE(f)) {
		KUNIT_EXPECT_TRUE(test, w_logged(d_inode(dentry)));
		KUNIT_EXPECT_EQ(test, i_writecount_read(d_inode(dentry)), 4);
		KUNIT_EXPECT_EQ(test, deny_write_access(ro), -ETXTBSY);
	}
	while (i--)
		__fput_sync(f[i]);
	KUNIT_EXPECT_EQ(test, i_writecount_read(d_inode(dentry)), 0);
	KUNIT_EXPECT_EQ(test, deny_write_access(ro), 0);
	f[0] = dentry_open(&path, O_RDWR, current_cred());
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(f[0]), -ETXTBSY);
	if (!IS_ERR(f[0]))
		fput(f[0]);
	allow_write_access(ro);
	fput(ro);
	remove_file(test, dentry);
}

static struct kunit_case inode_oplog_test_cases[] = {
	KUNIT_CASE(inode_oplog_test_hot),
	KUNIT_CASE(inode_oplog_test_cold),
	KUNIT_CASE(inode_oplog_test_other_cpu),
	KUNIT_CASE(inode_oplog_test_switch),
	KUNIT_CASE(inode_oplog_test_destroy),
	KUNIT_CASE(inode_oplog_test_release),
	KUNIT_CASE(inode_oplog_test_files),
	KUNIT_CASE(inode_oplog_test_write_deny),
	KUNIT_CASE(inode_oplog_test_write_other_cpu),
	KUNIT_CASE(inode_oplog_test_write_stale_bit),
	KUNIT_CASE(inode_oplog_test_write_switch),
	KUNIT_CASE(inode_oplog_test_write_files),
	{}
};

static struct kunit_suite inode_oplog_test_suite = {
	.name = "inode_oplog",
	.init = inode_oplog_test_init,
	.exit = inode_oplog_test_exit,
	.test_cases = inode_oplog_test_cases,
};

kunit_test_suite(inode_oplog_test_suite);

MODULE_DESCRIPTION("KUnit tests of OpLog open counts");
MODULE_LICENSE("GPL");
