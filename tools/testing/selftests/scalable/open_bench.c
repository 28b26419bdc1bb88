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
 * Two modes read the open counts under that load, with one answer that
 * is right: every worker keeps one descriptor of the shared file open for
 * write for the whole run, the others open and close it O_RDWR, and
 * worker 0 instead
 *  - "same-rdwr-exec": execve()s the file, which must fail with ETXTBSY
 *    (deny_write_access() must count the write accesses of every CPU);
 *  - "same-rdwr-lease": opens it O_RDONLY and asks for a read lease,
 *    which must fail with EAGAIN (the lease check must count them too).
 * One operation of worker 0 is one such refused request.
 *
 * Check: every open() succeeds, and every 64th descriptor is fstat()ed:
 * it must be the regular file, by inode number, that the parent created
 * for the worker; worker 0's requests fail with the errno above.
 *
 * With CONFIG_DCACHE_OPLOG (fs/dcache_oplog.c), each mode runs "-stock"
 * with the per-CPU dentry reference counts off, then "-oplog" with them
 * on (/sys/kernel/debug/dcache_oplog/enabled, restored at the end); the
 * RESULT lines of the latter carry its ratio to the former.  Without it,
 * only the "-stock" modes run.  The per-CPU read-only open counts of
 * CONFIG_INODE_OPLOG (fs/inode_oplog.c, /sys/kernel/debug/inode_oplog/
 * enabled), where the kernel has them, follow the same switch: off in
 * "-stock", on in "-oplog"; both must give the same answers.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "../kselftest.h"
#include "bench.h"

/* bench_worker.param: the index in mode_names, plus BENCH_PARAM_OPLOG */
enum open_mode {
	OPEN_SAME_RDONLY,
	OPEN_PRIVATE_RDONLY,
	OPEN_SAME_RDWR,
	OPEN_PRIVATE_RDWR,
	OPEN_SAME_RDWR_EXEC,
	OPEN_SAME_RDWR_LEASE,
	NR_MODES
};

/* fstat() the descriptor of every OPEN_CHECK_EVERY-th operation */
#define OPEN_CHECK_EVERY	64

static const char * const mode_names[NR_MODES] = {
	"same-rdonly", "private-rdonly", "same-rdwr", "private-rdwr",
	"same-rdwr-exec", "same-rdwr-lease",
};

static enum open_mode mode_of(__u64 param)
{
	return param & ~BENCH_PARAM_OPLOG;
}

static bool is_private(__u64 param)
{
	return mode_of(param) == OPEN_PRIVATE_RDONLY ||
	       mode_of(param) == OPEN_PRIVATE_RDWR;
}

static bool is_rdwr(__u64 param)
{
	return mode_of(param) >= OPEN_SAME_RDWR;
}

/* Worker 0 of the exec and lease modes asks; the others open and close. */
static bool is_asker(struct bench_worker *w)
{
	return !w->idx && mode_of(w->param) >= OPEN_SAME_RDWR_EXEC;
}

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
	return bench_add_oplog_modes(&bench_sw_dcache, mode_names, NR_MODES,
				     mode_mask);
}

static void file_path(char *buf, size_t size, __u64 param, int idx)
{
	if (is_private(param))
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
		file_path(p, sizeof(p), OPEN_PRIVATE_RDONLY, i);
		if (bench_create_file(p, 64))
			return -1;
	}
	/* Executable, so that execve() gets as far as denying write. */
	file_path(p, sizeof(p), OPEN_SAME_RDONLY, 0);
	if (bench_create_file(p, 64))
		return -1;
	if (chmod(p, 0755)) {
		ksft_print_msg("chmod %s: %s\n", p, strerror(errno));
		return -1;
	}
	ksft_print_msg("open_bench: same: %s, private: %s.<i>\n", p, p);
	return 0;
}

/* Parent, before each run: the switch, and the inode each worker opens. */
static int open_prepare_run(struct bench_ctl *ctl)
{
	struct stat st;
	char p[4200];
	__u32 i;

	if (bench_select(&bench_sw_dcache, ctl->param) ||
	    bench_select(&bench_sw_inode, ctl->param))
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
	open_flags = (is_rdwr(w->param) ? O_RDWR : O_RDONLY) | O_CLOEXEC;
	ino = w->arg[0];
	fd = open(path, open_flags);
	if (fd < 0) {
		bench_worker_fail(w, "open %s: %s", path, strerror(errno));
		return -1;
	}
	ret = check_fd(w, fd);
	/* The exec and lease modes: kept open until the worker exits. */
	if (mode_of(w->param) < OPEN_SAME_RDWR_EXEC)
		close(fd);
	return ret;
}

/* Worker 0 of "same-rdwr-exec": execve() must see the write accesses. */
static long exec_op(struct bench_worker *w)
{
	char *const argv[] = { path, NULL };
	char *const envp[] = { NULL };

	execve(path, argv, envp);
	if (errno != ETXTBSY) {
		bench_worker_fail(w, "execve %s with writers open: %s, not ETXTBSY",
				  path, strerror(errno));
		return -1;
	}
	return 1;
}

/* Worker 0 of "same-rdwr-lease": a read lease must see them too. */
static long lease_op(struct bench_worker *w)
{
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		bench_worker_fail(w, "open %s: %s", path, strerror(errno));
		return -1;
	}
	err = fcntl(fd, F_SETLEASE, F_RDLCK) ? errno : 0;
	close(fd);
	if (err != EAGAIN) {
		bench_worker_fail(w, "read lease on %s with writers open: %s, not EAGAIN",
				  path, err ? strerror(err) : "granted");
		return -1;
	}
	return 1;
}

static long open_worker_op(struct bench_worker *w)
{
	int fd;

	if (is_asker(w))
		return mode_of(w->param) == OPEN_SAME_RDWR_EXEC ? exec_op(w) :
								   lease_op(w);

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
	.usage = "  -M MODE  same-rdonly, private-rdonly, same-rdwr, private-rdwr,\n"
		 "           same-rdwr-exec, same-rdwr-lease or all (default all)\n",
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
