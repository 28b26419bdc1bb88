/* SPDX-License-Identifier: GPL-2.0 */
/*
 * OpLog: the per-object metadata, without the rest of <linux/oplog.h>.
 *
 * Structures that embed &struct oplog_obj (struct dentry) include this
 * header only, so that their headers do not pull in the OpLog interface
 * and its dependencies (<linux/clustered.h>, <linux/qdo.h>, workqueues).
 */
#ifndef _LINUX_OPLOG_TYPES_H
#define _LINUX_OPLOG_TYPES_H

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

#endif /* _LINUX_OPLOG_TYPES_H */
