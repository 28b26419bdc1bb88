// SPDX-License-Identifier: GPL-2.0
/*
 * Shared engine of the scalable microbenchmarks, see bench.h and README.
 *
 * The parent never takes part in a measurement.  For every run it clears
 * the shared memfd mapping, forks one child per worker, and each child
 * pins itself, keeps only the memfd open and re-execs the binary with a
 * hidden "--worker" argument list.  The parent then waits (bounded) until
 * every worker is READY, moves the phase word to WARMUP, MEASURE and STOP,
 * timing the MEASURE..STOP window with CLOCK_MONOTONIC, reaps every worker
 * and sums the per-worker slots.
 *
 * All TAP state lives in this file: kselftest.h keeps its counters in
 * static variables, so only one translation unit may report results.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <linux/magic.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <sys/wait.h>

#include "../kselftest.h"
#include "bench.h"
#include "sched_util.h"
#include "sysfs_util.h"
#include "trace_mark.h"

#define BENCH_READY_TIMEOUT_MS	30000
#define BENCH_EXIT_TIMEOUT_MS	60000
#define BENCH_FIRST_OP_TIMEOUT_MS	60000
#define BENCH_POLL_NS		20000000ULL
#define BENCH_MARKER		".scalable-bench"
#define BENCH_SETTINGS_TIMEOUT	900

struct bench_config bench_cfg;

struct bench_mode {
	char name[BENCH_NAME_LEN];
	__u64 param;
	int base;			/* baseline mode, or -1 */
	const char *oplog_stats;	/* "-oplog" modes: the type's stats */
	double mean[BENCH_MAX_COUNTS];	/* by index in bench_cfg.counts */
	bool done[BENCH_MAX_COUNTS];
};

/* Book-keeping of the workers of one run, parent side. */
struct bench_run {
	int nr;
	pid_t *pid;
	int *status;
	bool *reaped;
	int nr_reaped;
};

static const struct bench_desc *bd;
static struct bench_mode modes[BENCH_MAX_MODES];
static int nr_modes;
static const char *prog = "bench";
static int saved_argc;
static char **saved_argv;

static bool opt_w, opt_m, opt_r, opt_q, opt_d, opt_x;
static const char *opt_cpus;
static char skipped_counts[256];

static struct bench_ctl *ctl;
static size_t shm_size;
static int shm_fd = -1;
static int max_workers;
static bool dir_ready;
static int interrupted;
/* OpLog switches a run selected, and their values before we touched them */
#define BENCH_MAX_SWITCHES	4
static struct {
	const struct bench_switch *sw;
	int saved;
} oplog_switches[BENCH_MAX_SWITCHES];
static int nr_oplog_switches;

static_assert(sizeof(struct bench_slot) == BENCH_CACHELINE,
	      "a worker slot must fill exactly one cache line");

static const char *const config_keys[] = {
	"CONFIG_PROVE_LOCKING",
	"CONFIG_DEBUG_SPINLOCK",
	"CONFIG_KASAN",
	"CONFIG_ARCH_USE_CMPXCHG_LOCKREF",
};

static void sleep_ns(__u64 ns)
{
	struct timespec ts = {
		.tv_sec = ns / 1000000000ULL,
		.tv_nsec = ns % 1000000000ULL,
	};

	clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
}

/**
 * bench_parse_uint() - parse a decimal number within [@min, @max]
 * @s: the string
 * @min: smallest accepted value
 * @max: largest accepted value
 * @val: where the value is stored
 *
 * Return: 0, or -1 if @s is not a number in range.
 */
int bench_parse_uint(const char *s, long min, long max, long *val)
{
	return s && !sysfs_parse_range(s, min, max, val) ? 0 : -1;
}

/**
 * bench_write_file() - create (or truncate) a file of @size bytes
 * @path: the file
 * @size: its size; the bytes are written, so the page cache is populated
 *
 * Return: 0, or -1 with errno set.
 */
int bench_write_file(const char *path, size_t size)
{
	char buf[4096];
	size_t done = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	memset(buf, 'x', sizeof(buf));
	while (done < size) {
		n = write(fd, buf, size - done < sizeof(buf) ?
			  size - done : sizeof(buf));
		if (n <= 0) {
			if (!n)
				errno = EIO;
			close(fd);
			return -1;
		}
		done += n;
	}
	return close(fd);
}

/**
 * bench_page_size() - the page size, also the size of the mapped files
 *
 * Return: sysconf(_SC_PAGESIZE), or 4096 if that fails.
 */
size_t bench_page_size(void)
{
	long ps = sysconf(_SC_PAGESIZE);

	return ps > 0 ? (size_t)ps : 4096;
}

/**
 * bench_make_files() - create @subdir/f0 .. f<@nr - 1> in the work dir
 * @subdir: directory below bench_cfg.dir, created if needed
 * @nr: number of files
 * @size: size of each file
 *
 * Parent side.
 *
 * Return: 0, or -1 after printing a diagnostic.
 */
int bench_make_files(const char *subdir, int nr, size_t size)
{
	char path[4200];
	int i;

	snprintf(path, sizeof(path), "%s/%s", bench_cfg.dir, subdir);
	if (mkdir(path, 0755) && errno != EEXIST) {
		ksft_print_msg("mkdir %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (i = 0; i < nr; i++) {
		snprintf(path, sizeof(path), "%s/%s/f%d", bench_cfg.dir, subdir,
			 i);
		if (bench_write_file(path, size)) {
			ksft_print_msg("create %s: %s\n", path, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/**
 * bench_map_files() - map files one after another, an unmapped page apart
 * @w: the worker
 * @m: filled in
 * @subdir: directory below bench_cfg.dir holding f0 .. f<@nr - 1>
 * @nr: number of files
 * @pages: length of each mapping in pages (it may extend beyond EOF)
 * @open_flags: O_RDONLY or O_RDWR
 *
 * Reserves one PROT_NONE area of @nr * (@pages + 1) pages, maps file j
 * PROT_READ and MAP_PRIVATE with MAP_FIXED at page j * (@pages + 1) and
 * unmaps the page after each mapping, so that no two of these VMAs are
 * adjacent.  Nothing is touched, so the VMAs get no anon_vma.
 *
 * Return: 0, or -1 after bench_worker_fail().
 */
int bench_map_files(struct bench_worker *w, struct bench_maps *m,
		    const char *subdir, int nr, int pages, int open_flags)
{
	size_t stride;
	char path[4200], *base;
	struct stat st;
	void *p;
	int i;

	memset(m, 0, sizeof(*m));
	m->nr = nr;
	m->pages = pages;
	m->page = bench_page_size();
	m->fd = calloc(nr, sizeof(*m->fd));
	m->addr = calloc(nr, sizeof(*m->addr));
	m->dev = calloc(nr, sizeof(*m->dev));
	m->ino = calloc(nr, sizeof(*m->ino));
	if (!m->fd || !m->addr || !m->dev || !m->ino) {
		bench_worker_fail(w, "out of memory");
		return -1;
	}
	stride = (pages + 1) * m->page;
	base = mmap(NULL, nr * stride, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED) {
		bench_worker_fail(w, "mmap reservation: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < nr; i++) {
		snprintf(path, sizeof(path), "%s/%s/f%d", bench_cfg.dir, subdir,
			 i);
		m->fd[i] = open(path, open_flags | O_CLOEXEC);
		if (m->fd[i] < 0 || fstat(m->fd[i], &st)) {
			bench_worker_fail(w, "open %s: %s", path,
					  strerror(errno));
			return -1;
		}
		m->dev[i] = st.st_dev;
		m->ino[i] = st.st_ino;
		m->addr[i] = base + i * stride;
		p = mmap(m->addr[i], pages * m->page, PROT_READ,
			 MAP_PRIVATE | MAP_FIXED, m->fd[i], 0);
		if (p != m->addr[i]) {
			bench_worker_fail(w, "mmap %s: %s", path,
					  strerror(errno));
			return -1;
		}
		if (munmap(m->addr[i] + pages * m->page, m->page)) {
			bench_worker_fail(w, "munmap gap: %s", strerror(errno));
			return -1;
		}
	}
	return 0;
}

/**
 * bench_close_files() - close the descriptors, keeping the mappings
 * @m: the mappings
 */
void bench_close_files(struct bench_maps *m)
{
	int i;

	for (i = 0; i < m->nr; i++) {
		if (m->fd[i] >= 0)
			close(m->fd[i]);
		m->fd[i] = -1;
	}
}

/**
 * bench_check_maps() - check the mappings are separate VMAs
 * @w: the worker
 * @m: the mappings
 *
 * Reads /proc/self/maps and requires exactly one entry per file, at the
 * address and with the length it was mapped with.  Also counts the other
 * file-backed VMAs (except the control block) in @m->other_file_vmas.
 *
 * Return: 0, or -1 after bench_worker_fail().
 */
int bench_check_maps(struct bench_worker *w, struct bench_maps *m)
{
	unsigned long start, end, off, ino;
	unsigned int maj, min;
	char line[4400], perms[8];
	int i, *seen, found = 0, ret = -1;
	FILE *f;

	seen = calloc(m->nr, sizeof(*seen));
	f = fopen("/proc/self/maps", "re");
	if (!seen || !f) {
		bench_worker_fail(w, "/proc/self/maps: %s", strerror(errno));
		goto out;
	}
	m->other_file_vmas = 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %7s %lx %x:%x %lu", &start, &end, perms,
			   &off, &maj, &min, &ino) != 7 || !ino)
			continue;
		for (i = 0; i < m->nr; i++)
			if (ino == m->ino[i] &&
			    makedev(maj, min) == m->dev[i])
				break;
		if (i == m->nr) {
			if ((char *)start != (char *)w->ctl)
				m->other_file_vmas++;
			continue;
		}
		seen[i]++;
		found++;
		if ((char *)start != m->addr[i] ||
		    end - start != m->pages * m->page) {
			errno = EINVAL;
			bench_worker_fail(w, "file %d: VMA %lx-%lx, mapped %p + %zu",
					  i, start, end, m->addr[i],
					  m->pages * m->page);
			goto out;
		}
	}
	for (i = 0; i < m->nr; i++) {
		if (seen[i] != 1) {
			errno = EINVAL;
			bench_worker_fail(w, "file %d: %d VMAs in /proc/self/maps, expected 1",
					  i, seen[i]);
			goto out;
		}
	}
	if (found != m->nr) {
		errno = EINVAL;
		bench_worker_fail(w, "%d VMAs of our files, expected %d", found,
				  m->nr);
		goto out;
	}
	ret = 0;
out:
	if (f)
		fclose(f);
	free(seen);
	return ret;
}

/**
 * bench_fork_exec() - fork a child that runs a program, and reap it
 * @w: the worker
 * @path: the program, for execve(); NULL for a child that exits at once
 * @argv: its arguments
 * @envp: its environment
 *
 * Return: 1 (one operation), or -1 after bench_worker_fail() if fork or
 * waitpid fail or the child did not exit with status 0 (127: execve()
 * failed).
 */
long bench_fork_exec(struct bench_worker *w, const char *path,
		     char *const argv[], char *const envp[])
{
	pid_t pid;
	int st;

	pid = fork();
	if (pid < 0) {
		bench_worker_fail(w, "fork: %s", strerror(errno));
		return -1;
	}
	if (!pid) {
		if (path)
			execve(path, argv, envp);
		_exit(path ? 127 : 0);
	}
	if (waitpid(pid, &st, 0) != pid) {
		bench_worker_fail(w, "waitpid: %s", strerror(errno));
		return -1;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		errno = ECHILD;
		if (path)
			bench_worker_fail(w, "%s: status 0x%x, expected exit 0",
					  path, st);
		else
			bench_worker_fail(w, "child status 0x%x, expected exit 0",
					  st);
		return -1;
	}
	return 1;
}

/**
 * bench_fork_wait() - fork a child that exits at once and reap it
 * @w: the worker
 *
 * Return: 1 (one operation), or -1 after bench_worker_fail() if fork or
 * waitpid fail or the child did not exit with status 0.
 */
long bench_fork_wait(struct bench_worker *w)
{
	return bench_fork_exec(w, NULL, NULL, NULL);
}

/**
 * bench_add_mode() - register one mode of the benchmark
 * @name: mode name for TAP names and RESULT lines (no spaces)
 * @param: mode parameter, handed to the workers as bench_worker.param
 *
 * Called from bench_desc.init.
 *
 * Return: 0, or -1 if the table is full.
 */
int bench_add_mode(const char *name, __u64 param)
{
	if (nr_modes >= BENCH_MAX_MODES)
		return -1;
	snprintf(modes[nr_modes].name, BENCH_NAME_LEN, "%s", name);
	modes[nr_modes].param = param;
	modes[nr_modes].base = -1;
	nr_modes++;
	return 0;
}

/**
 * bench_set_baseline() - compare a mode with another one
 * @mode: the name of the mode to compare
 * @base: the name of its baseline, registered before @mode (so measured
 *	first)
 *
 * The RESULT lines of @mode then carry "base=<base> ratio=<r>", r being
 * its mean ops/ms over that of @base at the same worker count.  Called
 * from bench_desc.init, after both bench_add_mode() calls.
 *
 * Return: 0, or -1 if a mode is unknown or @base comes after @mode.
 */
int bench_set_baseline(const char *mode, const char *base)
{
	int i, m = -1, b = -1;

	for (i = 0; i < nr_modes; i++) {
		if (!strcmp(modes[i].name, mode))
			m = i;
		if (!strcmp(modes[i].name, base))
			b = i;
	}
	if (m < 0 || b < 0 || b >= m)
		return -1;
	modes[m].base = b;
	return 0;
}

/**
 * bench_nr_modes() - count the modes registered so far
 *
 * Return: the number of modes.
 */
int bench_nr_modes(void)
{
	return nr_modes;
}

/*
 * The OpLog users' switches, see struct bench_switch.  The inode OpLog
 * has two types, i_readcount and i_writecount; its stats are the former's,
 * the read-only open counts.
 */
const struct bench_switch bench_sw_dcache = {
	.path = "/sys/kernel/debug/dcache_oplog/enabled",
	.stats = "/sys/kernel/debug/oplog/dentry/stats",
};

const struct bench_switch bench_sw_inode = {
	.path = "/sys/kernel/debug/inode_oplog/enabled",
	.stats = "/sys/kernel/debug/oplog/i_readcount/stats",
};

const struct bench_switch bench_sw_inotify = {
	.path = "/sys/kernel/debug/inotify_oplog/enabled",
	.stats = "/sys/kernel/debug/oplog/inotify/stats",
};

const struct bench_switch bench_sw_rmap = {
	.path = "/sys/kernel/debug/rmap_oplog/enabled",
	.stats = "/sys/kernel/debug/oplog/rmap/stats",
};

/**
 * bench_switch_get() - read the run-time switch of an OpLog
 * @sw: the switch, e.g. &bench_sw_dcache
 *
 * Return: the value read (0 or 1); -1 with errno set if there is no
 * switch (a kernel without that OpLog, or debugfs not mounted) or it could
 * not be read.
 */
int bench_switch_get(const struct bench_switch *sw)
{
	long cur;
	int ret;

	ret = sysfs_read_long(sw->path, &cur);
	if (ret) {
		errno = -ret;
		return -1;
	}
	return cur;
}

/**
 * bench_switch_set() - set the run-time switch of an OpLog
 * @sw: the switch, e.g. &bench_sw_dcache
 * @on: 0 or 1, the value to write
 *
 * Return: @on once written; -1 with errno set if there is no switch or it
 * could not be written.
 */
int bench_switch_set(const struct bench_switch *sw, int on)
{
	int ret;

	ret = sysfs_write_long(sw->path, on);
	if (ret) {
		errno = -ret;
		return -1;
	}
	return on;
}

/**
 * bench_add_oplog_mode() - register a mode with an OpLog off and on
 * @sw: the OpLog's switch, e.g. &bench_sw_dcache
 * @name: the mode's name, without suffix
 * @param: its parameter, without BENCH_PARAM_OPLOG
 *
 * Registers "<name>-stock" with @param and, if the switch exists,
 * "<name>-oplog" with @param | BENCH_PARAM_OPLOG, whose RESULT lines carry
 * its ratio to "<name>-stock" (bench_set_baseline()) and oplog_hits=, the
 * growth of the "hits" count of @sw's stats over its runs.  A run selects
 * the switch with bench_select().  Called from bench_desc.init.
 *
 * Return: 0, or -1 if the table is full.
 */
int bench_add_oplog_mode(const struct bench_switch *sw, const char *name,
			 __u64 param)
{
	char stock[BENCH_NAME_LEN], oplog[BENCH_NAME_LEN];

	snprintf(stock, sizeof(stock), "%s-stock", name);
	snprintf(oplog, sizeof(oplog), "%s-oplog", name);
	if (bench_add_mode(stock, param))
		return -1;
	if (bench_switch_get(sw) < 0)
		return 0;
	if (bench_add_mode(oplog, param | BENCH_PARAM_OPLOG) ||
	    bench_set_baseline(oplog, stock))
		return -1;
	modes[nr_modes - 1].oplog_stats = sw->stats;
	return 0;
}

/**
 * bench_select_mode() - parse a -M argument against a table of mode names
 * @arg: the argument: one of @names, or "all"
 * @names: the benchmark's mode names, without suffix
 * @nr: how many
 * @mask: set to the selected modes, bit i for @names[i]
 *
 * Return: 0, or -1 if @arg names no mode (a usage error).
 */
int bench_select_mode(const char *arg, const char *const *names, int nr,
		      int *mask)
{
	int i;

	if (!strcmp(arg, "all")) {
		*mask = (1 << nr) - 1;
		return 0;
	}
	for (i = 0; i < nr; i++) {
		if (!strcmp(arg, names[i])) {
			*mask = 1 << i;
			return 0;
		}
	}
	return -1;
}

/**
 * bench_add_oplog_modes() - bench_add_oplog_mode() for selected modes
 * @sw: the OpLog's switch, e.g. &bench_sw_dcache
 * @names: the benchmark's mode names, without suffix
 * @nr: how many
 * @mask: the selected ones, bit i for @names[i], whose parameter is i
 *
 * Return: 0, or -1 if the table is full.
 */
int bench_add_oplog_modes(const struct bench_switch *sw,
			  const char *const *names, int nr, int mask)
{
	int i;

	for (i = 0; i < nr; i++)
		if ((mask & (1 << i)) &&
		    bench_add_oplog_mode(sw, names[i], i))
			return -1;
	return 0;
}

/**
 * bench_mkdir() - create a directory, saying why not
 * @path: the directory
 *
 * Return: 0, or -1 after a diagnostic.
 */
int bench_mkdir(const char *path)
{
	if (mkdir(path, 0755)) {
		ksft_print_msg("mkdir %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/**
 * bench_create_file() - bench_write_file(), saying why not
 * @path: the file
 * @size: its size in bytes
 *
 * Return: 0, or -1 after a diagnostic.
 */
int bench_create_file(const char *path, size_t size)
{
	if (bench_write_file(path, size)) {
		ksft_print_msg("create %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/**
 * bench_select() - switch an OpLog for a run
 * @sw: the OpLog's switch, e.g. &bench_sw_dcache
 * @param: the run's mode parameter (bench_ctl.param)
 *
 * Parent side, from bench_desc.prepare_run: turns the OpLog on if @param
 * has BENCH_PARAM_OPLOG, off otherwise.  The first call for a switch saves
 * its value; the engine writes it back at the end, also after a failure.
 * Without the switch there is nothing to do (only "-stock" modes exist).
 * A mode that runs more than one OpLog calls it once for each switch.
 *
 * Return: 0, or -1 after a diagnostic if the switch could not be set.
 */
int bench_select(const struct bench_switch *sw, __u64 param)
{
	int i, on = !!(param & BENCH_PARAM_OPLOG);

	for (i = 0; i < nr_oplog_switches; i++)
		if (!strcmp(oplog_switches[i].sw->path, sw->path))
			break;
	if (i == nr_oplog_switches) {
		if (i == BENCH_MAX_SWITCHES) {
			ksft_print_msg("cannot track the OpLog switch %s\n",
				       sw->path);
			return -1;
		}
		oplog_switches[i].sw = sw;
		oplog_switches[i].saved = -1;
		nr_oplog_switches++;
	}
	if (oplog_switches[i].saved < 0)
		oplog_switches[i].saved = bench_switch_get(sw);
	if (oplog_switches[i].saved >= 0 && bench_switch_set(sw, on) != on) {
		ksft_print_msg("cannot write %d to %s: %s\n", on, sw->path,
			       strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Put the OpLog switches back as bench_select() found them.
 * Return: 0, or -1 after a diagnostic if a switch did not take its value.
 */
static int oplog_restore(void)
{
	int i, ret = 0;

	for (i = 0; i < nr_oplog_switches; i++) {
		const struct bench_switch *sw = oplog_switches[i].sw;
		int saved = oplog_switches[i].saved;

		if (saved >= 0 && bench_switch_set(sw, saved) != saved) {
			ksft_print_msg("cannot restore %s to %d: %s\n",
				       sw->path, saved, strerror(errno));
			ret = -1;
		}
		oplog_switches[i].saved = -1;
	}
	return ret;
}

/**
 * bench_arg() - find the arguments of a worker
 * @c: the control block
 * @idx: worker index
 *
 * Return: the BENCH_NR_ARG arguments of worker @idx, written by the parent
 * (bench_desc.prepare_run) before the workers start.
 */
__u64 *bench_arg(struct bench_ctl *c, int idx)
{
	return (__u64 *)((char *)c + c->arg_off) + idx * BENCH_NR_ARG;
}

/**
 * bench_slot() - find the result slot of a worker
 * @c: the control block
 * @idx: worker index
 *
 * Return: the slot of worker @idx.
 */
struct bench_slot *bench_slot(struct bench_ctl *c, int idx)
{
	return (struct bench_slot *)((char *)c + c->slot_off) + idx;
}

/**
 * bench_extra() - find the bench-defined shared area
 * @c: the control block
 *
 * Return: the area of bench_desc.extra_size bytes, or NULL if it is empty.
 */
void *bench_extra(struct bench_ctl *c)
{
	return c->extra_size ? (char *)c + c->extra_off : NULL;
}

/**
 * bench_worker_fail() - report a worker failure
 * @w: the worker
 * @fmt: printf-style message, printed as a TAP diagnostic
 *
 * Prints the message with the worker's identity and records an error code
 * (errno at the time of the call, or EIO) in the worker's slot.  Only the
 * first error code is kept.
 */
void bench_worker_fail(struct bench_worker *w, const char *fmt, ...)
{
	struct bench_slot *slot = bench_slot(w->ctl, w->idx);
	int err = errno ? errno : EIO;
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ksft_print_msg("%s worker %d (cpu %d): %s\n", prog, w->idx, w->cpu,
		       msg);
	fflush(stdout);
	if (!slot->error)
		slot->error = err;
}

/**
 * bench_wait_peers() - wait until every other worker of the run is done
 * @w: the calling worker
 * @timeout_ms: upper bound of the wait
 *
 * A worker's slot is DONE after its bench_desc.worker_finish returned, so
 * whatever a peer publishes there is visible once this returns 0.
 *
 * Return: 0, 1 if a peer failed, or -1 on timeout.
 */
int bench_wait_peers(struct bench_worker *w, long timeout_ms)
{
	__u64 end = now_ns() + timeout_ms * 1000000ULL;
	struct bench_slot *s;
	int i, failed;
	bool all;

	for (;;) {
		all = true;
		failed = 0;
		for (i = 0; i < w->nr_workers; i++) {
			if (i == w->idx)
				continue;
			s = bench_slot(w->ctl, i);
			if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) !=
			    BENCH_STATE_DONE)
				all = false;
			else if (s->error)
				failed = 1;
		}
		if (all)
			return failed;
		if (now_ns() > end)
			return -1;
		sleep_ns(200000);
	}
}

static double bench_sqrt(double x)
{
	double r = x;
	int i;

	if (x <= 0)
		return 0;
	for (i = 0; i < 100; i++)
		r = (r + x / r) / 2;
	return r;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [-c LIST] [-w MS] [-m MS] [-r RUNS] [-q] [-d DIR] [-x] %s[-h]\n"
		"  -c LIST  comma-separated CPU (worker) counts to sweep\n"
		"           (default: 1,2,4,... below nproc, then nproc)\n"
		"  -w MS    warm-up per run (default 1000)\n"
		"  -m MS    measurement per run (default 5000)\n"
		"  -r RUNS  runs per mode and CPU count (default 3)\n"
		"  -q       quick: -w 100 -m 400 -r 2 (explicit -w/-m/-r win)\n"
		"  -d DIR   work directory (default %s%s)\n"
		"  -x       each worker execs its own copy of the binary, so that\n"
		"           workers share no executable file VMAs either\n"
		"%s  -h       this help\n",
		prog, bd->opts && *bd->opts ? "[options] " : "",
		bd->dir ? "" : "/tmp/scalable-", bd->dir ? bd->dir : bd->name,
		bd->usage ? bd->usage : "");
}

/*
 * Parse the options; also run in every worker, on the parent's argument
 * list, so that workers derive the same settings.  Returns 0, 1 for -h,
 * or -1 on a usage error.
 */
static int parse_options(int argc, char **argv, bool verbose)
{
	char optstr[128];
	long v;
	int c;

	snprintf(optstr, sizeof(optstr), ":c:w:m:r:qd:xh%s",
		 bd->opts ? bd->opts : "");
	bench_cfg.warmup_ms = 1000;
	bench_cfg.measure_ms = 5000;
	bench_cfg.runs = 3;
	optind = 1;
	opterr = 0;
	while ((c = getopt(argc, argv, optstr)) != -1) {
		switch (c) {
		case 'c':
			opt_cpus = optarg;
			break;
		case 'w':
			if (bench_parse_uint(optarg, 0, 3600000, &v))
				goto bad;
			bench_cfg.warmup_ms = v;
			opt_w = true;
			break;
		case 'm':
			if (bench_parse_uint(optarg, 1, 3600000, &v))
				goto bad;
			bench_cfg.measure_ms = v;
			opt_m = true;
			break;
		case 'r':
			if (bench_parse_uint(optarg, 1, 1000, &v))
				goto bad;
			bench_cfg.runs = v;
			opt_r = true;
			break;
		case 'q':
			opt_q = true;
			break;
		case 'd':
			if (!*optarg || strlen(optarg) > 3000)
				goto bad;
			snprintf(bench_cfg.dir, sizeof(bench_cfg.dir), "%s",
				 optarg);
			opt_d = true;
			break;
		case 'x':
			opt_x = true;
			break;
		case 'h':
			return 1;
		case ':':
			if (verbose)
				fprintf(stderr, "%s: option -%c needs an argument\n",
					prog, optopt);
			return -1;
		case '?':
			if (verbose)
				fprintf(stderr, "%s: unknown option -%c\n", prog,
					optopt);
			return -1;
		default:
			if (!bd->parse_opt || bd->parse_opt(c, optarg))
				goto bad;
			break;
		}
	}
	if (optind != argc) {
		if (verbose)
			fprintf(stderr, "%s: unexpected argument '%s'\n", prog,
				argv[optind]);
		return -1;
	}
	if (opt_q) {
		if (!opt_w)
			bench_cfg.warmup_ms = 100;
		if (!opt_m)
			bench_cfg.measure_ms = 400;
		if (!opt_r)
			bench_cfg.runs = 2;
	}
	if (!opt_d && bd->dir)
		snprintf(bench_cfg.dir, sizeof(bench_cfg.dir), "%s", bd->dir);
	else if (!opt_d)
		snprintf(bench_cfg.dir, sizeof(bench_cfg.dir),
			 "/tmp/scalable-%s", bd->name);
	if (bench_cfg.dir[0] != '/') {
		char cwd[1024], tmp[4096];

		if (!getcwd(cwd, sizeof(cwd)))
			return -1;
		if (snprintf(tmp, sizeof(tmp), "%s/%s", cwd, bench_cfg.dir) >=
		    (int)sizeof(tmp))
			return -1;
		memcpy(bench_cfg.dir, tmp, sizeof(tmp));
	}
	return 0;
bad:
	if (verbose)
		fprintf(stderr, "%s: bad argument '%s' for -%c\n", prog,
			optarg ? optarg : "", c);
	return -1;
}

/* Worker counts: the -c list, or 1, 2, 4, ... below nproc, then nproc. */
static int parse_counts(void)
{
	char buf[1024], *tok, *save = NULL;
	size_t len;
	long v;
	int n;

	bench_cfg.nr_counts = 0;
	if (!opt_cpus) {
		for (n = 1; n < bench_cfg.nproc; n *= 2)
			bench_cfg.counts[bench_cfg.nr_counts++] = n;
		bench_cfg.counts[bench_cfg.nr_counts++] = bench_cfg.nproc;
		return 0;
	}
	if (strlen(opt_cpus) >= sizeof(buf))
		return -1;
	memcpy(buf, opt_cpus, strlen(opt_cpus) + 1);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (bench_parse_uint(tok, 1, 1 << 20, &v))
			return -1;
		if (v > bench_cfg.nproc) {
			len = strlen(skipped_counts);
			snprintf(skipped_counts + len,
				 sizeof(skipped_counts) - len, "%s%ld",
				 len ? "," : "", v);
			continue;
		}
		if (bench_cfg.nr_counts >= BENCH_MAX_COUNTS)
			return -1;
		bench_cfg.counts[bench_cfg.nr_counts++] = v;
	}
	return 0;
}

static int get_cpus(void)
{
	bench_cfg.nproc = affinity_cpus(bench_cfg.cpu_list,
					ARRAY_SIZE(bench_cfg.cpu_list));
	return bench_cfg.nproc > 0 ? 0 : -1;
}

static int nr_workers_for(int mode, int cpus)
{
	return bd->nr_workers ? bd->nr_workers(mode, cpus) : cpus;
}

static int worker_cpu_for(int idx, int nr, int cpus)
{
	return bd->worker_cpu ? bd->worker_cpu(idx, nr, cpus) : idx;
}

static void print_config(void)
{
	char line[512], found[ARRAY_SIZE(config_keys)][512];
	size_t i, klen;
	FILE *f;

	if (access("/proc/config.gz", R_OK)) {
		ksft_print_msg("config: /proc/config.gz absent or unreadable\n");
		return;
	}
	f = popen("zcat /proc/config.gz 2>/dev/null", "r");
	if (!f) {
		ksft_print_msg("config: cannot run zcat\n");
		return;
	}
	memset(found, 0, sizeof(found));
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		for (i = 0; i < ARRAY_SIZE(config_keys); i++) {
			const char *p = line;

			klen = strlen(config_keys[i]);
			if (!strncmp(p, "# ", 2))
				p += 2;
			if (strncmp(p, config_keys[i], klen) ||
			    (p[klen] != '=' && p[klen] != ' '))
				continue;
			snprintf(found[i], sizeof(found[i]), "%s", line);
		}
	}
	if (pclose(f))
		ksft_print_msg("config: zcat /proc/config.gz failed\n");
	for (i = 0; i < ARRAY_SIZE(config_keys); i++) {
		if (found[i][0])
			ksft_print_msg("config: %s\n", found[i]);
		else
			ksft_print_msg("config: %s not present\n",
				       config_keys[i]);
	}
}

static void print_facts(void)
{
	char counts[512] = "", cpus[512] = "";
	double est_s;
	struct utsname u;
	size_t len;
	int i;

	for (i = 0; i < bench_cfg.nr_counts; i++) {
		len = strlen(counts);
		snprintf(counts + len, sizeof(counts) - len, "%s%d",
			 i ? "," : "", bench_cfg.counts[i]);
	}
	for (i = 0; i < bench_cfg.nproc; i++) {
		len = strlen(cpus);
		if (len > sizeof(cpus) - 16) {
			strcat(cpus, ",...");
			break;
		}
		snprintf(cpus + len, sizeof(cpus) - len, "%s%d",
			 i ? "," : "", bench_cfg.cpu_list[i]);
	}
	if (!uname(&u))
		ksft_print_msg("%s: kernel %s %s\n", bd->name, u.release,
			       u.machine);
	ksft_print_msg("%s: nproc=%d cpus=%s counts=%s\n", bd->name,
		       bench_cfg.nproc, cpus, counts);
	if (skipped_counts[0])
		ksft_print_msg("%s: skipping counts %s (more than nproc=%d)\n",
			       bd->name, skipped_counts, bench_cfg.nproc);
	ksft_print_msg("%s: warmup_ms=%ld measure_ms=%ld runs=%d\n", bd->name,
		       bench_cfg.warmup_ms, bench_cfg.measure_ms,
		       bench_cfg.runs);
	est_s = (double)nr_modes * bench_cfg.nr_counts * bench_cfg.runs *
		(bench_cfg.warmup_ms + bench_cfg.measure_ms) / 1000;
	ksft_print_msg("%s: %d modes x %d counts, about %.1f s of windows%s\n",
		       bd->name, nr_modes, bench_cfg.nr_counts, est_s,
		       est_s > BENCH_SETTINGS_TIMEOUT ?
		       " (more than the kselftest timeout: use -q or fewer counts)" :
		       "");
	print_config();
}

static const char *fs_name(long type)
{
	switch (type) {
	case TMPFS_MAGIC:
		return "tmpfs";
	case EXT4_SUPER_MAGIC:
		return "ext4";
	case BTRFS_SUPER_MAGIC:
		return "btrfs";
	case XFS_SUPER_MAGIC:
		return "xfs";
	case RAMFS_MAGIC:
		return "ramfs";
	default:
		return "other";
	}
}

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	if (remove(path))
		ksft_print_msg("cannot remove %s: %s\n", path, strerror(errno));
	return 0;
}

static void remove_dir(void)
{
	if (!dir_ready)
		return;
	nftw(bench_cfg.dir, rm_entry, 64, FTW_DEPTH | FTW_PHYS);
	dir_ready = false;
}

/* True if @dir is empty or holds the marker of an earlier run. */
static bool dir_is_reusable(const char *dir)
{
	char path[4200];
	struct dirent *de;
	struct stat st;
	bool empty = true;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%s", dir, BENCH_MARKER);
	if (!stat(path, &st))
		return true;
	d = opendir(dir);
	if (!d)
		return false;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			empty = false;
			break;
		}
	}
	closedir(d);
	return empty;
}

/*
 * Create the work directory.  An existing directory is reused only if it is
 * empty or was left behind by an earlier run (it holds our marker file);
 * its content is removed first.
 */
static int make_dir(void)
{
	char path[4200];
	struct statfs sfs;
	int fd;

	if (mkdir(bench_cfg.dir, 0755)) {
		if (errno != EEXIST) {
			ksft_print_msg("mkdir %s: %s\n", bench_cfg.dir,
				       strerror(errno));
			return -1;
		}
		if (!dir_is_reusable(bench_cfg.dir)) {
			ksft_print_msg("refusing to use non-empty %s (no %s marker)\n",
				       bench_cfg.dir, BENCH_MARKER);
			return -1;
		}
		dir_ready = true;
		remove_dir();
		if (mkdir(bench_cfg.dir, 0755)) {
			ksft_print_msg("mkdir %s: %s\n", bench_cfg.dir,
				       strerror(errno));
			return -1;
		}
	}
	dir_ready = true;
	snprintf(path, sizeof(path), "%s/%s", bench_cfg.dir, BENCH_MARKER);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		ksft_print_msg("create %s: %s\n", path, strerror(errno));
		return -1;
	}
	close(fd);
	if (statfs(bench_cfg.dir, &sfs)) {
		ksft_print_msg("statfs %s: %s\n", bench_cfg.dir,
			       strerror(errno));
		return -1;
	}
	ksft_print_msg("%s: workdir %s fs=%s (f_type 0x%lx)\n", bd->name,
		       bench_cfg.dir, fs_name(sfs.f_type),
		       (unsigned long)sfs.f_type);
	return 0;
}

static void exe_copy_path(char *buf, size_t size, int idx)
{
	snprintf(buf, size, "%s/.exe/w%d", bench_cfg.dir, idx);
}

/* -x: one private copy of the executable per worker index. */
static int copy_exe(void)
{
	char path[4200];
	int in, out, i, err, ret = 0;

	snprintf(path, sizeof(path), "%s/.exe", bench_cfg.dir);
	if (mkdir(path, 0755)) {
		ksft_print_msg("mkdir %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (i = 0; i < max_workers && !ret; i++) {
		in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
		if (in < 0)
			in = open(saved_argv[0], O_RDONLY | O_CLOEXEC);
		exe_copy_path(path, sizeof(path), i);
		out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
		err = in < 0 || out < 0 ? -errno : sysfs_copy_fd(in, out);
		if (err) {
			ksft_print_msg("copy executable to %s: %s\n", path,
				       strerror(-err));
			ret = -1;
		}
		if (in >= 0)
			close(in);
		if (out >= 0 && close(out))
			ret = -1;
	}
	if (!ret)
		ksft_print_msg("%s: workers exec private copies %s/.exe/w<i>\n",
			       bd->name, bench_cfg.dir);
	return ret;
}

static size_t align_up(size_t x, size_t a)
{
	return (x + a - 1) / a * a;
}

static int make_shm(int max_cpus)
{
	size_t arg_off, slot_off, extra_off, extra;
	int i;

	max_workers = 0;
	for (i = 0; i < nr_modes; i++) {
		int j;

		for (j = 0; j < bench_cfg.nr_counts; j++) {
			int n = nr_workers_for(i, bench_cfg.counts[j]);

			if (n > max_workers)
				max_workers = n;
		}
	}
	extra = bd->extra_size ? bd->extra_size(max_cpus) : 0;
	arg_off = align_up(sizeof(struct bench_ctl), BENCH_CACHELINE);
	slot_off = align_up(arg_off + max_workers * BENCH_NR_ARG *
			    sizeof(__u64), BENCH_CACHELINE);
	extra_off = align_up(slot_off + max_workers *
			     sizeof(struct bench_slot), BENCH_CACHELINE);
	shm_size = align_up(extra_off + extra, 4096);

	shm_fd = memfd_create("scalable-bench", MFD_CLOEXEC);
	if (shm_fd < 0) {
		/* No memfd (no tmpfs?): an unlinked file in the work dir. */
		char path[4200];

		snprintf(path, sizeof(path), "%s/.ctl", bench_cfg.dir);
		shm_fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (shm_fd < 0 || unlink(path))
			return -1;
		ksft_print_msg("%s: memfd_create failed, using %s\n", bd->name,
			       path);
	}
	if (ftruncate(shm_fd, shm_size))
		return -1;
	ctl = mmap(NULL, shm_size, PROT_READ | PROT_WRITE, MAP_SHARED, shm_fd,
		   0);
	if (ctl == MAP_FAILED) {
		ctl = NULL;
		return -1;
	}
	ctl->arg_off = arg_off;
	ctl->slot_off = slot_off;
	ctl->extra_off = extra_off;
	ctl->extra_size = extra;
	return 0;
}

static void on_signal(int sig)
{
	(void)sig;
	__atomic_store_n(&interrupted, 1, __ATOMIC_RELAXED);
}

static bool is_interrupted(void)
{
	return __atomic_load_n(&interrupted, __ATOMIC_RELAXED);
}

/* In the forked child: keep only the memfd, pin, and re-exec as a worker. */
static void __noreturn
spawn_worker(int idx, int nr, int cpus, int cpu, int mode, pid_t parent)
{
	char a_fd[16], a_idx[16], a_nr[16], a_cpus[16], a_cpu[16], a_mode[16];
	char a_param[32];
	char **argv;
	int i, n = 0;

	/* Reset what the parent installed, and die with the parent. */
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(126);
	if (fcntl(shm_fd, F_SETFD, 0))
		_exit(126);
#ifdef SYS_close_range
	if ((shm_fd > 3 && syscall(SYS_close_range, 3, shm_fd - 1, 0)) ||
	    syscall(SYS_close_range, shm_fd + 1, ~0U, 0))
#endif
		for (i = 3; i < 1024; i++)
			if (i != shm_fd)
				close(i);

	if (pin_cpu(cpu))
		_exit(125);

	snprintf(a_fd, sizeof(a_fd), "%d", shm_fd);
	snprintf(a_idx, sizeof(a_idx), "%d", idx);
	snprintf(a_nr, sizeof(a_nr), "%d", nr);
	snprintf(a_cpus, sizeof(a_cpus), "%d", cpus);
	snprintf(a_cpu, sizeof(a_cpu), "%d", cpu);
	snprintf(a_mode, sizeof(a_mode), "%d", mode);
	snprintf(a_param, sizeof(a_param), "%llu",
		 (unsigned long long)modes[mode].param);
	argv = calloc(saved_argc + 10, sizeof(*argv));
	if (!argv)
		_exit(124);
	argv[n++] = saved_argv[0];
	argv[n++] = "--worker";
	argv[n++] = a_fd;
	argv[n++] = a_idx;
	argv[n++] = a_nr;
	argv[n++] = a_cpus;
	argv[n++] = a_cpu;
	argv[n++] = a_mode;
	argv[n++] = a_param;
	for (i = 1; i < saved_argc; i++)
		argv[n++] = saved_argv[i];
	argv[n] = NULL;
	if (opt_x) {
		char path[4200];

		exe_copy_path(path, sizeof(path), idx);
		execve(path, argv, environ);
		_exit(123);
	}
	execve("/proc/self/exe", argv, environ);
	/* No /proc: fall back to the path we were started with. */
	if (strchr(saved_argv[0], '/'))
		execve(saved_argv[0], argv, environ);
	_exit(123);
}

/* Reap the workers that have exited, without waiting. */
static void reap_nowait(struct bench_run *r)
{
	int i, st;

	for (i = 0; i < r->nr; i++) {
		if (r->reaped[i] || r->pid[i] <= 0)
			continue;
		if (waitpid(r->pid[i], &st, WNOHANG) == r->pid[i]) {
			r->reaped[i] = true;
			r->status[i] = st;
			r->nr_reaped++;
		}
	}
}

/*
 * Sleep until @deadline, watching the workers.  Returns 0, or -1 if a
 * worker exited early or the parent was asked to stop.
 */
static int watch_until(struct bench_run *r, __u64 deadline)
{
	__u64 now;

	for (;;) {
		if (is_interrupted())
			return -1;
		reap_nowait(r);
		if (r->nr_reaped)
			return -1;
		now = now_ns();
		if (now >= deadline)
			return 0;
		sleep_ns(deadline - now < BENCH_POLL_NS ? deadline - now :
			 BENCH_POLL_NS);
	}
}

/* Has any worker of @r published an operation counted in MEASURE? */
static bool any_op_counted(struct bench_run *r)
{
	int i;

	/*
	 * Each worker writes its @ops once in MEASURE, see worker_main();
	 * only whether one is non-zero matters, so no ordering is needed.
	 */
	for (i = 0; i < r->nr; i++)
		if (__atomic_load_n(&bench_slot(ctl, i)->ops, __ATOMIC_RELAXED))
			return true;
	return false;
}

/*
 * Keep MEASURE open past -m until a worker has counted an operation, for
 * at most BENCH_FIRST_OP_TIMEOUT_MS more.  A window shorter than one
 * operation (a fork under a debug kernel in TCG can outlast a checking
 * run's 200 ms) counts none and has no rate.  Called once the -m window
 * has passed, so a normal run reads each slot once.
 */
static int watch_first_op(struct bench_run *r, __u64 t0, bool *extended)
{
	__u64 deadline = t0 + (bench_cfg.measure_ms +
			       BENCH_FIRST_OP_TIMEOUT_MS) * 1000000ULL;

	*extended = false;
	while (!any_op_counted(r) && now_ns() < deadline) {
		*extended = true;
		if (watch_until(r, now_ns() + BENCH_POLL_NS))
			return -1;
	}
	return 0;
}

static void set_phase(__u32 phase)
{
	__atomic_store_n(&ctl->phase, phase, __ATOMIC_RELEASE);
	/* Close the tracer's window, also when a failed run is torn down. */
	if (phase == BENCH_PHASE_STOP)
		trace_window_stop();
}

static void kill_workers(struct bench_run *r)
{
	int i;

	set_phase(BENCH_PHASE_STOP);
	for (i = 0; i < r->nr; i++)
		if (!r->reaped[i] && r->pid[i] > 0)
			kill(r->pid[i], SIGKILL);
	for (i = 0; i < r->nr; i++) {
		if (r->reaped[i] || r->pid[i] <= 0)
			continue;
		if (waitpid(r->pid[i], &r->status[i], 0) == r->pid[i]) {
			r->reaped[i] = true;
			r->nr_reaped++;
		}
	}
}

struct run_result {
	__u64 ops;
	double window_ms;
	double rate;
	double win_rate[BENCH_NR_WIN];
	__u64 win_sum[BENCH_NR_WIN];
	__u64 tot_sum[BENCH_NR_TOT];
	__u64 tot_max[BENCH_NR_TOT];
};

static void describe_status(int idx, int st)
{
	if (WIFEXITED(st) && WEXITSTATUS(st))
		ksft_print_msg("%s: worker %d exited with status %d\n",
			       bd->name, idx, WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		ksft_print_msg("%s: worker %d killed by signal %d\n",
			       bd->name, idx, WTERMSIG(st));
}

/*
 * The count @key ("hits", "queued") of an OpLog type's stats file
 * (oplog_stats_show() in lib/oplog.c), or -1 if it cannot be read.  An
 * "-oplog" mode's RESULT line carries the growth of "hits" over the
 * mode's runs, so that a mode whose OpLog never took the fast path shows
 * oplog_hits=0; the tracer's window, that of "queued": every operation the
 * OpLog took, on its fast path or after a miss (an inotify log asking for
 * more room, say).  Only the mode's own type counts: the dentry OpLog also
 * hits during an inotify benchmark.
 */
static long long oplog_count(const char *stats, const char *key)
{
	return sysfs_stat(stats, key);
}

static long long oplog_hits(const char *stats)
{
	return oplog_count(stats, "hits");
}

/* One run of @mode on @cpus CPUs.  Returns 0 or -1 (failed). */

static int run_once(int mode, int cpus, struct run_result *res)
{
	struct bench_run r = { 0 };
	__u64 t0, t1, deadline;
	struct bench_slot *s;
	pid_t parent = getpid();
	int i, k, ret = -1;
	bool ready, extended = false, traced = false;
	const char *stats = modes[mode].oplog_stats;
	long long hits = TRACE_NO_HITS;

	r.nr = nr_workers_for(mode, cpus);
	r.pid = calloc(r.nr, sizeof(*r.pid));
	r.status = calloc(r.nr, sizeof(*r.status));
	r.reaped = calloc(r.nr, sizeof(*r.reaped));
	if (!r.pid || !r.status || !r.reaped) {
		ksft_print_msg("%s: out of memory\n", bd->name);
		goto out_free;
	}

	memset((char *)ctl + ctl->arg_off, 0, shm_size - ctl->arg_off);
	ctl->phase = BENCH_PHASE_READY;
	ctl->nr_workers = r.nr;
	ctl->cpus = cpus;
	ctl->mode = mode;
	ctl->param = modes[mode].param;
	if (bd->prepare_run && bd->prepare_run(ctl))
		goto out_free;

	fflush(stdout);
	fflush(stderr);
	for (i = 0; i < r.nr; i++) {
		int cpu_idx = worker_cpu_for(i, r.nr, cpus);

		r.pid[i] = fork();
		if (r.pid[i] < 0) {
			ksft_print_msg("%s: fork: %s\n", bd->name,
				       strerror(errno));
			goto out_kill;
		}
		if (!r.pid[i])
			spawn_worker(i, r.nr, cpus,
				     bench_cfg.cpu_list[cpu_idx], mode, parent);
	}

	/* Every worker READY (its files open and mapped) within the bound. */
	deadline = now_ns() + BENCH_READY_TIMEOUT_MS * 1000000ULL;
	for (;;) {
		ready = true;
		for (i = 0; i < r.nr; i++)
			if (__atomic_load_n(&bench_slot(ctl, i)->state,
					    __ATOMIC_ACQUIRE) ==
			    BENCH_STATE_STARTING)
				ready = false;
		if (ready)
			break;
		reap_nowait(&r);
		if (r.nr_reaped || is_interrupted())
			goto out_kill;
		if (now_ns() > deadline) {
			ksft_print_msg("%s: workers not ready after %d ms\n",
				       bd->name, BENCH_READY_TIMEOUT_MS);
			goto out_kill;
		}
		sleep_ns(1000000);
	}
	for (i = 0; i < r.nr; i++) {
		if (bench_slot(ctl, i)->state != BENCH_STATE_READY) {
			ksft_print_msg("%s: worker %d failed to set up\n",
				       bd->name, i);
			goto out_kill;
		}
	}

	set_phase(BENCH_PHASE_WARMUP);
	if (watch_until(&r, now_ns() +
			bench_cfg.warmup_ms * 1000000ULL))
		goto out_kill;
	/*
	 * The tracer's window: what the workers do between the two marks.
	 * An "-oplog" mode's accepted operations are read on both sides of
	 * it (outside the marks), so that the host can tell how many
	 * operations its OpLog served.
	 */
	if (stats && trace_enabled())
		hits = oplog_count(stats, "queued");
	trace_window_start();
	traced = true;
	set_phase(BENCH_PHASE_MEASURE);
	t0 = now_ns();
	if (watch_until(&r, t0 + bench_cfg.measure_ms * 1000000ULL) ||
	    watch_first_op(&r, t0, &extended))
		goto out_kill;
	set_phase(BENCH_PHASE_STOP);
	if (hits >= 0) {
		long long h1 = oplog_count(stats, "queued");

		hits = h1 >= 0 ? h1 - hits : -1;
	}
	t1 = now_ns();
	if (extended)
		ksft_print_msg("%s %s cpus=%d: window extended to %.1f ms for an operation\n",
			       bd->name, modes[mode].name, cpus,
			       (t1 - t0) / 1e6);

	deadline = t1 + BENCH_EXIT_TIMEOUT_MS * 1000000ULL;
	while (r.nr_reaped < r.nr) {
		reap_nowait(&r);
		if (r.nr_reaped == r.nr)
			break;
		if (is_interrupted())
			goto out_kill;
		if (now_ns() > deadline) {
			ksft_print_msg("%s: workers did not exit within %d ms\n",
				       bd->name, BENCH_EXIT_TIMEOUT_MS);
			goto out_kill;
		}
		sleep_ns(1000000);
	}

	ret = 0;
	memset(res, 0, sizeof(*res));
	res->window_ms = (t1 - t0) / 1e6;
	for (i = 0; i < r.nr; i++) {
		s = bench_slot(ctl, i);
		if (!WIFEXITED(r.status[i]) || WEXITSTATUS(r.status[i]) ||
		    s->state != BENCH_STATE_DONE || s->error) {
			describe_status(i, r.status[i]);
			if (s->error)
				ksft_print_msg("%s: worker %d error %d (%s)\n",
					       bd->name, i, s->error,
					       strerror(s->error));
			ret = -1;
			continue;
		}
		res->ops += s->ops;
		res->rate += s->ops;
		for (k = 0; k < BENCH_NR_WIN; k++) {
			res->win_rate[k] += s->win[k];
			res->win_sum[k] += s->win[k];
		}
		for (k = 0; k < BENCH_NR_TOT; k++) {
			res->tot_sum[k] += s->tot[k];
			if (s->tot[k] > res->tot_max[k])
				res->tot_max[k] = s->tot[k];
		}
	}
	res->rate /= res->window_ms;
	for (k = 0; k < BENCH_NR_WIN; k++)
		res->win_rate[k] /= res->window_ms;
	goto out_free;

out_kill:
	for (i = 0; i < r.nr; i++) {
		if (r.reaped[i]) {
			describe_status(i, r.status[i]);
			s = bench_slot(ctl, i);
			if (s->error)
				ksft_print_msg("%s: worker %d error %d (%s)\n",
					       bd->name, i, s->error,
					       strerror(s->error));
		}
	}
	kill_workers(&r);
out_free:
	if (traced)
		trace_window_report_hits(bd->name, modes[mode].name, cpus,
					 ret ? 0 : res->ops, !ret, hits,
					 !ret && hits != TRACE_NO_HITS &&
					 bd->served_ops ?
					 bd->served_ops(res->win_sum) : 0);
	free(r.pid);
	free(r.status);
	free(r.reaped);
	return ret;
}

/* All runs of one (mode, cpus) pair: one RESULT line, one TAP result. */
static void run_pair(int mode, int cpus, int count_idx)
{
	struct run_result *res;
	double mean = 0, var = 0, v;
	const char *stats = modes[mode].oplog_stats;
	long long hits0 = stats ? oplog_hits(stats) : -1, hits1;
	char extra[512] = "";
	int i, k, done = 0;
	__u64 t;
	size_t len;

	res = calloc(bench_cfg.runs, sizeof(*res));
	if (!res)
		ksft_exit_fail_msg("out of memory\n");
	for (i = 0; i < bench_cfg.runs; i++) {
		if (is_interrupted() || run_once(mode, cpus, &res[i]))
			break;
		ksft_print_msg("%s %s cpus=%d run %d/%d: %.3f ops/ms (window %.1f ms)\n",
			       bd->name, modes[mode].name, cpus, i + 1,
			       bench_cfg.runs, res[i].rate, res[i].window_ms);
		done++;
	}
	for (i = 0; i < done; i++)
		mean += res[i].rate / done;
	for (i = 0; i < done; i++)
		var += (res[i].rate - mean) * (res[i].rate - mean);
	if (done > 1)
		var /= done - 1;

	for (k = 0; k < bd->nr_metrics; k++) {
		const struct bench_metric *m = &bd->metrics[k];

		len = strlen(extra);
		if (m->agg == BENCH_AGG_RATE) {
			v = 0;
			for (i = 0; i < done; i++)
				v += res[i].win_rate[m->idx] / done;
			snprintf(extra + len, sizeof(extra) - len, " %s=%.3f",
				 m->name, v);
			continue;
		}
		t = 0;
		for (i = 0; i < done; i++) {
			if (m->agg == BENCH_AGG_SUM)
				t += res[i].tot_sum[m->idx];
			else if (res[i].tot_max[m->idx] > t)
				t = res[i].tot_max[m->idx];
		}
		snprintf(extra + len, sizeof(extra) - len, " %s=%llu", m->name,
			 (unsigned long long)t);
	}
	if (done) {
		modes[mode].mean[count_idx] = mean;
		modes[mode].done[count_idx] = true;
	}
	k = modes[mode].base;
	if (k >= 0 && done && modes[k].done[count_idx] &&
	    modes[k].mean[count_idx] > 0) {
		len = strlen(extra);
		snprintf(extra + len, sizeof(extra) - len, " base=%s ratio=%.3f",
			 modes[k].name, mean / modes[k].mean[count_idx]);
	}
	hits1 = hits0 >= 0 ? oplog_hits(stats) : -1;
	if (hits1 >= 0) {
		len = strlen(extra);
		snprintf(extra + len, sizeof(extra) - len, " oplog_hits=%lld",
			 hits1 - hits0);
	}
	len = strlen(extra);
	snprintf(extra + len, sizeof(extra) - len, "%s%s",
		 opt_x ? " exe=private" : "",
		 done == bench_cfg.runs ? "" : " status=fail");
	ksft_print_msg("RESULT bench=%s mode=%s cpus=%d ops_per_ms=%.3f runs=%d stddev=%.3f%s\n",
		       bd->name, modes[mode].name, cpus, mean, done,
		       bench_sqrt(var), extra);
	if (done == bench_cfg.runs)
		ksft_test_result_pass("%s %s cpus=%d\n", bd->name,
				      modes[mode].name, cpus);
	else
		ksft_test_result_fail("%s %s cpus=%d\n", bd->name,
				      modes[mode].name, cpus);
	free(res);
}

static int worker_main(int argc, char **argv)
{
	long fd, idx, nr, cpus, cpu, mode;
	__u64 ops = 0, ops0 = 0, win0[BENCH_NR_WIN] = { 0 };
	struct bench_worker w = { 0 };
	struct bench_slot *slot;
	bool measuring = false, published = false;
	unsigned long long param;
	__u32 phase;
	struct stat st;
	cpu_set_t set;
	char *end;
	long ret;
	int k;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 9 || bench_parse_uint(argv[2], 0, INT_MAX, &fd) ||
	    bench_parse_uint(argv[3], 0, INT_MAX, &idx) ||
	    bench_parse_uint(argv[4], 1, INT_MAX, &nr) ||
	    bench_parse_uint(argv[5], 1, INT_MAX, &cpus) ||
	    bench_parse_uint(argv[6], 0, CPU_SETSIZE - 1, &cpu) ||
	    bench_parse_uint(argv[7], 0, BENCH_MAX_MODES - 1, &mode)) {
		fprintf(stderr, "%s: bad --worker arguments\n", prog);
		return 2;
	}
	errno = 0;
	param = strtoull(argv[8], &end, 10);
	if (errno || *end)
		return 2;
	argv[8] = argv[0];
	if (parse_options(argc - 8, argv + 8, false) || fstat(fd, &st))
		return 2;
	ctl = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   0);
	if (ctl == MAP_FAILED)
		return 3;
	close(fd);
	/* fork benchmarks: the control block must not join every fork */
	madvise(ctl, st.st_size, MADV_DONTFORK);
	if (idx >= (long)ctl->nr_workers || nr != (long)ctl->nr_workers ||
	    mode != (long)ctl->mode || param != ctl->param)
		return 3;
	slot = bench_slot(ctl, idx);

	w.idx = idx;
	w.nr_workers = nr;
	w.cpus = cpus;
	w.cpu = cpu;
	w.mode = mode;
	w.param = param;
	w.arg = bench_arg(ctl, idx);
	w.ctl = ctl;
	w.extra = bench_extra(ctl);

	if (sched_getaffinity(0, sizeof(set), &set) || CPU_COUNT(&set) != 1 ||
	    !CPU_ISSET(cpu, &set)) {
		bench_worker_fail(&w, "not pinned to cpu %ld", cpu);
		goto fail;
	}
	if (bd->init && bd->init()) {
		bench_worker_fail(&w, "init failed");
		goto fail;
	}
	if (bd->worker_init && bd->worker_init(&w)) {
		if (!slot->error)
			bench_worker_fail(&w, "set-up failed");
		goto fail;
	}
	__atomic_store_n(&slot->state, BENCH_STATE_READY, __ATOMIC_RELEASE);

	while ((phase = __atomic_load_n(&ctl->phase, __ATOMIC_ACQUIRE)) ==
	       BENCH_PHASE_READY)
		sleep_ns(100000);

	for (;;) {
		phase = __atomic_load_n(&ctl->phase, __ATOMIC_ACQUIRE);
		if (phase == BENCH_PHASE_MEASURE && !measuring) {
			measuring = true;
			ops0 = ops;
			memcpy(win0, w.win, sizeof(win0));
		} else if (phase >= BENCH_PHASE_STOP) {
			break;
		}
		ret = bd->worker_op(&w);
		if (ret < 0) {
			if (!slot->error)
				bench_worker_fail(&w, "operation failed");
			goto fail;
		}
		ops += ret;
		if (measuring && !published && ops != ops0) {
			/* For any_op_counted(): the run may stop now. */
			__atomic_store_n(&slot->ops, ops - ops0,
					 __ATOMIC_RELAXED);
			published = true;
		}
	}
	if (!measuring) {
		/* Never saw MEASURE (the parent aborted): nothing counted. */
		ops0 = ops;
		memcpy(win0, w.win, sizeof(win0));
	}
	slot->ops = ops - ops0;
	for (k = 0; k < BENCH_NR_WIN; k++)
		slot->win[k] = w.win[k] - win0[k];
	if (bd->worker_finish && bd->worker_finish(&w)) {
		if (!slot->error)
			bench_worker_fail(&w, "final check failed");
		goto fail;
	}
	memcpy(slot->tot, w.tot, sizeof(slot->tot));
	__atomic_store_n(&slot->state, BENCH_STATE_DONE, __ATOMIC_RELEASE);
	return 0;

fail:
	memcpy(slot->tot, w.tot, sizeof(slot->tot));
	__atomic_store_n(&slot->state, BENCH_STATE_DONE, __ATOMIC_RELEASE);
	return 1;
}

/* Return: 0, or -1 if an OpLog switch could not be put back. */
static int cleanup_all(void)
{
	int ret;

	if (bd->cleanup)
		bd->cleanup();
	ret = oplog_restore();
	remove_dir();
	return ret;
}

/**
 * bench_main() - entry point of a benchmark program
 * @desc: the benchmark
 * @argc: from main()
 * @argv: from main()
 *
 * Runs the whole sweep in the parent, or the worker side when started
 * with the hidden "--worker" argument list.
 *
 * Return: the process exit code (KSFT_PASS, KSFT_FAIL or KSFT_SKIP); the
 * parent does not return but exits through kselftest.h.
 */
int bench_main(const struct bench_desc *desc, int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	int i, j, ret, max_cpus = 0;

	bd = desc;
	prog = desc->name;
	saved_argc = argc;
	saved_argv = argv;
	if (argc > 1 && !strcmp(argv[1], "--worker"))
		return worker_main(argc, argv);

	ret = parse_options(argc, argv, true);
	if (ret > 0) {
		usage(stdout);
		return KSFT_PASS;
	}
	if (ret < 0) {
		usage(stderr);
		return KSFT_FAIL;
	}
	if (get_cpus())
		ksft_exit_fail_msg("sched_getaffinity: %s\n", strerror(errno));
	if (parse_counts()) {
		fprintf(stderr, "%s: bad -c list '%s'\n", prog, opt_cpus);
		usage(stderr);
		return KSFT_FAIL;
	}

	ksft_print_header();
	ret = desc->init ? desc->init() : 0;
	if (ret == KSFT_SKIP)
		ksft_exit_skip("%s: a kernel feature it needs is missing\n",
			       prog);
	if (ret)
		ksft_exit_fail_msg("%s: initialisation failed\n", prog);
	print_facts();
	if (!bench_cfg.nr_counts)
		ksft_exit_skip("%s: no usable CPU count\n", prog);
	if (!nr_modes)
		ksft_exit_fail_msg("%s: no mode selected\n", prog);
	for (i = 0; i < bench_cfg.nr_counts; i++)
		if (bench_cfg.counts[i] > max_cpus)
			max_cpus = bench_cfg.counts[i];

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	if (make_dir()) {
		cleanup_all();
		ksft_exit_fail_msg("%s: cannot set up the work directory\n",
				   prog);
	}
	if (make_shm(max_cpus)) {
		cleanup_all();
		ksft_exit_fail_msg("shared memory: %s\n", strerror(errno));
	}
	ret = opt_x ? copy_exe() : 0;
	if (!ret && desc->setup)
		ret = desc->setup(max_cpus);
	if (ret) {
		cleanup_all();
		if (ret == KSFT_SKIP)
			ksft_exit_skip("%s: set-up not supported here\n", prog);
		ksft_exit_fail_msg("%s: set-up failed\n", prog);
	}

	ksft_set_plan(nr_modes * bench_cfg.nr_counts);
	for (i = 0; i < nr_modes && !is_interrupted(); i++)
		for (j = 0; j < bench_cfg.nr_counts && !is_interrupted(); j++)
			run_pair(i, bench_cfg.counts[j], j);

	ret = cleanup_all();
	if (is_interrupted())
		ksft_exit_fail_msg("%s: interrupted\n", prog);
	if (ret)
		ksft_exit_fail_msg("%s: an OpLog switch was left as the runs set it\n",
				   prog);
	ksft_finished();
}
