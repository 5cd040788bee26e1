/*
 * Weight packing and bit packing (binarization): what the packers take.
 */
#ifndef GEMMI8_PACK_H
#define GEMMI8_PACK_H

#include "common.h"
#include "microkernel.h" /* the binarizers of the kernel lists */

/* Source view of B for the packers: element (n, k) of the logical N x K matrix. */
struct gemmi8_qpack_source {
  const uint8_t* b; /* bytes of a uint8 or int8 matrix */
  size_t stride;
  int kn;           /* 1: the matrix is K x N */
  int is_signed;    /* 1: int8 values */
  uint8_t flip;     /* xor applied to every byte first: 0x80 reads int8 B as uint8 B + 128 */
};

static inline int32_t gemmi8_qpack_value(const struct gemmi8_qpack_source* s, size_t n, size_t k)
{
  const uint8_t v = (s->kn ? s->b[k * s->stride + n] : s->b[n * s->stride + k]) ^ s->flip;
  return s->is_signed ? (int32_t) (int8_t) v : (int32_t) v;
}

struct gemmi8_qgemm_config;
/* Fills the blocks after the header. b_zp: NR-independent array of n values, or NULL
 * for a symmetric (zero point 0) type; bias: n values or NULL. */
typedef void (*gemmi8_qpack_fn)(const struct gemmi8_qgemm_config* cfg, size_t n, size_t k,
                                const struct gemmi8_qpack_source* src, int32_t a_zero_point,
                                const int32_t* b_zp, const int32_t* bias, size_t block_bytes,
                                uint8_t* blocks);

/* What the qu8 / qs8 / qu8s8 pack entry points run once they have validated (pack/
 * qpack.c), for the convolution's paths: the packed size of n x k weights for cfg's
 * kernels (0 when it does not fit size_t), and the packing of src as `type` (enum
 * gemmi8_type) into packed, header first, at a GEMMI8_PACK_ALIGNMENT boundary. k is not
 * held to the exact limit here: a convolution's taps, each padded to KR, may pass it
 * (its limit is on the real depth). b_zp: n values, or NULL for 0; bias: n or NULL. */
GEMMI8_INTERNAL int gemmi8_qpack_bytes(const struct gemmi8_qgemm_config* cfg, size_t n, size_t k,
                                       size_t* size);
GEMMI8_INTERNAL void gemmi8_qpack_into(const struct gemmi8_qgemm_config* cfg, uint32_t type,
                                       size_t n, size_t k, const struct gemmi8_qpack_source* src,
                                       int32_t a_zero_point, const int32_t* b_zp,
                                       const int32_t* bias, void* packed);

/* int8 weights for the qu8 kernels (read as uint8 B + 128 with zero point 128, exactly
 * B: qu8s8 and qdu8), packed as gemmi8_qpack_into packs them, the header recording
 * type; out_of_memory when the zero points cannot be allocated. */
GEMMI8_INTERNAL gemmi8_status gemmi8_qpack_qu8s8_into(const struct gemmi8_qgemm_config* cfg,
                                                      uint32_t type, size_t n, size_t k,
                                                      const int8_t* b, size_t b_stride, int kn,
                                                      int32_t a_zero_point, const int32_t* bias,
                                                      void* packed);

/* Binary weights: blocks of nr columns, kr depth words per group (the config's). */
typedef void (*gemmi8_bpack_fn)(size_t nr, size_t kr, size_t n, size_t k, const uint64_t* b,
                                size_t b_stride, int kn, size_t block_bytes, uint8_t* blocks);

/* Binarizes rows of k values (float, int8, or uint8 against zero_point; x_stride in
 * bytes) into rows of GEMMI8_BIN_WORDS(k) words (out_stride in words), padding bits
 * 0. Reads exactly k elements of each row. */
typedef void (*gemmi8_binarize_fn)(size_t rows, size_t k, const void* x, size_t x_stride,
                                   uint8_t zero_point, uint64_t* out, size_t out_stride);
#define GEMMI8_DECLARE_BINARIZE(fn)                                                  \
  GEMMI8_INTERNAL void fn(size_t rows, size_t k, const void* x, size_t x_stride,     \
                          uint8_t zero_point, uint64_t* out, size_t out_stride);
GEMMI8_DECLARE_BINARIZE(gemmi8_binarize_f32__generic)
GEMMI8_DECLARE_BINARIZE(gemmi8_binarize_s8__generic)
GEMMI8_DECLARE_BINARIZE(gemmi8_binarize_u8__generic)

GEMMI8_INTERNAL void gemmi8_qpack_goi_s16__generic(const struct gemmi8_qgemm_config* cfg,
                                                   size_t n, size_t k,
                                                   const struct gemmi8_qpack_source* src,
                                                   int32_t a_zero_point, const int32_t* b_zp,
                                                   const int32_t* bias, size_t block_bytes,
                                                   uint8_t* blocks);
GEMMI8_INTERNAL void gemmi8_qpack_goi__generic(const struct gemmi8_qgemm_config* cfg, size_t n,
                                               size_t k, const struct gemmi8_qpack_source* src,
                                               int32_t a_zero_point, const int32_t* b_zp,
                                               const int32_t* bias, size_t block_bytes,
                                               uint8_t* blocks);
GEMMI8_INTERNAL void gemmi8_bpack_words__generic(size_t nr, size_t kr, size_t n, size_t k,
                                                 const uint64_t* b, size_t b_stride, int kn,
                                                 size_t block_bytes, uint8_t* blocks);

#endif
