// SPDX-License-Identifier: GPL-2.0
/*
 * open_bench: one process per CPU opens a file and closes it, in a loop.
 *
 * open() walks the path and takes references on the final component's
 * dentry and on the mount, which the struct file keeps until close()
 * drops them.  With every worker on the same file ("same") those
 * references meet on one dentry; with one file per worker ("private") they
 * should not meet at all.  "rdonly" opens with O_RDONLY; "rdwr" with
 * O_RDWR, which also takes write access to the inode (i_writecount) and
 * the mount (mnt_want_write()) and sends the close a FS_CLOSE_WRITE
 * notification.  One operation is one open() plus one close().
 *
 * Check: every open() succeeds, and every 64th descriptor is fstat()ed:
 * it must be the regular file, by inode number, that the parent created
 * for the worker.
 *
 * With CONFIG_DCACHE_OPLOG (fs/dcache_oplog.c), each mode runs "-stock"
 * with the per-CPU dentry reference counts off, then "-oplog" with them
 * on (/sys/kernel/debug/dcache_oplog/enabled, restored at the end); the
 * RESULT lines of the latter carry its ratio to the former.  Without it,
 * only the "-stock" modes run.  The per-CPU read-only open counts of
 * CONFIG_INODE_OPLOG (fs/inode_oplog.c, /sys/kernel/debug/inode_oplog/
 * enabled), where the kernel has them, follow the same switch: off in
 * "-stock", on in "-oplog".
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

/* bench_worker.param: the index in mode_names, plus BENCH_PARAM_OPLOG */
#define OPEN_PRIVATE	0x1
#define OPEN_RDWR	0x2
#define NR_MODES	4

/* fstat() the descriptor of every OPEN_CHECK_EVERY-th operation */
#define OPEN_CHECK_EVERY	64

static const char * const mode_names[NR_MODES] = {
	"same-rdonly", "private-rdonly", "same-rdwr", "private-rdwr",
};

static int mode_mask = (1 << NR_MODES) - 1;
static char path[4200];
static int open_flags;
static ino_t ino;
static __u64 nr_ops;

static int open_parse_opt(int opt, const char *arg)
{
	if (opt != 'M')
		return -1;
	return bench_select_mode(arg, mode_names, NR_MODES, &mode_mask);
}

static int open_init(void)
{
	return bench_add_oplog_mode_mask(mode_names, NR_MODES, mode_mask);
}

static void file_path(char *buf, size_t size, __u64 param, int idx)
{
	if (param & OPEN_PRIVATE)
		snprintf(buf, size, "%s/d/o/f.%d", bench_cfg.dir, idx);
	else
		snprintf(buf, size, "%s/d/o/f", bench_cfg.dir);
}

static int make_dir(const char *sub)
{
	char p[4200];

	snprintf(p, sizeof(p), "%s/%s", bench_cfg.dir, sub);
	return bench_mkdir(p);
}

static int open_setup(int max_cpus)
{
	char p[4200];
	int i;

	if (make_dir("d") || make_dir("d/o"))
		return -1;
	for (i = 0; i < max_cpus; i++) {
		file_path(p, sizeof(p), OPEN_PRIVATE, i);
		if (bench_create_file(p, 64))
			return -1;
	}
	file_path(p, sizeof(p), 0, 0);
	if (bench_create_file(p, 64))
		return -1;
	ksft_print_msg("open_bench: same: %s, private: %s.<i>\n", p, p);
	return 0;
}

/* Parent, before each run: the switch, and the inode each worker opens. */
static int open_prepare_run(struct bench_ctl *ctl)
{
	struct stat st;
	char p[4200];
	__u32 i;

	if (bench_dcache_oplog_select(ctl->param) ||
	    bench_oplog_select_path(BENCH_INODE_OPLOG, ctl->param))
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

/* The descriptor @fd must be the file the parent created. */
static int check_fd(struct bench_worker *w, int fd)
{
	struct stat st;

	if (fstat(fd, &st)) {
		bench_worker_fail(w, "fstat %s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_ino != ino) {
		errno = ESTALE;
		bench_worker_fail(w, "%s: mode 0%o ino %llu, parent created ino %llu",
				  path, st.st_mode,
				  (unsigned long long)st.st_ino,
				  (unsigned long long)ino);
		return -1;
	}
	return 0;
}

static int open_worker_init(struct bench_worker *w)
{
	int fd, ret;

	file_path(path, sizeof(path), w->param, w->idx);
	open_flags = (w->param & OPEN_RDWR ? O_RDWR : O_RDONLY) | O_CLOEXEC;
	ino = w->arg[0];
	fd = open(path, open_flags);
	if (fd < 0) {
		bench_worker_fail(w, "open %s: %s", path, strerror(errno));
		return -1;
	}
	ret = check_fd(w, fd);
	close(fd);
	return ret;
}

static long open_worker_op(struct bench_worker *w)
{
	int fd;

	fd = open(path, open_flags);
	if (fd < 0) {
		bench_worker_fail(w, "open %s: %s", path, strerror(errno));
		return -1;
	}
	if (!(++nr_ops % OPEN_CHECK_EVERY) && check_fd(w, fd)) {
		close(fd);
		return -1;
	}
	if (close(fd)) {
		bench_worker_fail(w, "close %s: %s", path, strerror(errno));
		return -1;
	}
	return 1;
}

static const struct bench_desc open_bench = {
	.name = "open_bench",
	.opts = "M:",
	.usage = "  -M MODE  same-rdonly, private-rdonly, same-rdwr, private-rdwr\n"
		 "           or all (default all)\n",
	.parse_opt = open_parse_opt,
	.init = open_init,
	.setup = open_setup,
	.prepare_run = open_prepare_run,
	.worker_init = open_worker_init,
	.worker_op = open_worker_op,
};

int main(int argc, char **argv)
{
	return bench_main(&open_bench, argc, argv);
}
