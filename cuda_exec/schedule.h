/*
 * schedule.h -- the executor's lower layer (schedule.c), what the driver
 * (driver.c) and the backends (cpu.c, cuda.c, cuda_gen.c) share: the
 * schedule of a plan (steps, where every buffer lives, when it is
 * allocated and freed), the result of one backend run, the read
 * accounting, and the input and surrogate values every backend computes
 * alike.  Parameters (fp_exec_params_init/check, declared in exec.h) are
 * defined in schedule.c too, since the CUDA backend checks them.
 * Nothing here calls back into the driver or a backend.
 */
#ifndef FP_EXEC_SCHEDULE_H
#define FP_EXEC_SCHEDULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda_exec/exec.h"

/* Where a buffer's values live during a run. */
enum {
  FX_NONE = 0, /* never touched (unused, or a freeable input nobody reads) */
  FX_MEM = 1,  /* tracked allocation: an input or a materialized buffer */
  FX_LOCAL = 2 /* kernel-local: produced and consumed inside one group */
};

/* Never freed (resident inputs, graph outputs). */
#define FX_NEVER INT32_MAX

/* The schedule of a legal plan: everything both backends need to run it
 * and to account for it exactly as model/eval.c does. */
typedef struct fx_sched {
  const fp_graph *g;
  const fp_plan *p;
  int32_t steps, nodes, buffers;
  int32_t *step;       /* per node: its group */
  uint8_t *where;      /* per buffer: FX_* */
  int32_t *alloc_at;   /* per buffer (FX_MEM): step it is allocated before;
                          -1 for inputs (allocated at the start) */
  int32_t *free_after; /* per buffer (FX_MEM): step after which it is
                          freed, or FX_NEVER */
  int32_t *gnodes;     /* nodes of group t, ascending (a program order):
                          gnodes[goff[t] .. goff[t+1]) */
  int32_t *goff;
  int32_t *alloc_list; /* buffers allocated before step t (CSR by aoff);
                          inputs first, before step 0 */
  int32_t *aoff;
  int32_t *free_list; /* buffers freed after step t (CSR by foff) */
  int32_t *foff;
  uint8_t *inplace; /* per buffer: FX_IP_* (in-place takeovers, below) */
} fx_sched;

/* In-place takeovers (docs/cost-model.md, "In-place kernels"): the
 * allocator counts o as living in i's storage.  TAKES: the buffer's
 * allocation adds nothing (it takes over a storage counted already);
 * HANDS: its free subtracts nothing (its storage lives on as the output
 * that took it).  The memory itself stays separate: a kernel never reads
 * a buffer another one of its outputs overwrites. */
#define FX_IP_TAKES 1
#define FX_IP_HANDS 2

/* The declared bytes buffer b adds to the live count when it is
 * allocated (0 when it takes over a storage), and the bytes its free
 * subtracts (0 when it hands its storage over). */
uint64_t fx_alloc_bytes(const fx_sched *s, int32_t b);
uint64_t fx_free_bytes(const fx_sched *s, int32_t b);

/* Builds the schedule of a legal plan (the caller checked it).
 * FP_ENOMEM. */
fp_status fx_sched_build(const fp_graph *g, const fp_plan *p, fx_sched *s,
                         fp_error *err);

/* Frees a schedule (zeroed or built). */
void fx_sched_free(fx_sched *s);

/* Whether node v runs as a surrogate kernel (it has no op). */
bool fx_is_surrogate(const fp_node *n);

/* What one backend run produced. */
typedef struct fx_result {
  uint64_t peak_bytes, read_bytes, write_bytes, scratch_bytes;
  uint64_t pool_used_high, pool_reserved_high;
  int32_t launches;
  double time_s;
  double *group_time_s;    /* per step */
  unsigned char **outputs; /* per graph output: its bytes (host), or NULL
                              when outputs were not kept */
} fx_result;

/* Per-group read accounting, the rule of model/eval.c applied to what a
 * kernel loaded: a buffer the group produces is never read from memory;
 * any other counts once per group, at the largest extent loaded. */
typedef struct fx_reads {
  int32_t *stamp; /* per buffer: the last step that read it (-1: none) */
  uint64_t *cur;  /* per buffer: the extent counted for it in that step */
  uint64_t total; /* bytes counted so far */
} fx_reads;

/* Allocates for n buffers; -1 when out of memory (then free it). */
int fx_reads_init(fx_reads *r, int32_t n);
void fx_reads_free(fx_reads *r);

/* Records that step t loaded `extent` bytes of buffer b. */
void fx_reads_add(fx_reads *r, const fx_sched *s, int32_t t, int32_t b,
                  uint64_t extent);

/* Frees what a result owns (n_outputs entries of outputs). */
void fx_result_free(fx_result *r, int32_t n_outputs);

/* ---- input values and surrogates (the same on every backend) ---------- */

/* Fills `bytes` bytes of input buffer b: float32 words uniform in [-1, 1)
 * (multiples of 2^-23, exact), tail bytes from the same stream. */
void fx_fill_input(unsigned char *dst, uint64_t bytes, uint64_t seed,
                   int32_t b);

/* One surrogate read: the order-free digest of `bytes` bytes,
 * sum over q of (x_q + 1) * (2q + 1), mod 2^32. */
uint32_t fx_digest(const unsigned char *src, uint64_t bytes);

/* Combines the digests of a surrogate's reads with the node index. */
uint32_t fx_digest_combine(uint32_t h, uint32_t d, int32_t k);

/* The seed of surrogate node v (before its reads are combined in). */
uint32_t fx_surrogate_seed(int32_t v);

/* Writes `bytes` bytes of a surrogate's write number w from digest h:
 * float32 words in [-1, 1), tail bytes from the same hash. */
void fx_surrogate_write(unsigned char *dst, uint64_t bytes, uint32_t h,
                        int32_t w);

/* The 32-bit mixer both backends use (murmur3 finalizer). */
static inline uint32_t fx_mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x85ebca6bu;
  x ^= x >> 13;
  x *= 0xc2b2ae35u;
  x ^= x >> 16;
  return x;
}

#endif /* FP_EXEC_SCHEDULE_H */
