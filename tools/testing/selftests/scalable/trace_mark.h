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
#include <stdio.h>
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

/* trace_window_report_hits(): the window is not an OpLog mode's. */
#define TRACE_NO_HITS	(-2LL)

/*
 * One line per marked window: the benchmark, its mode, the CPU count, the
 * operations counted in the window and whether the run succeeded; for an
 * "-oplog" mode, @hits is how many operations the mode's OpLog type took
 * meanwhile (-1: its stats could not be read), which the host divides by
 * @served, the operations of the window that the OpLog should have taken,
 * or by @ops where @served is 0 ("served by the OpLog").
 */
static inline void trace_window_report_hits(const char *bench,
					    const char *mode, int cpus,
					    unsigned long long ops, bool ok,
					    long long hits,
					    unsigned long long served)
{
	char extra[64] = "";

	if (!trace_enabled())
		return;
	if (hits != TRACE_NO_HITS && served)
		snprintf(extra, sizeof(extra), " hits=%lld served=%llu", hits,
			 served);
	else if (hits != TRACE_NO_HITS)
		snprintf(extra, sizeof(extra), " hits=%lld", hits);
	ksft_print_msg("TRACE_WINDOW bench=%s mode=%s cpus=%d ops=%llu status=%s%s\n",
		       bench, mode, cpus, ops, ok ? "ok" : "fail", extra);
}

static inline void trace_window_report(const char *bench, const char *mode,
				       int cpus, unsigned long long ops,
				       bool ok)
{
	trace_window_report_hits(bench, mode, cpus, ops, ok, TRACE_NO_HITS, 0);
}

#endif /* SCALABLE_TRACE_MARK_H */
