// SPDX-License-Identifier: GPL-2.0
/*
 * stat_bench: one process per CPU calls stat() on a path in a loop.
 *
 * Only the final component of a path walk takes a dentry reference
 * (lockref on d_lockref), so with every worker on the same name
 * ("same") that one cache line is the bottleneck; with one name per
 * worker ("private") the walk should scale.  Each stat() result is
 * checked against the inode number the worker saw at set-up, which
 * must also be the one the parent created.
 *
 * With CONFIG_DCACHE_OPLOG (fs/dcache_oplog.c), each mode runs twice:
 * "-stock" with the per-CPU dentry reference counts switched off through
 * /sys/kernel/debug/dcache_oplog/enabled, then "-oplog" with them on; the
 * RESULT lines of the latter carry its ratio to the former.  Without it,
 * only the "-stock" modes run.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "../kselftest.h"
#include "bench.h"

enum { MODE_SAME, MODE_PRIVATE };

static const char * const mode_names[] = { "same", "private" };
static int mode_mask = 3;
static char path[4200];
static ino_t ino;

static int stat_parse_opt(int opt, const char *arg)
{
	if (opt != 'M')
		return -1;
	if (!strcmp(arg, "same"))
		mode_mask = 1 << MODE_SAME;
	else if (!strcmp(arg, "private"))
		mode_mask = 1 << MODE_PRIVATE;
	else if (!strcmp(arg, "both"))
		mode_mask = 3;
	else
		return -1;
	return 0;
}

static int stat_init(void)
{
	int i;

	for (i = MODE_SAME; i <= MODE_PRIVATE; i++)
		if ((mode_mask & (1 << i)) &&
		    bench_add_oplog_modes(mode_names[i], i))
			return -1;
	return 0;
}

static void file_path(char *buf, size_t size, int mode, int idx)
{
	if ((mode & ~BENCH_PARAM_OPLOG) == MODE_SAME)
		snprintf(buf, size, "%s/d/e/f", bench_cfg.dir);
	else
		snprintf(buf, size, "%s/d/e/f.%d", bench_cfg.dir, idx);
}

static int make_file(const char *p)
{
	if (bench_write_file(p, 64)) {
		ksft_print_msg("create %s: %s\n", p, strerror(errno));
		return -1;
	}
	return 0;
}

static int stat_setup(int max_cpus)
{
	char p[4200];
	int i;

	snprintf(p, sizeof(p), "%s/d", bench_cfg.dir);
	if (mkdir(p, 0755)) {
		ksft_print_msg("mkdir %s: %s\n", p, strerror(errno));
		return -1;
	}
	snprintf(p, sizeof(p), "%s/d/e", bench_cfg.dir);
	if (mkdir(p, 0755)) {
		ksft_print_msg("mkdir %s: %s\n", p, strerror(errno));
		return -1;
	}
	file_path(p, sizeof(p), MODE_SAME, 0);
	if (make_file(p))
		return -1;
	for (i = 0; i < max_cpus; i++) {
		file_path(p, sizeof(p), MODE_PRIVATE, i);
		if (make_file(p))
			return -1;
	}
	file_path(p, sizeof(p), MODE_SAME, 0);
	ksft_print_msg("stat_bench: same: %s, private: %s.<i>\n", p, p);
	return 0;
}

/* Parent, before each run: the inode number each worker must see. */
static int stat_prepare_run(struct bench_ctl *ctl)
{
	struct stat st;
	char p[4200];
	__u32 i;

	if (bench_dcache_oplog_select(ctl->param))
		return -1;
	for (i = 0; i < ctl->nr_workers; i++) {
		file_path(p, sizeof(p), ctl->param, i);
		if (stat(p, &st)) {
			ksft_print_msg("stat %s: %s\n", p, strerror(errno));
			return -1;
		}
		bench_arg(ctl, i)[0] = st.st_ino;
	}
	return 0;
}

static int stat_worker_init(struct bench_worker *w)
{
	struct stat st;

	file_path(path, sizeof(path), w->param, w->idx);
	if (stat(path, &st)) {
		bench_worker_fail(w, "stat %s: %s", path, strerror(errno));
		return -1;
	}
	ino = st.st_ino;
	if (ino != w->arg[0]) {
		errno = ESTALE;
		bench_worker_fail(w, "%s: ino %llu, parent created %llu", path,
				  (unsigned long long)ino,
				  (unsigned long long)w->arg[0]);
		return -1;
	}
	return 0;
}

static long stat_worker_op(struct bench_worker *w)
{
	struct stat st;

	if (stat(path, &st)) {
		bench_worker_fail(w, "stat %s: %s", path, strerror(errno));
		return -1;
	}
	if (st.st_ino != ino) {
		errno = ESTALE;
		bench_worker_fail(w, "stat %s: ino %llu, expected %llu", path,
				  (unsigned long long)st.st_ino,
				  (unsigned long long)ino);
		return -1;
	}
	return 1;
}

static const struct bench_desc stat_bench = {
	.name = "stat_bench",
	.opts = "M:",
	.usage = "  -M MODE  same, private or both (default both)\n",
	.parse_opt = stat_parse_opt,
	.init = stat_init,
	.setup = stat_setup,
	.prepare_run = stat_prepare_run,
	.worker_init = stat_worker_init,
	.worker_op = stat_worker_op,
};

int main(int argc, char **argv)
{
	return bench_main(&stat_bench, argc, argv);
}
