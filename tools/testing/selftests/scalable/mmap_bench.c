// SPDX-License-Identifier: GPL-2.0
/*
 * mmap_bench: one process per CPU loops mmap() of one page of a file
 * (PROT_READ, MAP_PRIVATE) and munmap() of it.
 *
 * The page is never touched: the VMA gets no page table entry and no
 * anon_vma, and the cost of the loop is creating and freeing the VMA and
 * inserting it into and removing it from the file's reverse map
 * (i_mmap).  In "shared" mode all workers map the same file, each through
 * a descriptor of its own, so they contend on one i_mmap tree and its
 * i_mmap_rwsem; in "private" mode each worker maps a file of its own.
 *
 * With CONFIG_RMAP_OPLOG (mm/oplog_rmap.c), each mode runs twice:
 * "-stock" with /sys/kernel/debug/rmap_oplog/enabled off, then "-oplog"
 * with mmap()'s insert of the VMA logged in this CPU's log of the file and
 * cancelled there by the munmap() (local absorption); the "-oplog" RESULT
 * lines carry the ratio to "-stock" and the OpLog type's counters
 * (/sys/kernel/debug/oplog/rmap/stats).  Without it, only "-stock" runs.
 *
 * Checks: every mmap() and munmap() succeeds, and the mapping is one VMA
 * of the file in /proc/self/maps (the first time).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "../kselftest.h"
#include "bench.h"

enum { MODE_SHARED, MODE_PRIVATE, NR_MODES };

/* mmap() + munmap() pairs per worker_op call */
#define MB_BATCH		16

static const char * const mode_names[] = { "shared", "private" };
static int mode_mask = 3;
static struct bench_maps maps;

static int mb_parse_opt(int opt, const char *arg)
{
	if (opt != 'M')
		return -1;
	return bench_select_mode(arg, mode_names, NR_MODES, &mode_mask);
}

static int mb_init(void)
{
	return bench_add_oplog_modes(&bench_sw_rmap, mode_names, NR_MODES,
				     mode_mask);
}

/* Parent, before each run: the OpLog switch of the mode. */
static int mb_prepare_run(struct bench_ctl *ctl)
{
	return bench_select(&bench_sw_rmap, ctl->param);
}

static int mb_setup(int max_cpus)
{
	size_t size = bench_page_size();
	char dir[32];
	int i;

	if ((mode_mask & (1 << MODE_SHARED)) &&
	    bench_make_files("shared", 1, size))
		return -1;
	if (mode_mask & (1 << MODE_PRIVATE)) {
		for (i = 0; i < max_cpus; i++) {
			snprintf(dir, sizeof(dir), "w%d", i);
			if (bench_make_files(dir, 1, size))
				return -1;
		}
	}
	ksft_print_msg("mmap_bench: shared: %s/shared/f0, private: %s/w<i>/f0\n",
		       bench_cfg.dir, bench_cfg.dir);
	return 0;
}

/*
 * Map the file once through the engine, which checks that it is one VMA
 * of its own in /proc/self/maps, then unmap it and keep the descriptor
 * for the loop.
 */
static int mb_worker_init(struct bench_worker *w)
{
	char dir[32];

	if ((w->param & 1) == MODE_SHARED)
		snprintf(dir, sizeof(dir), "shared");
	else
		snprintf(dir, sizeof(dir), "w%d", w->idx);
	if (bench_map_files(w, &maps, dir, 1, 1, O_RDONLY) ||
	    bench_check_maps(w, &maps))
		return -1;
	if (munmap(maps.addr[0], maps.page)) {
		bench_worker_fail(w, "munmap: %s", strerror(errno));
		return -1;
	}
	w->tot[0] = maps.other_file_vmas;
	return 0;
}

static long mb_worker_op(struct bench_worker *w)
{
	void *p;
	int i;

	for (i = 0; i < MB_BATCH; i++) {
		p = mmap(NULL, maps.page, PROT_READ, MAP_PRIVATE, maps.fd[0], 0);
		if (p == MAP_FAILED) {
			bench_worker_fail(w, "mmap: %s", strerror(errno));
			return -1;
		}
		if (munmap(p, maps.page)) {
			bench_worker_fail(w, "munmap: %s", strerror(errno));
			return -1;
		}
	}
	return MB_BATCH;
}

static const struct bench_metric mb_metrics[] = {
	{ "other_file_vmas", BENCH_AGG_MAX, 0 },
};

static const struct bench_desc mmap_bench = {
	.name = "mmap_bench",
	.opts = "M:",
	.usage = "  -M MODE  shared, private or all (default all)\n",
	.parse_opt = mb_parse_opt,
	.init = mb_init,
	.setup = mb_setup,
	.prepare_run = mb_prepare_run,
	.worker_init = mb_worker_init,
	.worker_op = mb_worker_op,
	.metrics = mb_metrics,
	.nr_metrics = ARRAY_SIZE(mb_metrics),
};

int main(int argc, char **argv)
{
	return bench_main(&mmap_bench, argc, argv);
}
