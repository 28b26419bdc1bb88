/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The hit paths of the per-CPU open counts (fs/inode_oplog.c), inline in
 * do_dentry_open(), alloc_file() and __fput().  Private to fs/; readers
 * outside it call i_readcount_read() and i_writecount_read(), and other
 * writers get_write_access() and put_write_access() (<linux/fs.h>).
 */
#ifndef _FS_INODE_OPLOG_H
#define _FS_INODE_OPLOG_H

#include <linux/fs.h>

#ifdef CONFIG_INODE_OPLOG
#include <linux/bug.h>
#include <linux/jump_label.h>
#include <linux/oplog.h>

/*
 * Added to i_writecount while any CPU logs the inode's write count: far
 * above any count of struct files (each costs memory), far below INT_MAX.
 */
#define I_WRITECOUNT_BIAS	0x20000000	/* 2^29, an int */

DECLARE_STATIC_KEY_FALSE(inode_oplog_key);
DECLARE_STATIC_KEY_FALSE(inode_oplog_logged_key);
extern struct oplog_type i_readcount_oplog_type;
extern struct oplog_type i_writecount_oplog_type;

void __i_readcount_inc_miss(struct inode *inode);
void __i_readcount_dec_miss(struct inode *inode);
int __i_writecount_inc_miss(struct inode *inode);
void __i_writecount_dec_miss(struct inode *inode);
void __inode_oplog_release(struct inode *inode);
void __i_readcount_underflow(struct inode *inode);
int inode_oplog_switch(bool on);

#if IS_ENABLED(CONFIG_KUNIT)
bool inode_oplog_hot(const struct inode *inode);
#endif
#if IS_ENABLED(CONFIG_INODE_OPLOG_KUNIT_TEST)
void inode_oplog_hot_reset(void);
#endif

/**
 * i_readcount_inc() - count a struct file open read-only on @inode
 * @inode: the inode, held by the caller's file
 *
 * On a CPU that holds a log of @inode, the count goes to this CPU's OpLog
 * counter and no shared line is written; elsewhere, __i_readcount_inc_miss()
 * logs it if @inode is hot here, or adds it to i_readcount.
 *
 * Context: process context; may take @inode->i_lock on a miss.
 */
static __always_inline void i_readcount_inc(struct inode *inode)
{
	if (static_branch_unlikely(&inode_oplog_key)) {
		if (likely(oplog_add_hit(&i_readcount_oplog_type,
					 &inode->i_readcount_oplog, 1)))
			return;
		__i_readcount_inc_miss(inode);
		return;
	}
	atomic_inc(&inode->i_readcount);
}

/**
 * i_readcount_dec() - drop what i_readcount_inc() counted
 * @inode: the inode
 *
 * The open may have been counted on any CPU, logged or not: only the sum
 * matters (see the comment at the top of fs/inode_oplog.c).
 *
 * Context: process context (__fput()); may take @inode->i_lock on a miss.
 */
static __always_inline void i_readcount_dec(struct inode *inode)
{
	if (static_branch_unlikely(&inode_oplog_logged_key)) {
		if (likely(oplog_add_hit(&i_readcount_oplog_type,
					 &inode->i_readcount_oplog, -1)))
			return;
		__i_readcount_dec_miss(inode);
		return;
	}
	/* Below zero may be another CPU's fold in flight: check the sum. */
	if (unlikely(atomic_dec_return(&inode->i_readcount) < 0))
		__i_readcount_underflow(inode);
}

/**
 * i_writecount_inc() - get_write_access(), inline for the open path
 * @inode: the inode, held by the caller's file
 *
 * On a CPU that holds a log of @inode's write count, the write access is
 * counted in this CPU's OpLog counter: a log exists only while no user
 * denies write access (see the comment at the top of fs/inode_oplog.c).
 * Elsewhere __i_writecount_inc_miss() logs it if @inode is hot here, or
 * counts it in i_writecount unless that is negative.  Fully ordered, as
 * atomic_inc_unless_negative() is (do_dentry_open() relies on it).
 *
 * Context: process context; may take @inode->i_lock on a miss.
 * Return: 0, or -ETXTBSY if a user denies write access to @inode.
 */
static __always_inline int i_writecount_inc(struct inode *inode)
{
	if (static_branch_unlikely(&inode_oplog_key)) {
		if (likely(oplog_add_hit(&i_writecount_oplog_type,
					 &inode->i_writecount_oplog, 1)))
			return 0;
		return __i_writecount_inc_miss(inode);
	}
	return atomic_inc_unless_negative(&inode->i_writecount) ? 0 : -ETXTBSY;
}

/**
 * i_writecount_dec() - put_write_access(), inline for __fput()
 * @inode: the inode
 *
 * Context: process context; may take @inode->i_lock on a miss.
 */
static __always_inline void i_writecount_dec(struct inode *inode)
{
	if (static_branch_unlikely(&inode_oplog_logged_key)) {
		if (likely(oplog_add_hit(&i_writecount_oplog_type,
					 &inode->i_writecount_oplog, -1)))
			return;
		__i_writecount_dec_miss(inode);
		return;
	}
	atomic_dec(&inode->i_writecount);
}

/**
 * inode_oplog_release() - detach every CPU's log of an inode being destroyed
 * @inode: the inode
 *
 * Context: task context, from __destroy_inode(); does not sleep.
 */
static inline void inode_oplog_release(struct inode *inode)
{
	/* Switched off, stale bits (and the bias) may be left: clear them. */
	if (static_branch_unlikely(&inode_oplog_logged_key) ||
	    oplog_obj_has_logs(&inode->i_readcount_oplog) ||
	    oplog_obj_has_logs(&inode->i_writecount_oplog))
		__inode_oplog_release(inode);
}
#else
static inline int i_writecount_inc(struct inode *inode)
{
	return get_write_access(inode);
}

static inline void i_writecount_dec(struct inode *inode)
{
	put_write_access(inode);
}

static inline void inode_oplog_release(struct inode *inode)
{
}
#endif /* CONFIG_INODE_OPLOG */

#endif /* _FS_INODE_OPLOG_H */
