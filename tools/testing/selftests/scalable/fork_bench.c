// SPDX-License-Identifier: GPL-2.0
/*
 * fork_bench: one process per CPU loops fork(); child _exit(0); waitpid().
 *
 * Every worker maps M one-page files read-only and private (one mode per
 * M of the -n list, default 1 and 16: "shared-16f"), with an
 * unmapped page between consecutive mappings, and never touches them:
 * the VMAs have no anon_vma, fork copies no page tables for them, and
 * the cost of fork and exit is dominated by duplicating the VMAs and by
 * inserting them into and removing them from each file's reverse map
 * (i_mmap).  In "shared" mode all workers map the same M files, so they
 * contend on the same i_mmap trees; in "private" mode each worker maps
 * its own M files.
 *
 * With CONFIG_RMAP_OPLOG (mm/oplog_rmap.c), each mode runs twice:
 * "-stock" with /sys/kernel/debug/rmap_oplog/enabled off, then "-oplog"
 * with fork's inserts of these VMAs logged per CPU; the "-oplog" RESULT
 * lines carry the ratio to "-stock" and the OpLog type's counters
 * (/sys/kernel/debug/oplog/rmap/stats).  Without it, only "-stock" runs.
 *
 * Checks: the M mappings are M separate VMAs in /proc/self/maps, and
 * every child exits with status 0.
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
#include <sys/stat.h>
#include <sys/wait.h>

#include "../kselftest.h"
#include "bench.h"

enum { MODE_SHARED, MODE_PRIVATE, NR_MODES };

#define FB_MAX_NR	4

static const char * const mode_names[] = { "shared", "private" };
static int mode_mask = 3;
/* -n: the file counts, one mode per count */
static const char *nr_arg = "1,16";
static long nr_list[FB_MAX_NR];
static int nr_nr;
static long max_files;
static struct bench_maps maps;

/* Parse -n: a comma list of at most FB_MAX_NR counts. */
static int parse_nr_list(const char *arg)
{
	char buf[128], *tok, *save = NULL;

	if (strlen(arg) >= sizeof(buf))
		return -1;
	memcpy(buf, arg, strlen(arg) + 1);
	nr_nr = 0;
	max_files = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (nr_nr == FB_MAX_NR ||
		    bench_parse_uint(tok, 1, 100000, &nr_list[nr_nr]))
			return -1;
		if (nr_list[nr_nr] > max_files)
			max_files = nr_list[nr_nr];
		nr_nr++;
	}
	return nr_nr ? 0 : -1;
}

/* bench_worker.param: bit 0 the mode, then the index in nr_list */
static int param_mode(__u64 param)
{
	return param & 1;
}

static long param_files(__u64 param)
{
	return nr_list[(param & ~BENCH_PARAM_OPLOG) >> 1];
}

static int fb_parse_opt(int opt, const char *arg)
{
	switch (opt) {
	case 'M':
		if (!strcmp(arg, "shared"))
			mode_mask = 1 << MODE_SHARED;
		else if (!strcmp(arg, "private"))
			mode_mask = 1 << MODE_PRIVATE;
		else if (!strcmp(arg, "both"))
			mode_mask = 3;
		else
			return -1;
		return 0;
	case 'n':
		nr_arg = arg;
		return parse_nr_list(arg);
	default:
		return -1;
	}
}

static int fb_init(void)
{
	char name[BENCH_NAME_LEN];
	int m, i;

	if (!nr_nr && parse_nr_list(nr_arg))
		return -1;
	for (m = MODE_SHARED; m < NR_MODES; m++) {
		if (!(mode_mask & (1 << m)))
			continue;
		for (i = 0; i < nr_nr; i++) {
			snprintf(name, sizeof(name), "%s-%ldf", mode_names[m],
				 nr_list[i]);
			if (bench_add_oplog_mode(&bench_sw_rmap, name,
						 m | i << 1))
				return -1;
		}
	}
	return 0;
}

/* Parent, before each run: the OpLog switch of the mode. */
static int fb_prepare_run(struct bench_ctl *ctl)
{
	return bench_select(&bench_sw_rmap, ctl->param);
}

static int fb_setup(int max_cpus)
{
	size_t size = bench_page_size();

	if ((mode_mask & (1 << MODE_SHARED)) &&
	    bench_make_files("shared", max_files, size))
		return -1;
	if (mode_mask & (1 << MODE_PRIVATE)) {
		char dir[32];
		int i;

		for (i = 0; i < max_cpus; i++) {
			snprintf(dir, sizeof(dir), "w%d", i);
			if (bench_make_files(dir, max_files, size))
				return -1;
		}
	}
	ksft_print_msg("fork_bench: %s one-page files per worker (mode <m>-<n>f)\n",
		       nr_arg);
	ksft_print_msg("fork_bench: shared: %s/shared/f<j>, private: %s/w<i>/f<j>\n",
		       bench_cfg.dir, bench_cfg.dir);
	return 0;
}

static int fb_worker_init(struct bench_worker *w)
{
	long nr_files = param_files(w->param);
	char dir[32];

	if (param_mode(w->param) == MODE_SHARED)
		snprintf(dir, sizeof(dir), "shared");
	else
		snprintf(dir, sizeof(dir), "w%d", w->idx);
	if (bench_map_files(w, &maps, dir, nr_files, 1, O_RDONLY))
		return -1;
	/* The descriptors are not needed: the VMAs hold the files. */
	bench_close_files(&maps);
	if (bench_check_maps(w, &maps))
		return -1;
	w->tot[0] = nr_files;
	w->tot[1] = maps.other_file_vmas;
	return 0;
}

static long fb_worker_op(struct bench_worker *w)
{
	return bench_fork_wait(w);
}

static const struct bench_metric fb_metrics[] = {
	{ "files", BENCH_AGG_MAX, 0 },
	{ "other_file_vmas", BENCH_AGG_MAX, 1 },
};

static const struct bench_desc fork_bench = {
	.name = "fork_bench",
	.opts = "M:n:",
	.usage = "  -M MODE  shared, private or both (default both)\n"
		 "  -n LIST  files mapped by each worker, one mode per count\n"
		 "           (at most 4; default 1,16)\n",
	.parse_opt = fb_parse_opt,
	.init = fb_init,
	.setup = fb_setup,
	.prepare_run = fb_prepare_run,
	.worker_init = fb_worker_init,
	.worker_op = fb_worker_op,
	.metrics = fb_metrics,
	.nr_metrics = ARRAY_SIZE(fb_metrics),
};

int main(int argc, char **argv)
{
	return bench_main(&fork_bench, argc, argv);
}
