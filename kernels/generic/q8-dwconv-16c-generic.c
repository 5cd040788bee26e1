/*
 * Depthwise microkernels, portable C, tiles of 16 channels: the reference of every
 * depthwise kernel set (src/microkernel.h states what they compute).
 *
 * Packed tile (gemmi8_dwpack_16c1__generic): int32 bias'[16], then for each tap the 16
 * channels' int8 weights, to 64 bytes; missing channels are 0.
 */
#include <string.h>

#include "requant.h"

#define CR 16

static size_t tile_bytes(size_t ks) { return gemmi8_round_up(CR * 4 + ks * CR, 64); }

void gemmi8_dwpack_16c1__generic(size_t channels, size_t ks, const int8_t* w,
                                 const int32_t* bias, void* packed)
{
  const size_t bytes = tile_bytes(ks);
  uint8_t* tile = packed;
  for (size_t c0 = 0; c0 < channels; c0 += CR, tile += bytes) {
    memset(tile, 0, bytes);
    const size_t n = gemmi8_min(CR, channels - c0);
    memcpy(tile, bias + c0, n * sizeof(int32_t));
    int8_t* wt = (int8_t*) (tile + CR * 4);
    for (size_t c = 0; c < n; c++) {
      for (size_t t = 0; t < ks; t++) wt[t * CR + c] = w[(c0 + c) * ks + t];
    }
  }
}

/* One body for every tap count and output kind: the reference is kept small (its
 * 3x3 and 5x5 entry points are the same loop). */
static void dwconv(const enum gemmi8_qoutput out, size_t channels, size_t pixels, size_t ks,
                   const void* const* input, const void* w, void* output, size_t output_stride,
                   size_t input_offset, const void* zero, const struct gemmi8_dwparams* params)
{
  const struct gemmi8_qparams* q = &params->q;
  const size_t cs = q->channel_stride, bytes = tile_bytes(ks);
  const uint8_t x = params->input_xor;
  for (size_t p = 0; p < pixels; p++) {
    const uint8_t* const* taps = (const uint8_t* const*) input + p * ks;
    uint8_t* o = (uint8_t*) output + p * output_stride;
    for (size_t c = 0; c < channels; c++) {
      const uint8_t* tile = (const uint8_t*) w + c / CR * bytes;
      int32_t bias;
      memcpy(&bias, tile + c % CR * 4, 4);
      const int8_t* wc = (const int8_t*) (tile + CR * 4) + c % CR;
      uint32_t acc = (uint32_t) bias;
      for (size_t t = 0; t < ks; t++) {
        const uint8_t* ptr = taps[t];
        if (ptr != (const uint8_t*) zero) ptr += input_offset;
        acc += (uint32_t) (ptr[c] ^ x) * (uint32_t) (int32_t) wc[t * CR];
      }
      const int32_t a = (int32_t) acc;
      switch (out) {
        case gemmi8_qoutput_s32:
          memcpy(o + 4 * c, &a, 4);
          break;
        case gemmi8_qoutput_fixedpoint:
          o[c] = (uint8_t) gemmi8_output_fixedpoint(a, q->multiplier[c * cs], q->shift[c * cs],
                                                    q->zero_point, q->min, q->max);
          break;
        default:
          o[c] = (uint8_t) gemmi8_requantize_fp32(a, q->scale[c * cs], q->zero_point, q->min,
                                                  q->max);
          break;
      }
    }
  }
}

#define DWCONV(fn, out, KS)                                                                  \
  void fn(size_t channels, size_t pixels, size_t ks, const void* const* input, const void* w, \
          void* output, size_t output_stride, size_t input_offset, const void* zero,          \
          const struct gemmi8_dwparams* params)                                               \
  {                                                                                          \
    (void) KS;                                                                               \
    dwconv(out, channels, pixels, ks, input, w, output, output_stride, input_offset, zero,     \
           params);                                                                          \
  }

DWCONV(gemmi8_q8_dwconv_s32_ukernel_9p16c__generic, gemmi8_qoutput_s32, 9)
DWCONV(gemmi8_q8_dwconv_fixedpoint_ukernel_9p16c__generic, gemmi8_qoutput_fixedpoint, 9)
DWCONV(gemmi8_q8_dwconv_fp32_ukernel_9p16c__generic, gemmi8_qoutput_fp32, 9)
DWCONV(gemmi8_q8_dwconv_s32_ukernel_25p16c__generic, gemmi8_qoutput_s32, 25)
DWCONV(gemmi8_q8_dwconv_fixedpoint_ukernel_25p16c__generic, gemmi8_qoutput_fixedpoint, 25)
DWCONV(gemmi8_q8_dwconv_fp32_ukernel_25p16c__generic, gemmi8_qoutput_fp32, 25)
DWCONV(gemmi8_q8_dwconv_s32_ukernel_up16c__generic, gemmi8_qoutput_s32, 0)
DWCONV(gemmi8_q8_dwconv_fixedpoint_ukernel_up16c__generic, gemmi8_qoutput_fixedpoint, 0)
DWCONV(gemmi8_q8_dwconv_fp32_ukernel_up16c__generic, gemmi8_qoutput_fp32, 0)
