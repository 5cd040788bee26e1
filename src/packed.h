/*
 * Packed weights: the 64-byte header in front of every packed buffer.
 */
#ifndef GEMMI8_PACKED_H
#define GEMMI8_PACKED_H

#include "common.h"

/* [header: 64 bytes][block 0][block 1]... one block per NR output channels, each
 * block_bytes long (a multiple of 64), in the layout named by `layout`
 * (gemmi8_qgemm_layout / gemmi8_bgemm_layout in config.h). */
enum gemmi8_type { gemmi8_type_qu8 = 1, gemmi8_type_qs8 = 2, gemmi8_type_bin = 3 };

#define GEMMI8_PACKED_MAGIC 0x4b503847u /* "G8PK" */
#define GEMMI8_PACKED_HEADER_BYTES 64

struct gemmi8_packed_header {
  uint32_t magic;
  uint32_t type;
  uint32_t layout;
  uint32_t nr;
  uint64_t n;
  uint64_t k;
  uint64_t block_bytes;
  int32_t a_zero_point;
  uint32_t flags; /* GEMMI8_PACKED_* */
  int32_t coef;   /* with GEMMI8_PACKED_UNIFORM_COEF: the coef of every column */
  uint32_t reserved[3];
};
/* Every coef is 0: the row-sum term vanishes and the driver need not compute it. */
#define GEMMI8_PACKED_NO_ROW_SUM 1u
/* Every column has the same coef (per-tensor b_zp, or qs8): header.coef. */
#define GEMMI8_PACKED_UNIFORM_COEF 2u
_Static_assert(sizeof(struct gemmi8_packed_header) == GEMMI8_PACKED_HEADER_BYTES,
               "packed header is one cache line");

/* 1 if packed is a 64-byte aligned buffer packed for this type, kernel layout, n, k. */
static inline int gemmi8_packed_matches(const void* packed, uint32_t type, uint32_t layout,
                                        size_t n, size_t k)
{
  const struct gemmi8_packed_header* h = packed;
  return (uintptr_t) packed % GEMMI8_PACK_ALIGNMENT == 0 && h->magic == GEMMI8_PACKED_MAGIC &&
         h->type == type && h->layout == layout && h->n == n && h->k == k;
}

#endif
