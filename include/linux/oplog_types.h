/* SPDX-License-Identifier: GPL-2.0 */
/*
 * OpLog: the types embedded in shared objects, without <linux/oplog.h>.
 *
 * Structures that embed &struct oplog_obj or an OpLog operation (struct
 * dentry, struct address_space, struct vm_area_struct) include this header
 * only, so that their headers do not pull in the OpLog interface
 * and its dependencies (<linux/clustered.h>, <linux/qdo.h>, workqueues).
 */
#ifndef _LINUX_OPLOG_TYPES_H
#define _LINUX_OPLOG_TYPES_H

#include <linux/types.h>

/**
 * struct oplog_obj - per-object OpLog metadata, embedded in the shared object
 * @cpus: CPUs that may hold a log of this object, one bit per CPU modulo
 *	BITS_PER_LONG (a superset when there are more CPUs than bits).
 *	Written only with the object lock held (thesis section 7: "a bitmap
 *	stored in the object ... protected by a lock").
 *
 * Cost: one word per object, whatever the number of CPUs.
 */
struct oplog_obj {
	unsigned long		cpus;
};

/**
 * struct oplog_op - one logged update (the thesis's Op)
 * @node: link in a per-CPU log, then in the batch being applied
 * @ts: timestamp from oplog_clock(), set by oplog_queue()
 *
 * Embedded in the caller's structure, so that queueing never allocates;
 * an %OPLOG_ABSORBING type's operations are &struct oplog_keyed_op.  The
 * op belongs to OpLog from oplog_queue() until ->exec or ->absorb is
 * called on it; those callbacks hand it back (they may free it).
 */
struct oplog_op {
	struct list_head	node;
	u64			ts;
};

/**
 * struct oplog_keyed_op - an update of one item of a set
 * @op: what OpLog links and stamps: an %OPLOG_ABSORBING type passes its
 *	address to oplog_queue() and gets it back in ->exec and ->absorb
 * @key: the item (thesis section 5.2.2: operations on one item absorb)
 * @code: %OPLOG_ADD or %OPLOG_REMOVE
 *
 * Only absorbing types carry @key and @code, so that an ordered type's
 * operation (an inotify event) pays for the link and the stamp alone.
 * OpLog reads @key and @code only for a type that absorbs or is stamped;
 * an %OPLOG_UNSTAMPED type without absorption flags may use @code as it
 * likes and change it atomically meanwhile (the file reverse map's
 * hand-off of a removed VMA's free).
 */
struct oplog_keyed_op {
	struct oplog_op		op;
	unsigned long		key;
	unsigned int		code;
};

#endif /* _LINUX_OPLOG_TYPES_H */
