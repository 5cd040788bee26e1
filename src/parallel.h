/*
 * Splitting a GEMM's tile tasks over threads (gemmi8_parallel, gemmi8.h "Threads").
 */
#ifndef GEMMI8_PARALLEL_H
#define GEMMI8_PARALLEL_H

#include "common.h"

/* Below this many operations (2 * M * N * K, or M * N * K bit operations) per thread
 * a GEMM runs on the calling thread: handing out the tasks costs more than it saves.
 * Measured on a 2-core AVX-512 VNNI VM (qu8s8, fp32 output, gemmi8's pool of 2 with
 * its workers spinning, the threshold disabled; time on 1 thread / on 2): 1 x 256 x
 * 256, 0.13 M operations: 0.38; 7 x 256 x 512, 1.8 M: 0.92; M = 1, 1000 x 512, 1.0 M:
 * 0.99; 16 x 256 x 512, 4.2 M: 1.05; 32 x 256 x 512, 8.4 M: 1.27; 64 x 256 x 512,
 * 16.8 M: 1.54. The break-even is about 3.5 M operations for two threads. */
#ifndef GEMMI8_PARALLEL_MIN_OPS
#define GEMMI8_PARALLEL_MIN_OPS (2.0 * 1024 * 1024)
#endif

/* How a GEMM's rows and packed blocks are cut into tasks (gemmi8_plan_split): task t
 * of mchunks * bchunks takes row chunk t / bchunks and block chunk t % bchunks
 * (gemmi8_split_task). */
struct gemmi8_split {
  size_t mchunks; /* tasks down M ... */
  size_t bchunks; /* ... times tasks across N */
  size_t m, mr, nblocks, nb_multiple; /* what was cut */
};

/* 1 if parallel is usable (NULL is: the calling thread). */
static inline int gemmi8_parallel_valid(const gemmi8_parallel* parallel)
{
  return parallel == NULL ||
         (parallel->parallel_for != NULL && parallel->threads <= GEMMI8_MAX_THREADS);
}

/* What an operation of each path costs against a GEMM's (the threshold above counts
 * GEMM operations). A depthwise operation (2 per tap and channel of an output pixel):
 * its bytes and taps, not its multiplies, set its pace: on the AMD EPYC Zen 4 VM
 * MobileNetV2's depthwise layers ran at 57-62 GOPS (bench-conv) where bench-llm's int8
 * GEMMs ran at 416-454 against the vpdpbusd loop's 468. At this weight 14x14x576 stride 2
 * (0.5 M operations) took 0.70 of its one-thread time on a pool of 2, 28x28x192 stride
 * 2 (0.7 M) 0.66 and 14x14x384 (2.7 M) 0.63 (block pairs, bench/threads/paired-load.c,
 * on the Xeon VM), where the GEMMs' threshold kept them on one thread. A binary
 * operation (one bit product) counts as one. */
#define GEMMI8_OP_COST_GEMM 1.0
#define GEMMI8_OP_COST_DEPTHWISE 8.0
#define GEMMI8_OP_COST_BINARY 1.0

/* Threads worth using for ops operations of op_cost each (1: run on the calling
 * thread). */
static inline size_t gemmi8_parallel_threads(const gemmi8_parallel* parallel, double ops,
                                             double op_cost)
{
  if (parallel == NULL || parallel->threads <= 1) return 1;
  size_t threads = parallel->threads;
  while (threads > 1 && ops * op_cost < GEMMI8_PARALLEL_MIN_OPS * (double) threads) threads--;
  return threads;
}

/* A task holds at least this many operations where the work allows, two tasks a thread
 * at least: a task costs some 30-70 ns however small (the loops around the kernels
 * entered again), measured as the split run on one thread against no split. */
#ifndef GEMMI8_TASK_MIN_OPS
#define GEMMI8_TASK_MIN_OPS (1.0 * 1024 * 1024)
#endif

/* Weights (packed B of one group) above this many bytes are not cut by rows alone. */
#ifndef GEMMI8_SPLIT_ROWS_MAX_WEIGHTS
#define GEMMI8_SPLIT_ROWS_MAX_WEIGHTS (2.0 * 1024 * 1024)
#endif

/*
 * The split for threads > 1, in whole tiles:
 *  - M with at least 4 tiles per thread, weights within GEMMI8_SPLIT_ROWS_MAX_WEIGHTS:
 *    rows only, in a multiple of `threads` chunks of tiles shared evenly
 *    (gemmi8_split_rows), at least 4 per thread (2 where they would hold fewer than
 *    GEMMI8_TASK_MIN_OPS) and about no taller than mc_l2 (a
 *    chunk of A stays in L2 while the blocks of B pass). Each task writes whole rows
 *    of C: cutting N there made two threads write the same cache lines of C (a 64-byte
 *    row of a 64-column uint8 output holds two blocks), and 3136 x 64 x 64 ran slower
 *    on two threads than on one.
 *  - Fewer rows (batch 1, small M), or larger weights: the packed blocks are cut,
 *    about eight tasks per thread so that they come out level, but none below
 *    GEMMI8_TASK_MIN_OPS (two a thread at least), and the rows too when N has too few
 *    blocks. Every row chunk streams the weights once more: 64 rows over 16 MB
 *    of weights (4096 x 4096) ran 1.85x faster on two threads cut across N than cut
 *    into 8 row chunks, 3072 x 768 and 11008 x 4096 1.3-1.5x (bench/llm, interleaved).
 * nb_multiple: blocks per task must be a multiple of it (binary bits output: whole
 * 64-bit words). weight_bytes: the packed B of one group (about). ops: the work, in
 * GEMM operations (times the path's cost, as gemmi8_parallel_threads takes it).
 */
GEMMI8_INTERNAL void gemmi8_plan_split(size_t m, size_t nblocks, size_t mr, size_t mc_l2,
                                       size_t nb_multiple, double weight_bytes, double ops,
                                       size_t threads, struct gemmi8_split* s);

/* The first tile of M chunk c of mchunks (c <= mchunks): c * tiles / mchunks, so
 * that the chunks one tile taller than the others are spread evenly. */
static inline size_t gemmi8_split_first_tile(size_t tiles, size_t mchunks, size_t c)
{
  const size_t base = tiles / mchunks, extra = tiles % mchunks;
  /* c * extra / mchunks, with c and extra at most mchunks: exact in twice the bits */
#if SIZE_MAX > UINT32_MAX
  return c * base + (size_t) ((unsigned __int128) c * extra / mchunks);
#else
  return c * base + (size_t) ((uint64_t) c * extra / mchunks);
#endif
}

/* Rows [*m0, *m0 + *rows) of M chunk c of mchunks: whole tiles of mr rows, shared as
 * evenly as possible and the taller chunks spread evenly, so that no thread is left
 * with a short last chunk while the other waits (2000 rows in chunks of 161 and one of
 * 68 ran 7 tasks on one thread and 6 on the other), and so that the contiguous ranges
 * of chunks that parallel-fors hand each thread (gemmi8's pool, pthreadpool, an OpenMP
 * static loop) hold the same rows to a tile (28 tiles in 8 chunks, the four taller
 * first, gave one thread 16 tiles and the other 12: 256 x 196 x 2304 ran 12% slower). */
static inline void gemmi8_split_rows(size_t m, size_t mr, size_t mchunks, size_t c, size_t* m0,
                                     size_t* rows)
{
  const size_t tiles = gemmi8_divide_round_up(m, mr);
  const size_t t0 = gemmi8_split_first_tile(tiles, mchunks, c);
  const size_t t1 = gemmi8_split_first_tile(tiles, mchunks, c + 1);
  *m0 = t0 * mr;
  *rows = gemmi8_min(t1 * mr, m) - *m0;
}

/* Task t of a split: rows [*m0, *m0 + *rows) and blocks [*b0, *b0 + *blocks), the
 * row chunks as gemmi8_split_rows cuts them and the block chunks likewise, in whole
 * multiples of nb_multiple shared as evenly as they go (21 blocks in 8 tasks: 2 or 3
 * each, where 3 each made 7 tasks, four for one thread and three for the other). */
GEMMI8_INTERNAL void gemmi8_split_task(const struct gemmi8_split* s, size_t t, size_t* m0,
                                       size_t* rows, size_t* b0, size_t* blocks);

#endif
