// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU OpLog reference counts for hot dentries
 *
 * The reference that path lookup takes on the final component
 * (legitimize_path()), dget_parent()'s and, on a CPU that already logs the
 * dentry, path_get()'s are counted in this CPU's %OPLOG_COUNTER log of the
 * dentry instead of d_lockref, and so is every dput() of a dentry that
 * some CPU logs.  The object lock is d_lock.  With A the number of CPUs
 * holding a log of a dentry and delta(c) the count logged on CPU c:
 *
 *	true count = d_lockref.count - A + sum over c of delta(c)
 *
 * Each attached log holds one pin on d_lockref.count (->attach takes it,
 * ->detach drops it, under d_lock), so a logged dentry is never killed.
 * Rules the code must keep:
 *  - whoever needs the exact count calls dcache_oplog_sync() under d_lock
 *    first: fast_dput() and lock_for_kill(), d_delete(), d_prune_aliases(),
 *    the LRU shrinker, shrink_dcache_parent(), umount_check(),
 *    dget_parent()'s slow path and ___d_drop();
 *  - a put on d_lockref of a dentry that some CPU may log folds the logs
 *    first (fast_dput()): the shared part never drops below the pins;
 *  - only a hashed, positive, non-root dentry of a superblock with
 *    %SB_I_DCACHE_OPLOG and without the d_flags of %DCACHE_OPLOG_NEVER
 *    gets a log (dcache_oplog_attach()), and a filesystem that reads
 *    d_count() or d_lockref.count must not set %SB_I_DCACHE_OPLOG;
 *  - the reference is counted before d_seq is re-checked, and ___d_drop()
 *    flushes before it invalidates d_seq, so a reference taken on a dying
 *    dentry is either folded by that flush or undone after the re-check;
 *  - nothing is killed or freed inside OpLog: a dentry whose last
 *    reference was a pin dropped by ->detach is hashed, and
 *    d_oplog_unpinned() keeps it on the LRU;
 *  - dcache_oplog_logged_key is on whenever a log may exist, so that
 *    fast_dput() may skip d_oplog while it is off (dcache_oplog_switch()).
 *
 * Lock ordering:
 *   dentry->d_lock		(the OpLog object lock)
 *     OpLog's per-CPU cache and log locks (raw)
 * Another dentry's d_lock is only trylocked under a cache lock (an
 * eviction).  The counter's hit path takes no lock.
 *
 * Design: Documentation/core-api/oplog.rst, "Dentry reference counts".
 */

#include <kunit/visibility.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/hash.h>
#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/seqlock.h>
#include <linux/spinlock.h>
#include <linux/stddef.h>
#include <linux/string.h>

#include "dcache_oplog.h"

/* d_flags that make a dentry ineligible for per-CPU reference counts. */
#define DCACHE_OPLOG_NEVER	(DCACHE_OP_REVALIDATE | DCACHE_OP_WEAK_REVALIDATE | \
				 DCACHE_OP_REAL | DCACHE_DISCONNECTED | \
				 DCACHE_DONTCACHE | DCACHE_NEED_AUTOMOUNT | \
				 DCACHE_MANAGE_TRANSIT | DCACHE_PAR_LOOKUP)

DEFINE_STATIC_KEY_FALSE(dcache_oplog_key);
DEFINE_STATIC_KEY_FALSE(dcache_oplog_logged_key);

static bool dcache_oplog_boot_on __initdata = true;
static bool dcache_oplog_registered;
static DEFINE_MUTEX(dcache_oplog_switch_lock);

static struct dentry *obj_dentry(struct oplog_obj *obj)
{
	return container_of(obj, struct dentry, d_oplog);
}

/* The object lock of a dentry's counter: d_lock, taken by OpLog. */
static spinlock_t *dcache_oplog_lock(struct oplog_obj *obj)
{
	return &obj_dentry(obj)->d_lock;
}

/*
 * Add one CPU's logged references into d_lockref.count.  d_lock is held,
 * so the lockless lockref paths (which need the lock free) never see the
 * transient value while several CPUs are folded one after the other.
 */
static void dcache_oplog_fold(struct oplog_obj *obj, long delta)
{
	struct dentry *dentry = obj_dentry(obj);

	lockdep_assert_held(&dentry->d_lock);
	dentry->d_lockref.count += (int)delta;
}

/* Visible to KUnit: the root is refused here and nowhere else. */
VISIBLE_IF_KUNIT bool dcache_oplog_eligible(const struct dentry *dentry)
{
	unsigned int flags = READ_ONCE(dentry->d_flags);

	return (dentry->d_sb->s_iflags & SB_I_DCACHE_OPLOG) &&
	       !(flags & DCACHE_OPLOG_NEVER) &&
	       (flags & DCACHE_ENTRY_TYPE) != DCACHE_MISS_TYPE &&
	       !IS_ROOT(dentry);
}

/* A CPU gets a log of the dentry: pin it, unless it is dying. */
static bool dcache_oplog_attach(struct oplog_obj *obj)
{
	struct dentry *dentry = obj_dentry(obj);

	lockdep_assert_held(&dentry->d_lock);
	/* Switched off: dcache_oplog_switch() is draining every log. */
	if (!static_branch_unlikely(&dcache_oplog_key))
		return false;
	if (dentry->d_lockref.count < 0 || d_unhashed(dentry) ||
	    !dcache_oplog_eligible(dentry))
		return false;
	dentry->d_lockref.count++;
	return true;
}

/*
 * A CPU's log is gone, its references folded: drop its pin.  This may be
 * the last reference, dropped inside OpLog (with d_lock, and in an
 * eviction another dentry's d_lock, held), where the dentry cannot be
 * killed; it is hashed and eligible (see the comment at the top), so it
 * is kept on the LRU as dput() would keep it.
 */
static void dcache_oplog_detach(struct oplog_obj *obj)
{
	struct dentry *dentry = obj_dentry(obj);

	lockdep_assert_held(&dentry->d_lock);
	if (WARN_ON_ONCE(dentry->d_lockref.count <= 0))
		return;
	if (!--dentry->d_lockref.count)
		d_oplog_unpinned(dentry);
}

static const struct oplog_type_ops dcache_oplog_ops = {
	.obj_lock	= dcache_oplog_lock,
	.fold		= dcache_oplog_fold,
	.attach		= dcache_oplog_attach,
	.detach		= dcache_oplog_detach,
};

/* The inline hit paths of fs/dcache_oplog.h use it too. */
struct oplog_type dcache_oplog_type = {
	.name	= "dentry",
	.kind	= OPLOG_COUNTER,
	.ops	= &dcache_oplog_ops,
};

/*
 * The hotness filter: per CPU, a direct-mapped table of the dentries whose
 * reference last missed the log cache, one word per entry, indexed by a
 * hash of the dentry's address.  A miss on a dentry that is in its entry
 * finds it hot and attaches a log; any other miss records the dentry and
 * takes a lockref reference.  So a CPU logs a dentry from its second miss
 * on it within the last few hundred misses of other dentries that hash to
 * the same entry, and a walk of more distinct names than the log cache
 * holds never attaches, evicts or takes d_lock for them: it costs the
 * lockref path plus this lookup.  The entries are hints: a stale one (a
 * freed dentry whose address is reused, or a race with migration) costs
 * one premature log or one lockref reference, never a wrong count.
 */
static DEFINE_PER_CPU(unsigned long [1 << DCACHE_OPLOG_RECENT_BITS],
		      dcache_oplog_recent);

/**
 * dcache_oplog_hot() - has this CPU referenced @dentry recently?
 * @dentry: a dentry whose reference missed this CPU's log cache
 *
 * Records @dentry as this CPU's latest miss in its filter entry.
 *
 * Context: any task context; preemption may be enabled (a migration in
 * between only makes the answer wrong once).
 * Return: true if @dentry was the last miss recorded in its entry.
 */
VISIBLE_IF_KUNIT bool dcache_oplog_hot(const struct dentry *dentry)
{
	unsigned long d = (unsigned long)dentry;
	unsigned int i = hash_ptr((void *)dentry, DCACHE_OPLOG_RECENT_BITS);

	if (this_cpu_read(dcache_oplog_recent[i]) == d)
		return true;
	this_cpu_write(dcache_oplog_recent[i], d);
	return false;
}

#if IS_ENABLED(CONFIG_DCACHE_OPLOG_KUNIT_TEST)
/* KUnit: forget this CPU's recent misses (caller keeps it on this CPU). */
void dcache_oplog_hot_reset(void)
{
	unsigned int i;

	for (i = 0; i < 1 << DCACHE_OPLOG_RECENT_BITS; i++)
		this_cpu_write(dcache_oplog_recent[i], 0);
}
#endif

/**
 * __dcache_oplog_undo() - undo a reference taken against a stale d_seq
 * @dentry: the dentry whose d_seq changed after the reference was taken
 *
 * The thesis's "decrement and retry" (section 4.2), out of line: it is
 * rare.
 *
 * Context: task context; the reference it drops keeps @dentry alive, so
 * it needs no RCU read lock of its own (the KUnit suite calls it without
 * one); may take d_lock on a log cache miss; does not sleep.
 * Return: %DCACHE_OPLOG_UNDONE if the reference was dropped again,
 * %DCACHE_OPLOG_STALE if the decrement could not be logged and the
 * reference is still held (dput() it).
 */
enum dcache_oplog_ref __dcache_oplog_undo(struct dentry *dentry)
{
	if (!oplog_add(&dcache_oplog_type, &dentry->d_oplog, -1))
		return DCACHE_OPLOG_UNDONE;
	return DCACHE_OPLOG_STALE;
}

/**
 * __dcache_oplog_get_miss() - dcache_oplog_get() of a dentry not logged here
 * @dentry: the dentry found by RCU-walk
 * @seq: the d_seq value the walk validated @dentry with
 *
 * The miss path of dcache_oplog_get(): this CPU has no log of @dentry.  It
 * gets one only if the dentry is hot here (dcache_oplog_hot()) and
 * eligible; a cold one takes a lockref reference.  The eligibility check
 * is made only for a hot dentry, so that a cold one costs no read of d_sb
 * (the dentry's second cache line, which the lockref walk does not read); a
 * hit needs none, as ->attach made it and the log is still attached.
 *
 * Context: under rcu_read_lock() (RCU-walk); may take d_lock on a log
 * cache miss of a hot dentry; does not sleep.
 * Return: as dcache_oplog_get().
 */
enum dcache_oplog_ref __dcache_oplog_get_miss(struct dentry *dentry,
					      unsigned int seq)
{
	lockdep_assert_in_rcu_read_lock();
	if (!dcache_oplog_hot(dentry) || !dcache_oplog_eligible(dentry) ||
	    oplog_add(&dcache_oplog_type, &dentry->d_oplog, 1))
		return DCACHE_OPLOG_LOCKREF;
	if (!read_seqcount_retry(&dentry->d_seq, seq))
		return DCACHE_OPLOG_GOT;
	return __dcache_oplog_undo(dentry);
}

/**
 * __dcache_oplog_get_parent_miss() - dcache_oplog_get_parent() on a miss
 * @dentry: the parent, read under rcu_read_lock(); no reference is held
 *
 * Attaches this CPU's log of @dentry and takes the reference on it if
 * @dentry is hot here and eligible; ->attach pins @dentry under its
 * d_lock unless it is dying or unhashed.
 *
 * Context: under rcu_read_lock(); may take @dentry->d_lock; does not sleep.
 * Return: true if the reference was taken, false if the caller must take
 * it on d_lockref.
 */
bool __dcache_oplog_get_parent_miss(struct dentry *dentry)
{
	lockdep_assert_in_rcu_read_lock();
	return in_task() && dcache_oplog_hot(dentry) &&
	       dcache_oplog_eligible(dentry) &&
	       !oplog_add(&dcache_oplog_type, &dentry->d_oplog, 1);
}

/**
 * __dcache_oplog_put() - drop a reference through this CPU's counter
 * @dentry: a dentry the caller holds a reference to, logged by some CPU
 *
 * The miss path of dcache_oplog_put(): this CPU has no log of @dentry (or
 * lost it meanwhile), so one is attached for it, or the decrement is
 * folded at once.  The reference may have been taken on any CPU's counter
 * or on d_lockref: only the sum matters.  Never the last put that kills: a
 * logged dentry is pinned until a synchronize point flushes it.
 *
 * Context: process context; may take d_lock on a log cache miss.
 * Return: true if the reference was dropped, false if the caller must
 * drop it through the lockref path of dput() (OpLog refused the dentry).
 */
bool __dcache_oplog_put(struct dentry *dentry)
{
	return !oplog_add(&dcache_oplog_type, &dentry->d_oplog, -1);
}

/**
 * __dcache_oplog_sync() - make d_lockref.count exact
 * @dentry: the dentry
 *
 * Fold every CPU's count into d_lockref.count and detach every log
 * (oplog_flush_locked()), dropping their pins; the dentry may be left with
 * a count of zero on the LRU (see dcache_oplog_detach()).
 *
 * Context: d_lock of @dentry held; does not sleep.
 */
void __dcache_oplog_sync(struct dentry *dentry)
{
	lockdep_assert_held(&dentry->d_lock);
	oplog_flush_locked(&dcache_oplog_type, &dentry->d_oplog);
}

static int __init dcache_oplog_setup(char *str)
{
	if (!str)
		return 0;
	if (!strcmp(str, "on"))
		dcache_oplog_boot_on = true;
	else if (!strcmp(str, "off"))
		dcache_oplog_boot_on = false;
	else
		return 0;
	return 1;
}
__setup("dcache_oplog=", dcache_oplog_setup);

static int dcache_oplog_enabled_get(void *data, u64 *val)
{
	*val = static_key_enabled(&dcache_oplog_key);
	return 0;
}

/**
 * dcache_oplog_switch() - turn the per-CPU dentry reference counts on or off
 * @on: true to count new references per CPU, false for the lockref path
 *
 * On: dcache_oplog_logged_key first (fast_dput() checks d_oplog), then
 * dcache_oplog_key (references go to the per-CPU counters).  Off: the
 * reverse, with every log detached in between: once dcache_oplog_key is
 * off, ->attach refuses, synchronize_rcu() waits for the path walks that
 * saw it on, and oplog_type_drain() folds and detaches every CPU's log,
 * retrying the dentries whose d_lock was busy, so that no dentry has a
 * per-CPU count when fast_dput() stops looking for one.
 *
 * Context: process context, sleeps; not with d_lock or i_rwsem held.
 * Return: 0; -ENODEV if the OpLog type could not be registered at boot.
 */
int dcache_oplog_switch(bool on)
{
	if (!dcache_oplog_registered)
		return -ENODEV;
	mutex_lock(&dcache_oplog_switch_lock);
	if (on) {
		static_branch_enable(&dcache_oplog_logged_key);
		static_branch_enable(&dcache_oplog_key);
	} else if (static_key_enabled(&dcache_oplog_logged_key)) {
		static_branch_disable(&dcache_oplog_key);
		synchronize_rcu();
		oplog_type_drain(&dcache_oplog_type);
		static_branch_disable(&dcache_oplog_logged_key);
	}
	mutex_unlock(&dcache_oplog_switch_lock);
	return 0;
}

static int dcache_oplog_enabled_set(void *data, u64 val)
{
	if (val > 1)
		return -EINVAL;
	return dcache_oplog_switch(val);
}
DEFINE_DEBUGFS_ATTRIBUTE(dcache_oplog_enabled_fops, dcache_oplog_enabled_get,
			 dcache_oplog_enabled_set, "%llu\n");

/* Pins held by per-CPU logs: one per log, summed over the CPUs now. */
static int dcache_oplog_pinned_get(void *data, u64 *val)
{
	*val = oplog_type_nr_logs(&dcache_oplog_type);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(dcache_oplog_pinned_fops, dcache_oplog_pinned_get,
			 NULL, "%llu\n");

static int __init dcache_oplog_init(void)
{
	struct dentry *dir;
	int err;

	/* d_oplog is the last word of the inline name, before d_op. */
	BUILD_BUG_ON(offsetof(struct dentry, d_oplog) !=
		     offsetof(struct dentry, d_iname) + DNAME_INLINE_LEN);
	BUILD_BUG_ON(offsetof(struct dentry, d_op) !=
		     offsetof(struct dentry, d_oplog) + sizeof(struct oplog_obj));
	if (IS_ENABLED(CONFIG_64BIT) && sizeof(spinlock_t) == 4) {
		/* 128 + 64 bytes, d_oplog on line 1, d_lockref on line 2. */
		BUILD_BUG_ON(offsetof(struct dentry, d_oplog) / 64 != 1);
		BUILD_BUG_ON(offsetof(struct dentry, d_lockref) != 128);
		BUILD_BUG_ON(sizeof(struct dentry) != 192);
	}

	err = oplog_type_register(&dcache_oplog_type);
	if (err) {
		pr_warn("dcache_oplog: cannot register the OpLog type: %d\n",
			err);
		return err;
	}
	dcache_oplog_registered = true;
	if (dcache_oplog_boot_on)
		dcache_oplog_switch(true);
	pr_info("dcache_oplog: per-CPU dentry reference counts %s\n",
		dcache_oplog_boot_on ? "on" : "off");

	dir = debugfs_create_dir("dcache_oplog", NULL);
	debugfs_create_file_unsafe("enabled", 0600, dir, NULL,
				   &dcache_oplog_enabled_fops);
	debugfs_create_file_unsafe("logs", 0400, dir, NULL,
				   &dcache_oplog_pinned_fops);
	return 0;
}
fs_initcall(dcache_oplog_init);
