/*
 * The operators between the convolutions, written plainly: element loops over a range
 * of rows (ops.h), split over threads by ops_parallel.
 *
 * The uint8 ones reproduce ONNX Runtime's arithmetic (its MLAS kernels on x86-64) float
 * operation by float operation, so that a network exported to ONNX gives the same
 * bytes there: QLinearAdd (com.microsoft) and QLinearGlobalAveragePool
 * (com.microsoft); max pooling is exact anywhere. This file must be compiled with
 * -ffp-contract=off (as the Makefile does): a product and a sum fused where the
 * reference rounds twice, or the reverse, changes bytes.
 */
#include <float.h>
#include <math.h>

#include "ops.h"

#if defined(FLT_EVAL_METHOD) && (FLT_EVAL_METHOD == 1 || FLT_EVAL_METHOD == 2)
#error "ops.c needs float arithmetic evaluated in float (FLT_EVAL_METHOD 0)"
#endif

/* ---- threads ------------------------------------------------------------------------- */

typedef struct ops_job {
  ops_range_fn fn;
  const void* args;
  size_t n, chunk;
} ops_job;

static void ops_job_task(void* context, size_t index)
{
  const ops_job* job = context;
  const size_t begin = index * job->chunk;
  const size_t end = job->n - begin < job->chunk ? job->n : begin + job->chunk;
  job->fn(job->args, begin, end);
}

void ops_parallel(const gemmi8_parallel* parallel, size_t n, size_t grain, ops_range_fn fn,
                  const void* args)
{
  if (grain == 0) grain = 1;
  if (parallel == NULL || parallel->threads <= 1 || n < 2 * grain) {
    fn(args, 0, n);
    return;
  }
  /* four chunks a thread, so that a thread that comes late does not hold the others */
  const size_t tasks = parallel->threads * 4;
  size_t chunk = (n + tasks - 1) / tasks;
  if (chunk < grain) chunk = grain;
  ops_job job = {fn, args, n, chunk};
  parallel->parallel_for(parallel->context, ops_job_task, &job, (n + chunk - 1) / chunk);
}

/* ---- rounding -------------------------------------------------------------------------- */

/* A range function compiled for x86-64-v4 (AVX-512), v3 (AVX2) and the baseline, the
 * copy the CPU runs chosen at load (GCC's target_clones): the same operations, each
 * rounded alike, in wider vectors. The binary ResNet-18 on Zen 4, one thread: max
 * pooling 75.9 -> 44.3 us, average pooling 67.1 -> 27.6, quantize 25.2 -> 20.9,
 * dequantize 30.1 -> 26.3. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_ADDRESS__)
#define OPS_VECTOR __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define OPS_VECTOR
#endif

/* v rounded to the nearest integer, ties to even, for |v| <= 2^22: adding 1.5 * 2^23
 * leaves a float whose last bit is worth 1, so the addition rounds v (to nearest even,
 * the default rounding mode), and the subtraction is exact. It is what cvtps2dq does in
 * ONNX Runtime's kernels (MXCSR at its default, round to nearest even). */
static inline float round_even(float v)
{
  return (v + 0x1.8p23f) - 0x1.8p23f;
}

/* ---- QLinearAdd -------------------------------------------------------------------- */

/*
 * ONNX Runtime's com.microsoft QLinearAdd on uint8, as its x86-64 AVX2 kernel computes
 * it (MlasQLinearAddU8KernelAvx2, onnxruntime/core/mlas/lib/intrinsics/avx2/
 * qladd_avx2.cpp; the kernel MLAS picks on every CPU with AVX2), for inputs A and B of
 * the same shape:
 *
 *   ratio_a = a_scale / y_scale,  ratio_b = b_scale / y_scale          (float divisions)
 *   base    = (float) y_zp - fmaf(ratio_a, (float) a_zp, ratio_b * (float) b_zp)
 *   t       = fmaf((float) b, ratio_b, base)      (fused multiply-add: one rounding)
 *   t       = fmaf((float) a, ratio_a, t)         (B first, then A)
 *   y       = saturate_u8(round_half_to_even(t))
 *
 * that is y = y_zp + ((a - a_zp) * a_scale + (b - b_zp) * b_scale) / y_scale, with the
 * zero points folded into one float constant and the raw bytes fed to two fused
 * multiply-adds. The order matters: the two inputs are not interchangeable byte for
 * byte. The saturation is ONNX Runtime's packs (int32 -> int16) then packus (-> uint8):
 * a clamp to 0..255, applied here before the rounding or after it (the same result: the
 * bounds are integers).
 *
 * The source writes base as (float) y_zp - (ratio_a * a_zp + ratio_b * b_zp); the
 * compiler of the released library (1.22.0, linux x64) fused the first product into
 * the sum, as above: checked against that library on every (a, b) pair of 300
 * parameter sets, 200 of them chosen where the three ways of rounding base give some
 * different byte (only the fused one above matches all 19.6 million bytes; rounding
 * the two products apart gets 203 wrong, fusing the other one 223).
 *
 * ONNX Runtime's other kernels differ: without AVX2 (SSE2) it rounds each product and
 * sum apart, on ARM it takes a fixed-point path when the scale ratios allow it; these
 * bytes are those of x86-64 with AVX2. fmaf is exact everywhere (C99), so the bytes
 * here do not depend on the machine; on x86-64 the loop runs as a copy compiled for FMA
 * when the CPU has it.
 */
void ops_qadd_prepare(ops_qadd* p, float a_scale, int32_t a_zero_point, float b_scale,
                      int32_t b_zero_point, float y_scale, int32_t y_zero_point)
{
  p->ratio_a = a_scale / y_scale;
  p->ratio_b = b_scale / y_scale;
  p->base = (float) y_zero_point -
            fmaf(p->ratio_a, (float) a_zero_point, p->ratio_b * (float) b_zero_point);
  p->small = 255.0f * (fabsf(p->ratio_a) + fabsf(p->ratio_b)) + fabsf(p->base) < 0x1p21f;
}

/* (restrict parameters: the compiler learns that a, b and y do not overlap from them,
 * not from restrict locals) */
static inline __attribute__((always_inline)) void qadd_loop(const uint8_t* restrict a,
                                                            const uint8_t* restrict b,
                                                            uint8_t* restrict y, float ra,
                                                            float rb, float base, int small,
                                                            size_t begin, size_t end)
{
  size_t i = begin;
  if (small) {
    /* Every t is below 2^21 in magnitude: round_even is exact and the clamp can follow
     * it on the integer, a form the compiler vectorizes (a float compare is control
     * flow to it); 16 at a time, a count it unrolls into vectors. */
    for (; i + 16 <= end; i += 16) {
      for (size_t j = 0; j < 16; j++) {
        float t = fmaf((float) b[i + j], rb, base);
        t = fmaf((float) a[i + j], ra, t);
        int32_t v = (int32_t) round_even(t);
        v = v < 0 ? 0 : v;
        v = v > 255 ? 255 : v;
        y[i + j] = (uint8_t) v;
      }
    }
  }
  for (; i < end; i++) {
    float t = fmaf((float) b[i], rb, base);
    t = fmaf((float) a[i], ra, t);
    t = t < 0.0f ? 0.0f : t;
    t = t > 255.0f ? 255.0f : t;
    y[i] = (uint8_t) round_even(t);
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* The same arithmetic where fmaf is one instruction (vfmadd; without FMA, fmaf is
 * libm's exact software routine, a call per element), 16 elements a step written out:
 * the bytes widened to float, two vfmadd (B then A), vcvtps2dq (round half to even,
 * the default rounding), then vpackssdw and vpackuswb, whose saturation is the clamp to
 * 0..255 on the rounded integers. Only when every t is below 2^21 in magnitude (small):
 * vcvtps2dq would turn a t beyond int32 into INT32_MIN; the loop's scalar form takes
 * the rest. */
__attribute__((target("avx2,fma"))) static void qadd_fma(const ops_qadd* p, size_t begin,
                                                         size_t end)
{
  size_t i = begin;
  if (p->small) {
    const __m256 vra = _mm256_set1_ps(p->ratio_a), vrb = _mm256_set1_ps(p->ratio_b);
    const __m256 vbase = _mm256_set1_ps(p->base);
    for (; i + 16 <= end; i += 16) {
      const __m128i va = _mm_loadu_si128((const __m128i*) (p->a + i));
      const __m128i vb = _mm_loadu_si128((const __m128i*) (p->b + i));
      const __m256 fa0 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(va));
      const __m256 fa1 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(va, 8)));
      const __m256 fb0 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(vb));
      const __m256 fb1 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(vb, 8)));
      const __m256 t0 = _mm256_fmadd_ps(fa0, vra, _mm256_fmadd_ps(fb0, vrb, vbase));
      const __m256 t1 = _mm256_fmadd_ps(fa1, vra, _mm256_fmadd_ps(fb1, vrb, vbase));
      const __m256i v16 = _mm256_packs_epi32(_mm256_cvtps_epi32(t0), _mm256_cvtps_epi32(t1));
      /* lanes: 0-3 8-11 | 4-7 12-15 as 16-bit: reorder the 64-bit halves */
      const __m256i v = _mm256_permute4x64_epi64(v16, 0xD8);
      const __m128i y8 = _mm_packus_epi16(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
      _mm_storeu_si128((__m128i*) (p->y + i), y8);
    }
  }
  qadd_loop(p->a, p->b, p->y, p->ratio_a, p->ratio_b, p->base, p->small, i, end);
}
#endif

static void qadd_plain(const ops_qadd* p, size_t begin, size_t end)
{
  qadd_loop(p->a, p->b, p->y, p->ratio_a, p->ratio_b, p->base, p->small, begin, end);
}

void ops_qadd_range(const void* args, size_t begin, size_t end)
{
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    qadd_fma(args, begin, end);
    return;
  }
#endif
  qadd_plain(args, begin, end);
}

/* ---- max pooling --------------------------------------------------------------------- */

/* W channels from i (W a constant: the compiler keeps the maxima in vectors of W
 * bytes), each the maximum over the taps of rows [ylo, yhi) and columns [xlo, xhi),
 * stored as uint8 (yf NULL) or dequantized into yf. The first tap starts the maxima:
 * the window holds at least one (pad < kernel). */
static inline __attribute__((always_inline)) void maxpool_chunk(
    const ops_maxpool* p, size_t W, size_t i, size_t ylo, size_t yhi, size_t xlo, size_t xhi,
    uint8_t* restrict y, float* restrict yf)
{
  const size_t c = p->channels;
  const uint8_t* restrict first = p->x + (ylo * p->in_w + xlo) * c + i;
  uint8_t m[64];
  for (size_t j = 0; j < W; j++) m[j] = first[j];
  for (size_t iy = ylo; iy < yhi; iy++) {
    for (size_t ix = xlo; ix < xhi; ix++) {
      const uint8_t* restrict tap = p->x + (iy * p->in_w + ix) * c + i;
      for (size_t j = 0; j < W; j++) m[j] = m[j] > tap[j] ? m[j] : tap[j];
    }
  }
  if (yf == NULL) {
    for (size_t j = 0; j < W; j++) y[i + j] = m[j];
  } else {
    for (size_t j = 0; j < W; j++) yf[i + j] = (float) ((int32_t) m[j] - p->zero_point) * p->scale;
  }
}

/* One output pixel: each channel's maximum over the window's taps inside the image,
 * 64, then 16, then 1 channel at a time. */
static inline __attribute__((always_inline)) void maxpool_pixel(
    const ops_maxpool* p, size_t oy, size_t ox, uint8_t* restrict y, float* restrict yf)
{
  const size_t c = p->channels;
  const size_t y0 = oy * p->stride;
  const size_t ylo = y0 < p->pad ? 0 : y0 - p->pad;
  const size_t yhi = y0 + p->kernel - p->pad < p->in_h ? y0 + p->kernel - p->pad : p->in_h;
  const size_t x0 = ox * p->stride;
  const size_t xlo = x0 < p->pad ? 0 : x0 - p->pad;
  const size_t xhi = x0 + p->kernel - p->pad < p->in_w ? x0 + p->kernel - p->pad : p->in_w;
  size_t i = 0;
  for (; i + 64 <= c; i += 64) maxpool_chunk(p, 64, i, ylo, yhi, xlo, xhi, y, yf);
  for (; i + 16 <= c; i += 16) maxpool_chunk(p, 16, i, ylo, yhi, xlo, xhi, y, yf);
  for (; i < c; i++) maxpool_chunk(p, 1, i, ylo, yhi, xlo, xhi, y, yf);
}

OPS_VECTOR void ops_maxpool_range(const void* args, size_t begin, size_t end)
{
  const ops_maxpool* p = args;
  const size_t c = p->channels;
  for (size_t oy = begin; oy < end; oy++) {
    for (size_t ox = 0; ox < p->out_w; ox++) {
      const size_t px = oy * p->out_w + ox;
      maxpool_pixel(p, oy, ox, p->yf == NULL ? p->y + px * c : NULL,
                    p->yf == NULL ? NULL : p->yf + px * c);
    }
  }
}

/* ---- QLinearGlobalAveragePool -------------------------------------------------------- */

/*
 * ONNX Runtime's com.microsoft QLinearGlobalAveragePool on uint8
 * (MlasQLinearGlobalAveragePoolNhwc / Nchw in onnxruntime/core/mlas/lib/qlgavgpool.cpp,
 * which end in MlasRequantizeOutput; the x86-64 path is SSE2, the same on every x86-64
 * CPU), per channel over the image's pixels:
 *
 *   scale = x_scale / (y_scale * (float) pixels)      (float product, then division)
 *   acc   = -x_zp * pixels + sum of the pixels' bytes     (exact int32)
 *   v     = (float) acc * scale                           (one rounding)
 *   v     = min(max(v, (float) (0 - y_zp)), (float) (255 - y_zp))
 *   y     = round_half_to_even(v) + y_zp                  (cvtps2dq, then an int add)
 *
 * that is gemmi8's fp32 requantization of the channel sum with a bias of -x_zp *
 * pixels. ONNX Runtime rejects (throws) a scale outside [2^-32, 256) and an image of
 * 2^24 pixels or more; the networks here stay inside. Checked against the released
 * library (1.22.0, linux x64): 200 parameter sets x 512 channels, every byte equal.
 */
void ops_qgap_prepare(ops_qgap* p, float x_scale, int32_t x_zero_point, float y_scale,
                      int32_t y_zero_point)
{
  p->bias = -x_zero_point * (int32_t) p->pixels;
  p->scale = x_scale / (y_scale * (float) p->pixels);
  p->y_zero_point = y_zero_point;
}

/* Channels [begin, end), 64 at a time: the sums run pixel by pixel across the
 * channels (contiguous bytes, in vectors; a channel's walk down the pixels strided by
 * the channel count took 35 us on MobileNetV2's 7 x 7 x 1280), exact in int32. */
OPS_VECTOR void ops_qgap_range(const void* args, size_t begin, size_t end)
{
  const ops_qgap* p = args;
  const float lo = (float) (0 - p->y_zero_point), hi = (float) (255 - p->y_zero_point);
  for (size_t ch = begin; ch < end; ch += 64) {
    const size_t n = end - ch < 64 ? end - ch : 64;
    int32_t acc[64];
    for (size_t j = 0; j < 64; j++) acc[j] = p->bias;
    for (size_t i = 0; i < p->pixels; i++) {
      const uint8_t* restrict x = p->x + i * p->channels + ch;
      if (n == 64) {
        for (size_t j = 0; j < 64; j++) acc[j] += x[j];
      } else {
        for (size_t j = 0; j < n; j++) acc[j] += x[j];
      }
    }
    for (size_t j = 0; j < n; j++) {
      float v = (float) acc[j] * p->scale;
      v = v < lo ? lo : v;
      v = v > hi ? hi : v;
      p->y[ch + j] = (uint8_t) ((int32_t) round_even(v) + p->y_zero_point);
    }
  }
}

/* ---- float ------------------------------------------------------------------------------ */

/* The float loops below take their arrays as restrict parameters and run by 16: the
 * two things the compiler needs (at -O2) to turn them into vector code, as for the
 * QLinearAdd loop; each is inlined into its range function, which OPS_VECTOR compiles
 * for several instruction sets. */

static inline __attribute__((always_inline)) void dequant_u8(const uint8_t* restrict x,
                                                             float* restrict y, float scale,
                                                             int32_t zero_point, size_t n)
{
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (size_t j = 0; j < 16; j++) y[i + j] = (float) ((int32_t) x[i + j] - zero_point) * scale;
  }
  for (; i < n; i++) y[i] = (float) ((int32_t) x[i] - zero_point) * scale;
}

OPS_VECTOR void ops_dequant_u8_range(const void* args, size_t begin, size_t end)
{
  const ops_dequant_u8* p = args;
  dequant_u8(p->x + begin, p->y + begin, p->scale, p->zero_point, end - begin);
}

static inline __attribute__((always_inline)) void dequant_s32(const int32_t* restrict x,
                                                              float* restrict y,
                                                              const float* restrict scale, size_t n)
{
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (size_t j = 0; j < 16; j++) y[i + j] = (float) x[i + j] * scale[i + j];
  }
  for (; i < n; i++) y[i] = (float) x[i] * scale[i];
}

OPS_VECTOR void ops_dequant_s32_range(const void* args, size_t begin, size_t end)
{
  const ops_dequant_s32* p = args;
  const size_t c = p->channels;
  for (size_t px = begin; px < end; px++) dequant_s32(p->x + px * c, p->y + px * c, p->scale, c);
}

/* ONNX's QuantizeLinear: x / scale rounded half to even, plus the zero point,
 * saturated (here clamped first: the same, the bounds being integers). */
static inline __attribute__((always_inline)) void quant_f32(const float* restrict x,
                                                            uint8_t* restrict y, float scale,
                                                            int32_t zero_point, size_t n)
{
  const float lo = (float) (0 - zero_point), hi = (float) (255 - zero_point);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (size_t j = 0; j < 16; j++) {
      float v = x[i + j] / scale;
      v = v < lo ? lo : v;
      v = v > hi ? hi : v;
      y[i + j] = (uint8_t) ((int32_t) round_even(v) + zero_point);
    }
  }
  for (; i < n; i++) {
    float v = x[i] / scale;
    v = v < lo ? lo : v;
    v = v > hi ? hi : v;
    y[i] = (uint8_t) ((int32_t) round_even(v) + zero_point);
  }
}

OPS_VECTOR void ops_quant_f32_range(const void* args, size_t begin, size_t end)
{
  const ops_quant_f32* p = args;
  quant_f32(p->x + begin, p->y + begin, p->scale, p->zero_point, end - begin);
}

static inline __attribute__((always_inline)) void add_f32(const float* restrict a,
                                                          const float* restrict b,
                                                          float* restrict y, size_t n)
{
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (size_t j = 0; j < 16; j++) y[i + j] = a[i + j] + b[i + j];
  }
  for (; i < n; i++) y[i] = a[i] + b[i];
}

OPS_VECTOR void ops_add_f32_range(const void* args, size_t begin, size_t end)
{
  const ops_add_f32* p = args;
  add_f32(p->a + begin, p->b + begin, p->y + begin, end - begin);
}

/* One output pixel: each channel's taps summed from 0.0f in the window's row order, then
 * times inv; 16 channels at a time, kept in registers across the taps. */
static inline __attribute__((always_inline)) void avgpool_pixel(const float* restrict x,
                                                                float* restrict y, size_t in_w,
                                                                size_t c, size_t k, float inv)
{
  size_t i = 0;
  for (; i + 16 <= c; i += 16) {
    float acc[16];
    for (size_t j = 0; j < 16; j++) acc[j] = 0.0f;
    for (size_t ky = 0; ky < k; ky++) {
      for (size_t kx = 0; kx < k; kx++) {
        const float* tap = x + (ky * in_w + kx) * c + i;
        for (size_t j = 0; j < 16; j++) acc[j] += tap[j];
      }
    }
    for (size_t j = 0; j < 16; j++) y[i + j] = acc[j] * inv;
  }
  for (; i < c; i++) {
    float acc = 0.0f;
    for (size_t ky = 0; ky < k; ky++) {
      for (size_t kx = 0; kx < k; kx++) acc += x[(ky * in_w + kx) * c + i];
    }
    y[i] = acc * inv;
  }
}

OPS_VECTOR void ops_avgpool_f32_range(const void* args, size_t begin, size_t end)
{
  const ops_avgpool_f32* p = args;
  const size_t c = p->channels;
  const float inv = 1.0f / (float) (p->kernel * p->kernel);
  for (size_t oy = begin; oy < end; oy++) {
    for (size_t ox = 0; ox < p->out_w; ox++) {
      avgpool_pixel(p->x + (oy * p->stride * p->in_w + ox * p->stride) * c,
                    p->y + (oy * p->out_w + ox) * c, p->in_w, c, p->kernel, inv);
    }
  }
}

/* Channels [begin, end): each channel's sum runs over the pixels in order, as a loop per
 * channel would, but pixel by pixel across the channels (contiguous, in vectors). */
static inline __attribute__((always_inline)) void gap_f32(const float* restrict x,
                                                          float* restrict y, size_t pixels,
                                                          size_t stride, size_t n, float inv)
{
  for (size_t i = 0; i < n; i++) y[i] = 0.0f;
  for (size_t px = 0; px < pixels; px++) {
    const float* row = x + px * stride;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
      for (size_t j = 0; j < 16; j++) y[i + j] += row[i + j];
    }
    for (; i < n; i++) y[i] += row[i];
  }
  for (size_t i = 0; i < n; i++) y[i] *= inv;
}

OPS_VECTOR void ops_gap_f32_range(const void* args, size_t begin, size_t end)
{
  const ops_gap_f32* p = args;
  gap_f32(p->x + begin, p->y + begin, p->pixels, p->channels, end - begin,
          1.0f / (float) p->pixels);
}

void ops_binarize_range(const void* args, size_t begin, size_t end)
{
  const ops_binarize* p = args;
  const size_t words = GEMMI8_BIN_WORDS(p->channels);
  if (end > begin) {
    /* cannot fail: sizes and strides are valid by construction (net.c) */
    (void) gemmi8_bin_pack_rows_f32(end - begin, p->channels, p->x + begin * p->channels,
                                    p->channels, p->y + begin * words, words);
  }
}
