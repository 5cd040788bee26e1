/*
 * The convolution operator, internal: a core (the packed filter, the requantization and
 * its prepared constants, the setup) and paths over it, one chosen at create as
 * XNNPACK's convolution operator chooses. A path is two functions: setup (allocates
 * what its runs need, all or nothing) and run.
 */
#ifndef GEMMI8_CONV_H
#define GEMMI8_CONV_H

#include "config.h"
#include "indirection.h"
#include "qgemm.h"

enum gemmi8_conv_path {
  gemmi8_conv_path_direct,    /* 1x1, stride 1, no padding: the GEMM on the input */
  gemmi8_conv_path_igemm,     /* the GEMM's kernels through an indirection buffer */
  gemmi8_conv_path_depthwise, /* depthwise kernels (groups > 1, one input channel a group) */
  gemmi8_conv_path_binary,    /* slot: binary convolution */
  gemmi8_conv_path_count,
};

/* One setup's arguments, validated; strides in bytes. */
struct gemmi8_conv_setup {
  size_t batch, input_height, input_width, output_height, output_width;
  size_t m; /* output pixels: batch x output_height x output_width */
  const uint8_t* input;
  size_t input_stride;
  uint8_t* output;
  size_t output_stride;
};

struct gemmi8_conv_path_ops {
  const char* name;
  /* Makes op ready to run setup s: what it allocates replaces op's only once all of it
   * was had (invalid_parameter or out_of_memory leave op as it was). op->s still holds
   * the previous setup (op->ready 0 before the first). */
  gemmi8_status (*setup)(gemmi8_convolution* op, const struct gemmi8_conv_setup* s);
  /* Runs the setup last made; allocates nothing. */
  gemmi8_status (*run)(gemmi8_convolution* op, const gemmi8_parallel* parallel);
};

GEMMI8_INTERNAL extern const struct gemmi8_conv_path_ops gemmi8_conv_direct;
GEMMI8_INTERNAL extern const struct gemmi8_conv_path_ops gemmi8_conv_igemm;
GEMMI8_INTERNAL extern const struct gemmi8_conv_path_ops gemmi8_conv_depthwise;
GEMMI8_INTERNAL extern const struct gemmi8_conv_path_ops gemmi8_conv_binary;

struct gemmi8_bconv; /* the binary path's own state (conv-bin.c) */

struct gemmi8_convolution {
  enum gemmi8_conv_path path;
  const struct gemmi8_conv_path_ops* ops;
  int depthwise; /* the geometry is depthwise: groups > 1, one input channel a group */
  enum gemmi8_type type;
  enum gemmi8_qoutput output;
  size_t output_size; /* bytes per output element: 1, or 4 (int32); binary 1, 4 or 8 */
  /* a pixel's elements in and out, and an input element's bytes (8-bit: the channels
   * and 1; binary: words of the bit-packed channels, 8, or the output's channels) */
  size_t input_row, output_row, input_size;
  const struct gemmi8_qgemm_config* cfg;
  gemmi8_conv_geometry g;
  size_t ks; /* taps: kernel_height * kernel_width (kernel_height with merged taps) */
  size_t kc; /* channels read per tap: group_input_channels (x kernel_width merged) */
  size_t k;  /* packed depth: ks * round_up(kc, KR) (kc when ks is 1) */
  size_t channels_in, channels_out;
  int merge; /* merged taps (indirection.h) */
  uint8_t* packed; /* groups packed weights, packed_bytes apart */
  size_t packed_bytes;
  gemmi8_requant rq; /* its arrays owned (per_channel: channels_out values); s32: unused */
  int left_shift;
  uint8_t* prepared; /* the fixed-point constants of every block (qgemm.h), or NULL */
  size_t prepared_group;
  int32_t a_zero_point;
  uint8_t* zero; /* the padding taps' pixel: kc bytes of a_zero_point (igemm), or
                  * channels_out (depthwise) */
  /* depthwise: the kernel table and kernel, and how many taps each filter tap became */
  const struct gemmi8_dwconv_config* dwcfg;
  gemmi8_dwconv_ukernel_fn dwkernel;
  size_t dw_repeat;
  struct gemmi8_bconv* bin; /* binary */
  /* setup */
  int ready;
  struct gemmi8_conv_setup s;
  struct gemmi8_indirection ind; /* igemm */
  void* workspace;               /* row sums, panels (qgemm.h), workspace_bytes */
  size_t workspace_bytes;
};

/* The GEMM problem of op for setup s, but A (the path's to fill in). */
GEMMI8_INTERNAL void gemmi8_conv_problem(const gemmi8_convolution* op,
                                         const struct gemmi8_conv_setup* s,
                                         struct gemmi8_qgemm_problem* p);

/* A workspace of the bytes p's run needs: *fresh is NULL when op's is large enough (or
 * none is needed), else a new buffer of *fresh_bytes for the path to install with
 * gemmi8_conv_install_workspace() once its setup cannot fail any more. */
GEMMI8_INTERNAL gemmi8_status gemmi8_conv_reserve_workspace(const gemmi8_convolution* op,
                                                            const struct gemmi8_qgemm_problem* p,
                                                            void** fresh, size_t* fresh_bytes);
GEMMI8_INTERNAL void gemmi8_conv_install_workspace(gemmi8_convolution* op, void* fresh,
                                                   size_t fresh_bytes);

/* The depthwise path's create: packs the filter (op's type, geometry, output and
 * requantization set) and chooses its kernel; success, unsupported_parameter or
 * out_of_memory, op's packed and prepared set on success only. */
GEMMI8_INTERNAL gemmi8_status gemmi8_conv_dw_create(gemmi8_convolution* op,
                                                   const uint8_t* weights,
                                                   const uint8_t* b_zero_point,
                                                   int b_zp_per_channel, const int32_t* bias);

/* Validates a geometry (nonzero sizes, sums that fit size_t). */
GEMMI8_INTERNAL gemmi8_status gemmi8_conv_check_geometry(const gemmi8_conv_geometry* g);

/* Copies rq's arrays (count values each) into memory *out owns; 0 when out of memory. */
GEMMI8_INTERNAL int gemmi8_conv_copy_requant(const gemmi8_requant* rq, size_t count,
                                            gemmi8_requant* out);

/* Frees the binary path's state (NULL allowed). */
GEMMI8_INTERNAL void gemmi8_bconv_free(struct gemmi8_bconv* b);

/* For tests: the path create chose, and whether the geometry is depthwise. */
GEMMI8_INTERNAL enum gemmi8_conv_path gemmi8_convolution_path(const gemmi8_convolution* op,
                                                              int* depthwise);

#endif
