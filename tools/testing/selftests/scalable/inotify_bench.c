// SPDX-License-Identifier: GPL-2.0
/*
 * inotify_bench: writers modify watched files, one reader drains the queue.
 *
 * The reader is the last worker: a re-exec'd process pinned to the last
 * CPU of the run that owns the only inotify instance and loops poll() +
 * read() into a 64 KiB buffer.  "per-file-watch": one watch per file;
 * "dir-watch": one watch on the directory DIR/i holding all the files, so
 * every event carries the file's name.  The other max(1, cpus - 1)
 * workers are writers, pinned to the other CPUs (with one CPU the writer
 * shares it with the reader); each owns a disjoint set of F files and
 * loops over it: open(O_WRONLY), pwrite() one byte, close().  Every event
 * goes through the group's notification queue, one spinlock and one wait
 * queue shared by all writers and the reader.
 *
 * Checks: per file (by watch descriptor, or by name with dir-watch), the
 * reader must see MODIFY, CLOSE_WRITE, MODIFY, ... in that order, and at
 * the end (the writers publish how often they modified each file, the
 * reader drains the queue) as many MODIFY and CLOSE_WRITE events as
 * modifications.  With -e modify only IN_MODIFY is watched: inotify
 * merges an event into an identical one at the queue tail, so the reader
 * must then see between 1 and the number of modifications per modified
 * file, and the difference is reported as "merged".  If the queue
 * overflows (IN_Q_OVERFLOW) events are lost, the exact checks are skipped
 * for that run and the overflows are reported.
 *
 * With CONFIG_INOTIFY_OPLOG (per-CPU operation logs instead of the one
 * notification queue), each mode runs "-stock" with the OpLog switched off
 * through /sys/kernel/debug/inotify_oplog/enabled, then "-oplog" with it
 * on (restored at the end); the RESULT lines of the latter carry its
 * ratio to the former.  Without it, only the "-stock" modes run.
 *
 * ops_per_ms is events read per ms; mods_per_ms is modifications per ms.
 * The reader also prints, per run, the events it read, the modifications,
 * "merged" and the overflows, and the deltas of the OpLog's statistics
 * (/sys/kernel/debug/oplog/inotify/stats) where that file exists.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/inotify.h>

#include "../kselftest.h"
#include "bench.h"
#include "sched_util.h"
#include "sysfs_util.h"

#define IB_BUF_SIZE		65536
#define IB_POLL_MS		20
#define IB_DRAIN_MS		10000
#define IB_SYSCTL_EVENTS	"/proc/sys/fs/inotify/max_queued_events"
#define IB_SYSCTL_WATCHES	"/proc/sys/fs/inotify/max_user_watches"
/* Lines of the OpLog statistics (bench_sw_inotify.stats) kept, at most */
#define IB_MAX_STATS		32
/* The files live in DIR/IB_SUBDIR, the directory that dir-watch watches */
#define IB_SUBDIR		"i"

/* bench_worker.param: the index in mode_names, plus BENCH_PARAM_OPLOG */
#define IB_DIR_WATCH		0x1
#define IB_NR_MODES		2

/* Per-file state of the reader. */
struct ib_file {
	int wd;
	bool want_close;	/* next event must be CLOSE_WRITE */
	__u64 modify;
	__u64 close;
};

static const char * const mode_names[IB_NR_MODES] = {
	"per-file-watch", "dir-watch",
};

static const char * const modify_names[IB_NR_MODES] = {
	"per-file-watch-modify", "dir-watch-modify",
};

/* OpLog statistics, "name value" lines */
struct ib_stats {
	int nr;
	char name[IB_MAX_STATS][32];
	long long val[IB_MAX_STATS];
};

static int mode_mask = (1 << IB_NR_MODES) - 1;
static long files_per_writer = 64;
static bool modify_only;
static long queue_limit = 1048576;
static bool queue_limit_set;

static long saved_events = -1, saved_watches = -1;

/* worker side */
static int nr_writers;
static char **paths;
static __u64 *mods;
static int cur_file;
static int ifd = -1;
static struct ib_file *files;
static int *wd_to_file;
static int max_wd;
static int dir_wd = -1;		/* dir-watch: the only watch */
static char *buf;
static __u64 overflows;
static __u64 events;		/* every event read, IN_Q_OVERFLOW included */
static struct ib_stats stats0;
static bool have_stats0;

static int ib_parse_opt(int opt, const char *arg)
{
	switch (opt) {
	case 'n':
		return bench_parse_uint(arg, 1, 100000, &files_per_writer);
	case 'e':
		if (!strcmp(arg, "modify"))
			modify_only = true;
		else if (!strcmp(arg, "modify,close_write"))
			modify_only = false;
		else
			return -1;
		return 0;
	case 'Q':
		queue_limit_set = true;
		return bench_parse_uint(arg, 1, 1L << 30, &queue_limit);
	case 'M':
		return bench_select_mode(arg, mode_names, IB_NR_MODES,
					 &mode_mask);
	default:
		return -1;
	}
}

static int writers_for(int cpus)
{
	return cpus > 1 ? cpus - 1 : 1;
}

static int ib_nr_workers(int mode, int cpus)
{
	(void)mode;
	return writers_for(cpus) + 1;
}

/* Writer i on CPU i, the reader (last worker) on the last CPU. */
static int ib_worker_cpu(int idx, int nr, int cpus)
{
	(void)nr;
	return idx < cpus ? idx : cpus - 1;
}

static int ib_init(void)
{
	int fd, err;

	if (bench_add_oplog_modes(&bench_sw_inotify,
				  modify_only ? modify_names : mode_names,
				  IB_NR_MODES, mode_mask))
		return -1;
	/* A kernel without inotify is a skip; other errors fail later. */
	fd = inotify_init1(IN_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	err = errno;
	if (access("/proc/sys/fs/inotify", F_OK)) {
		ksft_print_msg("inotify_bench: no inotify in this kernel (%s)\n",
			       strerror(err));
		return KSFT_SKIP;
	}
	return 0;
}

static size_t ib_extra_size(int max_cpus)
{
	return writers_for(max_cpus) * files_per_writer * sizeof(__u64);
}

/*
 * Raise @path to at least @want, or set it to exactly @want if @exact;
 * remember the old value in @saved.
 */
static void set_sysctl(const char *path, long want, bool exact, long *saved)
{
	long cur = sysfs_long(path);
	int ret;

	if (cur < 0) {
		ksft_print_msg("inotify_bench: cannot read %s\n", path);
		return;
	}
	if (exact ? cur == want : cur >= want) {
		ksft_print_msg("inotify_bench: %s = %ld\n", path, cur);
		return;
	}
	ret = sysfs_write_long(path, want);
	if (ret) {
		ksft_print_msg("inotify_bench: cannot change %s from %ld to %ld: %s\n",
			       path, cur, want, strerror(-ret));
		return;
	}
	*saved = cur;
	ksft_print_msg("inotify_bench: %s changed from %ld to %ld\n", path,
		       cur, want);
}

static void dir_path(char *p, size_t size)
{
	snprintf(p, size, "%s/" IB_SUBDIR, bench_cfg.dir);
}

static void file_path(char *p, size_t size, int i)
{
	snprintf(p, size, "%s/" IB_SUBDIR "/f%d", bench_cfg.dir, i);
}

/* The mode's name as the engine has it, for the reader's diagnostics. */
static void mode_name(char *p, size_t size, __u64 param)
{
	snprintf(p, size, "%s-%s",
		 (modify_only ? modify_names : mode_names)[param & IB_DIR_WATCH],
		 param & BENCH_PARAM_OPLOG ? "oplog" : "stock");
}

static int ib_setup(int max_cpus)
{
	int i, nr = writers_for(max_cpus) * files_per_writer;
	char p[4200];

	dir_path(p, sizeof(p));
	if (bench_mkdir(p))
		return -1;
	for (i = 0; i < nr; i++) {
		file_path(p, sizeof(p), i);
		if (bench_write_file(p, 1)) {
			ksft_print_msg("create %s: %s\n", p, strerror(errno));
			return -1;
		}
	}
	set_sysctl(IB_SYSCTL_EVENTS, queue_limit, queue_limit_set,
		   &saved_events);
	set_sysctl(IB_SYSCTL_WATCHES, nr + 8192, false, &saved_watches);
	dir_path(p, sizeof(p));
	ksft_print_msg("inotify_bench: %ld files per writer in %s, watch %s\n",
		       files_per_writer, p,
		       modify_only ? "IN_MODIFY" : "IN_MODIFY|IN_CLOSE_WRITE");
	if (bench_switch_get(&bench_sw_inotify) < 0)
		ksft_print_msg("inotify_bench: no %s, only the -stock modes run\n",
			       bench_sw_inotify.path);
	ksft_print_msg("inotify_bench: cpus=N: writers on CPUs 0..N-2, reader on N-1\n");
	for (i = 0; i < bench_cfg.nr_counts; i++)
		if (bench_cfg.counts[i] == 1)
			break;
	if (i < bench_cfg.nr_counts)
		ksft_print_msg("inotify_bench: cpus=1: one writer, sharing the reader's CPU\n");
	return 0;
}

/* Parent, before each run: the OpLog switch of the mode. */
static int ib_prepare_run(struct bench_ctl *ctl)
{
	return bench_select(&bench_sw_inotify, ctl->param);
}

static void ib_cleanup(void)
{
	if (saved_events >= 0 &&
	    sysfs_write_long(IB_SYSCTL_EVENTS, saved_events))
		ksft_print_msg("inotify_bench: cannot restore %s\n",
			       IB_SYSCTL_EVENTS);
	if (saved_watches >= 0 &&
	    sysfs_write_long(IB_SYSCTL_WATCHES, saved_watches))
		ksft_print_msg("inotify_bench: cannot restore %s\n",
			       IB_SYSCTL_WATCHES);
	saved_events = -1;
	saved_watches = -1;
}

static bool is_reader(struct bench_worker *w)
{
	return w->idx == w->nr_workers - 1;
}

/* Read the OpLog statistics; returns 0, or -1 if there are none. */
static int read_stats(struct ib_stats *st)
{
	char line[256], name[32];
	long long v;
	FILE *f;

	st->nr = 0;
	f = fopen(bench_sw_inotify.stats, "re");
	if (!f)
		return -1;
	while (st->nr < IB_MAX_STATS && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%31s %lld", name, &v) != 2)
			continue;
		memcpy(st->name[st->nr], name, sizeof(name));
		st->val[st->nr++] = v;
	}
	fclose(f);
	return st->nr ? 0 : -1;
}

/*
 * Print what the OpLog counted since reader_init(), a diagnostic only; the
 * limits and high-water marks ("max_*": max_apply, the most operations one
 * apply handled since boot) as they are.
 */
static void print_stats_delta(struct bench_worker *w, const char *mode)
{
	char line[1024] = "";
	struct ib_stats st;
	size_t len;
	int i, j;

	if (!have_stats0 || read_stats(&st))
		return;
	for (i = 0; i < st.nr; i++) {
		for (j = 0; j < stats0.nr; j++)
			if (!strcmp(st.name[i], stats0.name[j]))
				break;
		len = strlen(line);
		if (!strncmp(st.name[i], "max_", 4))
			snprintf(line + len, sizeof(line) - len, " %s=%lld",
				 st.name[i], st.val[i]);
		else
			snprintf(line + len, sizeof(line) - len, " %s=%+lld",
				 st.name[i], st.val[i] -
				 (j < stats0.nr ? stats0.val[j] : 0));
	}
	ksft_print_msg("inotify_bench: %s cpus=%d oplog stats:%s\n", mode,
		       w->cpus, line);
}

/* Per-file watches, and the map from watch descriptor to file. */
static int add_file_watches(struct bench_worker *w, __u32 mask, int nr)
{
	char p[4200];
	int i;

	for (i = 0; i < nr; i++) {
		file_path(p, sizeof(p), i);
		files[i].wd = inotify_add_watch(ifd, p, mask);
		if (files[i].wd < 0) {
			bench_worker_fail(w, "inotify_add_watch %s: %s", p,
					  strerror(errno));
			return -1;
		}
		if (files[i].wd > max_wd)
			max_wd = files[i].wd;
	}
	wd_to_file = malloc((max_wd + 1) * sizeof(*wd_to_file));
	if (!wd_to_file) {
		bench_worker_fail(w, "out of memory");
		return -1;
	}
	for (i = 0; i <= max_wd; i++)
		wd_to_file[i] = -1;
	for (i = 0; i < nr; i++) {
		if (wd_to_file[files[i].wd] >= 0) {
			errno = EEXIST;
			bench_worker_fail(w, "f%d and f%d share wd %d", i,
					  wd_to_file[files[i].wd], files[i].wd);
			return -1;
		}
		wd_to_file[files[i].wd] = i;
	}
	return 0;
}

static int reader_init(struct bench_worker *w)
{
	__u32 mask = IN_MODIFY | (modify_only ? 0 : IN_CLOSE_WRITE);
	int nr = nr_writers * files_per_writer;
	char p[4200];

	buf = aligned_alloc(64, IB_BUF_SIZE);
	files = calloc(nr, sizeof(*files));
	if (!buf || !files) {
		bench_worker_fail(w, "out of memory");
		return -1;
	}
	have_stats0 = !read_stats(&stats0);
	ifd = inotify_init1(IN_CLOEXEC);
	if (ifd < 0) {
		bench_worker_fail(w, "inotify_init1: %s", strerror(errno));
		return -1;
	}
	if (!(w->param & IB_DIR_WATCH))
		return add_file_watches(w, mask, nr);
	dir_path(p, sizeof(p));
	dir_wd = inotify_add_watch(ifd, p, mask | IN_ONLYDIR);
	if (dir_wd < 0) {
		bench_worker_fail(w, "inotify_add_watch %s: %s", p,
				  strerror(errno));
		return -1;
	}
	return 0;
}

static int writer_init(struct bench_worker *w)
{
	char p[4200];
	int i, first = w->idx * files_per_writer;

	paths = calloc(files_per_writer, sizeof(*paths));
	mods = calloc(files_per_writer, sizeof(*mods));
	if (!paths || !mods) {
		bench_worker_fail(w, "out of memory");
		return -1;
	}
	for (i = 0; i < files_per_writer; i++) {
		file_path(p, sizeof(p), first + i);
		paths[i] = strdup(p);
		if (!paths[i]) {
			bench_worker_fail(w, "out of memory");
			return -1;
		}
	}
	return 0;
}

static int ib_worker_init(struct bench_worker *w)
{
	nr_writers = w->nr_workers - 1;
	return is_reader(w) ? reader_init(w) : writer_init(w);
}

/*
 * dir-watch: the file an event names, "f<i>" with i < @nr and no leading
 * zero, or -1.
 */
static int name_to_file(const struct inotify_event *ev, int nr)
{
	const char *s = ev->name;
	long i = 0;

	if (!ev->len || strnlen(s, ev->len) == ev->len || s[0] != 'f' ||
	    !s[1] || (s[1] == '0' && s[2]))
		return -1;
	for (s++; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		i = i * 10 + *s - '0';
		if (i >= nr)
			return -1;
	}
	return i;
}

/* The file of an event, or -1 after bench_worker_fail(). */
static int event_file(struct bench_worker *w, const struct inotify_event *ev,
		      bool dir_watch)
{
	int i;

	if (!dir_watch) {
		if (ev->wd < 0 || ev->wd > max_wd || wd_to_file[ev->wd] < 0) {
			errno = EINVAL;
			bench_worker_fail(w, "event 0x%x for unknown wd %d",
					  ev->mask, ev->wd);
			return -1;
		}
		return wd_to_file[ev->wd];
	}
	if (ev->wd != dir_wd) {
		errno = EINVAL;
		bench_worker_fail(w, "event 0x%x for unknown wd %d (directory wd %d)",
				  ev->mask, ev->wd, dir_wd);
		return -1;
	}
	i = name_to_file(ev, nr_writers * files_per_writer);
	if (i < 0) {
		errno = EINVAL;
		bench_worker_fail(w, "event 0x%x for unknown name '%.*s'",
				  ev->mask, (int)strnlen(ev->name, ev->len),
				  ev->len ? ev->name : "");
		return -1;
	}
	return i;
}

/* Account one event; returns -1 on an order violation or a stray event. */
static int reader_event(struct bench_worker *w, const struct inotify_event *ev)
{
	struct ib_file *f;
	int i;

	if (ev->mask & IN_Q_OVERFLOW) {
		overflows++;
		return 0;
	}
	i = event_file(w, ev, w->param & IB_DIR_WATCH);
	if (i < 0)
		return -1;
	f = &files[i];
	if (ev->mask & IN_MODIFY) {
		f->modify++;
		if (f->want_close && !overflows && !modify_only) {
			errno = EPROTO;
			bench_worker_fail(w, "f%d: MODIFY #%llu, expected CLOSE_WRITE",
					  i, (unsigned long long)f->modify);
			return -1;
		}
		f->want_close = !modify_only;
	} else if (ev->mask & IN_CLOSE_WRITE) {
		f->close++;
		if (!f->want_close && !overflows) {
			errno = EPROTO;
			bench_worker_fail(w, "f%d: CLOSE_WRITE #%llu, expected MODIFY",
					  i, (unsigned long long)f->close);
			return -1;
		}
		f->want_close = false;
	} else {
		errno = EPROTO;
		bench_worker_fail(w, "f%d: unexpected event 0x%x", i, ev->mask);
		return -1;
	}
	return 0;
}

/* Read what is queued; returns the number of events, or -1. */
static long reader_read(struct bench_worker *w, int timeout_ms)
{
	struct pollfd pfd = { .fd = ifd, .events = POLLIN };
	const struct inotify_event *ev;
	long n = 0;
	ssize_t len;
	char *p;
	int ret;

	ret = poll(&pfd, 1, timeout_ms);
	if (ret < 0 && errno != EINTR) {
		bench_worker_fail(w, "poll: %s", strerror(errno));
		return -1;
	}
	if (ret <= 0)
		return 0;
	len = read(ifd, buf, IB_BUF_SIZE);
	if (len < 0) {
		bench_worker_fail(w, "read: %s", strerror(errno));
		return -1;
	}
	for (p = buf; p < buf + len; p += sizeof(*ev) + ev->len) {
		ev = (const struct inotify_event *)p;
		if (p + sizeof(*ev) > buf + len ||
		    p + sizeof(*ev) + ev->len > buf + len) {
			errno = EPROTO;
			bench_worker_fail(w, "read returned a truncated event at offset %td of %zd",
					  p - buf, len);
			return -1;
		}
		if (reader_event(w, ev))
			return -1;
		n++;
	}
	events += n;
	return n;
}

static long ib_worker_op(struct bench_worker *w)
{
	int fd;

	if (is_reader(w))
		return reader_read(w, IB_POLL_MS);

	fd = open(paths[cur_file], O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		bench_worker_fail(w, "open %s: %s", paths[cur_file],
				  strerror(errno));
		return -1;
	}
	if (pwrite(fd, "m", 1, 0) != 1) {
		bench_worker_fail(w, "pwrite %s: %s", paths[cur_file],
				  strerror(errno));
		close(fd);
		return -1;
	}
	if (close(fd)) {
		bench_worker_fail(w, "close %s: %s", paths[cur_file],
				  strerror(errno));
		return -1;
	}
	mods[cur_file]++;
	w->win[0]++;
	if (++cur_file == files_per_writer)
		cur_file = 0;
	return 0;
}

/* After STOP: writers publish their counts, the reader checks them. */
static int reader_finish(struct bench_worker *w)
{
	const __u64 *published = w->extra;
	int i, nr = nr_writers * files_per_writer;
	__u64 end, merged = 0, total = 0;
	char mode[BENCH_NAME_LEN];
	long n;

	n = bench_wait_peers(w, IB_DRAIN_MS);
	if (n < 0) {
		errno = ETIMEDOUT;
		bench_worker_fail(w, "writers did not finish within %d ms",
				  IB_DRAIN_MS);
		return -1;
	}
	if (n > 0)
		return 0;	/* a writer failed and said why */

	/* Every event was queued before its writer returned: drain. */
	end = now_ns() + IB_DRAIN_MS * 1000000ULL;
	do {
		n = reader_read(w, 0);
		if (n < 0)
			return -1;
		if (now_ns() > end) {
			errno = ETIMEDOUT;
			bench_worker_fail(w, "queue not drained within %d ms",
					  IB_DRAIN_MS);
			return -1;
		}
	} while (n > 0);

	w->tot[0] = overflows;
	mode_name(mode, sizeof(mode), w->param);
	print_stats_delta(w, mode);
	for (i = 0; i < nr; i++)
		total += published[i];
	if (overflows) {
		/* The counts are not checked: events were lost. */
		ksft_print_msg("inotify_bench: %s cpus=%d: %llu read, %llu mods, overflows=%llu\n",
			       mode, w->cpus, (unsigned long long)events,
			       (unsigned long long)total,
			       (unsigned long long)overflows);
		return 0;
	}
	for (i = 0; i < nr; i++) {
		const struct ib_file *f = &files[i];
		__u64 want = published[i];

		if (!modify_only && (f->modify != want || f->close != want)) {
			errno = EPROTO;
			bench_worker_fail(w, "f%d: %llu MODIFY, %llu CLOSE_WRITE for %llu writes",
					  i, (unsigned long long)f->modify,
					  (unsigned long long)f->close,
					  (unsigned long long)want);
			return -1;
		}
		if (modify_only && (f->modify > want || (want && !f->modify))) {
			errno = EPROTO;
			bench_worker_fail(w, "f%d: %llu MODIFY events for %llu modifications",
					  i, (unsigned long long)f->modify,
					  (unsigned long long)want);
			return -1;
		}
		merged += want - f->modify;
	}
	w->tot[1] = merged;
	ksft_print_msg("inotify_bench: %s cpus=%d: %llu read, %llu mods, merged=%llu\n",
		       mode, w->cpus, (unsigned long long)events,
		       (unsigned long long)total, (unsigned long long)merged);
	return 0;
}

static int ib_worker_finish(struct bench_worker *w)
{
	__u64 *published = w->extra;

	if (is_reader(w))
		return reader_finish(w);
	memcpy(published + w->idx * files_per_writer, mods,
	       files_per_writer * sizeof(*mods));
	return 0;
}

/*
 * The events a window generated, which the OpLog takes as they happen: the
 * writers' modifications (win[0]), one IN_MODIFY each and, unless -e
 * modify, one IN_CLOSE_WRITE.  The events read in the window (the counted
 * operations) lag them by however far the reader is behind.
 */
static unsigned long long ib_served_ops(const __u64 *win)
{
	return win[0] * (modify_only ? 1 : 2);
}

static const struct bench_metric ib_metrics[] = {
	{ "mods_per_ms", BENCH_AGG_RATE, 0 },
	{ "overflows", BENCH_AGG_SUM, 0 },
	{ "merged", BENCH_AGG_SUM, 1 },
};

static const struct bench_desc inotify_bench = {
	.name = "inotify_bench",
	.opts = "n:e:Q:M:",
	.usage = "  -n F     files per writer (default 64)\n"
		 "  -e EV    events to watch: modify,close_write (default) or modify\n"
		 "           (modes <mode>-modify-stock/-oplog)\n"
		 "  -Q N     set max_queued_events to N for the test (default: raise\n"
		 "           it to at least 1048576); restored at the end\n"
		 "  -M MODE  per-file-watch, dir-watch or all (default all)\n",
	.parse_opt = ib_parse_opt,
	.init = ib_init,
	.setup = ib_setup,
	.cleanup = ib_cleanup,
	.prepare_run = ib_prepare_run,
	.nr_workers = ib_nr_workers,
	.worker_cpu = ib_worker_cpu,
	.extra_size = ib_extra_size,
	.worker_init = ib_worker_init,
	.worker_op = ib_worker_op,
	.worker_finish = ib_worker_finish,
	.metrics = ib_metrics,
	.nr_metrics = ARRAY_SIZE(ib_metrics),
	.served_ops = ib_served_ops,
};

int main(int argc, char **argv)
{
	return bench_main(&inotify_bench, argc, argv);
}
