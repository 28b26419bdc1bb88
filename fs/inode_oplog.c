// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU OpLog counts of the files open on hot inodes
 *
 * Every open() and close() writes i_readcount (files open read-only) or
 * i_writecount (write accesses).  On a CPU where the inode is hot
 * (inode_oplog_hot()), both are counted in this CPU's %OPLOG_COUNTER log
 * of the inode instead; the object lock is i_lock.  With delta(c) the
 * count logged on CPU c:
 *
 *	read count  = i_readcount + sum over c of delta(c)
 *	write count = i_writecount + sum over c of delta(c)
 *		      - (%I_WRITECOUNT_BIAS while some CPU holds a log)
 *
 * Rules the code must keep:
 *  - nobody reads i_readcount or i_writecount alone, which may be anything
 *    while logs exist, negative included: readers call i_readcount_read(),
 *    i_writecount_read() or i_writecount_read_locked(), which fold the
 *    logs under i_lock (the filelock tracepoints print i_readcount alone,
 *    as a diagnostic);
 *  - a log holds no pin on the inode: __destroy_inode() folds and detaches
 *    every log under i_lock (inode_oplog_release()), which also waits for
 *    an eviction holding it, and only an open or a close, whose file holds
 *    the inode, attaches a log;
 *  - i_writecount carries %I_WRITECOUNT_BIAS while ->cpus is non-zero:
 *    the first ->attach adds it, and fails while i_writecount is negative
 *    (a user denies write access); i_writecount_settle() takes it off
 *    once the logs are folded and ->cpus is zero.  So a logged write
 *    access needs no sign check, and the lockless deny_write_access()
 *    fails while logs exist and folds them (i_writecount_deny_slow());
 *  - an underflow is checked on the exact sum (__i_readcount_underflow());
 *  - a logged open is a fully ordered atomic add, a reader's fold a fully
 *    ordered exchange, and a miss is serialized with a reader by i_lock,
 *    so readers that order themselves against an open with a full
 *    barrier (the lease code, khugepaged's collapse_file()) still do.
 *
 * Lock ordering:
 *   inode->i_lock		(the OpLog object lock)
 *     OpLog's per-CPU cache and log locks (raw)
 * Another inode's i_lock is only trylocked under a cache lock (an
 * eviction).  The counters' hit paths take no lock.
 *
 * Design: Documentation/core-api/oplog.rst, "Open counts of hot inodes".
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

static struct inode *w_obj_inode(struct oplog_obj *obj)
{
	return container_of(obj, struct inode, i_writecount_oplog);
}

static spinlock_t *i_writecount_oplog_lock(struct oplog_obj *obj)
{
	return &w_obj_inode(obj)->i_lock;
}

/* Add one CPU's logged write accesses into i_writecount. */
static void i_writecount_oplog_fold(struct oplog_obj *obj, long delta)
{
	struct inode *inode = w_obj_inode(obj);

	lockdep_assert_held(&inode->i_lock);
	atomic_add((int)delta, &inode->i_writecount);
}

/*
 * A CPU gets a log of the write count: refused while switched off.  The
 * first log adds the bias, unless a user denies write access; the
 * compare-and-swap orders it against a lockless deny_write_access().
 */
static bool i_writecount_oplog_attach(struct oplog_obj *obj)
{
	struct inode *inode = w_obj_inode(obj);
	int n;

	lockdep_assert_held(&inode->i_lock);
	if (!static_branch_likely(&inode_oplog_key))
		return false;
	if (obj->cpus)
		return true;
	n = atomic_read(&inode->i_writecount);
	do {
		if (n < 0)
			return false;
	} while (!atomic_try_cmpxchg(&inode->i_writecount, &n,
				     n + I_WRITECOUNT_BIAS));
	return true;
}

/*
 * Take the bias off once ->cpus is zero.  Under i_lock the bias is on
 * exactly while ->cpus is non-zero, except between the clearing of the
 * last bit (with every log folded) and this call.  That is where the
 * value tells: with no log, i_writecount is the count itself, far below
 * half the bias, so a flush that calls ->detach once per log it detached
 * takes the bias off once, and a flush that detached none (every bit was
 * stale: with more CPUs than bits in ->cpus an eviction leaves its bit)
 * leaves it to the caller's call here.
 */
static void i_writecount_settle(struct inode *inode)
{
	lockdep_assert_held(&inode->i_lock);
	if (!inode->i_writecount_oplog.cpus &&
	    atomic_read(&inode->i_writecount) >= I_WRITECOUNT_BIAS / 2)
		atomic_sub(I_WRITECOUNT_BIAS, &inode->i_writecount);
}

/*
 * A CPU's log was detached (its delta already folded), or an attach kept
 * no log: the last one takes the bias off.  i_lock held.
 */
static void i_writecount_oplog_detach(struct oplog_obj *obj)
{
	struct inode *inode = w_obj_inode(obj);

	lockdep_assert_held(&inode->i_lock);
	i_writecount_settle(inode);
}

/* Fold and detach every CPU's log of the write count, and the bias. */
static void i_writecount_flush(struct inode *inode)
{
	lockdep_assert_held(&inode->i_lock);
	oplog_flush_locked(&i_writecount_oplog_type, &inode->i_writecount_oplog);
	i_writecount_settle(inode);
}

static const struct oplog_type_ops i_writecount_oplog_ops = {
	.obj_lock	= i_writecount_oplog_lock,
	.fold		= i_writecount_oplog_fold,
	.attach		= i_writecount_oplog_attach,
	.detach		= i_writecount_oplog_detach,
};

struct oplog_type i_writecount_oplog_type = {
	.name	= "i_writecount",
	.kind	= OPLOG_COUNTER,
	.ops	= &i_writecount_oplog_ops,
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
 * log folded and detached, and checked as i_readcount_dec() checks
 * i_readcount without CONFIG_INODE_OPLOG (there with BUG_ON()).
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
 * __i_writecount_inc_miss() - i_writecount_inc() on a CPU without a log
 * @inode: the inode
 *
 * Attaches a log if @inode is hot on this CPU and no user denies write
 * access, else counts the write access in i_writecount unless that is
 * negative.  i_writecount is exact when negative: it carries the bias
 * while any log exists.
 *
 * Context: process context; may take @inode->i_lock; does not sleep.
 * Return: 0, or -ETXTBSY if a user denies write access to @inode.
 */
int __i_writecount_inc_miss(struct inode *inode)
{
	if (in_task() && inode_oplog_hot(inode) &&
	    !oplog_add(&i_writecount_oplog_type, &inode->i_writecount_oplog, 1))
		return 0;
	return atomic_inc_unless_negative(&inode->i_writecount) ? 0 : -ETXTBSY;
}

/**
 * __i_writecount_dec_miss() - i_writecount_dec() on a CPU without a log
 * @inode: the inode
 *
 * Logs the put if some CPU logs @inode's write count, else takes it from
 * i_writecount.
 *
 * Context: process context; may take @inode->i_lock; does not sleep.
 */
void __i_writecount_dec_miss(struct inode *inode)
{
	struct oplog_obj *obj = &inode->i_writecount_oplog;

	if (oplog_obj_has_logs(obj) && in_task() &&
	    !oplog_add(&i_writecount_oplog_type, obj, -1))
		return;
	atomic_dec(&inode->i_writecount);
}

/**
 * get_write_access() - get write access to an inode
 * @inode: the inode
 *
 * Counts a write access (the caller will write, and holds @inode), in
 * this CPU's OpLog counter where @inode is hot.
 *
 * Context: process context; may take @inode->i_lock; does not sleep.
 * Return: 0, or -ETXTBSY if a user denies write access to @inode
 * (deny_write_access()).
 */
int get_write_access(struct inode *inode)
{
	return i_writecount_inc(inode);
}
EXPORT_SYMBOL(get_write_access);

/**
 * put_write_access() - drop what get_write_access() counted
 * @inode: the inode
 *
 * Context: process context; may take @inode->i_lock; does not sleep.
 */
void put_write_access(struct inode *inode)
{
	i_writecount_dec(inode);
}
EXPORT_SYMBOL(put_write_access);

/*
 * The exact write count, i_lock held: fold the logs (which stay
 * attached) and take the bias off, which is on while ->cpus is non-zero.
 */
static int __i_writecount_sum(struct inode *inode)
{
	struct oplog_obj *obj = &inode->i_writecount_oplog;

	lockdep_assert_held(&inode->i_lock);
	if (!oplog_obj_has_logs(obj))
		return atomic_read(&inode->i_writecount);
	oplog_synchronize_locked(&i_writecount_oplog_type, obj);
	return atomic_read(&inode->i_writecount) - I_WRITECOUNT_BIAS;
}

/**
 * i_writecount_deny_slow() - deny_write_access() when i_writecount > 0
 * @inode: the inode
 *
 * i_writecount is positive: writers, or the bias of logged ones (which
 * may outlive the switch: stale bits, see i_writecount_settle()).  Folds
 * the logs under i_lock; if the exact count is positive, write access is
 * in use; else every log is flushed and the bias taken off, and the deny
 * is counted in i_writecount, where later write accesses find it.
 *
 * Context: process context; takes @inode->i_lock; does not sleep.
 * Return: 0 if write access is now denied, -ETXTBSY if a user has it.
 */
int i_writecount_deny_slow(struct inode *inode)
{
	struct oplog_obj *obj = &inode->i_writecount_oplog;
	int ret = -ETXTBSY;

	spin_lock(&inode->i_lock);
	if (oplog_obj_has_logs(obj)) {
		if (__i_writecount_sum(inode) > 0)
			goto out;
		i_writecount_flush(inode);
	}
	if (atomic_dec_unless_positive(&inode->i_writecount))
		ret = 0;
out:
	spin_unlock(&inode->i_lock);
	return ret;
}
EXPORT_SYMBOL(i_writecount_deny_slow);

/**
 * i_writecount_read_locked() - i_writecount_read() with i_lock held
 * @inode: the inode, whose i_lock the caller holds
 *
 * Context: @inode->i_lock held; does not sleep.
 * Return: as i_writecount_read().
 */
int i_writecount_read_locked(struct inode *inode)
{
	lockdep_assert_held(&inode->i_lock);
	return __i_writecount_sum(inode);
}
EXPORT_SYMBOL(i_writecount_read_locked);

/**
 * i_writecount_read() - the write count of an inode
 * @inode: the inode
 *
 * Without the bias, i_writecount is the count.  With it, folds every
 * CPU's logged write accesses into i_writecount under i_lock and reads it
 * without the bias (the thesis's synchronize, section 6.1).  The logs stay
 * attached; the count is not a property of their placement, so a const
 * inode may be passed (inode_is_open_for_write()).
 *
 * Context: process context or any context that may take @inode->i_lock;
 * not with it held (see i_writecount_read_locked()); does not sleep.
 * Return: > 0 for that many write accesses, < 0 for that many users that
 * deny write access, 0 for neither; exact for every get, put, deny and
 * allow that returned before the call.
 */
int i_writecount_read(const struct inode *inode)
{
	struct inode *w = (struct inode *)inode;
	int n;

	/*
	 * No bias: no CPU logged the count when i_writecount had this value
	 * (the bias goes on before the first log and off after the last
	 * fold), so it is the count; an inode never opened for write hot
	 * costs one load, as without CONFIG_INODE_OPLOG.
	 */
	n = atomic_read(&inode->i_writecount);
	if (n < I_WRITECOUNT_BIAS / 2)
		return n;
	spin_lock(&w->i_lock);
	n = __i_writecount_sum(w);
	spin_unlock(&w->i_lock);
	return n;
}
EXPORT_SYMBOL(i_writecount_read);

/**
 * __inode_oplog_release() - inode_oplog_release() with logs possible
 * @inode: the inode being destroyed
 *
 * Takes the object lock even when no log is seen, so that an eviction of
 * one, which holds that lock, is over before @inode is freed.  Leaves
 * both &struct oplog_obj zeroed and i_writecount without the bias, for
 * the next user of the memory (inode_init_always() resets neither).
 *
 * Context: task context, from __destroy_inode(); does not sleep.
 */
void __inode_oplog_release(struct inode *inode)
{
	spin_lock(&inode->i_lock);
	if (oplog_obj_has_logs(&inode->i_readcount_oplog))
		oplog_flush_locked(&i_readcount_oplog_type,
				   &inode->i_readcount_oplog);
	if (oplog_obj_has_logs(&inode->i_writecount_oplog))
		i_writecount_flush(inode);
	WARN_ON_ONCE(atomic_read(&inode->i_readcount));
	WARN_ON_ONCE(atomic_read(&inode->i_writecount) >= I_WRITECOUNT_BIAS / 2);
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
 * inode_oplog_switch() - turn the per-CPU open counts on or off
 * @on: true to count new opens per CPU, false for i_readcount and
 *	i_writecount alone
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
 * Return: 0; -ENODEV if the OpLog types could not be registered at boot.
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
		oplog_type_drain(&i_writecount_oplog_type);
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

/* Logs attached now, of both counts, summed over the CPUs. */
static int inode_oplog_logs_get(void *data, u64 *val)
{
	*val = oplog_type_nr_logs(&i_readcount_oplog_type) +
	       oplog_type_nr_logs(&i_writecount_oplog_type);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(inode_oplog_logs_fops, inode_oplog_logs_get,
			 NULL, "%llu\n");

static int __init inode_oplog_init(void)
{
	struct dentry *dir;
	int err;

	err = oplog_type_register(&i_readcount_oplog_type);
	if (!err) {
		err = oplog_type_register(&i_writecount_oplog_type);
		if (err)
			oplog_type_unregister(&i_readcount_oplog_type);
	}
	if (err) {
		pr_warn("inode_oplog: cannot register the OpLog types: %d\n",
			err);
		return err;
	}
	inode_oplog_registered = true;
	if (inode_oplog_boot_on)
		inode_oplog_switch(true);
	pr_info("inode_oplog: per-CPU open counts %s\n",
		inode_oplog_boot_on ? "on" : "off");

	dir = debugfs_create_dir("inode_oplog", NULL);
	debugfs_create_file_unsafe("enabled", 0600, dir, NULL,
				   &inode_oplog_enabled_fops);
	debugfs_create_file_unsafe("logs", 0400, dir, NULL,
				   &inode_oplog_logs_fops);
	return 0;
}
fs_initcall(inode_oplog_init);
