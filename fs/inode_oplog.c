// SPDX-License-Identifier: GPL-2.0
/*
 * OpLog counts of the struct files open read-only on hot inodes.
 *
 * Boyd-Wickizer, "Optimizing Communication Bottlenecks in Multiprocessor
 * Operating System Kernels", PhD thesis, MIT, 2014, sections 4.2 and 6.2:
 * open(O_RDONLY) and close() of one file from every CPU write
 * inode->i_readcount twice per call (do_dentry_open() and __fput()), so its
 * cache line moves on every open and every close, whatever the dentry
 * reference does.  With this file, those counts go to a per-CPU OpLog
 * counter (%OPLOG_COUNTER, <linux/oplog.h>) instead: a hit touches only
 * this CPU's log cache.
 *
 * The count.  With delta(c) the signed count logged on CPU c for inode I,
 *
 *	true count = i_readcount + sum over c of delta(c)
 *
 * and nothing else reads i_readcount: an open counted on one CPU may be
 * closed on another, so i_readcount alone may be anything, negative
 * included, while logs are attached.  Unlike the dentry counter, a log
 * holds no pin: an inode is not kept alive by an idle log (which would
 * keep a deleted file's space until the log is evicted), so
 * __destroy_inode() detaches every CPU's log of it instead
 * (inode_oplog_release()), under the object lock, which an eviction of
 * one of its logs from another inode's miss path holds (it trylocks it
 * with its own log cache's lock held, and the flush needs that lock to
 * detach the log).  A log is attached only by an open or a close, whose
 * file holds the inode (__fput() drops the count before the dentry), so
 * no log is attached after that flush.  The memset of inode_init_once()
 * and that flush leave &struct oplog_obj zeroed for the next user of the
 * memory, as they leave i_readcount.
 *
 * Readers.  i_readcount_read() folds every CPU's count under the object
 * lock (oplog_synchronize_locked()) and reads i_readcount: exact for every
 * open and close that returned before the call, as atomic_read() of the
 * shared count was.  The readers in the tree: the lease check
 * (check_conflicting_open(), whose F_WRLCK lease must fail while another
 * file is open read-only) and IMA's open-for-write violation check.  The
 * lease check pairs with the open side as before: the open's count is a
 * fully ordered atomic add on its log's delta, the reader takes each delta
 * with a fully ordered exchange, and the lease code puts smp_mb() between
 * inserting a lease and reading the count, so either the reader sees the
 * open or the open's break_lease() sees the lease.  The filelock
 * tracepoints show i_readcount alone (a diagnostic).  "make check" runs a
 * coccinelle script (tools/testing/scalable/cocci/i_readcount_readers.cocci)
 * that fails on any other reader of i_readcount.
 *
 * A close whose CPU has no log of the inode logs its decrement if some CPU
 * logs the inode (oplog_obj_has_logs()), and otherwise decrements
 * i_readcount.  If that goes below zero, which an unlogged close after a
 * logged open may do, the logs are folded under the object lock and the
 * underflow check of 6.12 (a BUG, here a warning) is made on the exact sum
 * (__i_readcount_underflow()); so is it after the switch is turned on,
 * for a close that saw it off.  An underflow through logged closes shows
 * at the latest when the inode is destroyed.
 *
 * Which inodes are hot: a CPU attaches a log only on its second miss on
 * an inode with no miss on another inode of the same filter entry in
 * between (inode_oplog_hot()), so that reading many files once (find,
 * grep -r, a build) costs the shared atomic plus one hash and one per-CPU
 * load and store, not a log per file.  Every inode with an i_readcount is
 * eligible, whatever its filesystem: no filesystem reads i_readcount.
 *
 * Memory: one word per inode (struct oplog_obj after i_readcount, on the
 * line of i_count and i_writecount), plus the counter log cache of OpLog:
 * %OPLOG_DEFAULT_SLOTS slots per CPU, each pinning nothing.
 *
 * Switch: "inode_oplog=on|off" on the command line (default on), and
 * /sys/kernel/debug/inode_oplog/enabled at run time (inode_oplog_switch()).
 * inode_oplog_key says whether new opens go to the per-CPU counters,
 * inode_oplog_logged_key whether any log may exist (closes and readers
 * look for logs only then).
 */

#include <kunit/visibility.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/hash.h>
#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "inode_oplog.h"

/* Entries of the per-CPU hotness filter, see inode_oplog_hot(). */
#define INODE_OPLOG_RECENT_BITS	8

DEFINE_STATIC_KEY_FALSE(inode_oplog_key);
DEFINE_STATIC_KEY_FALSE(inode_oplog_logged_key);

static bool inode_oplog_boot_on __initdata = true;
static bool inode_oplog_registered;
static DEFINE_MUTEX(inode_oplog_switch_lock);

static struct inode *obj_inode(struct oplog_obj *obj)
{
	return container_of(obj, struct inode, i_readcount_oplog);
}

/* The object lock of an inode's counter: i_lock, taken by OpLog. */
static spinlock_t *i_readcount_oplog_lock(struct oplog_obj *obj)
{
	return &obj_inode(obj)->i_lock;
}

/* Add one CPU's logged opens into i_readcount. */
static void i_readcount_oplog_fold(struct oplog_obj *obj, long delta)
{
	struct inode *inode = obj_inode(obj);

	lockdep_assert_held(&inode->i_lock);
	atomic_add((int)delta, &inode->i_readcount);
}

/* A CPU gets a log of the inode: refused while switched off. */
static bool i_readcount_oplog_attach(struct oplog_obj *obj)
{
	lockdep_assert_held(&obj_inode(obj)->i_lock);
	return static_branch_likely(&inode_oplog_key);
}

static const struct oplog_type_ops i_readcount_oplog_ops = {
	.obj_lock	= i_readcount_oplog_lock,
	.fold		= i_readcount_oplog_fold,
	.attach		= i_readcount_oplog_attach,
};

/* The inline hit paths of fs/inode_oplog.h use it too. */
struct oplog_type i_readcount_oplog_type = {
	.name	= "i_readcount",
	.kind	= OPLOG_COUNTER,
	.ops	= &i_readcount_oplog_ops,
};

/*
 * The hotness filter: per CPU, a direct-mapped table of the inodes whose
 * open last missed the log cache, one word per entry, indexed by a hash of
 * the inode's address, as fs/dcache_oplog.c does for dentries.  The
 * entries are hints: a stale one costs one premature log or one shared
 * increment, never a wrong count.
 */
static DEFINE_PER_CPU(unsigned long [1 << INODE_OPLOG_RECENT_BITS],
		      inode_oplog_recent);

/**
 * inode_oplog_hot() - has this CPU opened @inode recently?
 * @inode: an inode whose open missed this CPU's log cache
 *
 * Records @inode as this CPU's latest miss in its filter entry.
 *
 * Context: any task context; preemption may be enabled (a migration in
 * between only makes the answer wrong once).
 * Return: true if @inode was the last miss recorded in its entry.
 */
VISIBLE_IF_KUNIT bool inode_oplog_hot(const struct inode *inode)
{
	unsigned long i_addr = (unsigned long)inode;
	unsigned int i = hash_ptr((void *)inode, INODE_OPLOG_RECENT_BITS);

	if (this_cpu_read(inode_oplog_recent[i]) == i_addr)
		return true;
	this_cpu_write(inode_oplog_recent[i], i_addr);
	return false;
}

#if IS_ENABLED(CONFIG_INODE_OPLOG_KUNIT_TEST)
/* KUnit: forget this CPU's recent misses (caller keeps it on this CPU). */
void inode_oplog_hot_reset(void)
{
	unsigned int i;

	for (i = 0; i < 1 << INODE_OPLOG_RECENT_BITS; i++)
		this_cpu_write(inode_oplog_recent[i], 0);
}
#endif

/**
 * __i_readcount_inc_miss() - i_readcount_inc() on a CPU without a log
 * @inode: the inode
 *
 * Attaches a log if @inode is hot on this CPU, else counts the open in
 * i_readcount.
 *
 * Context: process context; may take @inode->i_lock; does not sleep.
 */
void __i_readcount_inc_miss(struct inode *inode)
{
	if (in_task() && inode_oplog_hot(inode) &&
	    !oplog_add(&i_readcount_oplog_type, &inode->i_readcount_oplog, 1))
		return;
	atomic_inc(&inode->i_readcount);
}

/**
 * __i_readcount_dec_miss() - i_readcount_dec() on a CPU without a log
 * @inode: the inode
 *
 * Logs the decrement if some CPU logs @inode, else takes it from
 * i_readcount; checks an underflow on the exact sum.
 *
 * Context: process context; may take @inode->i_lock; does not sleep.
 */
void __i_readcount_dec_miss(struct inode *inode)
{
	struct oplog_obj *obj = &inode->i_readcount_oplog;

	if (oplog_obj_has_logs(obj) && in_task() &&
	    !oplog_add(&i_readcount_oplog_type, obj, -1))
		return;
	if (unlikely(atomic_dec_return(&inode->i_readcount) < 0))
		__i_readcount_underflow(inode);
}

/**
 * __i_readcount_underflow() - i_readcount went below zero: check the sum
 * @inode: the inode
 *
 * A close that is not logged may take i_readcount below zero while the
 * open it drops is still in a CPU's log, or is being folded by another
 * CPU under i_lock (an eviction clears the CPU's bit before it folds).
 * Only the exact sum can underflow: it is taken under i_lock, with every
 * log folded and detached, and checked as i_readcount_dec() of 6.12
 * checked i_readcount (there with BUG_ON()).
 *
 * Context: process context; takes @inode->i_lock; does not sleep.
 */
void __i_readcount_underflow(struct inode *inode)
{
	spin_lock(&inode->i_lock);
	if (oplog_obj_has_logs(&inode->i_readcount_oplog))
		oplog_flush_locked(&i_readcount_oplog_type,
				   &inode->i_readcount_oplog);
	WARN_ON_ONCE(atomic_read(&inode->i_readcount) < 0);
	spin_unlock(&inode->i_lock);
}

/**
 * i_readcount_read() - the number of struct files open read-only on an inode
 * @inode: the inode
 *
 * Folds every CPU's logged count into i_readcount (the thesis's
 * synchronize, section 6.1) and reads it.  The logs stay attached.
 *
 * Context: process context; takes @inode->i_lock, so not with it held
 * (nests inside a lock context's flc_lock); does not sleep.
 * Return: the count, exact for every open and close that returned before
 * the call.
 */
int i_readcount_read(struct inode *inode)
{
	int n;

	if (!static_branch_unlikely(&inode_oplog_logged_key))
		return atomic_read(&inode->i_readcount);
	spin_lock(&inode->i_lock);
	if (oplog_obj_has_logs(&inode->i_readcount_oplog))
		oplog_synchronize_locked(&i_readcount_oplog_type,
					 &inode->i_readcount_oplog);
	n = atomic_read(&inode->i_readcount);
	spin_unlock(&inode->i_lock);
	return n;
}
EXPORT_SYMBOL_GPL(i_readcount_read);

/**
 * __inode_oplog_release() - inode_oplog_release() with logs possible
 * @inode: the inode being destroyed
 *
 * Takes the object lock even when no log is seen, so that an eviction of
 * one, which holds that lock, is over before @inode is freed.
 *
 * Context: task context, from __destroy_inode(); does not sleep.
 */
void __inode_oplog_release(struct inode *inode)
{
	spin_lock(&inode->i_lock);
	if (oplog_obj_has_logs(&inode->i_readcount_oplog))
		oplog_flush_locked(&i_readcount_oplog_type,
				   &inode->i_readcount_oplog);
	WARN_ON_ONCE(atomic_read(&inode->i_readcount));
	spin_unlock(&inode->i_lock);
}

static int __init inode_oplog_setup(char *str)
{
	if (!str)
		return 0;
	if (!strcmp(str, "on"))
		inode_oplog_boot_on = true;
	else if (!strcmp(str, "off"))
		inode_oplog_boot_on = false;
	else
		return 0;
	return 1;
}
__setup("inode_oplog=", inode_oplog_setup);

/**
 * inode_oplog_switch() - turn the per-CPU read-only open counts on or off
 * @on: true to count new opens per CPU, false for i_readcount alone
 *
 * On: inode_oplog_logged_key first (closes and readers look for logs),
 * then inode_oplog_key.  Off: the reverse, with every log detached in
 * between: once inode_oplog_key is off, ->attach (which tests it under
 * i_lock) refuses, synchronize_rcu() waits for the attaches that saw it on
 * (they hold i_lock, a spinlock), and oplog_type_drain() folds and
 * detaches every CPU's log, so that no inode has a per-CPU count when
 * closes stop looking for one.  An add on a log that the drain detached
 * finds it dead and misses (__oplog_add_hit()).
 *
 * Context: process context, sleeps; not with i_lock held.
 * Return: 0; -ENODEV if the OpLog type could not be registered at boot.
 */
int inode_oplog_switch(bool on)
{
	if (!inode_oplog_registered)
		return -ENODEV;
	mutex_lock(&inode_oplog_switch_lock);
	if (on) {
		static_branch_enable(&inode_oplog_logged_key);
		static_branch_enable(&inode_oplog_key);
	} else if (static_key_enabled(&inode_oplog_logged_key)) {
		static_branch_disable(&inode_oplog_key);
		synchronize_rcu();
		oplog_type_drain(&i_readcount_oplog_type);
		static_branch_disable(&inode_oplog_logged_key);
	}
	mutex_unlock(&inode_oplog_switch_lock);
	return 0;
}

static int inode_oplog_enabled_get(void *data, u64 *val)
{
	*val = static_key_enabled(&inode_oplog_key);
	return 0;
}

static int inode_oplog_enabled_set(void *data, u64 val)
{
	if (val > 1)
		return -EINVAL;
	return inode_oplog_switch(val);
}
DEFINE_DEBUGFS_ATTRIBUTE(inode_oplog_enabled_fops, inode_oplog_enabled_get,
			 inode_oplog_enabled_set, "%llu\n");

/* Logs attached now, summed over the CPUs. */
static int inode_oplog_logs_get(void *data, u64 *val)
{
	*val = oplog_type_nr_logs(&i_readcount_oplog_type);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(inode_oplog_logs_fops, inode_oplog_logs_get,
			 NULL, "%llu\n");

static int __init inode_oplog_init(void)
{
	struct dentry *dir;
	int err;

	err = oplog_type_register(&i_readcount_oplog_type);
	if (err) {
		pr_warn("inode_oplog: cannot register the OpLog type: %d\n",
			err);
		return err;
	}
	inode_oplog_registered = true;
	if (inode_oplog_boot_on)
		inode_oplog_switch(true);
	pr_info("inode_oplog: per-CPU read-only open counts %s\n",
		inode_oplog_boot_on ? "on" : "off");

	dir = debugfs_create_dir("inode_oplog", NULL);
	debugfs_create_file_unsafe("enabled", 0600, dir, NULL,
				   &inode_oplog_enabled_fops);
	debugfs_create_file_unsafe("logs", 0400, dir, NULL,
				   &inode_oplog_logs_fops);
	return 0;
}
fs_initcall(inode_oplog_init);
