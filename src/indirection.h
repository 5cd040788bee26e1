/*
 * Indirection buffers of the convolution paths: a pointer per output pixel and filter
 * tap, into the input or at a zero buffer for the taps in the padding, in the order
 * the igemm kernels read them; and, for merged taps, the padded copy of the input that
 * the pointers then point into.
 */
#ifndef GEMMI8_INDIRECTION_H
#define GEMMI8_INDIRECTION_H

#include "common.h"

/*
 * An indirection buffer as built by one setup. The row tiles read it as
 * [round_up(m, mr) / mr tiles][ks taps][mr rows] pointers, m rounded up to mr with the
 * last pixel repeated (read, never stored).
 *
 * Merged taps (merge = 1): the taps of a kernel row are one tap of kernel_width x ci
 * bytes, read from a copy of the input with its padding (the zero point) around it,
 * copy_h x copy_w pixels of ci bytes an image (one group, no horizontal dilation); ks
 * is then kernel_height.
 */
struct gemmi8_indirection {
  /* what it was built for */
  size_t batch, input_height, input_width, output_height, output_width;
  const uint8_t* input;
  size_t input_stride; /* bytes between input pixels */
  size_t mr, ks, m;
  int merge;
  /* each tap's pointer repeated this many times (1: once); ks counts the repeats
   * (the depthwise path's split weights) */
  size_t repeat;
  /* the pointers: round_up(m, mr) * ks */
  const void** pointers;
  size_t count;
  /* merged taps: the padded copy, copy_bytes */
  uint8_t* copy;
  size_t copy_h, copy_w, copy_bytes;
  /* depthwise 3x3 of stride 1 (conv-dw.c): the taps of the whole pairs of output rows
   * by input column, columns_count pointers, or NULL */
  const void** columns;
  size_t columns_count;
};

/* The zero buffer: round_up(bytes, 64) bytes of value, or NULL (out of memory). Free
 * with free(). */
GEMMI8_INTERNAL uint8_t* gemmi8_indirection_zero(size_t bytes, uint8_t value);

/*
 * Allocates the buffers of an indirection for geometry g (validated, with taps of
 * ks x kc bytes after merging; ks counts each tap `repeat` times, repeat >= 1, each
 * tap's pointer then written that many times in a row), mr rows a tile, batch x
 * input_height x input_width
 * input pixels at input, input_stride bytes apart, and an output of output_height x
 * output_width pixels an image; fills in *ind (its pointers not yet built). Returns
 * invalid_parameter when a size does not fit size_t, out_of_memory; nothing is left
 * allocated on failure.
 */
GEMMI8_INTERNAL gemmi8_status gemmi8_indirection_init(struct gemmi8_indirection* ind,
                                                      const gemmi8_conv_geometry* g, int merge,
                                                      size_t mr, size_t ks, size_t repeat,
                                                      size_t batch,
                                                      size_t input_height, size_t input_width,
                                                      size_t output_height, size_t output_width,
                                                      const uint8_t* input, size_t input_stride,
                                                      uint8_t zero_point);

/* 1 if ind was built for this batch, input size, input pointer and stride. */
GEMMI8_INTERNAL int gemmi8_indirection_matches(const struct gemmi8_indirection* ind, size_t batch,
                                               size_t input_height, size_t input_width,
                                               const uint8_t* input, size_t input_stride);

/* Fills the pointers: each output pixel's taps, an input pixel or `zero`. */
GEMMI8_INTERNAL void gemmi8_indirection_build(struct gemmi8_indirection* ind,
                                              const gemmi8_conv_geometry* g, const void* zero);

/* Merged taps: copies the image into the inside of the padded copy (the ci channels of
 * the single group, the pixel's first), before every run. */
GEMMI8_INTERNAL void gemmi8_indirection_copy_input(const struct gemmi8_indirection* ind,
                                                   const gemmi8_conv_geometry* g);

/* Frees what ind holds (and zeroes it). */
GEMMI8_INTERNAL void gemmi8_indirection_free(struct gemmi8_indirection* ind);

#endif
