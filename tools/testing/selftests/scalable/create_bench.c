// SPDX-License-Identifier: GPL-2.0
/*
 * create_bench: one process per CPU creates a file and unlinks it, in a
 * loop.
 *
 * Every operation creates a fresh name with open(O_CREAT | O_EXCL |
 * O_WRONLY), closes it and unlinks it: a negative lookup, a new dentry and
 * inode, the directory's i_rwsem for the create and again for the unlink,
 * d_delete() and the final dput().  Worker i names its files "w<i>.<n>",
 * n counting its operations, so no two workers ever touch the same name.
 * "shared-dir": every worker works in one directory (its inode lock, its
 * list of children and its dentry are shared); "private-dir": worker i
 * in a directory of its own (the control).  One operation is one create,
 * close and unlink.
 *
 * Checks: every create, close and unlink succeeds (O_EXCL: the name must
 * not exist yet); every 64th new file is fstat()ed: a regular file with
 * one link and size 0; at the end the worker's last name must be gone, and
 * before each run the parent checks that the directories are empty.
 *
 * With CONFIG_DCACHE_OPLOG (fs/dcache_oplog.c), each mode runs "-stock"
 * with the per-CPU dentry reference counts off, then "-oplog" with them
 * on (/sys/kernel/debug/dcache_oplog/enabled, restored at the end); the
 * RESULT lines of the latter carry its ratio to the former.  Without it,
 * only the "-stock" modes run.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "../kselftest.h"
#include "bench.h"

/* bench_worker.param: the mode, plus BENCH_PARAM_OPLOG */
enum { MODE_SHARED, MODE_PRIVATE, NR_MODES };

/* fstat() every CREATE_CHECK_EVERY-th new file */
#define CREATE_CHECK_EVERY	64

static const char * const mode_names[] = { "shared-dir", "private-dir" };
static int mode_mask = (1 << NR_MODES) - 1;
static char path[4200];
static size_t path_len;		/* length of the directory prefix */
static unsigned long seq;	/* the worker's next name */

static int create_parse_opt(int opt, const char *arg)
{
	if (opt != 'M')
		return -1;
	if (!strcmp(arg, "both"))
		arg = "all";
	return bench_select_mode(arg, mode_names, NR_MODES, &mode_mask);
}

static int create_init(void)
{
	return bench_add_oplog_modes(&bench_sw_dcache, mode_names, NR_MODES,
				     mode_mask);
}

/* The directory worker @idx works in, with a trailing slash. */
static size_t dir_path(char *buf, size_t size, __u64 param, int idx)
{
	if ((param & ~BENCH_PARAM_OPLOG) == MODE_PRIVATE)
		return snprintf(buf, size, "%s/d/w%d/", bench_cfg.dir, idx);
	return snprintf(buf, size, "%s/d/s/", bench_cfg.dir);
}

static int create_setup(int max_cpus)
{
	char p[4200];
	int i;

	snprintf(p, sizeof(p), "%s/d", bench_cfg.dir);
	if (bench_mkdir(p))
		return -1;
	for (i = 0; i < max_cpus; i++) {
		dir_path(p, sizeof(p), MODE_PRIVATE, i);
		if (bench_mkdir(p))
			return -1;
	}
	dir_path(p, sizeof(p), MODE_SHARED, 0);
	if (bench_mkdir(p))
		return -1;
	ksft_print_msg("create_bench: shared-dir: %s, private-dir: %s/d/w<i>/, names w<i>.<n>\n",
		       p, bench_cfg.dir);
	return 0;
}

/* What a run left behind: nothing, or it failed to unlink. */
static int check_empty(const char *dir)
{
	struct dirent *de;
	int ret = 0;
	DIR *d;

	d = opendir(dir);
	if (!d) {
		ksft_print_msg("opendir %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		ksft_print_msg("create_bench: %s%s left behind\n", dir,
			       de->d_name);
		ret = -1;
		break;
	}
	closedir(d);
	return ret;
}

/* Parent, before each run: the switch, and every directory empty. */
static int create_prepare_run(struct bench_ctl *ctl)
{
	char p[4200];
	__u32 i;

	if (bench_select(&bench_sw_dcache, ctl->param))
		return -1;
	for (i = 0; i < ctl->nr_workers; i++) {
		dir_path(p, sizeof(p), ctl->param, i);
		if (check_empty(p))
			return -1;
		if ((ctl->param & ~BENCH_PARAM_OPLOG) == MODE_SHARED)
			break;
	}
	return 0;
}

static int create_worker_init(struct bench_worker *w)
{
	struct stat st;

	path_len = dir_path(path, sizeof(path), w->param, w->idx);
	if (path_len >= sizeof(path) - 64) {
		errno = ENAMETOOLONG;
		bench_worker_fail(w, "%s: path too long", path);
		return -1;
	}
	if (stat(path, &st) || !S_ISDIR(st.st_mode)) {
		bench_worker_fail(w, "%s: not a directory", path);
		return -1;
	}
	return 0;
}

static int check_new(struct bench_worker *w, int fd)
{
	struct stat st;

	if (fstat(fd, &st)) {
		bench_worker_fail(w, "fstat %s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_nlink != 1 || st.st_size) {
		errno = EINVAL;
		bench_worker_fail(w, "%s: mode 0%o links %lu size %lld, not a new file",
				  path, st.st_mode, (unsigned long)st.st_nlink,
				  (long long)st.st_size);
		return -1;
	}
	return 0;
}

static long create_worker_op(struct bench_worker *w)
{
	int fd;

	snprintf(path + path_len, sizeof(path) - path_len, "w%d.%lu", w->idx,
		 seq);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		bench_worker_fail(w, "create %s: %s", path, strerror(errno));
		return -1;
	}
	if (!(seq++ % CREATE_CHECK_EVERY) && check_new(w, fd)) {
		close(fd);
		return -1;
	}
	if (close(fd)) {
		bench_worker_fail(w, "close %s: %s", path, strerror(errno));
		return -1;
	}
	if (unlink(path)) {
		bench_worker_fail(w, "unlink %s: %s", path, strerror(errno));
		return -1;
	}
	return 1;
}

/* The last name is gone. */
static int create_worker_finish(struct bench_worker *w)
{
	struct stat st;

	if (!seq)
		return 0;
	if (!stat(path, &st)) {
		errno = EEXIST;
		bench_worker_fail(w, "%s still there after unlink", path);
		return -1;
	}
	if (errno != ENOENT) {
		bench_worker_fail(w, "stat %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static const struct bench_desc create_bench = {
	.name = "create_bench",
	.opts = "M:",
	.usage = "  -M MODE  shared-dir, private-dir or both (default both, also all)\n",
	.parse_opt = create_parse_opt,
	.init = create_init,
	.setup = create_setup,
	.prepare_run = create_prepare_run,
	.worker_init = create_worker_init,
	.worker_op = create_worker_op,
	.worker_finish = create_worker_finish,
};

int main(int argc, char **argv)
{
	return bench_main(&create_bench, argc, argv);
}
