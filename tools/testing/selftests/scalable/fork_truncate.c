// SPDX-License-Identifier: GPL-2.0
/*
 * fork_truncate: fork_bench's shared mode plus a truncate every T forks.
 *
 * Every worker maps the same M one-page files (M = workers of the run
 * unless -n says otherwise), each mapping two pages long so that its
 * second page lies beyond EOF, with an unmapped page between mappings.
 * The workers loop fork(); child _exit(0); waitpid(), and every T forks
 * a worker grows file (k++ % M) to two pages and shrinks it back.  The
 * shrink has to find every mapping of the file through its reverse map
 * (truncate_pagecache() -> unmap_mapping_range()), which is what an
 * rmap that defers its updates must still get right.
 *
 * Checks, on the truncating worker: after growing, the byte at offset one
 * page of its mapping reads as 0; after shrinking, reading it must raise
 * SIGBUS, or the truncated page is still mapped.  Two workers never
 * truncate the same file at once (a try-lock per file in shared memory;
 * a busy file is skipped and counted).  Every child must exit 0.
 *
 * With -W, every truncation also has a witness: a child forked while the
 * file is two pages long reads the second page through its own copy of
 * the mapping (so its own page table maps it, through its own VMA in the
 * file's reverse map), and after the shrink must get SIGBUS reading it
 * again.  A reverse map that has not yet seen the fork's insert of that
 * VMA leaves the child's page mapped.  The witness adds a fork per
 * truncation, so it is for checking runs, not for the T sweep's numbers.
 *
 * With CONFIG_RMAP_OPLOG, each T runs "-stock" (the run-time switch
 * /sys/kernel/debug/rmap_oplog/enabled off) and "-oplog" (fork logs its
 * inserts per CPU, and every truncation synchronizes them): the thesis
 * (section 6.1) has OpLog losing at a truncate every 1-2 forks and
 * winning from 3, which the "-oplog" ratios show.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest.h"
#include "bench.h"

/* T is a mode parameter: below BENCH_PARAM_OPLOG. */
#define FT_MAX_T	255

/* One try-lock per file, each in its own cache line. */
struct ft_lock {
	__u32 busy;
	char pad[BENCH_CACHELINE - sizeof(__u32)];
};

static long nr_files_opt;
static bool witness_opt;
static const char *t_list = "1,2,3,4,5,6,7,8,9,10";
static int max_files;

static struct bench_maps maps;
static __u64 forks_left;
static __u64 next_file;
static sigjmp_buf bus_env;
static int bus_armed;

/* Check the -T list, and with @add register one mode per value. */
static int parse_t_list(bool add)
{
	char buf[256], name[BENCH_NAME_LEN], *tok, *save = NULL;
	int n = 0;
	long t;

	if (strlen(t_list) >= sizeof(buf))
		return -1;
	memcpy(buf, t_list, strlen(t_list) + 1);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (bench_parse_uint(tok, 1, FT_MAX_T, &t) ||
		    ++n > BENCH_MAX_MODES / 2)
			return -1;
		snprintf(name, sizeof(name), "T=%ld", t);
		if (add && bench_add_oplog_mode(&bench_sw_rmap, name, t))
			return -1;
	}
	return n ? 0 : -1;
}

static int ft_parse_opt(int opt, const char *arg)
{
	long v;

	switch (opt) {
	case 'n':
		if (bench_parse_uint(arg, 1, 100000, &v))
			return -1;
		nr_files_opt = v;
		return 0;
	case 'T':
		t_list = arg;
		return parse_t_list(false);
	case 'W':
		witness_opt = true;
		return 0;
	default:
		return -1;
	}
}

static int ft_init(void)
{
	return parse_t_list(true);
}

static int files_for(int cpus)
{
	return nr_files_opt ? nr_files_opt : cpus;
}

static size_t ft_extra_size(int max_cpus)
{
	max_files = files_for(max_cpus);
	return max_files * sizeof(struct ft_lock);
}

static int ft_setup(int max_cpus)
{
	max_files = files_for(max_cpus);
	if (bench_make_files("shared", max_files, bench_page_size()))
		return -1;
	ksft_print_msg("fork_truncate: files %s/shared/f<j>, M = %s\n",
		       bench_cfg.dir, nr_files_opt ? "-n" : "<cpus>");
	ksft_print_msg("fork_truncate: one-page files, each mapped two pages long\n");
	if (witness_opt)
		ksft_print_msg("fork_truncate: -W: a witness child checks each truncation\n");
	return 0;
}

/*
 * Parent, before each run: the OpLog switch of the mode, and undo
 * whatever a killed run left behind.
 */
static int ft_prepare_run(struct bench_ctl *ctl)
{
	char path[4200];
	int i;

	if (bench_select(&bench_sw_rmap, ctl->param))
		return -1;
	for (i = 0; i < max_files; i++) {
		snprintf(path, sizeof(path), "%s/shared/f%d", bench_cfg.dir, i);
		if (truncate(path, bench_page_size())) {
			ksft_print_msg("truncate %s: %s\n", path,
				       strerror(errno));
			return -1;
		}
	}
	return 0;
}

static void on_sigbus(int sig)
{
	if (__atomic_load_n(&bus_armed, __ATOMIC_RELAXED))
		siglongjmp(bus_env, 1);
	/* Not ours: die with the signal. */
	signal(sig, SIG_DFL);
	raise(sig);
}

static int ft_worker_init(struct bench_worker *w)
{
	struct sigaction sa = { .sa_handler = on_sigbus };
	int nr = files_for(w->cpus);

	if (sigaction(SIGBUS, &sa, NULL)) {
		bench_worker_fail(w, "sigaction: %s", strerror(errno));
		return -1;
	}
	/* A witness that died early must not kill its worker (EPIPE instead). */
	if (witness_opt && signal(SIGPIPE, SIG_IGN) == SIG_ERR) {
		bench_worker_fail(w, "signal: %s", strerror(errno));
		return -1;
	}
	if (bench_map_files(w, &maps, "shared", nr, 2, O_RDWR))
		return -1;
	if (bench_check_maps(w, &maps))
		return -1;
	forks_left = w->param & ~BENCH_PARAM_OPLOG;
	/* Start on different files so that workers rarely collide. */
	next_file = w->idx;
	w->tot[0] = nr;
	return 0;
}

/*
 * Read the byte one page into mapping @addr.  Returns 0 with the byte in
 * @val, or 1 if the read raised SIGBUS.
 */
static int probe(const char *addr, size_t page, char *val)
{
	if (sigsetjmp(bus_env, 1)) {
		__atomic_store_n(&bus_armed, 0, __ATOMIC_RELAXED);
		return 1;
	}
	__atomic_store_n(&bus_armed, 1, __ATOMIC_RELAXED);
	*val = __atomic_load_n(addr + page, __ATOMIC_RELAXED);
	__atomic_store_n(&bus_armed, 0, __ATOMIC_RELAXED);
	return 0;
}

/* Exit statuses of a witness (witness_start()). */
enum { WITNESS_OK, WITNESS_BELOW_EOF, WITNESS_STILL_MAPPED, WITNESS_PIPE };

/*
 * Fork the witness of a truncation of file @i, now two pages long: it
 * reads the byte one page in (mapping the page in its own page table),
 * says so on a pipe, waits for the word that the file has shrunk, and
 * reads the byte again, which must raise SIGBUS.  Returns its pid with
 * the write end of its "shrunk" pipe in @go, or -1 after
 * bench_worker_fail().
 */
static pid_t witness_start(struct bench_worker *w, int i, int *go)
{
	int up[2], down[2];
	char c = 0, val;
	pid_t pid;

	if (pipe(up)) {
		bench_worker_fail(w, "pipe: %s", strerror(errno));
		return -1;
	}
	if (pipe(down)) {
		bench_worker_fail(w, "pipe: %s", strerror(errno));
		close(up[0]);
		close(up[1]);
		return -1;
	}
	pid = fork();
	if (!pid) {
		close(up[0]);
		close(down[1]);
		if (probe(maps.addr[i], maps.page, &val))
			_exit(WITNESS_BELOW_EOF);
		if (write(up[1], &c, 1) != 1 || read(down[0], &c, 1) != 1)
			_exit(WITNESS_PIPE);
		_exit(probe(maps.addr[i], maps.page, &val) ?
		      WITNESS_OK : WITNESS_STILL_MAPPED);
	}
	close(up[1]);
	close(down[0]);
	if (pid < 0) {
		bench_worker_fail(w, "fork: %s", strerror(errno));
		close(up[0]);
		close(down[1]);
		return -1;
	}
	/* Wait until it has mapped the page; if it died, its status says why. */
	while (read(up[0], &c, 1) < 0 && errno == EINTR)
		;
	close(up[0]);
	*go = down[1];
	return pid;
}

/* Tell witness @pid of file @i that the file has shrunk; judge its exit. */
static int witness_finish(struct bench_worker *w, int i, pid_t pid, int go)
{
	char c = 0;
	int st;

	/* EPIPE if it died early (SIGPIPE is ignored): its status says why. */
	if (write(go, &c, 1) != 1 && errno != EPIPE)
		ksft_print_msg("witness pipe: %s\n", strerror(errno));
	close(go);
	if (waitpid(pid, &st, 0) != pid) {
		bench_worker_fail(w, "waitpid: %s", strerror(errno));
		return -1;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == WITNESS_OK)
		return 0;
	errno = EFAULT;
	if (WIFEXITED(st) && WEXITSTATUS(st) == WITNESS_STILL_MAPPED)
		bench_worker_fail(w, "f%d: truncated page still mapped in the witness",
				  i);
	else if (WIFEXITED(st) && WEXITSTATUS(st) == WITNESS_BELOW_EOF)
		bench_worker_fail(w, "f%d: SIGBUS in the witness reading below EOF", i);
	else
		bench_worker_fail(w, "f%d: witness status 0x%x", i, st);
	return -1;
}

/* Grow file @i to two pages and back, checking the mapping each time. */
static int truncate_cycle(struct bench_worker *w, int i)
{
	size_t page = maps.page;
	pid_t witness = 0;
	int go = -1;
	char val;

	if (ftruncate(maps.fd[i], 2 * page)) {
		bench_worker_fail(w, "ftruncate f%d up: %s", i,
				  strerror(errno));
		return -1;
	}
	if (probe(maps.addr[i], page, &val)) {
		errno = EFAULT;
		bench_worker_fail(w, "f%d: SIGBUS reading below EOF after growing it",
				  i);
		return -1;
	}
	if (val) {
		errno = EINVAL;
		bench_worker_fail(w, "f%d: read 0x%x after growing, expected 0",
				  i, (unsigned char)val);
		return -1;
	}
	if (witness_opt) {
		witness = witness_start(w, i, &go);
		if (witness < 0)
			return -1;
	}
	if (ftruncate(maps.fd[i], page)) {
		bench_worker_fail(w, "ftruncate f%d down: %s", i,
				  strerror(errno));
		if (witness) {
			/* Its read() sees the end of the pipe: it exits. */
			close(go);
			waitpid(witness, NULL, 0);
		}
		return -1;
	}
	if (witness && witness_finish(w, i, witness, go))
		return -1;
	if (!probe(maps.addr[i], page, &val)) {
		errno = EFAULT;
		bench_worker_fail(w, "f%d: truncated page still mapped (read 0x%x beyond EOF)",
				  i, (unsigned char)val);
		return -1;
	}
	return 0;
}

static long ft_worker_op(struct bench_worker *w)
{
	struct ft_lock *locks = w->extra;
	__u32 unlocked;
	int i, tries;

	if (bench_fork_wait(w) < 0)
		return -1;
	if (--forks_left)
		return 1;
	forks_left = w->param & ~BENCH_PARAM_OPLOG;

	/* Take the next file nobody else is truncating. */
	for (tries = 0; tries < maps.nr; tries++) {
		i = next_file++ % maps.nr;
		unlocked = 0;
		if (!__atomic_compare_exchange_n(&locks[i].busy, &unlocked, 1,
						 false, __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		if (truncate_cycle(w, i))
			return -1;
		__atomic_store_n(&locks[i].busy, 0, __ATOMIC_RELEASE);
		w->win[0]++;
		return 1;
	}
	w->tot[1]++;
	return 1;
}

static const struct bench_metric ft_metrics[] = {
	{ "truncs_per_ms", BENCH_AGG_RATE, 0 },
	{ "files", BENCH_AGG_MAX, 0 },
	{ "all_busy", BENCH_AGG_SUM, 1 },
};

static const struct bench_desc fork_truncate = {
	.name = "fork_truncate",
	.opts = "n:T:W",
	.usage = "  -n M     files, all mapped by every worker (default: the CPU count)\n"
		 "  -T LIST  truncate every T forks, for each T (default 1,...,10)\n"
		 "  -W       witness: check each truncation in a child forked before it too\n",
	.parse_opt = ft_parse_opt,
	.init = ft_init,
	.setup = ft_setup,
	.extra_size = ft_extra_size,
	.prepare_run = ft_prepare_run,
	.worker_init = ft_worker_init,
	.worker_op = ft_worker_op,
	.metrics = ft_metrics,
	.nr_metrics = ARRAY_SIZE(ft_metrics),
};

int main(int argc, char **argv)
{
	return bench_main(&fork_truncate, argc, argv);
}
