/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small helpers for the programs of this directory that drive the kernel
 * through its files in sysfs, debugfs and procfs: read a file whole or as
 * one value, parse a value, write a value (and check that it took), look
 * up "key value" lines of a statistics file, copy a file (this program's
 * /proc/self/exe), take a CPU offline or online, read the scheduler state
 * of a task.
 *
 * Each helper opens the file, reads or writes it and closes it again, and
 * answers 0 (or a byte count) or a negative errno, never -1 with errno, so
 * that the caller decides what a missing file means: a skip, a failure or
 * nothing.  A number read goes through a pointer, left alone on an error.
 */
#ifndef SCALABLE_SYSFS_UTIL_H
#define SCALABLE_SYSFS_UTIL_H

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/*
 * The buffer sysfs_read_stat() and sysfs_read_stats() read into: qdo/stats
 * has a line per CPU.
 */
#define SYSFS_STAT_SIZE		65536

/**
 * sysfs_read_buf() - read a file whole, as it is, into a buffer
 * @path: the file
 * @buf: where its contents go, NUL-terminated (empty if open() fails)
 * @size: the size of @buf, at least 1; at most @size - 1 bytes are read
 * @len: where the number of bytes read goes, on an error too
 *
 * Reads until end of file or until @buf is full, so that a file that
 * comes in more than one read() (a seq_file) comes whole; a file that
 * runs something when read (qdo_test/stress, list_run) runs it once, its
 * next read() being the end of file.  On a read() error, @buf holds what
 * came before it.
 *
 * Return: 0, or a negative errno: that of open() or read().
 */
static inline int sysfs_read_buf(const char *path, char *buf, size_t size, size_t *len)
{
	ssize_t n = 0;
	int fd, ret = 0;

	*len = 0;
	buf[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (*len < size - 1) {
		n = read(fd, buf + *len, size - 1 - *len);
		if (n <= 0)
			break;
		*len += n;
	}
	if (n < 0)
		ret = -errno;
	close(fd);
	buf[*len] = '\0';
	return ret;
}

/**
 * sysfs_read_file() - read a file whole, as it is
 * @path: the file
 * @buf: where its contents go, NUL-terminated
 * @size: the size of @buf; at most @size - 1 bytes are read
 *
 * As sysfs_read_buf(), for a caller that wants the contents and their
 * length in one: the whole file, a seq_file too, up to @size - 1 bytes;
 * a file that runs something when read runs it once.
 *
 * Return: the number of bytes read, or a negative errno: that of open()
 * or read(), or -EINVAL if @size is 0.
 */
static inline ssize_t sysfs_read_file(const char *path, char *buf, size_t size)
{
	size_t len;
	int ret;

	if (!size)
		return -EINVAL;
	ret = sysfs_read_buf(path, buf, size, &len);
	return ret ? ret : (ssize_t)len;
}

/**
 * sysfs_read_str() - read a one-value file, without its newline
 * @path: the file
 * @buf: where its contents go, NUL-terminated
 * @size: the size of @buf
 *
 * sysfs_read_file(), then the trailing white space (the newline that
 * sysfs, debugfs and procfs put after a value) is cut off, so that the
 * value compares with strcmp() and can be written back as it is.
 *
 * Return: the length of the string left in @buf, or a negative errno as
 * for sysfs_read_file().
 */
static inline ssize_t sysfs_read_str(const char *path, char *buf, size_t size)
{
	ssize_t len = sysfs_read_file(path, buf, size);

	while (len > 0 && isspace((unsigned char)buf[len - 1]))
		buf[--len] = '\0';
	return len;
}

/**
 * sysfs_write_str() - write a string to a file in one write()
 * @path: the file
 * @s: the string, without its NUL; a sysfs or debugfs attribute takes a
 *     value with or without a newline
 *
 * Return: 0, or a negative errno: that of open() or write(), or -EIO if
 * write() took only part of @s.
 */
static inline int sysfs_write_str(const char *path, const char *s)
{
	size_t len = strlen(s);
	ssize_t n;
	int fd, ret = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, s, len);
	if (n < 0)
		ret = -errno;
	else if ((size_t)n != len)
		ret = -EIO;
	close(fd);
	return ret;
}

/**
 * sysfs_parse_long() - the decimal number at the start of a string
 * @s: the string; white space before the number is skipped, and whatever
 *     follows it is ignored (/proc/sys/fs/dentry-state holds several)
 * @val: where the number goes; left alone on an error
 *
 * Return: 0, -EINVAL if @s does not start with a number, or -ERANGE if
 * the number does not fit a long.
 */
static inline int sysfs_parse_long(const char *s, long *val)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s)
		return -EINVAL;
	if (errno)
		return -errno;
	*val = v;
	return 0;
}

/**
 * sysfs_parse_range() - a string that is one decimal number in a range
 * @s: the string: the number and nothing else (a value, an option's
 *     argument)
 * @min: the smallest number taken
 * @max: the largest number taken
 * @val: where the number goes; left alone on an error
 *
 * Return: 0, -EINVAL if @s is empty or is not a number alone, or -ERANGE
 * if the number is not in [@min, @max].
 */
static inline int sysfs_parse_range(const char *s, long min, long max, long *val)
{
	char *end;
	long v;

	if (!*s)
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno || v < min || v > max)
		return -ERANGE;
	*val = v;
	return 0;
}

/**
 * sysfs_read_long() - read the number in a file
 * @path: the file, which starts with a decimal number
 * @val: where the number goes; left alone on an error
 *
 * Return: 0, or a negative errno: as for sysfs_read_file() (-ENOENT: no
 * such file), or as for sysfs_parse_long() (-EINVAL: the file is empty or
 * does not start with a number).
 */
static inline int sysfs_read_long(const char *path, long *val)
{
	char buf[64];
	size_t len;
	int ret;

	ret = sysfs_read_buf(path, buf, sizeof(buf), &len);
	return ret ? ret : sysfs_parse_long(buf, val);
}

/**
 * sysfs_long() - the number in a file, or -1
 * @path: the file, as for sysfs_read_long()
 *
 * For values that are never negative (a sysctl, a count): -1 stands for
 * every error of sysfs_read_long().
 *
 * Return: the number, or -1.
 */
static inline long sysfs_long(const char *path)
{
	long val;

	return sysfs_read_long(path, &val) ? -1 : val;
}

/**
 * sysfs_write_long() - write a decimal number to a file in one write()
 * @path: the file
 * @val: the number
 *
 * Return: 0, or a negative errno as for sysfs_write_str().
 */
static inline int sysfs_write_long(const char *path, long val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", val);
	return sysfs_write_str(path, buf);
}

/**
 * sysfs_set_str() - write a one-value file and check that it took
 * @path: the file, a run-time switch say
 * @s: the value, without a newline
 *
 * sysfs_write_str(), then sysfs_read_str(): the file must read back as
 * @s.
 *
 * Return: 0, a negative errno as for sysfs_write_str() or
 * sysfs_read_str(), or -EIO if the file reads back as something else.
 */
static inline int sysfs_set_str(const char *path, const char *s)
{
	char cur[64];
	ssize_t len;
	int ret;

	ret = sysfs_write_str(path, s);
	if (ret)
		return ret;
	len = sysfs_read_str(path, cur, sizeof(cur));
	if (len < 0)
		return len;
	return strcmp(cur, s) ? -EIO : 0;
}

/**
 * sysfs_find_stat() - look up a "key value" line in a buffer
 * @buf: the contents of a statistics file, NUL-terminated
 * @key: the key; the first line that starts with @key and a space counts
 * @val: where the number after it goes; left alone on an error
 *
 * Return: 0, -ENODATA if no line starts with @key, or as for
 * sysfs_parse_long() if no number follows it.
 */
static inline int sysfs_find_stat(const char *buf, const char *key, long *val)
{
	size_t klen = strlen(key);
	const char *line = buf;

	while (line) {
		if (!strncmp(line, key, klen) && line[klen] == ' ')
			return sysfs_parse_long(line + klen + 1, val);
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return -ENODATA;
}

/**
 * sysfs_read_stat() - look up a "key value" line of a statistics file
 * @path: the file, one "<key> <number>" per line (as the stats files of
 *        qdo and oplog in debugfs)
 * @key: the key; the first line that starts with @key and a space counts
 * @val: where the number after it goes; left alone on an error
 *
 * At most SYSFS_STAT_SIZE - 1 bytes of @path are read.
 *
 * Return: 0, or a negative errno: as for sysfs_read_file(), -ENOMEM if the
 * buffer cannot be allocated, or as for sysfs_find_stat() (-ENODATA: no
 * line starts with @key).
 */
static inline int sysfs_read_stat(const char *path, const char *key, long *val)
{
	size_t len;
	char *buf;
	int ret;

	buf = malloc(SYSFS_STAT_SIZE);
	if (!buf)
		return -ENOMEM;
	ret = sysfs_read_buf(path, buf, SYSFS_STAT_SIZE, &len);
	if (!ret)
		ret = sysfs_find_stat(buf, key, val);
	free(buf);
	return ret;
}

/**
 * sysfs_read_stats() - look up several "key value" lines of a statistics
 *                      file
 * @path: the file, one "<key> <number>" per line (as the stats files of
 *        qdo, oplog and ast_sync in debugfs)
 * @keys: the keys, as for sysfs_find_stat()
 * @n: the number of @keys
 * @vals: where the numbers go, @vals[i] for @keys[i]; left alone for a key
 *        that is missing or has no number after it
 *
 * @path is read once (at most SYSFS_STAT_SIZE - 1 bytes of it), so that
 * the numbers come from one read of the file.
 *
 * Return: how many of @keys were found with a number, or a negative
 * errno: as for sysfs_read_file(), or -ENOMEM if the buffer cannot be
 * allocated.
 */
static inline int sysfs_read_stats(const char *path, const char *const *keys,
				   int n, long *vals)
{
	int i, ret, found = 0;
	size_t len;
	char *buf;

	buf = malloc(SYSFS_STAT_SIZE);
	if (!buf)
		return -ENOMEM;
	ret = sysfs_read_buf(path, buf, SYSFS_STAT_SIZE, &len);
	for (i = 0; i < n && !ret; i++)
		found += !sysfs_find_stat(buf, keys[i], &vals[i]);
	free(buf);
	return ret ? ret : found;
}

/**
 * sysfs_stat() - a counter of a statistics file, or -1
 * @path: the file, as for sysfs_read_stat()
 * @key: the counter's key
 *
 * For counters, which are never negative: -1 stands for every error of
 * sysfs_read_stat() (no file, no such key), for a caller to fail or skip
 * on.
 *
 * Return: the counter, or -1.
 */
static inline long sysfs_stat(const char *path, const char *key)
{
	long val;

	return sysfs_read_stat(path, key, &val) ? -1 : val;
}

/**
 * sysfs_copy_fd() - copy what is left of one file to another
 * @in: the file read, to its end (/proc/self/exe, say)
 * @out: the file written
 *
 * Return: 0, or a negative errno: that of read() or write(), or -EIO if
 * write() took only part of a block.
 */
static inline int sysfs_copy_fd(int in, int out)
{
	char buf[65536];
	ssize_t n, w;

	while ((n = read(in, buf, sizeof(buf))) > 0) {
		w = write(out, buf, n);
		if (w < 0)
			return -errno;
		if (w != n)
			return -EIO;
	}
	return n < 0 ? -errno : 0;
}

/**
 * sysfs_set_cpu_online() - take a CPU offline or bring it online
 * @cpu: the CPU
 * @on: nonzero to bring it online, 0 to take it offline
 *
 * Writes "1" or "0" to /sys/devices/system/cpu/cpu<@cpu>/online.
 *
 * Return: 0, or a negative errno as for sysfs_write_str(): -ENOENT if the
 * CPU has no online file (often CPU 0, or no such CPU), else the error of
 * the hotplug operation (-EBUSY for the last CPU online, -ENOMEM, ...).
 */
static inline int sysfs_set_cpu_online(int cpu, int on)
{
	char path[64];

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	return sysfs_write_str(path, on ? "1" : "0");
}

/**
 * proc_task_state() - the scheduler state of a task, from procfs
 * @pid: the process
 * @tid: the thread of @pid (@pid itself for its main thread)
 *
 * The state is the field after the command name in
 * /proc/<@pid>/task/<@tid>/stat: 'R' running, 'S' asleep (interruptibly,
 * in a system call that waits, say), 'D', 'T', 'Z', ...
 *
 * Return: the state letter, or 0 if the file cannot be read.
 */
static inline char proc_task_state(pid_t pid, pid_t tid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	if (sysfs_read_str(path, buf, sizeof(buf)) < 0)
		return 0;
	/* The command name, in parentheses, may itself hold ") ". */
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

#endif /* SCALABLE_SYSFS_UTIL_H */
