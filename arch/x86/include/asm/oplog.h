/* SPDX-License-Identifier: GPL-2.0 */
/*
 * OpLog's timestamp source on x86: the TSC (lib/oplog.c, oplog_clock()).
 */
#ifndef _ASM_X86_OPLOG_H
#define _ASM_X86_OPLOG_H

#include <linux/cpufeature.h>
#include <linux/types.h>
#include <asm/msr.h>
#include <asm/tsc.h>

/* The TSC, ordered against the loads and stores around it. */
static __always_inline u64 arch_oplog_clock(void)
{
	return rdtsc_ordered();
}

/* Has this CPU a TSC at all (what oplog.clock=tsc may force)? */
static inline bool arch_oplog_clock_present(void)
{
	return boot_cpu_has(X86_FEATURE_TSC);
}

/*
 * Is the TSC a timestamp that orders events across CPUs: constant rate,
 * not stopped in idle, and found synchronized at boot?
 */
static inline bool arch_oplog_clock_synced(void)
{
	return boot_cpu_has(X86_FEATURE_TSC) &&
	       boot_cpu_has(X86_FEATURE_CONSTANT_TSC) &&
	       boot_cpu_has(X86_FEATURE_NONSTOP_TSC) &&
	       !unsynchronized_tsc() && !check_tsc_unstable();
}

#endif /* _ASM_X86_OPLOG_H */
