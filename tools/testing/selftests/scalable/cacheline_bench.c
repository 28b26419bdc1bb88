// SPDX-License-Identifier: GPL-2.0
/*
 * cacheline_bench: what moving one cache line between CPUs costs here.
 *
 * The yardstick for the other benchmarks: each of them claims that its
 * update path does or does not move cache lines between CPUs, and this one
 * moves them on purpose.  One process per CPU, pinned, increments a 64-bit
 * counter in the benchmark engine's shared mapping:
 *
 *   shared   one counter for all workers, incremented with an atomic add
 *	      (every increment takes the line from the CPU that did the
 *	      last one: one transfer per operation when the CPUs interleave);
 *   packed   one counter per worker, the counters next to each other, eight
 *	      to a line (false sharing: no datum is shared, the line is);
 *   padded   one counter per worker, each on a line of its own (the
 *	      share-nothing floor: no transfer at all).
 *
 * On hardware the three modes' ops/ms show the cost of a transfer against
 * the floor.  Under the harness's cache-line tracer (make trace) they are
 * the instrument's check: shared and packed must show transfers, padded
 * none.  Each worker checks at the end that its own increments all landed
 * (padded, packed; the shared total mixes every worker's).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <string.h>

#include "../kselftest.h"
#include "bench.h"

enum { MODE_SHARED, MODE_PACKED, MODE_PADDED };

static const char * const mode_names[] = { "shared", "packed", "padded" };

/* Shared area: the shared counter's line, then one line per worker. */
#define CL_WORDS	(BENCH_CACHELINE / sizeof(__u64))

static size_t cl_extra_size(int max_cpus)
{
	return BENCH_CACHELINE * (1 + max_cpus);
}

static int cl_init(void)
{
	int i;

	for (i = MODE_SHARED; i <= MODE_PADDED; i++)
		if (bench_add_mode(mode_names[i], i))
			return -1;
	return 0;
}

static int cl_prepare_run(struct bench_ctl *ctl)
{
	memset(bench_extra(ctl), 0, ctl->extra_size);
	return 0;
}

static __u64 *cl_counter(struct bench_worker *w)
{
	__u64 *area = w->extra;

	switch (w->param) {
	case MODE_SHARED:
		return area;
	case MODE_PACKED:
		/* worker i at word i of the lines after the shared one */
		return area + CL_WORDS + w->idx;
	default:
		return area + CL_WORDS * (1 + w->idx);
	}
}

static long cl_worker_op(struct bench_worker *w)
{
	__u64 *c = cl_counter(w);

	if (w->param == MODE_SHARED)
		__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
	else
		/* a plain read-modify-write, as per-CPU counters do */
		__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + 1,
				 __ATOMIC_RELAXED);
	w->tot[0]++;
	return 1;
}

static int cl_worker_finish(struct bench_worker *w)
{
	__u64 *c = cl_counter(w);

	if (w->param != MODE_SHARED && *c != w->tot[0]) {
		bench_worker_fail(w, "counter %llu, %llu increments",
				  (unsigned long long)*c,
				  (unsigned long long)w->tot[0]);
		return -1;
	}
	return 0;
}

static const struct bench_metric cl_metrics[] = {
	{ "increments", BENCH_AGG_SUM, 0 },
};

static const struct bench_desc cacheline_bench = {
	.name = "cacheline_bench",
	.init = cl_init,
	.extra_size = cl_extra_size,
	.prepare_run = cl_prepare_run,
	.worker_op = cl_worker_op,
	.worker_finish = cl_worker_finish,
	.metrics = cl_metrics,
	.nr_metrics = 1,
};

int main(int argc, char **argv)
{
	return bench_main(&cacheline_bench, argc, argv);
}
