/*
 * Indirection buffers of the convolution paths (indirection.h).
 */
#include <stdlib.h>
#include <string.h>

#include "indirection.h"

uint8_t* gemmi8_indirection_zero(size_t bytes, uint8_t value)
{
  const size_t size = gemmi8_round_up(bytes, 64);
  uint8_t* zero = malloc(size);
  if (zero != NULL) memset(zero, value, size);
  return zero;
}

gemmi8_status gemmi8_indirection_init(struct gemmi8_indirection* ind,
                                      const gemmi8_conv_geometry* g, int merge, size_t mr,
                                      size_t ks, size_t repeat, size_t batch, size_t input_height,
                                      size_t input_width, size_t output_height,
                                      size_t output_width, const uint8_t* input,
                                      size_t input_stride, uint8_t zero_point)
{
  memset(ind, 0, sizeof(*ind));
  size_t m, count, bytes;
  if (!gemmi8_mul(batch, output_height, &m) || !gemmi8_mul(m, output_width, &m) ||
      !gemmi8_mul(gemmi8_round_up(m, mr), ks, &count) ||
      !gemmi8_mul(count, sizeof(void*), &bytes)) {
    return gemmi8_status_invalid_parameter;
  }
  size_t copy_h = 0, copy_w = 0, copy_bytes = 0;
  if (merge) {
    /* the padded copy: batch x copy_h x copy_w pixels of ci bytes */
    if (!gemmi8_add(input_height, g->padding_top + g->padding_bottom, &copy_h) ||
        !gemmi8_add(input_width, g->padding_left + g->padding_right, &copy_w) ||
        !gemmi8_mul(batch, copy_h, &copy_bytes) || !gemmi8_mul(copy_bytes, copy_w, &copy_bytes) ||
        !gemmi8_mul(copy_bytes, g->group_input_channels, &copy_bytes)) {
      return gemmi8_status_invalid_parameter;
    }
  }
  const void** pointers = malloc(bytes);
  uint8_t* copy = merge ? malloc(copy_bytes) : NULL;
  if (pointers == NULL || (merge && copy == NULL)) {
    free(pointers);
    free(copy);
    return gemmi8_status_out_of_memory;
  }
  /* the padding keeps the zero point; each run copies the image inside it */
  if (merge) memset(copy, zero_point, copy_bytes);
  ind->batch = batch;
  ind->input_height = input_height;
  ind->input_width = input_width;
  ind->output_height = output_height;
  ind->output_width = output_width;
  ind->input = input;
  ind->input_stride = input_stride;
  ind->mr = mr;
  ind->ks = ks;
  ind->repeat = repeat;
  ind->m = m;
  ind->merge = merge;
  ind->pointers = pointers;
  ind->count = count;
  ind->copy = copy;
  ind->copy_h = copy_h;
  ind->copy_w = copy_w;
  ind->copy_bytes = copy_bytes;
  return gemmi8_status_success;
}

int gemmi8_indirection_matches(const struct gemmi8_indirection* ind, size_t batch,
                               size_t input_height, size_t input_width, const uint8_t* input,
                               size_t input_stride)
{
  return ind->pointers != NULL && ind->batch == batch && ind->input_height == input_height &&
         ind->input_width == input_width && ind->input == input &&
         ind->input_stride == input_stride;
}

/* The pointer of output pixel p, tap (y, x): an input pixel, or the zero buffer;
 * with merged taps, of tap y: the copy at the row's first pixel. */
void gemmi8_indirection_build(struct gemmi8_indirection* ind, const gemmi8_conv_geometry* g,
                              const void* zero)
{
  const size_t m = ind->m, ks = ind->ks, kw = g->kernel_width, mr = ind->mr;
  const size_t repeat = ind->repeat;
  const size_t ow = ind->output_width, pixels = ind->output_height * ow;
  const size_t tiles = gemmi8_divide_round_up(m, mr);
  const void** ptrs = ind->pointers;
  for (size_t tile = 0; tile < tiles; tile++) {
    for (size_t i = 0; i < mr; i++) {
      const size_t p = gemmi8_min(tile * mr + i, m - 1);
      const size_t b = p / pixels, oy = p % pixels / ow, ox = p % ow;
      for (size_t t = 0; t < ks; t++) {
        if (ind->merge) {
          /* tap t is kernel row t, read from the padded copy at its left end */
          const size_t py = oy * g->stride_height + t * g->dilation_height;
          const size_t px = ox * g->stride_width;
          ptrs[(tile * ks + t) * mr + i] =
              ind->copy + ((b * ind->copy_h + py) * ind->copy_w + px) * g->group_input_channels;
          continue;
        }
        /* padded coordinates, then the input's */
        const size_t tap = t / repeat;
        const size_t py = oy * g->stride_height + tap / kw * g->dilation_height;
        const size_t px = ox * g->stride_width + tap % kw * g->dilation_width;
        const void* ptr = zero;
        if (py >= g->padding_top && py - g->padding_top < ind->input_height &&
            px >= g->padding_left && px - g->padding_left < ind->input_width) {
          const size_t pixel =
              (b * ind->input_height + (py - g->padding_top)) * ind->input_width +
              (px - g->padding_left);
          ptr = ind->input + pixel * ind->input_stride;
        }
        ptrs[(tile * ks + t) * mr + i] = ptr;
      }
    }
  }
}

void gemmi8_indirection_copy_input(const struct gemmi8_indirection* ind,
                                   const gemmi8_conv_geometry* g)
{
  const size_t ci = g->group_input_channels, iw = ind->input_width, stride = ind->input_stride;
  for (size_t b = 0; b < ind->batch; b++) {
    for (size_t y = 0; y < ind->input_height; y++) {
      uint8_t* dst = ind->copy +
                     ((b * ind->copy_h + g->padding_top + y) * ind->copy_w + g->padding_left) * ci;
      const uint8_t* src = ind->input + (b * ind->input_height + y) * iw * stride;
      if (stride == ci) {
        memcpy(dst, src, iw * ci);
      } else {
        for (size_t x = 0; x < iw; x++) memcpy(dst + x * ci, src + x * stride, ci);
      }
    }
  }
}

void gemmi8_indirection_free(struct gemmi8_indirection* ind)
{
  free(ind->pointers);
  free(ind->copy);
  free(ind->columns);
  memset(ind, 0, sizeof(*ind));
}
