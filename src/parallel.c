/*
 * How a threaded GEMM's tiles are cut into tasks (parallel.h).
 */
#include "parallel.h"

void gemmi8_plan_split(size_t m, size_t nblocks, size_t mr, size_t mc_l2, size_t nb_multiple,
                       double weight_bytes, double ops, size_t threads, struct gemmi8_split* s)
{
  const size_t tiles = gemmi8_divide_round_up(m, mr);
  const size_t bgroups = gemmi8_divide_round_up(nblocks, nb_multiple);
  s->m = m;
  s->mr = mr;
  s->nblocks = nblocks;
  s->nb_multiple = nb_multiple;
  /* tasks a thread: four by rows, eight across N, or fewer of GEMMI8_TASK_MIN_OPS each
   * (two at least) */
  const double fit = ops / (GEMMI8_TASK_MIN_OPS * (double) threads);
  size_t per_thread = (size_t) (fit < 8.0 ? fit : 8.0); /* (no cast past size_t) */
  if (per_thread < 2) per_thread = 2;
  if (tiles >= 4 * threads && weight_bytes <= GEMMI8_SPLIT_ROWS_MAX_WEIGHTS) {
    const size_t least = gemmi8_min(4, per_thread) * threads;
    size_t chunks = gemmi8_divide_round_up(m, mc_l2);
    if (chunks < least) chunks = least;
    chunks = gemmi8_round_up(chunks, threads);
    s->mchunks = gemmi8_min(chunks, tiles);
    s->bchunks = 1;
    return;
  }
  const size_t want = gemmi8_min(8, per_thread) * threads;
  size_t mchunks = gemmi8_divide_round_up(m, gemmi8_min(mc_l2, m));
  /* as many chunks as the blocks per chunk need (no more tasks than a uniform cut
   * makes), a multiple of the threads where the blocks allow (20 blocks wanted in 6
   * chunks take 4 each: 5 chunks, 3 for one thread and 2 for the other) */
  const size_t bwant = gemmi8_min(bgroups, gemmi8_divide_round_up(want, mchunks));
  s->bchunks = gemmi8_divide_round_up(bgroups, gemmi8_divide_round_up(bgroups, bwant));
  s->bchunks = gemmi8_min(gemmi8_round_up(s->bchunks, threads), bgroups);
  if (mchunks * s->bchunks < gemmi8_min(2 * threads, want) && m > mr) {
    /* too few blocks for two tasks a thread: smaller row chunks as well (cutting rows
     * streams the weights once per chunk: with 8 rows cut 7 + 1 whenever there were
     * fewer than eight tasks a thread, 1000 x 8 x 512 cost 14% more work, 512 x 49
     * x 4608 11%) */
    mchunks = gemmi8_min(tiles, gemmi8_divide_round_up(want, s->bchunks));
  }
  s->mchunks = mchunks;
}

void gemmi8_split_task(const struct gemmi8_split* s, size_t t, size_t* m0, size_t* rows,
                       size_t* b0, size_t* blocks)
{
  gemmi8_split_rows(s->m, s->mr, s->mchunks, t / s->bchunks, m0, rows);
  const size_t groups = gemmi8_divide_round_up(s->nblocks, s->nb_multiple);
  const size_t c = t % s->bchunks;
  const size_t g0 = gemmi8_split_first_tile(groups, s->bchunks, c);
  const size_t g1 = gemmi8_split_first_tile(groups, s->bchunks, c + 1);
  *b0 = g0 * s->nb_multiple;
  *blocks = gemmi8_min(g1 * s->nb_multiple, s->nblocks) - *b0;
}
