// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * c2c: a cache-line transfer tracer for QEMU TCG (plugin API version 1).
 *
 * The series claims that on an update path no CPU writes a cache line that
 * another CPU reads or writes.  That is a property of the access stream,
 * not of the machine, so it can be measured under emulation at any vCPU
 * count: this plugin sees every guest memory access with its physical
 * address, keeps a MESI-like state per 64-byte physical line and counts the
 * accesses that would move a line between cores on real hardware, in the
 * manner of mtrace (MIT, SOSP 2013) and with the vocabulary of perf c2c.
 *
 * Per line it keeps the vCPU that stored to it last (the owner) and the set
 * of vCPUs holding a copy.  A *transfer* is
 *   - a load by a vCPU that holds no copy of a line last written by another
 *     vCPU (a HITM: the data comes from another core's cache), or
 *   - a store to a line that another vCPU holds (an RFO or upgrade that
 *     invalidates the other copies).
 * A load of a line nobody has written since the trace began, or that only
 * the loading vCPU wrote, is not a transfer; a store by the only holder is
 * not either.  There is no capacity: a line stays in a vCPU's "cache" until
 * another vCPU stores to it, so capacity and conflict misses, prefetch and
 * the adjacent-line prefetcher are not modelled, and neither is DMA.
 *
 * A *conflict line* is a line that one vCPU stored to and another vCPU
 * accessed within the window (mtrace's and Commuter's measure); unlike the
 * transfer count it does not depend on how the vCPUs interleaved.
 *
 * Windows: the guest marks a measurement window with
 *	nopl 0x0c2c0001(%rax)	window start
 *	nopl 0x0c2c0002(%rax)	window stop
 * (a multi-byte no-op on hardware; see tools/testing/selftests/scalable/
 * bench.h).  The model runs all the time; counts and attribution are kept
 * per window.  At every stop the plugin appends a record to the out= file:
 * per-vCPU instructions, memory accesses and transfers, kernel and user mode
 * apart (an instruction is kernel-mode when its virtual address is in the
 * upper canonical half, as on x86-64 Linux), the window's conflict lines,
 * and every (line, pc, previous writer's pc, load/store) that transferred,
 * with the line's writer and accessor masks, so that the host side can
 * attribute transfers to functions and data symbols.
 *
 * Instructions are counted per executed translation block, so a block left
 * early by a fault counts whole.  Under MTTCG the vCPUs run as host threads
 * and their accesses interleave as the host schedules them: transfer counts
 * depend on that interleaving, conflict lines do not.
 *
 * Any vCPU count up to LS_MAX_VCPUS is traced.  The model takes 64 bytes
 * per line up to 64 vCPUs, and 40 more per 64 more vCPUs, rounded up to
 * 64 (see struct line).
 *
 * Spans: the entries file may also name functions whose calls are measured
 * ("<address> span<N>" at a function's entry, "<address> ret<N>" at each of
 * its returns, "<address> op<N>" at the entry of a function that each
 * operation the call handles runs, N below NR_SPANS): per window and span,
 * the calls that began and ended in the window, the kernel instructions
 * of the longest and of all of them, counted in the context the call began
 * in (an interrupt that arrives meanwhile is not counted), and the
 * operations of the longest and of all of them.  A call that the task
 * leaves (a context switch, a return to user mode) or that begins again
 * before it returns is counted as aborted, not measured.  Instructions are
 * counted per translation block, so a call's count may be off by its
 * entry block.
 *
 * Arguments: out=<path> (required), attrib=<max entries per window>.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "qemu-plugin-api.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define LINE_SHIFT	6
#define CHUNK_SHIFT	15		/* lines per chunk: 2 MiB of memory */
#define CHUNK_LINES	(1UL << CHUNK_SHIFT)
#define NR_CHUNKS	(1UL << 20)	/* physical memory up to 2 TiB */

#define MARK_MAGIC	0x0c2c0000u
#define MARK_START	1
#define MARK_STOP	2

#define KERNEL_HALF	0xffff800000000000ULL

enum { USER, KERNEL };

/*
 * Kernel contexts.  The traced guest runs a hundred to a thousand times
 * slower than hardware while its clock runs at host speed, so per
 * operation it takes that many more timer interrupts, and the softirqs and
 * kthreads they wake, than a real machine: their transfers would bury those
 * of the operation itself.  Every kernel access is therefore charged to
 * the context it runs in, known from the entry points the harness names
 * (entries=<file>: "<address> syscall|exception|ipi|interrupt" per line,
 * from System.map) and from the returns (sysret, iret): the syscall and
 * exception contexts, and the IPIs that operations send each other
 * (wake-ups, TLB shootdowns), are the operation's path; other interrupts
 * (the timer, devices) are time-driven, and kernel code entered by none
 * (kthreads, idle) is "kthread".  The stack of contexts belongs to a task:
 * "<address> switch" names __switch_to_asm, whose store of the old stack
 * pointer (movq %rsp, TASK_threadsp(%rdi)) and load of the new one (movq
 * TASK_threadsp(%rsi), %rsp) give the two task_structs' addresses, so a
 * context switch saves the old task's stack and restores the new one's (a
 * task not seen before starts empty).  Back in user mode a task's stack is
 * empty by definition.
 */
enum { CTX_USER, CTX_SYSCALL, CTX_EXCEPTION, CTX_IPI, CTX_INTERRUPT,
       CTX_KTHREAD, NR_CTX };
static const char *const ctx_names[NR_CTX] = {
	"user", "syscall", "exception", "ipi", "interrupt", "kthread",
};
#define CTX_DEPTH	16
#define NR_ENTRIES	4096
#define NR_TASK_SLOTS	8192
#define NR_SPANS	8
#define ENTRY_SPAN	0x40		/* | N: the entry of span N */
#define ENTRY_SPAN_RET	0x80		/* | N: a return of span N */
#define ENTRY_SPAN_OP	0xc0		/* | N: an operation of span N */
#define ENTRY_KIND	0xc0

#define LF_CONFLICT	1
#define LF_KCONFLICT	2

/*
 * The model's state of one 64-byte physical line.  Its size is fixed at
 * install by the guest's vCPU count: each vCPU mask is line_words 64-bit
 * words (bit c of word c / 64 is vCPU c), and a line takes line_stride
 * bytes, a multiple of 64 in 64-byte aligned chunks, so that up to 64
 * vCPUs the whole state of a line is one host cache line.
 *
 * The coherence state is the set H of vCPUs holding a copy (mask
 * M_HOLDERS) and ctl: the last writer + 1 in LS_OWNER (0: not written
 * since the trace began), LS_SHARED (H has more than one vCPU) and
 * LS_LOCK.  The last writer always holds a copy: a store makes H that
 * vCPU alone, and only another vCPU's store takes a vCPU out of H.
 *
 * Every change of the state is made with LS_LOCK held, taken by
 * compare-and-swap on ctl and dropped by storing the new ctl, so an
 * unlocked ctl always describes H.  The two cases that change nothing,
 * most accesses, take no lock and write nothing, so that vCPUs that only
 * read a line never bounce it between host caches:
 *   - a load by a holder: its own bit of H is set.  Only another vCPU's
 *     store clears it, and a load that saw it set comes before that store.
 *   - a store by the only holder, which wrote last: ctl is that vCPU's
 *     LS_OWNER, with LS_SHARED and LS_LOCK clear.
 * H and the owner do not fit one 64-bit word at 64 vCPUs, and a wider
 * compare-and-swap is not portable (x86's cmpxchg16b needs -mcx16, GCC
 * sends 16-byte atomics to libatomic, and 128 bits still cap H).  A change
 * costs what a compare-and-swap loop on one word does, one atomic
 * instruction, plus a plain store to unlock; H's words are read and
 * written only with the lock held, except the holder's own bit above.
 * The lock is held for a few instructions on the line's own host cache
 * line, so a striped lock table would only add a cache miss; a waiter
 * yields now and then in case the holder's thread was preempted.
 */
#define LS_LOCK		0x0001
#define LS_SHARED	0x0002
#define LS_OWNER_SHIFT	2
#define LS_OWNER	0xfffc
#define LS_MAX_VCPUS	(LS_OWNER >> LS_OWNER_SHIFT)	/* index + 1 fits */
#define LOCK_SPINS	64

/* The vCPU masks of a line, line_words words each. */
enum {
	M_HOLDERS,	/* vCPUs holding a copy (the coherence state) */
	M_W,		/* window: vCPUs that stored */
	M_T,		/* window: vCPUs that accessed */
	M_KW,		/* window: the same, kernel-mode accesses */
	M_KT,
	NR_MASKS
};

struct line {
	uint16_t ctl;		/* LS_*: the coherence state but H */
	uint16_t flags;		/* LF_*: counted as a conflict this window */
	uint32_t epoch;		/* window the window masks belong to */
	uint64_t wpc;		/* the last store: wpc_of(pc, context) */
	uint64_t vaddr;		/* window: last kernel-mode virtual address */
	uint64_t mask[];	/* NR_MASKS masks of line_words words */
};
_Static_assert(sizeof(struct line) + NR_MASKS * sizeof(uint64_t) == 64,
	       "up to 64 vCPUs, a line's state is one host cache line");

/* Per-vCPU counters, each written only by its vCPU's thread. */
struct vcpu_stats {
	uint64_t insn[2];
	uint64_t mem[2];
	uint64_t xfer[2];
	uint64_t xfer_store[2];
	uint64_t insn_ctx[NR_CTX];
	uint64_t xfer_ctx[NR_CTX];
} __attribute__((aligned(64)));

/* A task's stack of kernel contexts. */
struct ctx_stack {
	unsigned int depth;
	uint8_t stack[CTX_DEPTH];
};

/*
 * Per-vCPU state only its vCPU's thread touches: the running task's
 * contexts, and the last load (a read-modify-write instruction reaches the
 * plugin as a load and a store; hardware makes one request for ownership).
 */
struct vcpu_ctx {
	struct ctx_stack cur;
	uint64_t last_line;
	uint64_t last_pc;
	int last_xfer;
	int span;		/* the open span + 1, or 0 */
	int span_ctx;		/* the context it began in */
	uint32_t span_epoch;	/* the window it began in */
	uint64_t span_start;	/* insn_ctx[span_ctx] when it began */
	uint64_t span_ops;	/* op<N> entries run since it began */
} __attribute__((aligned(64)));

/* One vCPU's calls of one span in window @epoch; written by its vCPU only. */
struct span_stat {
	uint32_t epoch;
	uint64_t calls;
	uint64_t insn_sum;
	uint64_t insn_max;
	uint64_t ops_sum;
	uint64_t ops_at_max;	/* the operations of the longest call */
	uint64_t aborted;
};

/* The saved contexts of tasks not running, by task_struct address. */
struct task_slot {
	uint64_t task;
	struct ctx_stack ctx;
};

/* One attributed transfer site of the current window. */
struct att {
	uint64_t line;
	uint64_t pc;
	uint64_t wpc;
	uint64_t count;
	uint16_t store;
	uint16_t ctx;
	uint32_t used;
};

static struct line *chunks[NR_CHUNKS];
static unsigned int line_words;	/* 64-bit words per vCPU mask */
static size_t line_stride;	/* bytes per struct line */
/* Per-vCPU arrays of max_vcpus entries, allocated at install. */
static struct vcpu_stats *stats;
static struct vcpu_stats *start;
static struct vcpu_stats *end;
static unsigned int nr_vcpus;
static unsigned int max_vcpus;	/* every vCPU index is below it */
static struct vcpu_ctx *ctxs;
static uint64_t entry_addr[NR_ENTRIES];
static uint8_t entry_ctx[NR_ENTRIES];
static uint64_t switch_addr;
static struct span_stat *span_stats;	/* max_vcpus * NR_SPANS */
static int nr_spans;
static struct task_slot task_slots[NR_TASK_SLOTS];
static pthread_mutex_t task_lock = PTHREAD_MUTEX_INITIALIZER;

static uint32_t epoch;
static int win_open;
static uint64_t win_seq;
static uint64_t conflicts[2];
static uint64_t dropped;
static uint64_t outside_line;

static pthread_mutex_t win_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t att_lock = PTHREAD_MUTEX_INITIALIZER;
static struct att *atts;
static size_t att_cap = 1UL << 20;
static size_t att_used;
static FILE *out;

/*
 * Pacing.  Under MTTCG the host schedules the vCPU threads, and with more
 * vCPUs than host cores (or a busy host) one vCPU runs thousands of
 * operations while the others wait for a core: they would hardly ever
 * interleave, and a line bounced on every operation on hardware would
 * show a handful of transfers.  With quantum=Q, inside a window no vCPU
 * runs more than Q instructions ahead of the slowest running one (a
 * halted vCPU does not count, and one that wakes up is moved up to the
 * others), so that the vCPUs advance in lockstep as cores of one speed
 * would.  A wait longer than PACE_MAX_NS is given up (counted), and then
 * nobody waits for PACE_MAX_NS (a vCPU stalled in QEMU, e.g. on an
 * exclusive section or the I/O lock, must not cost every block), so QEMU's
 * own exclusive sections cannot deadlock against it.  When the pacing comes
 * back, the vCPUs start level again (pace_relevel()): free-running vCPUs
 * drift further apart than the slowest can make up within PACE_MAX_NS, so
 * without it one give-up would lead to the next and leave the rest of the
 * window unpaced.
 */
#define PACE_MAX_NS	5000000ULL
static uint64_t quantum;
struct vcpu_pace {
	uint64_t vt;		/* instructions, ever */
	uint64_t base;		/* vt at the window's start */
	int active;		/* not halted */
} __attribute__((aligned(64)));
static struct vcpu_pace *pc_;
static uint64_t pace_off_until;
static int pace_level_pending;
static uint64_t pace_waits, pace_timeouts;

static inline int mode_of(uint64_t pc)
{
	return pc >= KERNEL_HALF ? KERNEL : USER;
}

#define ALWAYS_INLINE	inline __attribute__((always_inline))

static inline uint64_t *lmask(struct line *l, int m)
{
	return &l->mask[m * line_words];
}

/*
 * The word of @cpu's bit in a mask of @nw words.  The access path is
 * compiled twice, for @nw 1 and for any @nw, so that up to 64 vCPUs it
 * indexes no mask.
 */
static inline unsigned int word_of(unsigned int cpu, unsigned int nw)
{
	return nw == 1 ? 0 : cpu >> 6;
}

static struct line *line_get(uint64_t lineno)
{
	uint64_t c = lineno >> CHUNK_SHIFT;
	struct line *chunk, *fresh;
	void *raw;

	if (c >= NR_CHUNKS)
		return NULL;
	chunk = __atomic_load_n(&chunks[c], __ATOMIC_ACQUIRE);
	if (!chunk) {
		/* zeroed lazily, as calloc maps a block this large */
		raw = calloc(1, CHUNK_LINES * line_stride + 63);
		if (!raw)
			return NULL;
		fresh = (struct line *)(((uintptr_t)raw + 63) & ~(uintptr_t)63);
		chunk = NULL;
		if (__atomic_compare_exchange_n(&chunks[c], &chunk, fresh, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			chunk = fresh;
		else
			free(raw);
	}
	return (struct line *)((char *)chunk +
			       (lineno & (CHUNK_LINES - 1)) * line_stride);
}

/*
 * A line's last store, as one word: its pc, with the context it ran in
 * (CTX_*) in bits 57-62, which no canonical address of 4- or 5-level
 * paging uses (the kernel's have them all set, copies of bit 63).
 */
#define WPC_SHIFT	57
#define WPC_LOW		((1ULL << WPC_SHIFT) - 1)
#define WPC_HIGH	(~WPC_LOW & ~(1ULL << 63))

static inline uint64_t wpc_of(uint64_t pc, int ctx)
{
	return (pc & (WPC_LOW | 1ULL << 63)) | (uint64_t)ctx << WPC_SHIFT;
}

static inline uint64_t wpc_pc(uint64_t w)
{
	return (w & WPC_LOW) | ((w >> 63) ? WPC_HIGH | 1ULL << 63 : 0);
}

static inline int wpc_ctx(uint64_t w)
{
	return (w & WPC_HIGH) >> WPC_SHIFT;
}

static inline uint64_t hash3(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ULL;

	h ^= b + 0x7f4a7c159e3779b9ULL + (h << 6) + (h >> 2);
	h ^= c + 0x94d049bb133111ebULL + (h << 6) + (h >> 2);
	return h ^ (h >> 31);
}

/*
 * Count one transfer of @lineno at @pc, whose data @wpc stored last.
 * Inlined into both copies of the access path, as every transfer calls it.
 */
static ALWAYS_INLINE void attribute(uint64_t lineno, uint64_t pc, uint64_t wpc,
				    int store, int ctx)
{
	size_t i, mask = att_cap - 1;
	struct att *a;

	pthread_mutex_lock(&att_lock);
	i = hash3(lineno, pc, wpc ^ (uint64_t)store ^ (uint64_t)ctx << 8) & mask;
	for (;;) {
		a = &atts[i];
		if (!a->used) {
			if (att_used * 4 >= att_cap * 3) {
				dropped++;
				break;
			}
			a->used = 1;
			a->line = lineno;
			a->pc = pc;
			a->wpc = wpc;
			a->store = store;
			a->ctx = ctx;
			a->count = 1;
			att_used++;
			break;
		}
		if (a->line == lineno && a->pc == pc && a->wpc == wpc &&
		    a->store == store && a->ctx == ctx) {
			a->count++;
			break;
		}
		i = (i + 1) & mask;
	}
	pthread_mutex_unlock(&att_lock);
}

/* Set @bit in *@mask; return the mask after. */
static inline uint64_t mask_or(uint64_t *mask, uint64_t bit)
{
	uint64_t v = __atomic_load_n(mask, __ATOMIC_RELAXED);

	if ((v & bit) == bit)
		return v;
	return __atomic_or_fetch(mask, bit, __ATOMIC_RELAXED);
}

/* Count @flag of @l once per window; true for the one caller that did. */
static inline int flag_once(struct line *l, uint16_t flag)
{
	if (__atomic_load_n(&l->flags, __ATOMIC_RELAXED) & flag)
		return 0;
	return !(__atomic_fetch_or(&l->flags, flag, __ATOMIC_RELAXED) & flag);
}

/* Whether a word of mask @m, of @nw words, other than word @i is not 0. */
static inline int other_words(const uint64_t *m, unsigned int nw,
			      unsigned int i)
{
	unsigned int j;

	for (j = 0; j < nw; j++)
		if (j != i && __atomic_load_n(&m[j], __ATOMIC_RELAXED))
			return 1;
	return 0;
}

/*
 * Add the accessing vCPU, @bit of word @i, to the accessor mask @tm and,
 * on a store, to the writer mask @wm (@nw words each).  Return whether a
 * vCPU stored to the line and another accessed it.
 */
static ALWAYS_INLINE int window_masks(uint64_t *wm, uint64_t *tm,
				       unsigned int nw, unsigned int i,
				       uint64_t bit, int store)
{
	uint64_t t = mask_or(&tm[i], bit);
	uint64_t w = store ? mask_or(&wm[i], bit) :
			     __atomic_load_n(&wm[i], __ATOMIC_RELAXED);

	if (nw == 1)
		return w && (t & (t - 1));
	return (w || other_words(wm, nw, i)) &&
	       ((t & (t - 1)) || other_words(tm, nw, i));
}

/* Window bookkeeping of one access: writer/accessor masks, conflicts. */
static ALWAYS_INLINE void window_access(struct line *l, unsigned int nw,
				       unsigned int cpu, int store, int k,
				       uint64_t vaddr)
{
	uint32_t e = __atomic_load_n(&epoch, __ATOMIC_RELAXED);
	uint32_t le = __atomic_load_n(&l->epoch, __ATOMIC_RELAXED);
	unsigned int i = word_of(cpu, nw), j;
	uint64_t bit = 1ULL << (cpu & 63), *m = l->mask;

	/* First access of this window: forget the last window's masks. */
	if (le != e && __atomic_compare_exchange_n(&l->epoch, &le, e, false,
						   __ATOMIC_RELAXED,
						   __ATOMIC_RELAXED)) {
		/* M_W to M_KT, in a row */
		for (j = M_W * nw; j < NR_MASKS * nw; j++)
			__atomic_store_n(&m[j], 0, __ATOMIC_RELAXED);
		__atomic_store_n(&l->flags, 0, __ATOMIC_RELAXED);
	}
	if (window_masks(&m[M_W * nw], &m[M_T * nw], nw, i, bit, store) &&
	    flag_once(l, LF_CONFLICT))
		__atomic_fetch_add(&conflicts[USER], 1, __ATOMIC_RELAXED);
	if (k != KERNEL)
		return;
	if (window_masks(&m[M_KW * nw], &m[M_KT * nw], nw, i, bit, store) &&
	    flag_once(l, LF_KCONFLICT))
		__atomic_fetch_add(&conflicts[KERNEL], 1, __ATOMIC_RELAXED);
	if (__atomic_load_n(&l->vaddr, __ATOMIC_RELAXED) != vaddr)
		__atomic_store_n(&l->vaddr, vaddr, __ATOMIC_RELAXED);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* Take @l's LS_LOCK; return ctl as it was, unlocked. */
static uint16_t __attribute__((noinline)) line_lock_wait(struct line *l)
{
	uint16_t v = __atomic_load_n(&l->ctl, __ATOMIC_RELAXED);
	unsigned int spins = 0;

	for (;;) {
		if (!(v & LS_LOCK)) {
			if (__atomic_compare_exchange_n(&l->ctl, &v, v | LS_LOCK,
							true, __ATOMIC_ACQUIRE,
							__ATOMIC_RELAXED))
				return v;
			continue;
		}
		if (++spins % LOCK_SPINS)
			cpu_relax();
		else
			sched_yield();
		v = __atomic_load_n(&l->ctl, __ATOMIC_RELAXED);
	}
}

static inline uint16_t line_lock(struct line *l)
{
	uint16_t v = __atomic_load_n(&l->ctl, __ATOMIC_RELAXED);

	if (!(v & LS_LOCK) &&
	    __atomic_compare_exchange_n(&l->ctl, &v, v | LS_LOCK, false,
					__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return v;
	return line_lock_wait(l);
}

/* Publish @v, unlocked, as @l's ctl: the end of a change of state. */
static inline void line_unlock(struct line *l, uint16_t v)
{
	__atomic_store_n(&l->ctl, v, __ATOMIC_RELEASE);
}

/*
 * A store by @cpu that may change the state: an RFO invalidates every
 * other copy.  Return whether it transferred.
 */
static inline int line_store(struct line *l, unsigned int nw,
			     unsigned int cpu)
{
	uint64_t *h = &l->mask[M_HOLDERS * nw], bit = 1ULL << (cpu & 63), old;
	unsigned int i, own = word_of(cpu, nw);
	int xfer;

	line_lock(l);
	old = __atomic_load_n(&h[own], __ATOMIC_RELAXED);
	xfer = !!(old & ~bit);
	if (old != bit)
		__atomic_store_n(&h[own], bit, __ATOMIC_RELAXED);
	for (i = 0; i < nw; i++) {
		if (i == own || !__atomic_load_n(&h[i], __ATOMIC_RELAXED))
			continue;
		xfer = 1;
		__atomic_store_n(&h[i], 0, __ATOMIC_RELAXED);
	}
	line_unlock(l, (cpu + 1) << LS_OWNER_SHIFT);
	return xfer;
}

/*
 * A load by @cpu, not a holder: a HITM if another vCPU wrote the line
 * last, the data coming from its cache.  Return whether it transferred.
 */
static inline int line_load(struct line *l, unsigned int nw,
			    unsigned int cpu)
{
	uint64_t *h = &l->mask[M_HOLDERS * nw], bit = 1ULL << (cpu & 63);
	uint16_t v = line_lock(l), owner = v & LS_OWNER;
	unsigned int i = word_of(cpu, nw);
	int xfer;

	xfer = owner && owner != (cpu + 1) << LS_OWNER_SHIFT;
	/* H had a vCPU already: the last writer, or the bit of a load. */
	if (owner || other_words(h, nw, i) ||
	    __atomic_load_n(&h[i], __ATOMIC_RELAXED))
		v |= LS_SHARED;
	__atomic_store_n(&h[i], __atomic_load_n(&h[i], __ATOMIC_RELAXED) | bit,
			 __ATOMIC_RELAXED);
	line_unlock(l, v);
	return xfer;
}

/* One access by @cpu to @lineno: the coherence model, then the window. */
static ALWAYS_INLINE void access_line_nw(unsigned int nw, unsigned int cpu,
					 uint64_t lineno, int store, int k,
					 int ctx, uint64_t pc, uint64_t vaddr)
{
	uint16_t me = (cpu + 1) << LS_OWNER_SHIFT;
	struct line *l = line_get(lineno);
	struct vcpu_ctx *x = &ctxs[cpu];
	uint64_t prev_wpc;
	int xfer, rmw;

	if (!l) {
		__atomic_fetch_add(&outside_line, 1, __ATOMIC_RELAXED);
		return;
	}
	/* The store half of an instruction whose load half transferred. */
	rmw = store && x->last_xfer && x->last_line == lineno && x->last_pc == pc;
	prev_wpc = __atomic_load_n(&l->wpc, __ATOMIC_RELAXED);
	if (store) {
		/* The only holder, and it wrote last: nothing changes. */
		xfer = __atomic_load_n(&l->ctl, __ATOMIC_RELAXED) != me &&
		       line_store(l, nw, cpu);
		__atomic_store_n(&l->wpc, wpc_of(pc, ctx), __ATOMIC_RELAXED);
	} else {
		uint64_t *h = &l->mask[M_HOLDERS * nw + word_of(cpu, nw)];

		/* A holder: nothing changes. */
		xfer = !(__atomic_load_n(h, __ATOMIC_RELAXED) &
			 1ULL << (cpu & 63)) && line_load(l, nw, cpu);
	}
	if (rmw)
		xfer = 0;
	x->last_line = lineno;
	x->last_pc = pc;
	x->last_xfer = !store && xfer;

	if (!__atomic_load_n(&win_open, __ATOMIC_RELAXED))
		return;
	window_access(l, nw, cpu, store, k, vaddr);
	if (xfer) {
		stats[cpu].xfer[k]++;
		stats[cpu].xfer_ctx[ctx]++;
		if (store)
			stats[cpu].xfer_store[k]++;
		attribute(lineno, pc, prev_wpc, store, ctx);
	}
}

static void access_line(unsigned int cpu, uint64_t lineno, int store, int k,
			int ctx, uint64_t pc, uint64_t vaddr)
{
	if (line_words == 1)
		access_line_nw(1, cpu, lineno, store, k, ctx, pc, vaddr);
	else
		access_line_nw(line_words, cpu, lineno, store, k, ctx, pc,
			       vaddr);
}

static inline int cur_ctx(unsigned int cpu, int k)
{
	const struct ctx_stack *x = &ctxs[cpu].cur;

	if (k == USER)
		return CTX_USER;
	return x->depth ? x->stack[x->depth - 1] : CTX_KTHREAD;
}

static void vcpu_mem(unsigned int cpu, qemu_plugin_meminfo_t info,
		     uint64_t vaddr, void *udata)
{
	uint64_t pc = (uintptr_t)udata, phys;
	struct qemu_plugin_hwaddr *hw;
	unsigned int size;
	int k, store, ctx;

	if (cpu >= max_vcpus)
		return;
	hw = qemu_plugin_get_hwaddr(info, vaddr);
	if (!hw || qemu_plugin_hwaddr_is_io(hw))
		return;
	phys = qemu_plugin_hwaddr_phys_addr(hw);
	size = 1U << qemu_plugin_mem_size_shift(info);
	store = qemu_plugin_mem_is_store(info);
	k = mode_of(pc);
	ctx = cur_ctx(cpu, k);
	stats[cpu].mem[k]++;
	access_line(cpu, phys >> LINE_SHIFT, store, k, ctx, pc, vaddr);
	/* An access that straddles two lines touches both. */
	if ((phys & ((1U << LINE_SHIFT) - 1)) + size > (1U << LINE_SHIFT)) {
		uint64_t next = (phys >> LINE_SHIFT) + 1;

		/* ... and the second may be on another page */
		if ((vaddr & 4095) + size > 4096) {
			hw = qemu_plugin_get_hwaddr(info, vaddr + size - 1);
			if (!hw || qemu_plugin_hwaddr_is_io(hw))
				return;
			next = qemu_plugin_hwaddr_phys_addr(hw) >> LINE_SHIFT;
		}
		access_line(cpu, next, store, k, ctx, pc, vaddr + size - 1);
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * Instructions @cpu ran in this window, as the pacing counts them.  The
 * base is read first: pace_relevel() publishes (release) a base that @cpu's
 * vt already reached, so the vt read after it (acquire) is no smaller.
 */
static inline uint64_t vt_of(unsigned int cpu)
{
	uint64_t b = __atomic_load_n(&pc_[cpu].base, __ATOMIC_ACQUIRE);
	uint64_t v = __atomic_load_n(&pc_[cpu].vt, __ATOMIC_RELAXED);

	return v > b ? v - b : 0;
}

/* The least window instruction count of the running vCPUs but @cpu. */
static uint64_t vt_min_others(unsigned int cpu, int *any)
{
	uint64_t m = UINT64_MAX, v;
	unsigned int c;

	*any = 0;
	for (c = 0; c < nr_vcpus; c++) {
		if (c == cpu || !__atomic_load_n(&pc_[c].active, __ATOMIC_RELAXED))
			continue;
		v = vt_of(c);
		if (v < m)
			m = v;
		*any = 1;
	}
	return m;
}

/*
 * Once after a give-up, the first vCPU to pace again levels them all: each
 * one's window count restarts at what it ran so far.  Only the owner
 * writes pc_[c].vt, and it only grows, so a base taken from it is never
 * above a later read of it (vt_of()); the CAS lets one vCPU do it.
 */
static void pace_relevel(void)
{
	int one = 1;

	if (!__atomic_compare_exchange_n(&pace_level_pending, &one, 0, 0,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	for (unsigned int c = 0; c < nr_vcpus; c++)
		__atomic_store_n(&pc_[c].base,
				 __atomic_load_n(&pc_[c].vt, __ATOMIC_RELAXED),
				 __ATOMIC_RELEASE);
}

static void pace(unsigned int cpu)
{
	uint64_t t0 = 0, m;
	int any;

	if (__atomic_load_n(&pace_off_until, __ATOMIC_RELAXED) > now_ns())
		return;
	if (__atomic_load_n(&pace_level_pending, __ATOMIC_RELAXED))
		pace_relevel();
	for (;;) {
		m = vt_min_others(cpu, &any);
		if (!any || vt_of(cpu) <= m + quantum ||
		    !__atomic_load_n(&win_open, __ATOMIC_RELAXED))
			return;
		if (!t0) {
			t0 = now_ns();
			__atomic_fetch_add(&pace_waits, 1, __ATOMIC_RELAXED);
		} else if (now_ns() - t0 > PACE_MAX_NS) {
			__atomic_fetch_add(&pace_timeouts, 1, __ATOMIC_RELAXED);
			__atomic_store_n(&pace_level_pending, 1, __ATOMIC_RELAXED);
			__atomic_store_n(&pace_off_until, now_ns() + PACE_MAX_NS,
					 __ATOMIC_RELAXED);
			return;
		}
		sched_yield();
	}
}

static void span_abort(unsigned int cpu);

static void vcpu_tb_exec(unsigned int cpu, void *udata)
{
	uint64_t v = (uintptr_t)udata;

	if (cpu >= max_vcpus)
		return;
	stats[cpu].insn[v & 1] += v >> 1;
	if (!(v & 1)) {
		ctxs[cpu].cur.depth = 0;
		if (ctxs[cpu].span)
			span_abort(cpu);
	}
	stats[cpu].insn_ctx[cur_ctx(cpu, v & 1)] += v >> 1;
	__atomic_store_n(&pc_[cpu].vt, pc_[cpu].vt + (v >> 1), __ATOMIC_RELAXED);
	if (quantum && __atomic_load_n(&win_open, __ATOMIC_RELAXED))
		pace(cpu);
}

/* A kernel entry point: push its context. */
static void ctx_enter(unsigned int cpu, void *udata)
{
	struct ctx_stack *x;

	if (cpu >= max_vcpus)
		return;
	x = &ctxs[cpu].cur;
	if (x->depth == CTX_DEPTH) {
		/* Unmatched entries (task switches): keep the newest. */
		memmove(x->stack, x->stack + 1, CTX_DEPTH - 1);
		x->depth--;
	}
	x->stack[x->depth++] = (uintptr_t)udata;
}

/* sysret or iret: back to what the entry interrupted. */
static void ctx_leave(unsigned int cpu, void *udata)
{
	if (cpu < max_vcpus && ctxs[cpu].cur.depth)
		ctxs[cpu].cur.depth--;
}

/* This vCPU's record of span @id for the current window. */
static struct span_stat *span_stat(unsigned int cpu, int id)
{
	struct span_stat *s = &span_stats[cpu * NR_SPANS + id];
	uint32_t e = __atomic_load_n(&epoch, __ATOMIC_RELAXED);

	if (s->epoch != e) {
		__atomic_store_n(&s->calls, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&s->insn_sum, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&s->insn_max, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&s->ops_sum, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&s->ops_at_max, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&s->aborted, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&s->epoch, e, __ATOMIC_RELEASE);
	}
	return s;
}

/* Forget this vCPU's open span; count it if it began in an open window. */
static void span_abort(unsigned int cpu)
{
	struct vcpu_ctx *x = &ctxs[cpu];

	if (!x->span)
		return;
	if (__atomic_load_n(&win_open, __ATOMIC_RELAXED) &&
	    x->span_epoch == __atomic_load_n(&epoch, __ATOMIC_RELAXED)) {
		struct span_stat *s = span_stat(cpu, x->span - 1);

		__atomic_store_n(&s->aborted, s->aborted + 1, __ATOMIC_RELAXED);
	}
	x->span = 0;
}

/* A span's entry: its TB was counted already, so the count starts after. */
static void span_begin(unsigned int cpu, void *udata)
{
	struct vcpu_ctx *x;

	if (cpu >= max_vcpus)
		return;
	span_abort(cpu);
	x = &ctxs[cpu];
	x->span = (uintptr_t)udata + 1;
	x->span_ctx = cur_ctx(cpu, KERNEL);
	x->span_epoch = __atomic_load_n(&epoch, __ATOMIC_RELAXED);
	x->span_start = stats[cpu].insn_ctx[x->span_ctx];
	x->span_ops = 0;
}

/* An operation of span @udata, if this vCPU is in one, in its context. */
static void span_op(unsigned int cpu, void *udata)
{
	struct vcpu_ctx *x;

	if (cpu >= max_vcpus)
		return;
	x = &ctxs[cpu];
	if (x->span == (int)(uintptr_t)udata + 1 &&
	    cur_ctx(cpu, KERNEL) == x->span_ctx)
		x->span_ops++;
}

/* A return of span @udata: its TB, the return included, was counted. */
static void span_end(unsigned int cpu, void *udata)
{
	int id = (uintptr_t)udata;
	struct vcpu_ctx *x;
	struct span_stat *s;
	uint64_t n;

	if (cpu >= max_vcpus)
		return;
	x = &ctxs[cpu];
	if (x->span != id + 1)
		return;
	if (cur_ctx(cpu, KERNEL) != x->span_ctx) {
		span_abort(cpu);
		return;
	}
	x->span = 0;
	if (!__atomic_load_n(&win_open, __ATOMIC_RELAXED) ||
	    x->span_epoch != __atomic_load_n(&epoch, __ATOMIC_RELAXED))
		return;
	n = stats[cpu].insn_ctx[x->span_ctx] - x->span_start;
	s = span_stat(cpu, id);
	__atomic_store_n(&s->calls, s->calls + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&s->insn_sum, s->insn_sum + n, __ATOMIC_RELAXED);
	__atomic_store_n(&s->ops_sum, s->ops_sum + x->span_ops,
			 __ATOMIC_RELAXED);
	if (n > s->insn_max) {
		__atomic_store_n(&s->insn_max, n, __ATOMIC_RELAXED);
		__atomic_store_n(&s->ops_at_max, x->span_ops, __ATOMIC_RELAXED);
	}
}

static inline struct task_slot *task_slot(uint64_t task)
{
	return &task_slots[(task * 0x9e3779b97f4a7c15ULL >> 32) &
			   (NR_TASK_SLOTS - 1)];
}

/* __switch_to_asm stores the old task's stack pointer: keep its contexts. */
static void ctx_save(unsigned int cpu, qemu_plugin_meminfo_t info,
		     uint64_t vaddr, void *udata)
{
	struct task_slot *t = task_slot(vaddr);

	if (cpu >= max_vcpus)
		return;
	span_abort(cpu);
	pthread_mutex_lock(&task_lock);
	t->task = vaddr;
	t->ctx = ctxs[cpu].cur;
	pthread_mutex_unlock(&task_lock);
}

/* ... and loads the new one's: its contexts, or none if never seen. */
static void ctx_restore(unsigned int cpu, qemu_plugin_meminfo_t info,
			uint64_t vaddr, void *udata)
{
	struct task_slot *t = task_slot(vaddr);

	if (cpu >= max_vcpus)
		return;
	pthread_mutex_lock(&task_lock);
	if (t->task == vaddr) {
		ctxs[cpu].cur = t->ctx;
		t->task = 0;
	} else {
		ctxs[cpu].cur.depth = 0;
	}
	pthread_mutex_unlock(&task_lock);
}

/*
 * In __switch_to_asm: movq %rsp, disp(%rdi) saves, movq disp(%rsi), %rsp
 * restores (disp32 or disp8 forms); 1 and 2, or 0 for anything else.
 */
static int switch_insn(struct qemu_plugin_insn *insn)
{
	const uint8_t *b = qemu_plugin_insn_data(insn);
	size_t n = qemu_plugin_insn_size(insn);

	if ((n != 7 && n != 4) || b[0] != 0x48)
		return 0;
	if (b[1] == 0x89 && b[2] == (n == 7 ? 0xa7 : 0x67))
		return 1;
	if (b[1] == 0x8b && b[2] == (n == 7 ? 0xa6 : 0x66))
		return 2;
	return 0;
}

static int entry_slot(uint64_t addr)
{
	size_t i = (addr * 0x9e3779b97f4a7c15ULL >> 40) & (NR_ENTRIES - 1);

	while (entry_addr[i] && entry_addr[i] != addr)
		i = (i + 1) & (NR_ENTRIES - 1);
	return i;
}

static int load_entries(const char *path)
{
	char kind[32];
	unsigned long long addr;
	int n = 0, c, i;
	FILE *f = fopen(path, "r");

	if (!f) {
		fprintf(stderr, "c2c: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (fscanf(f, "%llx %31s", &addr, kind) == 2) {
		if (!strcmp(kind, "switch")) {
			switch_addr = addr;
			continue;
		}
		if (sscanf(kind, "span%d", &c) == 1 ||
		    sscanf(kind, "ret%d", &c) == 1 ||
		    sscanf(kind, "op%d", &c) == 1) {
			if (c < 0 || c >= NR_SPANS || n >= NR_ENTRIES / 2) {
				fprintf(stderr, "c2c: %s: bad span %s or too many\n",
					path, kind);
				fclose(f);
				return -1;
			}
			if (c >= nr_spans)
				nr_spans = c + 1;
			c |= kind[0] == 's' ? ENTRY_SPAN :
			     kind[0] == 'r' ? ENTRY_SPAN_RET : ENTRY_SPAN_OP;
		} else {
			for (c = CTX_SYSCALL; c <= CTX_INTERRUPT; c++)
				if (!strcmp(kind, ctx_names[c]))
					break;
		}
		if ((c > CTX_INTERRUPT && !(c & ENTRY_KIND)) ||
		    n >= NR_ENTRIES / 2) {
			fprintf(stderr, "c2c: %s: bad entry %s or too many\n",
				path, kind);
			fclose(f);
			return -1;
		}
		i = entry_slot(addr);
		entry_addr[i] = addr;
		entry_ctx[i] = c;
		n++;
	}
	fclose(f);
	return n;
}

/* iretq, iretl, sysretq, sysretl */
static int is_return(struct qemu_plugin_insn *insn)
{
	const uint8_t *b = qemu_plugin_insn_data(insn);
	size_t n = qemu_plugin_insn_size(insn);

	if (n && b[0] == 0x48) {
		b++;
		n--;
	}
	return (n == 1 && b[0] == 0xcf) ||
	       (n == 2 && b[0] == 0x0f && b[1] == 0x07);
}

static void vcpu_idle(qemu_plugin_id_t id, unsigned int cpu)
{
	if (cpu < max_vcpus)
		__atomic_store_n(&pc_[cpu].active, 0, __ATOMIC_RELAXED);
}

/* A vCPU that slept comes back level with the slowest running one. */
static void vcpu_resume(qemu_plugin_id_t id, unsigned int cpu)
{
	uint64_t m;
	int any;

	if (cpu >= max_vcpus)
		return;
	m = vt_min_others(cpu, &any);
	if (any && m != UINT64_MAX && vt_of(cpu) < m)
		__atomic_store_n(&pc_[cpu].vt, pc_[cpu].base + m, __ATOMIC_RELAXED);
	__atomic_store_n(&pc_[cpu].active, 1, __ATOMIC_RELAXED);
}

static int att_cmp(const void *x, const void *y)
{
	const struct att *a = x, *b = y;

	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	return a->count > b->count ? -1 : a->count < b->count;
}

/* Write " @name=<mask @m of @l>" in hex, one number whatever line_words. */
static void put_mask(const char *name, struct line *l, int m)
{
	const uint64_t *v = l ? lmask(l, m) : NULL;
	int i = l ? (int)line_words - 1 : -1;

	while (i >= 0 && !v[i])
		i--;
	if (i < 0) {
		fprintf(out, " %s=0", name);
		return;
	}
	fprintf(out, " %s=%#" PRIx64, name, v[i]);
	while (--i >= 0)
		fprintf(out, "%016" PRIx64, v[i]);
}

/* Write the record of the window that just closed; win_lock held. */
static void dump_window(void)
{
	uint64_t tot[4][2] = { { 0 } }, ictx[NR_CTX] = { 0 }, xctx[NR_CTX] = { 0 };
	uint64_t last = ~0ULL;
	struct vcpu_stats d;
	struct att *list;
	size_t i, n = 0;
	unsigned int c;

	fprintf(out, "window seq=%" PRIu64 " vcpus=%u\n", win_seq, nr_vcpus);
	for (c = 0; c < nr_vcpus; c++) {
		for (i = 0; i < 2; i++) {
			d.insn[i] = end[c].insn[i] - start[c].insn[i];
			d.mem[i] = end[c].mem[i] - start[c].mem[i];
			d.xfer[i] = end[c].xfer[i] - start[c].xfer[i];
			d.xfer_store[i] = end[c].xfer_store[i] -
					  start[c].xfer_store[i];
			tot[0][i] += d.insn[i];
			tot[1][i] += d.mem[i];
			tot[2][i] += d.xfer[i];
			tot[3][i] += d.xfer_store[i];
		}
		for (i = 0; i < NR_CTX; i++) {
			ictx[i] += end[c].insn_ctx[i] - start[c].insn_ctx[i];
			xctx[i] += end[c].xfer_ctx[i] - start[c].xfer_ctx[i];
		}
		fprintf(out, "cpu idx=%u insn_k=%" PRIu64 " insn_u=%" PRIu64
			" mem_k=%" PRIu64 " mem_u=%" PRIu64 " xfer_k=%" PRIu64
			" xfer_u=%" PRIu64 "\n", c, d.insn[KERNEL], d.insn[USER],
			d.mem[KERNEL], d.mem[USER], d.xfer[KERNEL], d.xfer[USER]);
	}

	fprintf(out, "contexts");
	for (i = 0; i < NR_CTX; i++)
		fprintf(out, " insn_%s=%" PRIu64 " xfer_%s=%" PRIu64,
			ctx_names[i], ictx[i], ctx_names[i], xctx[i]);
	fprintf(out, "\n");
	for (i = 0; i < (size_t)nr_spans; i++) {
		uint64_t calls = 0, sum = 0, max = 0, aborted = 0, ops = 0;
		uint64_t ops_at_max = 0;

		for (c = 0; c < max_vcpus; c++) {
			struct span_stat *s = &span_stats[c * NR_SPANS + i];

			if (__atomic_load_n(&s->epoch, __ATOMIC_ACQUIRE) != epoch)
				continue;
			calls += __atomic_load_n(&s->calls, __ATOMIC_RELAXED);
			sum += __atomic_load_n(&s->insn_sum, __ATOMIC_RELAXED);
			aborted += __atomic_load_n(&s->aborted, __ATOMIC_RELAXED);
			ops += __atomic_load_n(&s->ops_sum, __ATOMIC_RELAXED);
			if (__atomic_load_n(&s->insn_max, __ATOMIC_RELAXED) > max) {
				max = __atomic_load_n(&s->insn_max, __ATOMIC_RELAXED);
				ops_at_max = __atomic_load_n(&s->ops_at_max,
							     __ATOMIC_RELAXED);
			}
		}
		fprintf(out, "span id=%zu calls=%" PRIu64 " insn_sum=%" PRIu64
			" insn_max=%" PRIu64 " ops_sum=%" PRIu64 " ops_at_max=%"
			PRIu64 " aborted=%" PRIu64 "\n", i, calls, sum, max, ops,
			ops_at_max, aborted);
	}
	pthread_mutex_lock(&att_lock);
	fprintf(out, "total insn_k=%" PRIu64 " insn_u=%" PRIu64 " mem_k=%" PRIu64
		" mem_u=%" PRIu64 " xfer_k=%" PRIu64 " xfer_u=%" PRIu64
		" xfer_store_k=%" PRIu64 " xfer_store_u=%" PRIu64
		" conflict=%" PRIu64 " conflict_k=%" PRIu64
		" sites=%zu dropped=%" PRIu64 " pace_waits=%" PRIu64
		" pace_timeouts=%" PRIu64 "\n",
		tot[0][KERNEL], tot[0][USER], tot[1][KERNEL], tot[1][USER],
		tot[2][KERNEL], tot[2][USER], tot[3][KERNEL], tot[3][USER],
		conflicts[USER], conflicts[KERNEL], att_used, dropped,
		pace_waits, pace_timeouts);
	list = malloc(att_used * sizeof(*list) + 1);
	if (list) {
		for (i = 0; i < att_cap; i++)
			if (atts[i].used)
				list[n++] = atts[i];
		qsort(list, n, sizeof(*list), att_cmp);
		for (i = 0; i < n; i++) {
			struct att *a = &list[i];

			if (a->line != last) {
				struct line *l = line_get(a->line);

				last = a->line;
				fprintf(out, "line phys=%#" PRIx64,
					a->line << LINE_SHIFT);
				put_mask("w", l, M_W);
				put_mask("t", l, M_T);
				put_mask("kw", l, M_KW);
				put_mask("kt", l, M_KT);
				fprintf(out, " va=%#" PRIx64 "\n",
					l ? l->vaddr : 0);
			}
			fprintf(out, "xfer pc=%#" PRIx64 " wpc=%#" PRIx64
				" store=%u ctx=%s wctx=%s n=%" PRIu64 "\n",
				a->pc, wpc_pc(a->wpc), a->store,
				ctx_names[a->ctx],
				a->wpc ? ctx_names[wpc_ctx(a->wpc)] : "none",
				a->count);
		}
		free(list);
	} else {
		fprintf(out, "error no memory for the site list\n");
	}
	pthread_mutex_unlock(&att_lock);
	fprintf(out, "end seq=%" PRIu64 "\n", win_seq);
	fflush(out);
}

static void mark(unsigned int cpu, void *udata)
{
	unsigned int code = (uintptr_t)udata;

	pthread_mutex_lock(&win_lock);
	if (code == MARK_START) {
		if (win_open) {
			fprintf(out, "warning nested start on vcpu %u\n", cpu);
		} else {
			pthread_mutex_lock(&att_lock);
			memset(atts, 0, att_cap * sizeof(*atts));
			att_used = 0;
			dropped = 0;
			pace_waits = pace_timeouts = 0;
			__atomic_store_n(&pace_level_pending, 0, __ATOMIC_RELAXED);
			conflicts[USER] = conflicts[KERNEL] = 0;
			pthread_mutex_unlock(&att_lock);
			memcpy(start, stats, max_vcpus * sizeof(*stats));
			for (unsigned int c = 0; c < nr_vcpus; c++)
				__atomic_store_n(&pc_[c].base,
						 __atomic_load_n(&pc_[c].vt, __ATOMIC_RELAXED),
						 __ATOMIC_RELEASE);
			win_seq++;
			__atomic_add_fetch(&epoch, 1, __ATOMIC_RELAXED);
			__atomic_store_n(&win_open, 1, __ATOMIC_RELEASE);
		}
	} else if (code == MARK_STOP) {
		if (!win_open) {
			fprintf(out, "warning stop without start on vcpu %u\n",
				cpu);
		} else {
			__atomic_store_n(&win_open, 0, __ATOMIC_RELEASE);
			/* The window ends now, not when the dump is written. */
			memcpy(end, stats, max_vcpus * sizeof(*stats));
			dump_window();
		}
	}
	pthread_mutex_unlock(&win_lock);
}

/* The marker: nopl MARK_MAGIC+code(%rax), 0f 1f 80 <disp32>. */
static int marker_code(struct qemu_plugin_insn *insn)
{
	const uint8_t *b = qemu_plugin_insn_data(insn);
	uint32_t disp;

	if (qemu_plugin_insn_size(insn) != 7 || b[0] != 0x0f || b[1] != 0x1f ||
	    b[2] != 0x80)
		return 0;
	disp = b[3] | b[4] << 8 | b[5] << 16 | (uint32_t)b[6] << 24;
	if ((disp & 0xffffff00u) != MARK_MAGIC)
		return 0;
	return disp & 0xff;
}

static void vcpu_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);
	uint64_t va = qemu_plugin_tb_vaddr(tb);
	int k = mode_of(va), e;

	if (k == KERNEL) {
		e = entry_slot(va);
		if (entry_addr[e] == va && !(entry_ctx[e] & ENTRY_KIND))
			qemu_plugin_register_vcpu_tb_exec_cb(tb, ctx_enter,
							     QEMU_PLUGIN_CB_NO_REGS,
							     (void *)(uintptr_t)entry_ctx[e]);
	}
	qemu_plugin_register_vcpu_tb_exec_cb(tb, vcpu_tb_exec,
					     QEMU_PLUGIN_CB_NO_REGS,
					     (void *)(uintptr_t)(n << 1 | k));
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t pc = qemu_plugin_insn_vaddr(insn);
		int code = marker_code(insn);

		if (code)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, mark,
							       QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)code);
		if (k == KERNEL && is_return(insn))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, ctx_leave,
							       QEMU_PLUGIN_CB_NO_REGS,
							       NULL);
		if (k == KERNEL && nr_spans) {
			e = entry_slot(pc);
			int kind = entry_ctx[e] & ENTRY_KIND;

			if (entry_addr[e] == pc && kind)
				qemu_plugin_register_vcpu_insn_exec_cb(insn,
					kind == ENTRY_SPAN ? span_begin :
					kind == ENTRY_SPAN_RET ? span_end : span_op,
					QEMU_PLUGIN_CB_NO_REGS,
					(void *)(uintptr_t)(entry_ctx[e] & (NR_SPANS - 1)));
		}
		if (switch_addr && pc >= switch_addr && pc < switch_addr + 64) {
			int sw = switch_insn(insn);

			if (sw)
				qemu_plugin_register_vcpu_mem_cb(insn,
								 sw == 1 ? ctx_save : ctx_restore,
								 QEMU_PLUGIN_CB_NO_REGS,
								 sw == 1 ? QEMU_PLUGIN_MEM_W :
									   QEMU_PLUGIN_MEM_R,
								 NULL);
		}
		qemu_plugin_register_vcpu_mem_cb(insn, vcpu_mem,
						 QEMU_PLUGIN_CB_NO_REGS,
						 QEMU_PLUGIN_MEM_RW,
						 (void *)(uintptr_t)pc);
	}
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
	pthread_mutex_lock(&win_lock);
	fprintf(out, "exit windows=%" PRIu64 " open=%d outside=%" PRIu64
		" switch=%d\n", win_seq, win_open, outside_line, switch_addr != 0);
	fflush(out);
	pthread_mutex_unlock(&win_lock);
}

/* A zeroed per-vCPU array, cache-line aligned as its type is. */
static void *vcpu_array(size_t size)
{
	void *p;

	if (posix_memalign(&p, 64, max_vcpus * size))
		return NULL;
	memset(p, 0, max_vcpus * size);
	return p;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *path = NULL;
	int i;

	if (!info->system_emulation) {
		fprintf(stderr, "c2c: needs system emulation\n");
		return -1;
	}
	/* vCPUs hot-added later (maxcpus) are counted, never paced */
	nr_vcpus = info->system.smp_vcpus;
	max_vcpus = info->system.max_vcpus;
	if (max_vcpus < nr_vcpus)
		max_vcpus = nr_vcpus;
	if (max_vcpus > LS_MAX_VCPUS) {
		fprintf(stderr, "c2c: at most %d vCPUs (got %u)\n", LS_MAX_VCPUS,
			max_vcpus);
		return -1;
	}
	line_words = (max_vcpus + 63) / 64;
	line_stride = sizeof(struct line) + NR_MASKS * line_words * sizeof(uint64_t);
	line_stride = (line_stride + 63) & ~(size_t)63;
	stats = vcpu_array(sizeof(*stats));
	start = vcpu_array(sizeof(*start));
	end = vcpu_array(sizeof(*end));
	ctxs = vcpu_array(sizeof(*ctxs));
	pc_ = vcpu_array(sizeof(*pc_));
	span_stats = vcpu_array(NR_SPANS * sizeof(*span_stats));
	if (!stats || !start || !end || !ctxs || !pc_ || !span_stats) {
		fprintf(stderr, "c2c: out of memory\n");
		return -1;
	}
	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4)) {
			path = argv[i] + 4;
		} else if (!strncmp(argv[i], "entries=", 8)) {
			if (load_entries(argv[i] + 8) < 0)
				return -1;
		} else if (!strncmp(argv[i], "quantum=", 8)) {
			quantum = strtoull(argv[i] + 8, NULL, 0);
		} else if (!strncmp(argv[i], "attrib=", 7)) {
			unsigned long v = strtoul(argv[i] + 7, NULL, 0);

			att_cap = 1024;
			while (att_cap < v * 4 / 3 + 1 && att_cap < (1UL << 26))
				att_cap <<= 1;
		} else {
			fprintf(stderr, "c2c: unknown argument %s\n", argv[i]);
			return -1;
		}
	}
	if (!path) {
		fprintf(stderr, "c2c: out=<path> is required\n");
		return -1;
	}
	out = fopen(path, "w");
	if (!out) {
		fprintf(stderr, "c2c: %s: %s\n", path, strerror(errno));
		return -1;
	}
	atts = calloc(att_cap, sizeof(*atts));
	if (!atts) {
		fprintf(stderr, "c2c: out of memory\n");
		return -1;
	}
	fprintf(out, "c2c version=1 vcpus=%u line=%u quantum=%" PRIu64 "\n",
		nr_vcpus, 1U << LINE_SHIFT, quantum);
	fflush(out);
	for (i = 0; i < (int)max_vcpus; i++)
		pc_[i].active = 1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, vcpu_tb_trans);
	qemu_plugin_register_vcpu_idle_cb(id, vcpu_idle);
	qemu_plugin_register_vcpu_resume_cb(id, vcpu_resume);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
