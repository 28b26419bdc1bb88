/* SPDX-License-Identifier: GPL-2.0 */
/*
 * OpLog reference counts for hot dentries: the interface between
 * fs/dcache.c, fs/namei.c and fs/dcache_oplog.c.  See fs/dcache_oplog.c.
 */
#ifndef _FS_DCACHE_OPLOG_H
#define _FS_DCACHE_OPLOG_H

#include <linux/dcache.h>
#include <linux/jump_label.h>
#include <linux/oplog.h>

/**
 * enum dcache_oplog_ref - outcome of dcache_oplog_get()
 * @DCACHE_OPLOG_STOCK: not taken; take the reference on d_lockref instead
 * @DCACHE_OPLOG_GOT: reference taken on this CPU's counter, @seq still valid
 * @DCACHE_OPLOG_UNDONE: @seq changed after the increment, which was undone;
 *	no reference is held (the thesis's "decrement and retry")
 * @DCACHE_OPLOG_STALE: @seq changed and the undo could not be logged; the
 *	reference is held and must be dropped with dput()
 */
enum dcache_oplog_ref {
	DCACHE_OPLOG_STOCK,
	DCACHE_OPLOG_GOT,
	DCACHE_OPLOG_UNDONE,
	DCACHE_OPLOG_STALE,
};

#ifdef CONFIG_DCACHE_OPLOG

/* Entries of the per-CPU hotness filter, log2 (dcache_oplog_hot()). */
#define DCACHE_OPLOG_RECENT_BITS	8

DECLARE_STATIC_KEY_FALSE(dcache_oplog_key);
DECLARE_STATIC_KEY_FALSE(dcache_oplog_logged_key);

int dcache_oplog_switch(bool on);

enum dcache_oplog_ref __dcache_oplog_get(struct dentry *dentry,
					 unsigned int seq);
bool __dcache_oplog_get_hit(struct dentry *dentry);
bool __dcache_oplog_put(struct dentry *dentry);
#if IS_ENABLED(CONFIG_KUNIT)
bool dcache_oplog_hot(const struct dentry *dentry);
#endif
#if IS_ENABLED(CONFIG_DCACHE_OPLOG_KUNIT_TEST)
void dcache_oplog_hot_reset(void);
#endif
void __dcache_oplog_sync(struct dentry *dentry);

/* fs/dcache.c: @dentry lost its last reference in a detach (d_lock held). */
void d_oplog_unpinned(struct dentry *dentry);

static inline enum dcache_oplog_ref dcache_oplog_get(struct dentry *dentry,
						     unsigned int seq)
{
	if (!static_branch_unlikely(&dcache_oplog_key))
		return DCACHE_OPLOG_STOCK;
	return __dcache_oplog_get(dentry, seq);
}

/*
 * dget() of a dentry that this CPU counts references to, for path_get()
 * and dget_parent(): true if the reference went to this CPU's counter.
 */
static inline bool dcache_oplog_get_hit(struct dentry *dentry)
{
	if (!static_branch_unlikely(&dcache_oplog_key) ||
	    !oplog_obj_has_logs(&dentry->d_oplog))
		return false;
	return __dcache_oplog_get_hit(dentry);
}

static inline bool dcache_oplog_put(struct dentry *dentry)
{
	if (!static_branch_unlikely(&dcache_oplog_key) ||
	    !oplog_obj_has_logs(&dentry->d_oplog))
		return false;
	return __dcache_oplog_put(dentry);
}

/*
 * May some CPU count references to @dentry?  Lockless hint, for
 * fast_dput(): with the switch off and the logs drained it does not read
 * d_oplog (see dcache_oplog_switch()).
 */
static inline bool dcache_oplog_maybe_logged(const struct dentry *dentry)
{
	return static_branch_unlikely(&dcache_oplog_logged_key) &&
	       oplog_obj_has_logs(&dentry->d_oplog);
}

/*
 * Make d_lockref.count exact: fold and detach every CPU's counter.
 * Caller holds d_lock.  Independent of the switch, so that turning it off
 * at run time leaves nothing behind.
 */
static inline void dcache_oplog_sync(struct dentry *dentry)
{
	if (unlikely(oplog_obj_has_logs(&dentry->d_oplog)))
		__dcache_oplog_sync(dentry);
}

#else /* !CONFIG_DCACHE_OPLOG */

static inline enum dcache_oplog_ref dcache_oplog_get(struct dentry *dentry,
						     unsigned int seq)
{
	return DCACHE_OPLOG_STOCK;
}

static inline bool dcache_oplog_get_hit(struct dentry *dentry)
{
	return false;
}

static inline bool dcache_oplog_put(struct dentry *dentry)
{
	return false;
}

static inline bool dcache_oplog_maybe_logged(const struct dentry *dentry)
{
	return false;
}

static inline void dcache_oplog_sync(struct dentry *dentry)
{
}

#endif /* CONFIG_DCACHE_OPLOG */
#endif /* _FS_DCACHE_OPLOG_H */
