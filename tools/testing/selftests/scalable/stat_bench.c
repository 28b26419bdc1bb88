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
 * "many" walks a working set larger than any per-CPU cache of dentry
 * references: the parent creates -n names (default 100000) in one
 * directory, and every worker stats all of them in order, one stat() per
 * operation, worker i starting at name i * n / workers and wrapping.
 * Check: every stat() succeeds on a regular file.
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
#include "sched_util.h"

enum { MODE_SAME, MODE_PRIVATE, MODE_MANY, NR_MODES };

#define MODE_MASK_BOTH	((1 << MODE_SAME) | (1 << MODE_PRIVATE))
#define MODE_MASK_ALL	((1 << NR_MODES) - 1)

static const char * const mode_names[] = { "same", "private", "many" };
static int mode_mask = MODE_MASK_ALL;
static long nr_names = 100000;
static char path[4200];
static size_t path_len;		/* "many": length of the directory prefix */
static long next_name;		/* "many": the name the next stat() takes */
static ino_t ino;

static int stat_parse_opt(int opt, const char *arg)
{
	if (opt == 'n')
		return bench_parse_uint(arg, 1, 10000000, &nr_names);
	if (opt != 'M')
		return -1;
	if (!strcmp(arg, "both")) {
		mode_mask = MODE_MASK_BOTH;
		return 0;
	}
	return bench_select_mode(arg, mode_names, NR_MODES, &mode_mask);
}

static int stat_init(void)
{
	return bench_add_oplog_modes(&bench_sw_dcache, mode_names, NR_MODES,
				     mode_mask);
}

/* "many": the directory of the names, and name @n in it. */
static size_t many_dir(char *buf, size_t size)
{
	return snprintf(buf, size, "%s/d/m/", bench_cfg.dir);
}

static void many_name(char *buf, size_t size, size_t len, long n)
{
	snprintf(buf + len, size - len, "n%06ld", n);
}

/* The first name worker @idx of @nr stats. */
static long many_start(int idx, int nr)
{
	return (long)((long long)idx * nr_names / nr);
}

static void file_path(char *buf, size_t size, int mode, int idx, int nr)
{
	switch (mode & ~BENCH_PARAM_OPLOG) {
	case MODE_SAME:
		snprintf(buf, size, "%s/d/e/f", bench_cfg.dir);
		break;
	case MODE_PRIVATE:
		snprintf(buf, size, "%s/d/e/f.%d", bench_cfg.dir, idx);
		break;
	default:
		many_name(buf, size, many_dir(buf, size), many_start(idx, nr));
		break;
	}
}

/* "many": create the names, empty, in one directory. */
static int make_names(void)
{
	char p[4200];
	size_t len;
	__u64 t0;
	long n;
	int fd;

	len = many_dir(p, sizeof(p));
	if (bench_mkdir(p))
		return -1;
	t0 = now_ns();
	for (n = 0; n < nr_names; n++) {
		many_name(p, sizeof(p), len, n);
		fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0 || close(fd)) {
			ksft_print_msg("create %s: %s\n", p, strerror(errno));
			return -1;
		}
	}
	p[len] = '\0';
	ksft_print_msg("stat_bench: many: %ld names %sn<6 digits>, created in %.1f s\n",
		       nr_names, p, (now_ns() - t0) / 1e9);
	return 0;
}

static int stat_setup(int max_cpus)
{
	char p[4200];
	int i;

	snprintf(p, sizeof(p), "%s/d", bench_cfg.dir);
	if (bench_mkdir(p))
		return -1;
	snprintf(p, sizeof(p), "%s/d/e", bench_cfg.dir);
	if (bench_mkdir(p))
		return -1;
	file_path(p, sizeof(p), MODE_SAME, 0, 1);
	if (bench_create_file(p, 64))
		return -1;
	for (i = 0; i < max_cpus; i++) {
		file_path(p, sizeof(p), MODE_PRIVATE, i, max_cpus);
		if (bench_create_file(p, 64))
			return -1;
	}
	file_path(p, sizeof(p), MODE_SAME, 0, 1);
	ksft_print_msg("stat_bench: same: %s, private: %s.<i>\n", p, p);
	/* Creating 100000 names takes a while under emulation. */
	if ((mode_mask & (1 << MODE_MANY)) && make_names())
		return -1;
	return 0;
}

/*
 * Parent, before each run: the switch, and the inode number each worker
 * must see (of its first name, in "many").
 */
static int stat_prepare_run(struct bench_ctl *ctl)
{
	struct stat st;
	char p[4200];
	__u32 i;

	if (bench_select(&bench_sw_dcache, ctl->param))
		return -1;
	for (i = 0; i < ctl->nr_workers; i++) {
		file_path(p, sizeof(p), ctl->param, i, ctl->nr_workers);
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

	file_path(path, sizeof(path), w->param, w->idx, w->nr_workers);
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
	if ((w->param & ~BENCH_PARAM_OPLOG) == MODE_MANY) {
		path_len = many_dir(path, sizeof(path));
		next_name = many_start(w->idx, w->nr_workers);
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

/* "many": one name per stat(), in order, wrapping. */
static long stat_many_op(struct bench_worker *w)
{
	struct stat st;

	many_name(path, sizeof(path), path_len, next_name);
	if (++next_name == nr_names)
		next_name = 0;
	if (stat(path, &st)) {
		bench_worker_fail(w, "stat %s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode) || !st.st_ino) {
		errno = ESTALE;
		bench_worker_fail(w, "stat %s: mode 0%o ino %llu, expected a regular file",
				  path, st.st_mode,
				  (unsigned long long)st.st_ino);
		return -1;
	}
	return 1;
}

static long stat_op(struct bench_worker *w)
{
	if ((w->param & ~BENCH_PARAM_OPLOG) == MODE_MANY)
		return stat_many_op(w);
	return stat_worker_op(w);
}

static const struct bench_desc stat_bench = {
	.name = "stat_bench",
	.opts = "M:n:",
	.usage = "  -M MODE  same, private, many, both (same and private) or all\n"
		 "           (default all)\n"
		 "  -n N     names of the many mode (default 100000)\n",
	.parse_opt = stat_parse_opt,
	.init = stat_init,
	.setup = stat_setup,
	.prepare_run = stat_prepare_run,
	.worker_init = stat_worker_init,
	.worker_op = stat_op,
};

int main(int argc, char **argv)
{
	return bench_main(&stat_bench, argc, argv);
}
