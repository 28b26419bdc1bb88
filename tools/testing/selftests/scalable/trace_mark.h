/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Measurement-window markers for an instruction-level tracer.
 *
 * A benchmark brackets its measured phase with trace_window_start() and
 * trace_window_stop().  On hardware each is one multi-byte no-op
 * ("nopl 0x0c2c000N(%rax)"), costs nothing and changes nothing.  Under
 * QEMU TCG with the harness's cache-line transfer plugin
 * (tools/testing/scalable/c2c/, not part of the kernel), the plugin
 * recognises the instruction and counts cache-line transfers, conflict
 * lines and instructions between the two marks, so that the host can
 * divide them by the operations the benchmark counted in that window.
 *
 * Only one window is open at a time, machine-wide: a program must close its
 * window before another one opens (the benchmarks run one at a time).
 * When the environment has SCALABLE_TRACE set, trace_window_report() prints
 * one "TRACE_WINDOW" line per window in the order the windows were marked,
 * which is how the host joins the plugin's records to the operation counts.
 */
#ifndef SCALABLE_TRACE_MARK_H
#define SCALABLE_TRACE_MARK_H

#include <stdbool.h>
#include <stdlib.h>

#include "../kselftest.h"

static inline void trace_window_start(void)
{
#if defined(__x86_64__)
	asm volatile("nopl 0x0c2c0001(%%rax)" ::: "memory");
#elif defined(__i386__)
	asm volatile("nopl 0x0c2c0001(%%eax)" ::: "memory");
#endif
}

static inline void trace_window_stop(void)
{
#if defined(__x86_64__)
	asm volatile("nopl 0x0c2c0002(%%rax)" ::: "memory");
#elif defined(__i386__)
	asm volatile("nopl 0x0c2c0002(%%eax)" ::: "memory");
#endif
}

static inline bool trace_enabled(void)
{
	return !!getenv("SCALABLE_TRACE");
}

/*
 * One line per marked window: the benchmark, its mode, the CPU count, the
 * operations counted in the window and whether the run succeeded.
 */
static inline void trace_window_report(const char *bench, const char *mode,
				       int cpus, unsigned long long ops,
				       bool ok)
{
	if (trace_enabled())
		ksft_print_msg("TRACE_WINDOW bench=%s mode=%s cpus=%d ops=%llu status=%s\n",
			       bench, mode, cpus, ops, ok ? "ok" : "fail");
}

#endif /* SCALABLE_TRACE_MARK_H */
