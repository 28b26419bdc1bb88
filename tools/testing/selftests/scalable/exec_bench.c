// SPDX-License-Identifier: GPL-2.0
/*
 * exec_bench: one process per CPU loops fork(); child execve() of a
 * dynamically linked program; waitpid(): what shells, build systems and
 * UnixBench's execl do.
 *
 * Each exec maps the program and its ELF interpreter (the kernel), then
 * ld.so maps libc, mprotect()s parts of it and writes its data segments
 * (an anon_vma appears), and the exit unmaps all of it: every step
 * inserts into or removes from the reverse map (i_mmap) of a few files.
 *
 * The programs, their interpreter and their libraries are copied from
 * the system (-P, default /usr/bin; the libraries are found from each
 * program's DT_NEEDED entries) into a prefix below the work directory,
 * and each copy's PT_INTERP is rewritten to the prefix's copy of ld.so;
 * LD_LIBRARY_PATH and PATH name the prefix.  In "shared" mode every
 * worker runs the files of one prefix, so all CPUs map the same files;
 * in "private" mode each worker has a prefix of its own (the
 * share-nothing floor of the same work).  Two shapes:
 *   exec  the child execs "true" (coreutils): one exec per operation;
 *   sh    the child execs "dash -c 'cat in | wc -c >/dev/null'", which
 *         forks and execs cat and wc through PATH: three execs per
 *         operation, as in UnixBench's shellscript test.
 *
 * With CONFIG_RMAP_OPLOG (mm/oplog_rmap.c), each mode runs twice:
 * "-stock" with /sys/kernel/debug/rmap_oplog/enabled off, then "-oplog"
 * with it on; the "-oplog" RESULT lines carry the ratio to "-stock" and
 * the OpLog type's counters (/sys/kernel/debug/oplog/rmap/stats).
 *
 * Checks: every program and library is a 64-bit ELF file whose copy
 * runs, and every child exits with status 0.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <linux/elf.h>

#include "../kselftest.h"
#include "bench.h"

enum { MODE_SHARED, MODE_PRIVATE, NR_MODES };
enum { SHAPE_EXEC, SHAPE_SH, NR_SHAPES };

/* A prefix's copy of the ELF interpreter */
#define EB_INTERP		"ld.so"
/* Libraries copied per prefix, at most */
#define EB_MAX_LIBS		16

static const char * const mode_names[] = { "shared", "private" };
static const char * const shape_names[] = { "exec", "sh" };
/* The programs each shape runs; the first is the one execve()d. */
static const char * const shape_progs[NR_SHAPES][3] = {
	[SHAPE_EXEC] = { "true" },
	[SHAPE_SH] = { "dash", "cat", "wc" },
};

static const int shape_execs[NR_SHAPES] = { 1, 3 };

static int mode_mask = 3;
static int shape_mask = 1 << SHAPE_EXEC;
static const char *prog_dir = "/usr/bin";

/* The ELF interpreter and libraries found at setup, by absolute path */
static char interp_path[PATH_MAX];
static char *lib_paths[EB_MAX_LIBS];
static int nr_libs;

/* A worker's execve() arguments */
static char exec_path[PATH_MAX];
static char script[3 * PATH_MAX];
static char env_ld[PATH_MAX + 32], env_path[PATH_MAX + 32];
static char *exec_argv[4];
static char *exec_envp[3];

/* Format a path into @buf of @size bytes; -1 if it does not fit. */
__printf(3, 4)
static int eb_path(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size) {
		ksft_print_msg("exec_bench: path too long: %s...\n", buf);
		return -1;
	}
	return 0;
}

static int param_mode(__u64 param)
{
	return param & 1;
}

static int param_shape(__u64 param)
{
	return (param >> 1) & 1;
}

static int eb_parse_opt(int opt, const char *arg)
{
	switch (opt) {
	case 'M':
		return bench_select_mode(arg, mode_names, NR_MODES, &mode_mask);
	case 'S':
		return bench_select_mode(arg, shape_names, NR_SHAPES,
					 &shape_mask);
	case 'P':
		if (arg[0] != '/' || strlen(arg) > PATH_MAX / 2)
			return -1;
		prog_dir = arg;
		return 0;
	default:
		return -1;
	}
}

static int eb_init(void)
{
	char name[BENCH_NAME_LEN];
	int s, m;

	for (s = 0; s < NR_SHAPES; s++) {
		if (!(shape_mask & (1 << s)))
			continue;
		for (m = 0; m < NR_MODES; m++) {
			if (!(mode_mask & (1 << m)))
				continue;
			snprintf(name, sizeof(name), "%s-%s", mode_names[m],
				 shape_names[s]);
			if (bench_add_oplog_mode(&bench_sw_rmap, name,
						 m | s << 1))
				return -1;
		}
	}
	return 0;
}

static int eb_prepare_run(struct bench_ctl *ctl)
{
	return bench_select(&bench_sw_rmap, ctl->param);
}

/* ---------------------------------------------------------------- ELF */

/**
 * struct elf_file - a 64-bit ELF file read into memory
 * @buf: its bytes
 * @len: their number
 * @ehdr: the ELF header, at @buf
 * @phdr: the program headers, inside @buf
 */
struct elf_file {
	char *buf;
	size_t len;
	struct elf64_hdr *ehdr;
	struct elf64_phdr *phdr;
};

static void elf_free(struct elf_file *e)
{
	free(e->buf);
	e->buf = NULL;
}

/* Read @path whole and check it is a 64-bit ELF file of this machine. */
static int elf_read(const char *path, struct elf_file *e)
{
	struct stat st;
	size_t done = 0;
	ssize_t n;
	int fd;

	memset(e, 0, sizeof(*e));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		ksft_print_msg("exec_bench: %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	e->len = st.st_size;
	e->buf = malloc(e->len ? e->len : 1);
	if (!e->buf) {
		close(fd);
		return -1;
	}
	while (done < e->len) {
		n = read(fd, e->buf + done, e->len - done);
		if (n <= 0) {
			ksft_print_msg("exec_bench: read %s: %s\n", path,
				       n ? strerror(errno) : "short file");
			close(fd);
			elf_free(e);
			return -1;
		}
		done += n;
	}
	close(fd);
	e->ehdr = (struct elf64_hdr *)e->buf;
	if (e->len < sizeof(struct elf64_hdr) ||
	    memcmp(e->ehdr->e_ident, ELFMAG, SELFMAG) ||
	    e->ehdr->e_ident[EI_CLASS] != ELFCLASS64 ||
	    e->ehdr->e_phentsize != sizeof(struct elf64_phdr) ||
	    e->ehdr->e_phoff > e->len ||
	    (e->len - e->ehdr->e_phoff) / sizeof(struct elf64_phdr) <
	    e->ehdr->e_phnum) {
		ksft_print_msg("exec_bench: %s is not a 64-bit ELF file\n",
			       path);
		elf_free(e);
		return -1;
	}
	e->phdr = (struct elf64_phdr *)(e->buf + e->ehdr->e_phoff);
	return 0;
}

/* The program header of type @type, or NULL. */
static struct elf64_phdr *elf_phdr(struct elf_file *e, __u32 type)
{
	int i;

	for (i = 0; i < e->ehdr->e_phnum; i++)
		if (e->phdr[i].p_type == type)
			return &e->phdr[i];
	return NULL;
}

/* The file offset of virtual address @va, or -1 if no PT_LOAD holds it. */
static long elf_offset(struct elf_file *e, __u64 va)
{
	int i;

	for (i = 0; i < e->ehdr->e_phnum; i++) {
		struct elf64_phdr *p = &e->phdr[i];

		if (p->p_type == PT_LOAD && va >= p->p_vaddr &&
		    va - p->p_vaddr < p->p_filesz)
			return p->p_offset + (va - p->p_vaddr);
	}
	return -1;
}

/* The NUL-terminated string at file offset @off, or NULL. */
static const char *elf_string(struct elf_file *e, __u64 off)
{
	if (off >= e->len || !memchr(e->buf + off, 0, e->len - off))
		return NULL;
	return e->buf + off;
}

/* The PT_INTERP string, or NULL for a static program. */
static const char *elf_interp(struct elf_file *e)
{
	struct elf64_phdr *p = elf_phdr(e, PT_INTERP);

	if (!p || p->p_offset >= e->len || p->p_filesz > e->len - p->p_offset ||
	    !p->p_filesz || e->buf[p->p_offset + p->p_filesz - 1])
		return NULL;
	return e->buf + p->p_offset;
}

/* An entry of the dynamic section (Elf64_Dyn) */
struct eb_dyn {
	__s64 d_tag;
	__u64 d_val;
};

static int add_lib(const char *name);

/*
 * add_lib() each DT_NEEDED name of @e, read from @path.  Returns 0, or -1
 * if the dynamic section cannot be read or add_lib() fails.
 */
static int add_needed(struct elf_file *e, const char *path)
{
	struct elf64_phdr *p = elf_phdr(e, PT_DYNAMIC);
	struct eb_dyn *dyn;
	long strtab = -1;
	size_t i, n;

	if (!p)
		return 0;
	if (p->p_offset >= e->len || p->p_filesz > e->len - p->p_offset)
		goto bad;
	dyn = (struct eb_dyn *)(e->buf + p->p_offset);
	n = p->p_filesz / sizeof(*dyn);
	for (i = 0; i < n && dyn[i].d_tag != DT_NULL; i++)
		if (dyn[i].d_tag == DT_STRTAB)
			strtab = elf_offset(e, dyn[i].d_val);
	if (strtab < 0)
		goto bad;
	for (i = 0; i < n && dyn[i].d_tag != DT_NULL; i++) {
		const char *name;

		if (dyn[i].d_tag != DT_NEEDED)
			continue;
		name = elf_string(e, strtab + dyn[i].d_val);
		if (!name)
			goto bad;
		if (add_lib(name))
			return -1;
	}
	return 0;
bad:
	ksft_print_msg("exec_bench: %s: cannot read its dynamic section\n",
		       path);
	return -1;
}

/* ------------------------------------------------------------ libraries */

#if defined(__x86_64__)
#define EB_MULTIARCH	"x86_64-linux-gnu"
#elif defined(__aarch64__)
#define EB_MULTIARCH	"aarch64-linux-gnu"
#elif defined(__riscv) && __riscv_xlen == 64
#define EB_MULTIARCH	"riscv64-linux-gnu"
#else
#define EB_MULTIARCH	"."
#endif

/* Where a DT_NEEDED name is looked for, after the interpreter's directory */
static const char * const lib_dirs[] = {
	"/lib/" EB_MULTIARCH, "/usr/lib/" EB_MULTIARCH, "/lib64", "/usr/lib64",
	"/lib", "/usr/lib",
};

/* Record library @name (found in the system) once; skip the interpreter. */
static int add_lib(const char *name)
{
	char path[PATH_MAX], dir[PATH_MAX], *real;
	unsigned int i;

	if (strchr(name, '/')) {
		ksft_print_msg("exec_bench: DT_NEEDED %s has a directory\n",
			       name);
		return -1;
	}
	snprintf(dir, sizeof(dir), "%s", interp_path);
	if (!strcmp(name, basename(dir)))
		return 0;
	for (i = 0; i < (unsigned int)nr_libs; i++) {
		snprintf(dir, sizeof(dir), "%s", lib_paths[i]);
		if (!strcmp(name, basename(dir)))
			return 0;
	}
	real = realpath(interp_path, NULL);
	for (i = 0; i <= ARRAY_SIZE(lib_dirs); i++) {
		if (!i) {
			if (!real)
				continue;
			snprintf(dir, sizeof(dir), "%s", real);
			if (eb_path(path, sizeof(path), "%s/%s", dirname(dir),
				    name))
				continue;
		} else if (eb_path(path, sizeof(path), "%s/%s",
				   lib_dirs[i - 1], name)) {
			continue;
		}
		if (!access(path, R_OK))
			break;
	}
	free(real);
	if (i > ARRAY_SIZE(lib_dirs)) {
		ksft_print_msg("exec_bench: %s: not next to %s, nor in /lib\n",
			       name, interp_path);
		return -1;
	}
	if (nr_libs == EB_MAX_LIBS) {
		ksft_print_msg("exec_bench: more than %d libraries\n",
			       EB_MAX_LIBS);
		return -1;
	}
	lib_paths[nr_libs] = strdup(path);
	if (!lib_paths[nr_libs])
		return -1;
	nr_libs++;
	return 0;
}

/*
 * Find the interpreter and the libraries of every program of the selected
 * shapes, and of those libraries in turn.
 */
static int find_libs(void)
{
	struct elf_file e;
	char path[PATH_MAX];
	int s, i, done;

	for (s = 0; s < NR_SHAPES; s++) {
		if (!(shape_mask & (1 << s)))
			continue;
		for (i = 0; i < 3 && shape_progs[s][i]; i++) {
			const char *interp;

			if (eb_path(path, sizeof(path), "%s/%s", prog_dir,
				    shape_progs[s][i]) || elf_read(path, &e))
				return -1;
			interp = elf_interp(&e);
			if (!interp) {
				ksft_print_msg("exec_bench: %s is not dynamically linked\n",
					       path);
				elf_free(&e);
				return -1;
			}
			if (!interp_path[0]) {
				snprintf(interp_path, sizeof(interp_path), "%s",
					 interp);
			} else if (strcmp(interp, interp_path)) {
				ksft_print_msg("exec_bench: %s wants %s, not %s\n",
					       path, interp, interp_path);
				elf_free(&e);
				return -1;
			}
			if (add_needed(&e, path)) {
				elf_free(&e);
				return -1;
			}
			elf_free(&e);
		}
	}
	/* The libraries' own dependencies; add_lib() appends to the list. */
	for (done = 0; done < nr_libs; done++) {
		if (elf_read(lib_paths[done], &e))
			return -1;
		if (add_needed(&e, lib_paths[done])) {
			elf_free(&e);
			return -1;
		}
		elf_free(&e);
	}
	return 0;
}

/* ------------------------------------------------------------- prefixes */

/* Write @len bytes of @buf to @path with mode @mode. */
static int write_all(const char *path, const char *buf, size_t len,
		     mode_t mode)
{
	size_t done = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		goto err;
	while (done < len) {
		n = write(fd, buf + done, len - done);
		if (n <= 0) {
			if (!n)
				errno = EIO;
			close(fd);
			goto err;
		}
		done += n;
	}
	if (!close(fd))
		return 0;
err:
	ksft_print_msg("exec_bench: write %s: %s\n", path, strerror(errno));
	return -1;
}

/* Copy @src into directory @dir as @name, PT_INTERP set to @interp. */
static int copy_elf(const char *src, const char *dir, const char *name,
		    const char *interp)
{
	char dst[PATH_MAX];
	struct elf_file e;
	int ret;

	if (elf_read(src, &e))
		return -1;
	if (interp) {
		struct elf64_phdr *p = elf_phdr(&e, PT_INTERP);

		if (!elf_interp(&e) || strlen(interp) >= p->p_filesz) {
			ksft_print_msg("exec_bench: %s: %s is longer than PT_INTERP\n",
				       src, interp);
			ksft_print_msg("exec_bench: pass a shorter -d\n");
			elf_free(&e);
			return -1;
		}
		memset(e.buf + p->p_offset, 0, p->p_filesz);
		memcpy(e.buf + p->p_offset, interp, strlen(interp));
	}
	ret = eb_path(dst, sizeof(dst), "%s/%s", dir, name) ?:
	      write_all(dst, e.buf, e.len, 0755);
	elf_free(&e);
	return ret;
}

/* Fill the prefix @sub of the work directory. */
static int make_prefix(const char *sub)
{
	static const char input[] = "exec_bench input\n";
	char dir[PATH_MAX], interp[PATH_MAX + 8], src[PATH_MAX], tmp[PATH_MAX];
	int s, i;

	if (eb_path(dir, sizeof(dir), "%s/%s", bench_cfg.dir, sub) ||
	    bench_mkdir(dir) ||
	    eb_path(interp, sizeof(interp), "%s/%s", dir, EB_INTERP) ||
	    copy_elf(interp_path, dir, EB_INTERP, NULL))
		return -1;
	for (i = 0; i < nr_libs; i++) {
		snprintf(tmp, sizeof(tmp), "%s", lib_paths[i]);
		if (copy_elf(lib_paths[i], dir, basename(tmp), NULL))
			return -1;
	}
	for (s = 0; s < NR_SHAPES; s++) {
		if (!(shape_mask & (1 << s)))
			continue;
		for (i = 0; i < 3 && shape_progs[s][i]; i++) {
			if (eb_path(src, sizeof(src), "%s/%s", prog_dir,
				    shape_progs[s][i]) ||
			    copy_elf(src, dir, shape_progs[s][i], interp))
				return -1;
		}
	}
	if (eb_path(src, sizeof(src), "%s/in", dir))
		return -1;
	return write_all(src, input, sizeof(input) - 1, 0644);
}

static int eb_setup(int max_cpus)
{
	char sub[32];
	int i;

	if (find_libs())
		return -1;
	if ((mode_mask & (1 << MODE_SHARED)) && make_prefix("shared"))
		return -1;
	if (mode_mask & (1 << MODE_PRIVATE)) {
		for (i = 0; i < max_cpus; i++) {
			snprintf(sub, sizeof(sub), "w%d", i);
			if (make_prefix(sub))
				return -1;
		}
	}
	ksft_print_msg("exec_bench: programs of %s, loader %s, %d libraries\n",
		       prog_dir, interp_path, nr_libs);
	ksft_print_msg("exec_bench: copied to %s/shared and %s/w<i>\n",
		       bench_cfg.dir, bench_cfg.dir);
	return 0;
}

static int eb_worker_init(struct bench_worker *w)
{
	int shape = param_shape(w->param);
	char dir[PATH_MAX];
	int ret;

	if (param_mode(w->param) == MODE_SHARED)
		ret = eb_path(dir, sizeof(dir), "%s/shared", bench_cfg.dir);
	else
		ret = eb_path(dir, sizeof(dir), "%s/w%d", bench_cfg.dir,
			      w->idx);
	if (ret || eb_path(exec_path, sizeof(exec_path), "%s/%s", dir,
			   shape_progs[shape][0]) ||
	    eb_path(env_ld, sizeof(env_ld), "LD_LIBRARY_PATH=%s", dir) ||
	    eb_path(env_path, sizeof(env_path), "PATH=%s", dir) ||
	    eb_path(script, sizeof(script), "cat %s/in | wc -c >/dev/null",
		    dir)) {
		bench_worker_fail(w, "work directory path too long");
		return -1;
	}
	if (access(exec_path, X_OK)) {
		bench_worker_fail(w, "%s: %s", exec_path, strerror(errno));
		return -1;
	}
	exec_envp[0] = env_ld;
	exec_envp[1] = env_path;
	exec_envp[2] = NULL;
	exec_argv[0] = (char *)shape_progs[shape][0];
	if (shape == SHAPE_SH) {
		exec_argv[1] = "-c";
		exec_argv[2] = script;
		exec_argv[3] = NULL;
	} else {
		exec_argv[1] = NULL;
	}
	w->tot[0] = shape_execs[shape];
	return 0;
}

static long eb_worker_op(struct bench_worker *w)
{
	return bench_fork_exec(w, exec_path, exec_argv, exec_envp);
}

static const struct bench_metric eb_metrics[] = {
	{ "execs_per_op", BENCH_AGG_MAX, 0 },
};

static const struct bench_desc exec_bench = {
	.name = "exec_bench",
	/* short: a prefix's ld.so path must fit the programs' PT_INTERP */
	.dir = "/tmp/xb",
	.opts = "M:S:P:",
	.usage = "  -M MODE  shared, private or all (default all)\n"
		 "  -S SHAPE exec, sh or all (default exec)\n"
		 "  -P DIR   directory of true, dash, cat and wc (default /usr/bin)\n",
	.parse_opt = eb_parse_opt,
	.init = eb_init,
	.setup = eb_setup,
	.prepare_run = eb_prepare_run,
	.worker_init = eb_worker_init,
	.worker_op = eb_worker_op,
	.metrics = eb_metrics,
	.nr_metrics = ARRAY_SIZE(eb_metrics),
};

int main(int argc, char **argv)
{
	return bench_main(&exec_bench, argc, argv);
}
