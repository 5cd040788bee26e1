/*
 * Packed weights: the 64-byte header in front of every packed buffer, and its checks.
 */
#ifndef GEMMI8_PACKED_H
#define GEMMI8_PACKED_H

#include <string.h>

#include "common.h"

/* [header: 64 bytes][block 0][block 1]... one block per NR output channels, each
 * block_bytes long (a multiple of 64), in the layout named by `layout`
 * (gemmi8_qgemm_layout / gemmi8_bgemm_layout in config.h). */
enum gemmi8_type {
  gemmi8_type_qu8 = 1,
  gemmi8_type_qs8 = 2,
  gemmi8_type_bin = 3,
  /* uint8 A, int8 B: the qu8 kernels on B + 128 with zero point 128 */
  gemmi8_type_qu8s8 = 4,
  /* rows quantized at run time, float output (src/qdgemm.c): int8 rows on the qs8
   * kernels, uint8 rows on the qu8s8 ones; int8 weights per channel */
  gemmi8_type_qd8 = 5,
  gemmi8_type_qdu8 = 6,
  /* 4-bit weights for int8 rows quantized at run time (src/q4gemm.c) */
  gemmi8_type_qd8q4 = 7,
};

#define GEMMI8_PACKED_MAGIC 0x4b503847u /* "G8PK" */
#define GEMMI8_PACKED_VERSION 1u
#define GEMMI8_PACKED_HEADER_BYTES 64

/*
 * A packed buffer may come back from disk or from another process: the GEMMs trust
 * no field of it. The fields that depend on the kernels only (magic, version, type,
 * layout, nr, block_bytes) are recomputed and compared (gemmi8_packed_valid); n and k
 * are compared with the call, and the zero-point form (a_zero_point, flags, coef) is
 * range-checked; a 64-bit checksum covers n, k and the zero-point form, so that a
 * damaged n or k is refused even by a call that passes the damaged value (it would
 * run the weights of another shape, or read past the buffer), whatever byte was hit.
 */
struct gemmi8_packed_header {
  uint32_t magic;   /* GEMMI8_PACKED_MAGIC */
  uint32_t type;    /* enum gemmi8_type */
  uint32_t layout;  /* kernel layout id */
  uint32_t nr;      /* columns per block */
  uint64_t n;
  uint64_t k;
  uint64_t block_bytes;
  int32_t a_zero_point;
  uint32_t flags;   /* GEMMI8_PACKED_* */
  int32_t coef;     /* with GEMMI8_PACKED_UNIFORM_COEF: the coef of every column */
  uint32_t version; /* GEMMI8_PACKED_VERSION */
  uint64_t checksum; /* gemmi8_packed_checksum() */
};
/* Every coef is 0: the row-sum term vanishes and the driver need not compute it. */
#define GEMMI8_PACKED_NO_ROW_SUM 1u
/* Every column has the same coef (per-tensor b_zp, or qs8): header.coef. */
#define GEMMI8_PACKED_UNIFORM_COEF 2u
_Static_assert(sizeof(struct gemmi8_packed_header) == GEMMI8_PACKED_HEADER_BYTES,
               "packed header is one cache line");
_Static_assert(offsetof(struct gemmi8_packed_header, checksum) == 56, "checksum is last");

/* Over n, k, a_zero_point, flags and coef, four steps h = (h ^ word) * odd: each is a
 * bijection of h for a given word and of the word for a given h, so headers that
 * differ in one of these fields always differ in the sum. Four dependent 64-bit
 * multiplies: a few nanoseconds per GEMM call. */
static inline uint64_t gemmi8_packed_checksum(const struct gemmi8_packed_header* h)
{
  uint64_t sum = (UINT64_C(0x9E3779B97F4A7C15) ^ h->n) * UINT64_C(0xBF58476D1CE4E5B9);
  sum = (sum ^ h->k) * UINT64_C(0x94D049BB133111EB);
  sum = (sum ^ ((uint64_t) (uint32_t) h->a_zero_point | (uint64_t) h->flags << 32)) *
        UINT64_C(0xD6E8FEB86659FD93);
  return (sum ^ (uint32_t) h->coef) * UINT64_C(0xA0761D6478BD642F);
}

/* Fills the fields every type has, zeroes the rest; the packer sets a_zero_point,
 * flags and coef, then seals the header with gemmi8_packed_seal(). */
static inline void gemmi8_packed_init(struct gemmi8_packed_header* h, uint32_t type,
                                      uint32_t layout, size_t nr, size_t n, size_t k,
                                      size_t block_bytes)
{
  memset(h, 0, sizeof(*h));
  h->magic = GEMMI8_PACKED_MAGIC;
  h->type = type;
  h->layout = layout;
  h->nr = (uint32_t) nr;
  h->n = n;
  h->k = k;
  h->block_bytes = block_bytes;
  h->version = GEMMI8_PACKED_VERSION;
}

static inline void gemmi8_packed_seal(struct gemmi8_packed_header* h)
{
  h->checksum = gemmi8_packed_checksum(h);
}

/* The header a GEMM call expects, field by field. */
struct gemmi8_packed_expect {
  uint32_t type, layout;
  size_t nr, n, k, block_bytes;
  int32_t a_zp_min, a_zp_max; /* range of a_zero_point */
  uint32_t flags_allowed;     /* flags that may be set */
  uint32_t flags_required;    /* flags that must be set */
};

/* 1 if packed is a 64-byte aligned buffer whose header is intact (magic, version,
 * checksum) and matches e in every field; flags and coef consistent. */
static inline int gemmi8_packed_valid(const void* packed, const struct gemmi8_packed_expect* e)
{
  if ((uintptr_t) packed % GEMMI8_PACK_ALIGNMENT != 0) return 0;
  const struct gemmi8_packed_header* h = packed;
  const uint32_t flags = h->flags;
  return h->magic == GEMMI8_PACKED_MAGIC && h->version == GEMMI8_PACKED_VERSION &&
         h->checksum == gemmi8_packed_checksum(h) && h->type == e->type &&
         h->layout == e->layout && h->nr == e->nr && h->n == e->n && h->k == e->k &&
         h->block_bytes == e->block_bytes &&
         h->a_zero_point >= e->a_zp_min && h->a_zero_point <= e->a_zp_max &&
         (flags & ~e->flags_allowed) == 0 && (flags & e->flags_required) == e->flags_required &&
         flags != (GEMMI8_PACKED_NO_ROW_SUM | GEMMI8_PACKED_UNIFORM_COEF) &&
         (h->coef == 0 || (flags & GEMMI8_PACKED_UNIFORM_COEF));
}

#endif
