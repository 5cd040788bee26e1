/*
 * gemmi8: low-precision matrix multiplication for inference.
 *
 * C = A x B with 8-bit quantized operands (qu8, qs8, qu8s8) or one-bit operands (bin).
 *
 * Conventions used by every entry point:
 *   A  activations, M x K, row-major, row stride a_stride (in elements), read in
 *      place and never written. No read goes past the last element of a row.
 *   B  weights, N x K (one row per output channel: FC weights, OHWI filters), or
 *      K x N with GEMMI8_B_KN. B is packed once by gemmi8_<type>_pack() into an
 *      opaque, 64-byte aligned buffer whose layout belongs to the kernels chosen for
 *      this CPU; the packed buffer records that layout and the GEMM calls check it.
 *   C  results, M x N, row-major, row stride c_stride (in elements). Only the
 *      M x N elements are written; bytes between rows are left as they were.
 *   In convolution terms M = output pixels, N = output channels, K = filter taps x
 *   input channels. The GEMMi8 paper lists shapes as (Row, Col, Depth): that is
 *   N = Row, M = Col, K = Depth.
 *
 * Errors: every function returns a gemmi8_status. On any status other than
 * gemmi8_status_success nothing is written through any output pointer.
 * Sizes: every size is checked before use, with no arithmetic that can wrap. The
 * extent of a matrix, ((rows - 1) * stride + row length) * element size in bytes,
 * must not exceed PTRDIFF_MAX (no object can be larger); one that does is
 * invalid_parameter, like a stride smaller than the row.
 *
 * Threads: any entry point may be called from any thread, concurrently with any other
 * call, except the calls on one object that the object's section rules out: the calls
 * on one convolution operator ("Convolution", one operator) and the runs on one gemmi8
 * thread pool ("Threads"). Packed weights are read-only during a GEMM and may be shared
 * by concurrent calls. A GEMM runs on the calling thread, or on several through its
 * _ex variant (see "Threads" below).
 */
#ifndef GEMMI8_H
#define GEMMI8_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define GEMMI8_API __attribute__((visibility("default")))
#else
#define GEMMI8_API
#endif

#define GEMMI8_VERSION_MAJOR 0
#define GEMMI8_VERSION_MINOR 1
#define GEMMI8_VERSION_PATCH 0
/* Single integer for comparisons: major * 10000 + minor * 100 + patch. */
#define GEMMI8_VERSION \
  (GEMMI8_VERSION_MAJOR * 10000 + GEMMI8_VERSION_MINOR * 100 + GEMMI8_VERSION_PATCH)

/* Version of the library actually linked, as "major.minor.patch". */
GEMMI8_API const char* gemmi8_version(void);

/* ------------------------------------------------------------------------------- */
/* Status                                                                           */
/* ------------------------------------------------------------------------------- */

typedef enum gemmi8_status {
  gemmi8_status_success = 0,
  /* The caller is wrong: null pointer, zero or overflowing size, stride smaller
   * than a row, clamp min > max, out-of-range zero point, shift or multiplier,
   * packed weights made for another type, shape or kernel layout. */
  gemmi8_status_invalid_parameter = 1,
  /* Valid, but not implemented or beyond exact int32 accumulation (K too large). */
  gemmi8_status_unsupported_parameter = 2,
  gemmi8_status_out_of_memory = 3,
  /* The requested instruction set is not available on this CPU. */
  gemmi8_status_unsupported_hardware = 4,
} gemmi8_status;

/* Name of a status, e.g. "invalid parameter". Never NULL; unknown values give
 * "unknown status". */
GEMMI8_API const char* gemmi8_status_string(gemmi8_status status);

/* ------------------------------------------------------------------------------- */
/* Instruction set                                                                  */
/* ------------------------------------------------------------------------------- */

/* Name of the kernel-set level in use, one of (each including the ones before it)
 *   x86-64:  "generic", "avx2", "avx512bw", "avx512vnni", "avx512vpopcnt"
 *   AArch64: "generic", "neon", "neondot", "i8mm"
 *   ARMv7:   "generic", "armv7neon"
 * ("avx512bw": AVX-512 F/BW/DQ/VL; "avx512vnni" adds VNNI; "avx512vpopcnt" adds
 * VPOPCNTDQ and BITALG; "neondot": the ARMv8.2 dot product; "i8mm": the ARMv8.6 int8
 * matrix multiply). Chosen once, on first use of the library, as the best level
 * that was compiled in and that the CPU and OS support; each kernel family (qu8,
 * qs8, binary) then runs the best kernels that level allows, so a CPU with AVX-512BW
 * but no VNNI runs the AVX-512BW binary kernels and the AVX2 int8 kernels.
 *
 * The environment variable GEMMI8_ISA, read at that moment, forces a lower level by
 * name. A name that is not a level of this build, or a level this CPU lacks, is not
 * honoured: the best level is used, gemmi8_isa_env_status() says why, and one line
 * naming the problem is written to stderr (only then: the library prints nothing
 * else). Weights packed under one level may need repacking under another (the GEMMs
 * then return invalid_parameter).
 */
GEMMI8_API const char* gemmi8_isa_name(void);

/* The levels compiled into this build, "generic" first and the best last, as a
 * NULL-terminated array of static strings. A build made with
 * `make SETS="generic avx512vnni"` holds only the kernel sets named (and generic,
 * always) and lists only their levels. */
GEMMI8_API const char* const* gemmi8_isa_compiled(void);

/* The types this build holds, of "qu8", "qs8", "qu8s8", "bin" and "q4", as a
 * NULL-terminated array of static strings (all five unless the build chose some with
 * `make TYPES="qu8s8 bin"`). Every entry point of a type the build does not hold
 * (its packing, GEMMs and convolutions) returns gemmi8_status_unsupported_parameter
 * and writes nothing. The GEMMs over rows quantized at run time go with the type of
 * their rows (qd8: qs8; qdu8: qu8s8); "q4" is their 4-bit weights (gemmi8_qd8_pack_q4
 * and those GEMMs and linear layers on such weights), which need it and the rows' type. */
GEMMI8_API const char* const* gemmi8_types_compiled(void);

/* Whether the named level can run here: success when it is compiled in and this CPU
 * and OS support it; unsupported_hardware when it is compiled in but not supported;
 * invalid_parameter for NULL or a name that is not a level of this build. */
GEMMI8_API gemmi8_status gemmi8_isa_available(const char* name);

/* What became of GEMMI8_ISA: success when it is unset or empty, or names a level now
 * in use; otherwise what gemmi8_isa_available() returns for it (invalid_parameter:
 * unknown name; unsupported_hardware: a level this CPU lacks). */
GEMMI8_API gemmi8_status gemmi8_isa_env_status(void);

/* ------------------------------------------------------------------------------- */
/* Threads                                                                          */
/* ------------------------------------------------------------------------------- */

/*
 * Every GEMM has an _ex variant that takes a gemmi8_parallel, the way to run its
 * tasks on several threads: the caller's own parallel-for (a framework's pool,
 * pthreadpool, OpenMP), or one of gemmi8's pools (gemmi8_threadpool_parallel). The
 * plain entry points, and the _ex ones given NULL, run on the calling thread alone.
 * The output bytes never depend on the threads: no sum is ever split between them.
 *
 * parallel_for(context, task, task_context, count) must call task(task_context, i)
 * exactly once for every i in [0, count), on any threads and in any order, and return
 * when every call has returned. threads says how many threads it runs tasks on: the
 * work is split for that many (0 or 1: it is not split, and parallel_for is not
 * called). A problem too small to gain from threads is not split either. gemmi8 calls
 * parallel_for only from inside the _ex call it was given to, never from inside a
 * task, and a task never blocks on another. Its signature is pthreadpool's:
 *   static void run(void* pool, gemmi8_task_fn task, void* task_context, size_t count)
 *   { pthreadpool_parallelize_1d(pool, task, task_context, count, 0); }
 *   gemmi8_parallel par = {run, pool, pthreadpool_get_threads_count(pool)};
 */
typedef void (*gemmi8_task_fn)(void* task_context, size_t index);

typedef struct gemmi8_parallel {
  void (*parallel_for)(void* context, gemmi8_task_fn task, void* task_context, size_t count);
  void* context;
  size_t threads;
} gemmi8_parallel;

/* Most threads a pool or a gemmi8_parallel may have; more is invalid_parameter. */
#define GEMMI8_MAX_THREADS 1024

/*
 * gemmi8's thread pool: threads threads in all, the calling thread included (it
 * always takes part), so threads - 1 are created here, once, and reused by every run
 * until gemmi8_threadpool_destroy(). threads == 0 means the CPUs this process may run
 * on (its affinity mask). A pool runs one parallel-for at a time: use it from one
 * thread at a time (two pools never interfere). A run's tasks are claimed one at a
 * time by whichever thread is free; a worker that is descheduled when a run begins
 * (its core busy with other work) and wakes after the calling thread has claimed the
 * last task does not join that run, and the call does not wait for it.
 *
 * options (NULL: the defaults, as gemmi8_threadpool_options_init() sets them):
 *  - spin_us: how long an idle worker waits for the next run spinning, before it
 *    sleeps (0 to GEMMI8_THREADPOOL_SPIN_US_MAX microseconds). Spinning saves the
 *    wake-up of a sleeping thread (tens of microseconds, more on a virtual machine)
 *    when runs follow each other closely, as a network's layers do; it takes that time
 *    from other threads on the same cores. An idle pool sleeps: it takes no CPU time.
 *  - reserved: zero (room for options to come, such as affinity).
 * Returns invalid_parameter for a NULL pool, more than GEMMI8_MAX_THREADS threads or
 * an option out of range, out_of_memory when memory or threads could not be had
 * (nothing is left behind).
 */
typedef struct gemmi8_threadpool gemmi8_threadpool;
#define GEMMI8_THREADPOOL_SPIN_US 100
#define GEMMI8_THREADPOOL_SPIN_US_MAX 1000000
typedef struct gemmi8_threadpool_options {
  uint32_t spin_us;
  uint32_t reserved[7];
} gemmi8_threadpool_options;
/* Sets *options to the defaults (spin_us = GEMMI8_THREADPOOL_SPIN_US); NULL is
 * allowed (nothing done). */
GEMMI8_API void gemmi8_threadpool_options_init(gemmi8_threadpool_options* options);
GEMMI8_API gemmi8_status gemmi8_threadpool_create(size_t threads,
                                                  const gemmi8_threadpool_options* options,
                                                  gemmi8_threadpool** pool);
/* Joins the pool's threads and frees it; NULL is allowed. Not during a run. */
GEMMI8_API void gemmi8_threadpool_destroy(gemmi8_threadpool* pool);
/* Threads of a pool (the calling thread included); 0 for NULL. */
GEMMI8_API size_t gemmi8_threadpool_threads(const gemmi8_threadpool* pool);
/* Fills *parallel with the pool's parallel-for, for the _ex entry points. */
GEMMI8_API gemmi8_status gemmi8_threadpool_parallel(gemmi8_threadpool* pool,
                                                    gemmi8_parallel* parallel);

/* ------------------------------------------------------------------------------- */
/* Requantization                                                                   */
/* ------------------------------------------------------------------------------- */

/*
 * The exact integer accumulator of every quantized GEMM is
 *   acc[m][n] = bias[n] + sum_k (A[m][k] - a_zero_point) * (B[n][k] - b_zero_point[n])
 * computed modulo 2^32 (the product sum alone always fits: see GEMMI8_QU8_MAX_K and
 * GEMMI8_QS8_MAX_K; a bias that pushes the total past int32 wraps around).
 * An 8-bit output is
 *   C[m][n] = clamp(zero_point + requantize(acc[m][n], channel n), min, max)
 * where requantize depends on the mode. In fixed-point mode the addition of the
 * zero point is an int32 addition modulo 2^32, as in gemmlowp and TFLite: with a
 * scale near or above 1 and a saturated product (r near INT32_MAX or INT32_MIN), the
 * sum wraps and the clamp then gives the other end of the window (e.g. r = 2^31 - 2,
 * zero_point 128, window [0, 255]: 0). In fp32 mode the sum is exact.
 *
 * gemmi8_requant_fixedpoint (the default, TFLite / gemmlowp bytes):
 *   x = acc saturating-shifted left by max(shift, 0)              (saturates at int32)
 *   y = SaturatingRoundingDoublingHighMul(x, multiplier)
 *     = (x * multiplier + (x*multiplier >= 0 ? 2^30 : 1 - 2^30)) / 2^31, truncated
 *       (gemmlowp's definition: it equals floor((x * multiplier + 2^30) / 2^31), so
 *       ties round toward +infinity)
 *   r = RoundingDivideByPOT(y, max(-shift, 0))                     (half away from 0)
 *   That is multiplication by multiplier * 2^(shift - 31). multiplier is a Q31
 *   value in [0, 2^31 - 1]; shift is in [-31, 30]. gemmi8_quantize_multiplier()
 *   derives both from a real scale exactly as TFLite's QuantizeMultiplier.
 *
 * gemmi8_requant_fp32 (PyTorch, XNNPACK, ONNX Runtime bytes):
 *   r = round_half_to_even((float) acc * scale), the product rounded to float
 *   once. scale must be positive and finite.
 */
typedef enum gemmi8_requant_mode {
  gemmi8_requant_fixedpoint = 0,
  gemmi8_requant_fp32 = 1,
} gemmi8_requant_mode;

typedef struct gemmi8_requant {
  gemmi8_requant_mode mode;
  /* 0: multiplier/shift/scale point to one value used for every channel.
   * 1: they point to N values, one per output channel. */
  int per_channel;
  /* Fixed-point mode: Q31 multipliers in [0, 2^31 - 1] and shifts in [-31, 30].
   * Ignored (may be NULL) in fp32 mode. */
  const int32_t* multiplier;
  const int32_t* shift;
  /* fp32 mode: positive finite scales. Ignored (may be NULL) in fixed-point mode. */
  const float* scale;
  /* Output zero point and clamp window, all within the output type's range
   * (0..255 for qu8, -128..127 for qs8), with min <= max. */
  int32_t zero_point;
  int32_t min;
  int32_t max;
} gemmi8_requant;

/* Q31 multiplier and shift for a real scale, exactly as TFLite's
 * QuantizeMultiplier: scale = q * 2^e with q in [0.5, 1) (frexp); multiplier =
 * round_half_away(q * 2^31), and if that is 2^31 it becomes 2^30 with e + 1;
 * e < -31 gives multiplier 0, shift 0 (every result is 0); e > 30 saturates to
 * multiplier 2^31 - 1, shift 30. A scale of 0 (or -0.0) gives multiplier 0, shift 0.
 * Returns invalid_parameter (and writes nothing) for a null pointer or a scale
 * that is negative, infinite or NaN. */
GEMMI8_API gemmi8_status gemmi8_quantize_multiplier(double scale, int32_t* multiplier, int32_t* shift);

/* The same for count scales (per channel): multiplier[i], shift[i] from scale[i].
 * Validates every scale before writing anything; count 0 is invalid_parameter. */
GEMMI8_API gemmi8_status gemmi8_quantize_multipliers(size_t count, const double* scale,
                                          int32_t* multiplier, int32_t* shift);

/* ------------------------------------------------------------------------------- */
/* Quantization helpers: from a float model to gemmi8's operands                    */
/* ------------------------------------------------------------------------------- */

/*
 * A quantized value q stands for the real value scale * (q - zero_point). These
 * helpers choose scales and zero points from float ranges, quantize and dequantize
 * arrays, quantize a bias, derive a layer's requantization and gather activation
 * ranges over sample inputs, in the arithmetic of one of two conventions. Every
 * formula is meant as C operations in the type said (float unless double is named),
 * each rounded, with no contraction; every kernel set gives the same bits.
 *
 * gemmi8_qscheme_onnx: ONNX (QuantizeLinear, DynamicQuantizeLinear, ONNX Runtime's
 *   quantization tool, QLinearConv's output scale): float arithmetic, ties to even.
 * gemmi8_qscheme_tflite: TFLite (ChooseQuantizationParams and QuantizeMultiplier,
 *   the Quantize kernel, the converter's symmetric per-channel weights and int32
 *   bias): double where TFLite uses double, ties away from zero.
 *
 * rne(v) rounds to the nearest integer, ties to even; rna(v) ties away from zero.
 */
typedef enum gemmi8_qscheme {
  gemmi8_qscheme_onnx = 0,
  gemmi8_qscheme_tflite = 1,
} gemmi8_qscheme;

/* The integer range of a quantized tensor. */
typedef enum gemmi8_qrange {
  gemmi8_qrange_u8 = 0,           /* asymmetric, uint8_t 0..255 */
  gemmi8_qrange_s8 = 1,           /* asymmetric, int8_t -128..127 */
  gemmi8_qrange_s8_symmetric = 2, /* int8_t -127..127, zero point 0 (int8 weights) */
} gemmi8_qrange;

/* Which values share a scale and zero point in an array of rows x cols values
 * (row-major, contiguous). */
typedef enum gemmi8_qaxis {
  gemmi8_qaxis_tensor = 0, /* one scale and zero point */
  gemmi8_qaxis_row = 1,    /* rows of them: per output channel of N x K weights and
                              of OHWI filters (cols = K = kh * kw * ci) */
  gemmi8_qaxis_column = 2, /* cols of them: per channel of NHWC pixels (cols = C) */
} gemmi8_qaxis;

/*
 * Scale and zero point of each of count ranges [min[i], max[i]] (count 1 for a tensor,
 * N for per-channel weights). The range is first widened to hold 0.0, which is then
 * exactly representable:
 *   rmin = min[i] < 0.0f ? min[i] : 0.0f;    rmax = max[i] > 0.0f ? max[i] : 0.0f;
 * Asymmetric ranges, qmin..qmax = 0..255 (u8) or -128..127 (s8):
 *   onnx:    scale = rmax == rmin ? 1.0f : (rmax - rmin) / (float) (qmax - qmin);
 *            z = (float) qmin - rmin / scale, clamped to [qmin, qmax]; zp = rne(z)
 *            (for u8 the scale and zero point of gemmi8_quantize_rows_u8);
 *   tflite:  in double, s = (rmax - rmin) / (qmax - qmin);
 *            zmin = qmin - rmin / s and zmax = qmax - rmax / s; zmin is taken when
 *            |qmin| + |rmin / s| < |qmax| + |rmax / s|, else zmax; it is clamped to
 *            [qmin, qmax] and rounded rna; scale = (float) s. A range rmin == rmax
 *            gives scale 1.0f and zero point 0 (TFLite's scale is 0 there, which
 *            cannot quantize).
 * The symmetric range, a = rmax > -rmin ? rmax : -rmin, zero point 0:
 *   onnx:    scale = a == 0.0f ? 1.0f : (a + a) / 254.0f;
 *   tflite:  scale = a == 0.0f ? 1.0f : a / 127.0f;
 *   (the same float whenever a + a is finite: doubling is exact).
 * Returns invalid_parameter, having written nothing, for null pointers, count 0 (or a
 * count whose arrays would exceed PTRDIFF_MAX bytes), an unknown scheme or range, a
 * NaN or infinite bound or min[i] > max[i]; unsupported_parameter, having written
 * nothing, when a scale would be infinite or below FLT_MIN (onnx: rmax - rmin, or
 * a + a, beyond FLT_MAX, about 3.4e38; either scheme: a range narrower than about
 * 3e-36, 0 excepted).
 */
GEMMI8_API gemmi8_status gemmi8_choose_qparams(gemmi8_qscheme scheme, gemmi8_qrange range,
                                               size_t count, const float* min,
                                               const float* max, float* scale,
                                               int32_t* zero_point);

/*
 * Quantizes rows x cols floats x (contiguous) into y (uint8_t for gemmi8_qrange_u8,
 * int8_t otherwise), each value with the scale s and zero point zp of its axis:
 *   q = x / s;                                        (a division, in float)
 *   q = q > qmin - zp ? q : qmin - zp;   q = q < qmax - zp ? q : qmax - zp;
 *   y = round(q) + zp,   round = rne (onnx: QuantizeLinear) or rna (tflite: Quantize)
 * which for finite x is clamp(round(x / s) + zp, qmin, qmax); infinities saturate and
 * a NaN gives qmin. qmin..qmax as for gemmi8_choose_qparams (-127..127 symmetric).
 * Scales must be positive and finite and zero points within the range (0 for the
 * symmetric range), or invalid_parameter (nothing written), as for null pointers,
 * zero sizes, an unknown scheme, range or axis, or rows * cols overflowing.
 * Vectorised portable C: the same bytes on every machine.
 */
GEMMI8_API gemmi8_status gemmi8_quantize_f32(gemmi8_qscheme scheme, gemmi8_qrange range,
                                             gemmi8_qaxis axis, size_t rows, size_t cols,
                                             const float* x, const float* scale,
                                             const int32_t* zero_point, void* y);

/*
 * The inverse: x = (float) (q - zp) * s for rows x cols values q (uint8_t for
 * gemmi8_qrange_u8, int8_t otherwise), as ONNX DequantizeLinear and TFLite Dequantize.
 * Statuses as gemmi8_quantize_f32 (a symmetric range accepts every int8 value).
 */
GEMMI8_API gemmi8_status gemmi8_dequantize_f32(gemmi8_qrange range, gemmi8_qaxis axis,
                                               size_t rows, size_t cols, const void* q,
                                               const float* scale, const int32_t* zero_point,
                                               float* x);

/*
 * int32 bias of count output channels at scale a_scale * w_scale[c] (w_scale holds
 * count values when w_per_channel is 1, one when it is 0), the bias the GEMMs and
 * convolutions add to the accumulator:
 *   onnx:    s = a_scale * w_scale[c];  b = rne(bias[c] / s)   (ONNX Runtime's tool)
 *   tflite:  s = a_scale * w_scale[c];  inv = 1.0f / s;  b = rna(bias[c] * inv)
 * saturated to [-2^31 + 1, 2^31 - 1] (TFLite's bound; a bias that large is a model
 * error, but the helper does not wrap). Returns invalid_parameter (nothing written)
 * for null pointers, count 0, w_per_channel other than 0 and 1, an unknown scheme, a
 * NaN or infinite bias, a scale that is not positive and finite, a product s that is
 * 0 or infinite, or (tflite) an inv that is infinite (s below 2^-128: bias 0 would
 * give 0 * inf).
 */
GEMMI8_API gemmi8_status gemmi8_quantize_bias(gemmi8_qscheme scheme, size_t count,
                                              const float* bias, float a_scale,
                                              const float* w_scale, int w_per_channel,
                                              int32_t* out);

/*
 * A layer's requantization from its operands' scales: for each of count output
 * channels (w_scale holds count values; count 1 for per-tensor weights) the real
 * factor from the accumulator to the output,
 *   onnx:    f = a_scale * w_scale[c] / c_scale          (float, left to right:
 *                                                         ONNX Runtime's QLinearConv)
 *   tflite:  f = (double) a_scale * (double) w_scale[c] / (double) c_scale
 * written as scale[c] = (float) f for gemmi8_requant_fp32 (scale may be NULL) and as
 * multiplier[c], shift[c] = gemmi8_quantize_multiplier((double) f) for
 * gemmi8_requant_fixedpoint (both may be NULL; not one of them). The arrays then go
 * into a gemmi8_requant (per_channel = count > 1). Returns invalid_parameter (nothing
 * written) for count 0, a NULL w_scale, all outputs NULL or one of multiplier and
 * shift, an unknown scheme, a scale that is not positive and finite, or an f whose
 * (float) f is 0 or infinite (whichever outputs are asked for).
 */
GEMMI8_API gemmi8_status gemmi8_requant_scales(gemmi8_qscheme scheme, size_t count,
                                               float a_scale, const float* w_scale,
                                               float c_scale, float* scale,
                                               int32_t* multiplier, int32_t* shift);

/*
 * Calibration: the ranges of a layer's activations over sample inputs.
 * create: channels 1 gathers one range over every value it is given; channels C > 1
 *   gathers a range per channel of values given as rows of C (NHWC pixels). channels 0
 *   (or so many that the object would exceed PTRDIFF_MAX bytes) or a NULL cal:
 *   invalid_parameter; out_of_memory leaves *cal as it was.
 * update: count values (a multiple of channels, not 0); NaN or infinite values are
 *   invalid_parameter and nothing of that call is recorded.
 * range: min[c] and max[c] for each channel. percentile 100 gives the exact smallest
 *   and largest value seen (-0.0 counted below 0.0). A percentile p in [50, 100) clips
 *   each tail. With n the values of a channel and k = ceil(p * n / 100) (computed as
 *   p * (double) n / 100.0, then within [1, n]), max[c] stands for the k-th smallest value, the smallest v
 *   such that at least p percent of the values are <= v, and min[c] for the k-th
 *   largest, the largest v such that at least p percent are >= v. Both are read off a
 *   histogram of 2048 bins per channel over [-R, R], R the smallest power of two above
 *   every |value| of the channel (|value| < R; the bins merge in pairs when R doubles,
 *   so that they do not depend on how the values were split into updates), bin i
 *   holding the values in [(i - 1024) w, (i - 1023) w), w = R / 1024: max[c] is the
 *   upper edge of the first bin from below at which the running count reaches k,
 *   min[c] the lower edge of the first bin from above at which it does, each then
 *   held to the exact minimum and maximum and rounded outward to float. So max[c] is
 *   at least the k-th smallest value and min[c] at most the k-th largest (at least p
 *   percent of the values are <= max[c], at least p percent >= min[c]), each within
 *   R / 1024 of it (or the spacing of floats there, if coarser), and neither is ever
 *   beyond the exact minimum and maximum. NULL pointers, no values yet, or p outside
 *   [50, 100]: invalid_parameter.
 * Memory: 16 KB a channel for the histogram. One calibration may not be used from two
 *   threads at once. destroy: NULL is allowed.
 */
typedef struct gemmi8_calibration gemmi8_calibration;
GEMMI8_API gemmi8_status gemmi8_calibration_create(size_t channels, gemmi8_calibration** cal);
GEMMI8_API gemmi8_status gemmi8_calibration_update(gemmi8_calibration* cal, size_t count,
                                                   const float* x);
GEMMI8_API gemmi8_status gemmi8_calibration_range(const gemmi8_calibration* cal,
                                                  double percentile, float* min, float* max);
GEMMI8_API void gemmi8_calibration_destroy(gemmi8_calibration* cal);

/*
 * Dynamic quantization of float rows (activations of a transformer's GEMMs): each row
 * gets its own scale and zero point from its minimum and maximum, with 0.0 exactly
 * representable, and is quantized with them. Every kernel set gives the same bytes,
 * scales and zero points. Written as C float operations (no contraction, default
 * rounding mode), where
 *   rne(v)         rounds to the nearest integer, ties to even (|v| <= 255 here);
 *   lo, hi         the smallest and largest value of the row;
 *   a < b ? a : b  and the like are meant literally: with a NaN the comparison is
 *                  false and the other operand is taken.
 *
 * gemmi8_quantize_rows_u8: ONNX DynamicQuantizeLinear (uint8) as ONNX Runtime
 * computes it (GetQuantizationParameter in onnxruntime/core/util/qmath.h, then
 * MlasQuantizeLinear in onnxruntime/core/mlas/lib/quantize.cpp: its SSE2, NEON and
 * AVX-512F kernels all divide, take max then min, and convert to nearest even):
 *   rmin  = lo < 0.0f ? lo : 0.0f;          rmax = hi > 0.0f ? hi : 0.0f;
 *   scale = rmax == rmin ? 1.0f : (rmax - rmin) / 255.0f;
 *   z     = 0.0f - rmin / scale;
 *   z     = z < 255.0f ? z : 255.0f;        z = 0.0f < z ? z : 0.0f;
 *   zp    = rne(z);
 *   for each x:  q = x / scale;                               (a division)
 *                q = q > -zp ? q : -zp;     q = q < 255 - zp ? q : 255 - zp;
 *                y = rne(q) + zp             (in 0..255)
 * The operator's text (scale = (rmax - rmin) / 255, zero point
 * saturate(rne(0 - rmin / scale)), y = saturate(rne(x / scale) + zp)) gives the same
 * bytes except for a row of zeros, where its scale is 0; ONNX Runtime's, and this, is
 * scale 1, zero point 0, bytes 0.
 *
 * gemmi8_quantize_rows_s8: XNNPACK's qd8 conversion (int8;
 * xnn_qd8_asymmetric_quantization_params and xnn_f32_qd8_asymmetric_quantization_params
 * in src/xnnpack/quantization.h, the f32-qs8-vcvt kernels with the inverse scale,
 * xnn_compute_f32_qx8_convert in src/operator-run.c):
 *   rmin  = lo < 0.0f ? lo : 0.0f;          rmax = hi > 0.0f ? hi : 0.0f;
 *   inv   = rmin == rmax ? 1.0f : 255.0f / (rmax - rmin);
 *   dmin  = rmin * inv;                     dmax = rmax * inv;
 *   z     = (-128.0f + dmin) + (127.0f + dmax) > 0.0f ? -128.0f - dmin : 127.0f - dmax;
 *   z     = -128.0f < z ? z : -128.0f;      z = 127.0f < z ? 127.0f : z;
 *   zp    = rne(z);                         (the "nudged" zero point)
 *   scale = 1.0f / inv;                     (reported: what XNNPACK keeps as the
 *                                            row's inv_scale, its GEMMs' dequantization
 *                                            factor; it converts with inv)
 *   for each x:  q = x * inv;                                 (a multiplication)
 *                q = q > -128 - zp ? q : -128 - zp;  q = q < 127 - zp ? q : 127 - zp;
 *                y = rne(q) + zp             (in -128..127)
 * A row of zeros gives scale 1 and, as -128 + 127 > 0 is false, zero point 127, bytes
 * 127.
 *
 * Extreme rows are defined by the same operations: a range that overflows (rmax - rmin
 * infinite) or that is so small that the scale underflows still gives the bytes these
 * formulas give (a NaN q takes the lower bound), identical on every kernel set.
 *
 * x: rows of k floats, row stride x_stride >= k elements; y: rows of k bytes (uint8_t
 * for _u8, int8_t for _s8), row stride y_stride >= k bytes; scale[r] and
 * zero_point[r] per row. Reads exactly k floats of each row and writes exactly k bytes
 * of each output row (nothing between rows).
 * Returns invalid_parameter, having written nothing, for a null pointer, rows or k 0,
 * a stride below k, extents that overflow, or any value of x that is NaN or infinite
 * (every row is checked before any is written: one more read of x).
 */
GEMMI8_API gemmi8_status gemmi8_quantize_rows_u8(size_t rows, size_t k, const float* x,
                                                 size_t x_stride, void* y, size_t y_stride,
                                                 float* scale, int32_t* zero_point);
GEMMI8_API gemmi8_status gemmi8_quantize_rows_s8(size_t rows, size_t k, const float* x,
                                                 size_t x_stride, void* y, size_t y_stride,
                                                 float* scale, int32_t* zero_point);

/* ------------------------------------------------------------------------------- */
/* Weight packing (qu8, qs8)                                                        */
/* ------------------------------------------------------------------------------- */

/* Flags for the pack functions. */
#define GEMMI8_B_NK 0u /* B is N x K: row n holds output channel n (default) */
#define GEMMI8_B_KN 1u /* B is K x N: row k holds depth k of every channel */

/* Packed buffers must start at a multiple of this many bytes. */
#define GEMMI8_PACK_ALIGNMENT 64

/* Largest K for which the product sums are exact in int32 for all inputs:
 * qu8 |(a - a_zp)(b - b_zp)| <= 255 * 255, qs8 and qu8s8 |(a - a_zp) b| <= 255 * 128.
 * Larger K returns gemmi8_status_unsupported_parameter. */
#define GEMMI8_QU8_MAX_K 33025
#define GEMMI8_QS8_MAX_K 65793
#define GEMMI8_QU8S8_MAX_K 65793

/*
 * Size in bytes of the packed form of an N x K qu8 (or qs8) weight matrix for the
 * kernels in use. Returns invalid_parameter for a NULL size or zero N or K,
 * unsupported_parameter for K above the exact limit or a size that overflows size_t
 * (exactly: any N whose packed size fits is accepted).
 */
GEMMI8_API gemmi8_status gemmi8_qu8_pack_size(size_t n, size_t k, size_t* size);
GEMMI8_API gemmi8_status gemmi8_qs8_pack_size(size_t n, size_t k, size_t* size);

/*
 * Packs qu8 weights into caller memory.
 *   b, b_stride    N x K (flags GEMMI8_B_NK) or K x N (GEMMI8_B_KN) uint8 matrix;
 *                  b_stride, in elements, is at least K (NK) or N (KN).
 *   a_zero_point   zero point of the activations this weight will multiply (0..255).
 *   b_zero_point   one value (b_zp_per_channel == 0) or N values (== 1), 0..255.
 *   bias           N int32 values, or NULL for none. Copied.
 *   packed         packed_size bytes at a GEMMI8_PACK_ALIGNMENT boundary;
 *                  packed_size >= gemmi8_qu8_pack_size(n, k).
 * The packed buffer is self-contained: b, b_zero_point and bias may be freed after.
 * It holds no pointers: it may be copied (memcpy) to another buffer at a
 * GEMMI8_PACK_ALIGNMENT boundary, saved and loaded back, and used from there. Its
 * 64-byte header records the type, shape, kernel layout and zero-point form and
 * carries a checksum: the GEMMs check every field against the call and the kernels in
 * use, so a damaged, foreign or stale buffer is invalid_parameter, never a read
 * outside it. (The weights themselves are not checksummed.)
 * Returns invalid_parameter for null pointers, zero sizes, a small stride or an
 * extent past PTRDIFF_MAX bytes (see Sizes above), a misaligned
 * or too small buffer, unknown flags; unsupported_parameter for K above
 * GEMMI8_QU8_MAX_K or a packed size that overflows size_t.
 */
GEMMI8_API gemmi8_status gemmi8_qu8_pack(size_t n, size_t k, const uint8_t* b, size_t b_stride,
                              uint32_t flags, uint8_t a_zero_point,
                              const uint8_t* b_zero_point, int b_zp_per_channel,
                              const int32_t* bias, void* packed, size_t packed_size);

/*
 * Packs qs8 weights (symmetric: zero point 0) into caller memory.
 *   a_zero_point   zero point of the int8 activations (-128..127).
 * Other parameters and statuses as gemmi8_qu8_pack (limit GEMMI8_QS8_MAX_K).
 */
GEMMI8_API gemmi8_status gemmi8_qs8_pack(size_t n, size_t k, const int8_t* b, size_t b_stride,
                              uint32_t flags, int8_t a_zero_point, const int32_t* bias,
                              void* packed, size_t packed_size);

/* Allocating variants: *packed receives a buffer to release with
 * gemmi8_packed_free(). On failure *packed is left untouched. Every argument is
 * validated before the allocation: out_of_memory means the arguments were valid. */
GEMMI8_API gemmi8_status gemmi8_qu8_pack_alloc(size_t n, size_t k, const uint8_t* b, size_t b_stride,
                                    uint32_t flags, uint8_t a_zero_point,
                                    const uint8_t* b_zero_point, int b_zp_per_channel,
                                    const int32_t* bias, void** packed);
GEMMI8_API gemmi8_status gemmi8_qs8_pack_alloc(size_t n, size_t k, const int8_t* b, size_t b_stride,
                                    uint32_t flags, int8_t a_zero_point, const int32_t* bias,
                                    void** packed);

/* Frees a buffer from any gemmi8_*_pack_alloc(). NULL is allowed. */
GEMMI8_API void gemmi8_packed_free(void* packed);

/* ------------------------------------------------------------------------------- */
/* Quantized GEMM                                                                   */
/* ------------------------------------------------------------------------------- */

/*
 * C (M x N, uint8) = requantized A (M x K, uint8) x packed B.
 *   n, k must equal the sizes the weights were packed with.
 *   a_stride >= k, c_stride >= n (elements).
 *   rq: requantization of every channel (see gemmi8_requant); with per_channel
 *       its arrays hold n values.
 * Returns invalid_parameter for null pointers, zero or overflowing sizes, small
 * strides, a packed_b that is misaligned, damaged (its header fails its checks) or
 * was packed for another type, shape or kernel layout (e.g. before GEMMI8_ISA
 * changed the kernels), parameters out of
 * range (unknown mode, per_channel not 0 or 1, zero point or clamp outside 0..255,
 * min > max, multiplier < 0, shift outside [-31, 30], scale not positive and
 * finite); unsupported_parameter for k above GEMMI8_QU8_MAX_K; out_of_memory when
 * the row sums of A that some kernel sets need (4 bytes per row, on the stack up to
 * 1024 rows) could not be allocated. Any M is served: tiles of fewer rows than the
 * kernel set's main tile (M = 1: a fully-connected layer at batch 1) run on kernels
 * of that height where the set has them.
 */
GEMMI8_API gemmi8_status gemmi8_qu8_gemm(size_t m, size_t n, size_t k, const uint8_t* a,
                              size_t a_stride, const void* packed_b,
                              const gemmi8_requant* rq, uint8_t* c, size_t c_stride);

/* C (M x N, int32) = acc of A x packed B, before requantization. */
GEMMI8_API gemmi8_status gemmi8_qu8_gemm_s32(size_t m, size_t n, size_t k, const uint8_t* a,
                                  size_t a_stride, const void* packed_b, int32_t* c,
                                  size_t c_stride);

/* qs8 counterparts: int8 A, C and clamp window within -128..127. */
GEMMI8_API gemmi8_status gemmi8_qs8_gemm(size_t m, size_t n, size_t k, const int8_t* a,
                              size_t a_stride, const void* packed_b,
                              const gemmi8_requant* rq, int8_t* c, size_t c_stride);
GEMMI8_API gemmi8_status gemmi8_qs8_gemm_s32(size_t m, size_t n, size_t k, const int8_t* a,
                                  size_t a_stride, const void* packed_b, int32_t* c,
                                  size_t c_stride);

/* The same on several threads (see "Threads"); parallel NULL: the calling thread.
 * A gemmi8_parallel with parallel_for NULL or more than GEMMI8_MAX_THREADS threads is
 * invalid_parameter. */
GEMMI8_API gemmi8_status gemmi8_qu8_gemm_ex(size_t m, size_t n, size_t k, const uint8_t* a,
                                 size_t a_stride, const void* packed_b,
                                 const gemmi8_requant* rq, uint8_t* c, size_t c_stride,
                                 const gemmi8_parallel* parallel);
GEMMI8_API gemmi8_status gemmi8_qu8_gemm_s32_ex(size_t m, size_t n, size_t k, const uint8_t* a,
                                     size_t a_stride, const void* packed_b, int32_t* c,
                                     size_t c_stride, const gemmi8_parallel* parallel);
GEMMI8_API gemmi8_status gemmi8_qs8_gemm_ex(size_t m, size_t n, size_t k, const int8_t* a,
                                 size_t a_stride, const void* packed_b,
                                 const gemmi8_requant* rq, int8_t* c, size_t c_stride,
                                 const gemmi8_parallel* parallel);
GEMMI8_API gemmi8_status gemmi8_qs8_gemm_s32_ex(size_t m, size_t n, size_t k, const int8_t* a,
                                     size_t a_stride, const void* packed_b, int32_t* c,
                                     size_t c_stride, const gemmi8_parallel* parallel);

/* ------------------------------------------------------------------------------- */
/* qu8s8: uint8 activations, int8 weights                                           */
/* ------------------------------------------------------------------------------- */

/*
 * uint8 A with a zero point (0..255) times int8 B, symmetric (zero point 0; scales
 * per tensor or per channel through gemmi8_requant), uint8 C: the quantization of
 * ONNX Runtime's quantizer, PyTorch's x86 engines and oneDNN (u8s8), and the operand
 * order of vpdpbusd. acc = bias[n] + sum_k (A[m][k] - a_zero_point) * B[n][k]: the
 * activation zero point folds into the packed bias, so no row sums of A are formed
 * where the kernels multiply uint8 by int8 directly (AVX-512 VNNI); elsewhere the
 * qu8 kernels run it exactly as qu8 with B + 128 and zero point 128.
 * Parameters and statuses as the qu8 functions (limit GEMMI8_QU8S8_MAX_K); weights
 * packed by these functions are only accepted by the qu8s8 GEMMs.
 */
GEMMI8_API gemmi8_status gemmi8_qu8s8_pack_size(size_t n, size_t k, size_t* size);
GEMMI8_API gemmi8_status gemmi8_qu8s8_pack(size_t n, size_t k, const int8_t* b, size_t b_stride,
                                uint32_t flags, uint8_t a_zero_point, const int32_t* bias,
                                void* packed, size_t packed_size);
GEMMI8_API gemmi8_status gemmi8_qu8s8_pack_alloc(size_t n, size_t k, const int8_t* b,
                                      size_t b_stride, uint32_t flags, uint8_t a_zero_point,
                                      const int32_t* bias, void** packed);
/* C (M x N, uint8), clamp window within 0..255; and the int32 accumulators. */
GEMMI8_API gemmi8_status gemmi8_qu8s8_gemm(size_t m, size_t n, size_t k, const uint8_t* a,
                                size_t a_stride, const void* packed_b,
                                const gemmi8_requant* rq, uint8_t* c, size_t c_stride);
GEMMI8_API gemmi8_status gemmi8_qu8s8_gemm_s32(size_t m, size_t n, size_t k, const uint8_t* a,
                                    size_t a_stride, const void* packed_b, int32_t* c,
                                    size_t c_stride);
GEMMI8_API gemmi8_status gemmi8_qu8s8_gemm_ex(size_t m, size_t n, size_t k, const uint8_t* a,
                                   size_t a_stride, const void* packed_b,
                                   const gemmi8_requant* rq, uint8_t* c, size_t c_stride,
                                   const gemmi8_parallel* parallel);
GEMMI8_API gemmi8_status gemmi8_qu8s8_gemm_s32_ex(size_t m, size_t n, size_t k,
                                       const uint8_t* a, size_t a_stride,
                                       const void* packed_b, int32_t* c, size_t c_stride,
                                       const gemmi8_parallel* parallel);

/* ------------------------------------------------------------------------------- */
/* Rows quantized at run time, float output (transformers' linear layers)           */
/* ------------------------------------------------------------------------------- */

/*
 * A fully-connected layer whose activations are quantized row by row when it runs
 * (gemmi8_quantize_rows_s8 / _u8: a scale and a zero point per row) and whose
 * weights are int8, symmetric, with a float scale per output channel (qc8w):
 *   acc[m][n] = sum_k (A[m][k] - a_zero_point[m]) * B[n][k]        (exact, int32)
 *   v = (float) acc[m][n] * a_scale[m];     (each step rounded to float, in this
 *   v = v * b_scale[n];                      order, no fused multiply-add)
 *   v = v + bias[n];
 *   v = out_min > v ? out_min : v;  v = out_max < v ? out_max : v;  C[m][n] = v
 * The float results are bit-identical on every kernel set and thread count.
 *
 * qd8: int8 rows (XNNPACK's qd8, zero points -128..127); qdu8: uint8 rows (ONNX
 * Runtime's DynamicQuantizeMatMul, zero points 0..255). Weights packed for one are
 * accepted only by its GEMMs; 4-bit weights (below) by both.
 *
 * Packing: b, b_stride, flags as gemmi8_qs8_pack (N x K or K x N int8); scale: n
 * finite floats; bias: n finite floats or NULL (0). Statuses as gemmi8_qs8_pack, and
 * invalid_parameter for a NULL scale or a scale or bias that is NaN or infinite.
 * The packed buffer is self-contained (the scales and biases are copied into it).
 */
#define GEMMI8_QD8_MAX_K 65793
GEMMI8_API gemmi8_status gemmi8_qd8_pack_size(size_t n, size_t k, size_t* size);
GEMMI8_API gemmi8_status gemmi8_qd8_pack(size_t n, size_t k, const int8_t* b, size_t b_stride,
                                         uint32_t flags, const float* scale, const float* bias,
                                         void* packed, size_t packed_size);
GEMMI8_API gemmi8_status gemmi8_qd8_pack_alloc(size_t n, size_t k, const int8_t* b,
                                               size_t b_stride, uint32_t flags,
                                               const float* scale, const float* bias,
                                               void** packed);
GEMMI8_API gemmi8_status gemmi8_qdu8_pack_size(size_t n, size_t k, size_t* size);
GEMMI8_API gemmi8_status gemmi8_qdu8_pack(size_t n, size_t k, const int8_t* b, size_t b_stride,
                                          uint32_t flags, const float* scale, const float* bias,
                                          void* packed, size_t packed_size);
GEMMI8_API gemmi8_status gemmi8_qdu8_pack_alloc(size_t n, size_t k, const int8_t* b,
                                                size_t b_stride, uint32_t flags,
                                                const float* scale, const float* bias,
                                                void** packed);

/*
 * C (M x N, float, c_stride >= n elements) from quantized rows A (a_stride >= k) with
 * a_scale[m] (finite) and a_zero_point[m] (in the type's range) per row, and packed
 * weights. out_min <= out_max, neither NaN (-INFINITY / INFINITY: no clamp).
 * Returns invalid_parameter for null pointers, zero or overflowing sizes, small
 * strides, packed weights that do not match (as gemmi8_qs8_gemm), a row scale that
 * is not finite or a zero point out of range, a bad clamp; unsupported_parameter for
 * k above GEMMI8_QD8_MAX_K. Nothing is written then.
 */
GEMMI8_API gemmi8_status gemmi8_qd8_gemm_f32(size_t m, size_t n, size_t k, const int8_t* a,
                                             size_t a_stride, const float* a_scale,
                                             const int32_t* a_zero_point, const void* packed_b,
                                             float out_min, float out_max, float* c,
                                             size_t c_stride);
GEMMI8_API gemmi8_status gemmi8_qd8_gemm_f32_ex(size_t m, size_t n, size_t k, const int8_t* a,
                                                size_t a_stride, const float* a_scale,
                                                const int32_t* a_zero_point,
                                                const void* packed_b, float out_min,
                                                float out_max, float* c, size_t c_stride,
                                                const gemmi8_parallel* parallel);
GEMMI8_API gemmi8_status gemmi8_qdu8_gemm_f32(size_t m, size_t n, size_t k, const uint8_t* a,
                                              size_t a_stride, const float* a_scale,
                                              const int32_t* a_zero_point, const void* packed_b,
                                              float out_min, float out_max, float* c,
                                              size_t c_stride);
GEMMI8_API gemmi8_status gemmi8_qdu8_gemm_f32_ex(size_t m, size_t n, size_t k, const uint8_t* a,
                                                 size_t a_stride, const float* a_scale,
                                                 const int32_t* a_zero_point,
                                                 const void* packed_b, float out_min,
                                                 float out_max, float* c, size_t c_stride,
                                                 const gemmi8_parallel* parallel);

/*
 * 4-bit weights for int8 and uint8 rows (the qd8 and qdu8 GEMMs and linear layers take
 * them as packed here; uint8 rows go to the 4-bit kernels as int8, each byte and zero
 * point less 128, which leaves every A - a_zp as it was: the qdu8 GEMMs first copy
 * them, M x K bytes from the stack up to 4 KB, else allocated (out_of_memory then
 * possible, nothing written), the linear layer in its workspace): per output channel
 * (qc4w, block 0) or per block of 32, 64, 128 or 256
 * depths along K (qb4w), each with a float scale; signed nibbles (-8..7, two's
 * complement; zero_point NULL) or unsigned ones (0..15) with a zero point per block
 * (per channel for qc4w). Two nibbles a byte, low nibble first: element k of row n
 * is the low nibble of b[n * b_stride + k / 2] for even k, the high one for odd k
 * (ONNX Runtime's MatMulNBits and GGML's q4_0 within a block; a q4_0 block of 32 is
 * block 32 with zero point 8 and its scale as float).
 *   acc_b[m][n] = sum over the depths of block b of (A[m][k] - a_zp[m]) * (q - zp)
 *                                                          (exact, int32)
 *   f = +0.0f; for each block in order: f = f + (float) acc_b * scale[n][b]
 *               (the product rounded, then the sum; qc4w: one block of all K)
 *   v = f * a_scale[m];  v = v + bias[n];  then the clamp as above.
 * Bit-identical on every kernel set and thread count, like the 8-bit weights. The
 * type "q4" of a build (gemmi8_types_compiled): without it, packing returns
 * unsupported_parameter, and the GEMMs refuse such weights as foreign.
 */
typedef struct gemmi8_q4_weights {
  const uint8_t* b;          /* n rows of ceil(k / 2) bytes */
  size_t b_stride;           /* bytes between rows, >= ceil(k / 2) */
  size_t block;              /* 0 (qc4w) or 32, 64, 128, 256 (qb4w) */
  const float* scale;        /* [n][blocks] finite floats (blocks = ceil(k / block), 1 for qc4w) */
  const uint8_t* zero_point; /* [n][blocks] values 0..15, or NULL: signed nibbles */
  const float* bias;         /* n finite floats, or NULL (0) */
} gemmi8_q4_weights;
/* Statuses as gemmi8_qd8_pack, and invalid_parameter for a block size not listed or a
 * zero point above 15. */
GEMMI8_API gemmi8_status gemmi8_qd8_pack_q4_size(size_t n, size_t k, size_t block, size_t* size);
GEMMI8_API gemmi8_status gemmi8_qd8_pack_q4(size_t n, size_t k, const gemmi8_q4_weights* w,
                                            void* packed, size_t packed_size);
GEMMI8_API gemmi8_status gemmi8_qd8_pack_q4_alloc(size_t n, size_t k, const gemmi8_q4_weights* w,
                                                  void** packed);

/*
 * A dynamically quantized linear layer in one call: float rows X (M x K, x_stride >=
 * k elements, every value finite) quantized by gemmi8_quantize_rows_s8 (qd8) or
 * gemmi8_quantize_rows_u8 (qdu8) into the workspace, then multiplied as above; the
 * same bits as the two calls. workspace: workspace_size >=
 * gemmi8_qd8_linear_workspace_size(m, k) bytes at a 64-byte boundary, or NULL: the
 * call allocates it (and may return out_of_memory, having written nothing). A row
 * whose range max(x, 0) - min(x, 0) overflows float (its scale would be infinite) is
 * invalid_parameter, as the GEMM would refuse its scale: nothing is written.
 */
GEMMI8_API gemmi8_status gemmi8_qd8_linear_workspace_size(size_t m, size_t k, size_t* size);
GEMMI8_API gemmi8_status gemmi8_qd8_linear_f32(size_t m, size_t n, size_t k, const float* x,
                                               size_t x_stride, const void* packed_b,
                                               float out_min, float out_max, float* c,
                                               size_t c_stride, void* workspace,
                                               size_t workspace_size,
                                               const gemmi8_parallel* parallel);
GEMMI8_API gemmi8_status gemmi8_qdu8_linear_f32(size_t m, size_t n, size_t k, const float* x,
                                                size_t x_stride, const void* packed_b,
                                                float out_min, float out_max, float* c,
                                                size_t c_stride, void* workspace,
                                                size_t workspace_size,
                                                const gemmi8_parallel* parallel);

/* ------------------------------------------------------------------------------- */
/* Binary GEMM                                                                      */
/* ------------------------------------------------------------------------------- */

/*
 * Values are +1 / -1, one bit each: a set bit is -1. A row of K values is packed
 * least significant bit first into ceil(K / 64) uint64_t words; bit j of word w is
 * element 64 * w + j. Bits past K in the last word are padding: they never count,
 * whatever they hold, and the bit-packing helpers write them as 0.
 *   acc[m][n] = sum_k A[m][k] * B[n][k] = K - 2 * popcount(A[m] XOR B[n]) (real bits).
 * Strides of bit matrices are in uint64_t words.
 */

/* Largest K accepted by the binary functions. */
#define GEMMI8_BIN_MAX_K ((size_t) INT32_MAX)

/* Number of uint64_t words in a packed row of k bits: ceil(k / 64), exact for every
 * value of an unsigned k (no k + 63 that could wrap; k is evaluated twice). */
#define GEMMI8_BIN_WORDS(k) ((k) / 64 + ((k) % 64 != 0))

/*
 * Bit-packing helpers: rows x k values (row stride x_stride elements) into rows
 * of GEMMI8_BIN_WORDS(k) words (row stride out_stride >= that, in words).
 * A value becomes a set bit (-1) when:
 *   f32: x < 0.0f (so -0.0f and NaN pack as +1);
 *   s8:  x < 0;
 *   u8:  x < zero_point (x - zero_point < 0).
 * Padding bits are 0; words between out rows beyond GEMMI8_BIN_WORDS(k) are not
 * written. Returns invalid_parameter for null pointers, zero or overflowing sizes,
 * small strides.
 */
GEMMI8_API gemmi8_status gemmi8_bin_pack_rows_f32(size_t rows, size_t k, const float* x, size_t x_stride,
                                       uint64_t* out, size_t out_stride);
GEMMI8_API gemmi8_status gemmi8_bin_pack_rows_s8(size_t rows, size_t k, const int8_t* x, size_t x_stride,
                                      uint64_t* out, size_t out_stride);
GEMMI8_API gemmi8_status gemmi8_bin_pack_rows_u8(size_t rows, size_t k, const uint8_t* x, size_t x_stride,
                                      uint8_t zero_point, uint64_t* out, size_t out_stride);

/*
 * Binary weight packing.
 *   b  GEMMI8_B_NK: N rows of k bits (stride b_stride >= GEMMI8_BIN_WORDS(k) words);
 *      GEMMI8_B_KN: K rows of n bits (stride b_stride >= GEMMI8_BIN_WORDS(n) words),
 *      bit n of row k being B[n][k].
 * Size, alignment, ownership and statuses as for the qu8 functions; K above
 * GEMMI8_BIN_MAX_K is unsupported_parameter.
 */
GEMMI8_API gemmi8_status gemmi8_bin_pack_size(size_t n, size_t k, size_t* size);
GEMMI8_API gemmi8_status gemmi8_bin_pack(size_t n, size_t k, const uint64_t* b, size_t b_stride,
                              uint32_t flags, void* packed, size_t packed_size);
GEMMI8_API gemmi8_status gemmi8_bin_pack_alloc(size_t n, size_t k, const uint64_t* b, size_t b_stride,
                                    uint32_t flags, void** packed);

/* C (M x N, int32) = acc. a: M rows of k bits, a_stride >= GEMMI8_BIN_WORDS(k). */
GEMMI8_API gemmi8_status gemmi8_bin_gemm_s32(size_t m, size_t n, size_t k, const uint64_t* a,
                                  size_t a_stride, const void* packed_b, int32_t* c,
                                  size_t c_stride);

/*
 * C (M x N, float) = (float) acc * scale[n] + bias[n], computed as two float
 * operations, each rounded (no fused multiply-add), identical on every ISA (except
 * the payload bits of a NaN, which infinite or NaN scales and biases can produce).
 * scale and bias hold N values; NULL scale means 1.0f, NULL bias 0.0f.
 */
GEMMI8_API gemmi8_status gemmi8_bin_gemm_f32(size_t m, size_t n, size_t k, const uint64_t* a,
                                  size_t a_stride, const void* packed_b, const float* scale,
                                  const float* bias, float* c, size_t c_stride);

/*
 * C (M rows of n bits, stride c_stride >= GEMMI8_BIN_WORDS(n) words): bit n of row m
 * is set (-1) when (float) acc * scale[n] + bias[n] < 0, computed as in
 * gemmi8_bin_gemm_f32 (so a zero result is +1, and a negative scale flips the
 * comparison as the arithmetic says). The output rows are ready for the next binary
 * layer; padding bits are written as 0.
 */
GEMMI8_API gemmi8_status gemmi8_bin_gemm_bits(size_t m, size_t n, size_t k, const uint64_t* a,
                                   size_t a_stride, const void* packed_b, const float* scale,
                                   const float* bias, uint64_t* c, size_t c_stride);

/* The binary GEMMs on several threads (see "Threads"). */
GEMMI8_API gemmi8_status gemmi8_bin_gemm_s32_ex(size_t m, size_t n, size_t k, const uint64_t* a,
                                     size_t a_stride, const void* packed_b, int32_t* c,
                                     size_t c_stride, const gemmi8_parallel* parallel);
GEMMI8_API gemmi8_status gemmi8_bin_gemm_f32_ex(size_t m, size_t n, size_t k, const uint64_t* a,
                                     size_t a_stride, const void* packed_b,
                                     const float* scale, const float* bias, float* c,
                                     size_t c_stride, const gemmi8_parallel* parallel);
GEMMI8_API gemmi8_status gemmi8_bin_gemm_bits_ex(size_t m, size_t n, size_t k,
                                      const uint64_t* a, size_t a_stride,
                                      const void* packed_b, const float* scale,
                                      const float* bias, uint64_t* c, size_t c_stride,
                                      const gemmi8_parallel* parallel);

/* ------------------------------------------------------------------------------- */
/* Convolution (qu8, qs8, qu8s8)                                                    */
/* ------------------------------------------------------------------------------- */

/*
 * 2-D convolution of NHWC activations, computed as a GEMM whose A is read through an
 * indirection buffer (one pointer per output pixel and filter tap) instead of an
 * im2col copy. Per group g (0 <= g < groups), output pixel p and output channel o:
 *   acc = bias[g][o] + sum_{y, x, c} (in[p's tap (y, x)][g * ci + c] - a_zero_point)
 *                                    * (w[g][o][y][x][c] - b_zero_point[g * co + o])
 * where ci and co are the input and output channels of a group and a tap that falls
 * in the padding reads a_zero_point (it adds nothing). Output pixel (oy, ox), tap
 * (y, x) reads input pixel (oy * stride_height - padding_top + y * dilation_height,
 * ox * stride_width - padding_left + x * dilation_width). The output is the acc
 * requantized as by the GEMMs (gemmi8_requant; per-channel arrays hold groups * co
 * values, channel g * co + o), in output channel g * co + o of its pixel: the
 * bytes are those of gemmi8_<type>_gemm on the im2col matrix of the same layer.
 *
 * Operator use: create (weights packed once, owned by the operator), setup (the
 * batch, input size and pointers; the output size is returned and the indirection
 * buffer built), run (as often as wanted; the input may change between runs, its
 * address may not without a new setup), destroy.
 *
 * One operator: the calls on one operator (setup, run, memory, destroy) must not
 * overlap in time; make them from one thread, or hold a lock around them. A setup
 * frees and replaces what a run reads, and a run writes the operator's workspace, so
 * two runs of one operator may not overlap either (a run spreads itself over threads
 * through its parallel argument). Different operators are independent: each may be
 * used from its own thread at the same time as the others.
 *
 * Create chooses how the layer runs, once: a depthwise layer (groups > 1, one input
 * channel a group, any channel multiplier co, 1x1 too) runs on depthwise kernels; a
 * 1x1 convolution with stride 1 and no padding runs the GEMM on the input in place,
 * with no indirection buffer; any other layer the GEMM's kernels through the
 * indirection buffer.
 *
 * Depthwise: each output channel's taps are packed once as int8 (the weight zero point
 * taken off, the zero-point terms in the bias), and the kernels read every output
 * pixel's taps through an indirection buffer (a pointer per output pixel and tap, the
 * padding taps at a buffer of channels bytes of a_zero_point), 64 or 16 channels at a
 * time, with no sum across channels. A qu8 layer whose w - b_zp leaves the int8 range
 * for some weight reads each tap two or three times (its weight split in int8 parts):
 * the same bytes, at that much more work. A multiplier above 1 reads a copy of the
 * input with each channel repeated co times, made by each run (batch x input pixels x
 * channels_out bytes of workspace). Memory: at create the packed filter (about taps x
 * channels bytes, four times that on AVX-512 VNNI, plus 4 bytes a channel) and, for
 * 8-bit outputs on AVX-512 VNNI, 2.5 KB of constants per 64 channels; at setup the
 * indirection buffer (8 bytes x output pixels x taps).
 *
 * How it is computed: the filter of each group is packed as GEMM weights of
 * co x (taps x ci), each tap's channels padded to the kernels' depth group with the
 * weight zero point (so the padding adds nothing). The indirection buffer holds a
 * pointer per output pixel and tap, into the input or, for a tap in the padding, to a
 * buffer of ci bytes of a_zero_point owned by the operator, and the microkernels read
 * A through it. The zero-point terms that the GEMM folds into the packed bias stay
 * there; where a kernel set adds coef x rowsum(A) (the kernels of some levels multiply
 * raw operands), the row sums of each output pixel are summed through the same
 * pointers, padding taps included, in a pass before that pixel's tiles. With one
 * group, no horizontal dilation and fewer than 16 input channels that the kernels'
 * depth group does not divide (a first layer's 3), the taps of a kernel row are one
 * tap of kernel_width x ci bytes instead, read from a copy of the input with its
 * padding around it, which run fills first. Memory: at create the packed filter and,
 * for kernel sets that take the fixed-point constants of each block of output
 * channels ready-made (AVX-512 VNNI, fixed-point mode), 2 KB per block of a group's
 * output channels (one set for all groups when the scales are per tensor); at setup
 * the indirection buffer (8 bytes a pointer, round_up(output pixels, main tile height)
 * x taps of them), for the kernel sets that add row sums 4 bytes per output pixel and
 * group, for those that pack the input of a 1x1 layer its panels, and for merged rows
 * the padded copy. Run allocates nothing.
 */
typedef struct gemmi8_convolution gemmi8_convolution;

/* The geometry of a convolution. Every field must be nonzero except the paddings. */
typedef struct gemmi8_conv_geometry {
  size_t kernel_height, kernel_width;
  size_t stride_height, stride_width;
  size_t dilation_height, dilation_width;
  size_t padding_top, padding_left, padding_bottom, padding_right;
  size_t groups;
  size_t group_input_channels;  /* ci */
  size_t group_output_channels; /* co */
} gemmi8_conv_geometry;

/*
 * Creates a qu8 convolution: uint8 input (zero point a_zero_point) and weights, uint8
 * output.
 *   weights        groups x co x kernel_height x kernel_width x ci uint8 values (OHWI
 *                  per group, groups one after the other), read during the call only.
 *   b_zero_point   one value (b_zp_per_channel == 0) or groups * co values (== 1).
 *   bias           groups * co int32 values, or NULL. Copied.
 *   rq             requantization and clamp, as for gemmi8_qu8_gemm (per-channel
 *                  arrays of groups * co values, copied).
 * Returns invalid_parameter for null pointers, a zero size, stride or dilation, a
 * parameter out of range (as the GEMMs check them), sizes whose products overflow
 * size_t; unsupported_parameter when the layer's depth, kernel_height * kernel_width
 * * ci, exceeds GEMMI8_QU8_MAX_K (GEMMI8_QS8_MAX_K for qs8, GEMMI8_QU8S8_MAX_K for
 * qu8s8): a property of the layer, the same on every kernel set, however the kernels
 * pad each tap's channels; out_of_memory. On failure *op is left untouched.
 */
GEMMI8_API gemmi8_status gemmi8_qu8_convolution_create(
    const gemmi8_conv_geometry* geometry, const uint8_t* weights, uint8_t a_zero_point,
    const uint8_t* b_zero_point, int b_zp_per_channel, const int32_t* bias,
    const gemmi8_requant* rq, gemmi8_convolution** op);
/* qs8: int8 input (zero point -128..127), int8 symmetric weights, int8 output. */
GEMMI8_API gemmi8_status gemmi8_qs8_convolution_create(const gemmi8_conv_geometry* geometry,
                                                       const int8_t* weights,
                                                       int8_t a_zero_point,
                                                       const int32_t* bias,
                                                       const gemmi8_requant* rq,
                                                       gemmi8_convolution** op);
/* qu8s8: uint8 input (zero point 0..255), int8 symmetric weights, uint8 output. */
GEMMI8_API gemmi8_status gemmi8_qu8s8_convolution_create(const gemmi8_conv_geometry* geometry,
                                                         const int8_t* weights,
                                                         uint8_t a_zero_point,
                                                         const int32_t* bias,
                                                         const gemmi8_requant* rq,
                                                         gemmi8_convolution** op);

/*
 * The int32 counterparts (ONNX ConvInteger, a framework's own requantization): the
 * output is acc itself, before any requantization, one int32_t per output channel.
 * Parameters and statuses as the 8-bit creates, without rq (the layer's depth limit is
 * the same). Setup then takes an int32_t output at a 4-byte boundary, its
 * output_pixel_stride in int32_t elements; the bytes are those of
 * gemmi8_<type>_gemm_s32 on the im2col matrix of the same layer.
 */
GEMMI8_API gemmi8_status gemmi8_qu8_convolution_create_s32(
    const gemmi8_conv_geometry* geometry, const uint8_t* weights, uint8_t a_zero_point,
    const uint8_t* b_zero_point, int b_zp_per_channel, const int32_t* bias,
    gemmi8_convolution** op);
GEMMI8_API gemmi8_status gemmi8_qs8_convolution_create_s32(const gemmi8_conv_geometry* geometry,
                                                           const int8_t* weights,
                                                           int8_t a_zero_point,
                                                           const int32_t* bias,
                                                           gemmi8_convolution** op);
GEMMI8_API gemmi8_status gemmi8_qu8s8_convolution_create_s32(
    const gemmi8_conv_geometry* geometry, const int8_t* weights, uint8_t a_zero_point,
    const int32_t* bias, gemmi8_convolution** op);

/*
 * Sets the operator up for a batch of input_height x input_width images.
 *   input          batch x input_height x input_width pixels, NHWC; pixel (b, y, x)
 *                  starts at element ((b * input_height + y) * input_width + x) *
 *                  input_pixel_stride and holds groups * ci channels (the channels
 *                  may be a slice of a wider tensor: input_pixel_stride >= groups * ci).
 *                  Only those channels are read, never past the last pixel's.
 *   output         batch x output_height x output_width pixels, NHWC, pixel stride
 *                  output_pixel_stride >= groups * co elements (bytes for the 8-bit
 *                  outputs, int32_t for the _s32 operators, whose output must be
 *                  4-byte aligned); only the groups * co channels of each pixel are
 *                  written (by gemmi8_convolution_run). The output may not overlap
 *                  the input: no byte from the first output element to the last may
 *                  lie between the first input element and the last (an in-place
 *                  convolution is invalid_parameter).
 *   output_height, output_width   receive the output size,
 *                  (input + padding - dilation * (kernel - 1) - 1) / stride + 1 per side.
 * The indirection buffer (batch x output pixels x taps pointers) is built here, and
 * rebuilt only by a setup that changes the batch, the input size, the input pointer
 * or its pixel stride. Returns invalid_parameter for a NULL op, input, output or size
 * pointer, a zero batch, height or width, a dilated kernel larger than the padded
 * input, pixel strides smaller than the channels, an output that overlaps the input
 * or (int32) is misaligned, sizes that overflow; out_of_memory (the operator is then
 * left as it was before the call).
 */
GEMMI8_API gemmi8_status gemmi8_convolution_setup(gemmi8_convolution* op, size_t batch,
                                                  size_t input_height, size_t input_width,
                                                  const void* input, size_t input_pixel_stride,
                                                  void* output, size_t output_pixel_stride,
                                                  size_t* output_height, size_t* output_width);

/* Runs the convolution set up last, on the calling thread (parallel NULL) or on
 * several (see "Threads"); the bytes do not depend on which. It allocates nothing
 * (create and setup did). Returns invalid_parameter (nothing written) for a NULL op,
 * an operator not set up or a bad parallel. */
GEMMI8_API gemmi8_status gemmi8_convolution_run(gemmi8_convolution* op,
                                                const gemmi8_parallel* parallel);

/* Memory of the last successful setup: *indirection_bytes the indirection buffer (0
 * for a 1x1 stride-1 layer without padding, which has none), *workspace_bytes what it
 * also holds: the row sums, the packed panels of the input and the padded copy of the
 * input (merged rows), as the kernel set and the layer need them. Returns
 * invalid_parameter for a NULL pointer or an operator not set up. */
GEMMI8_API gemmi8_status gemmi8_convolution_memory(const gemmi8_convolution* op,
                                                   size_t* indirection_bytes,
                                                   size_t* workspace_bytes);

/* Frees the operator and all it owns; NULL is allowed (see "One operator" above). */
GEMMI8_API void gemmi8_convolution_destroy(gemmi8_convolution* op);

/* ------------------------------------------------------------------------------- */
/* Binary convolution                                                               */
/* ------------------------------------------------------------------------------- */

/*
 * 2-D convolution of +1/-1 values, one bit each (a set bit is -1), as binary networks
 * run it (Larq Compute Engine's semantics): NHWC, a pixel's groups * ci channels
 * bit-packed least significant bit first into GEMMI8_BIN_WORDS(groups * ci) uint64_t
 * words, channel c at bit c % 64 of word c / 64 (the rows gemmi8_bin_pack_rows_f32 /
 * _s8 / _u8 write from float, int8 or uint8 pixels, pixels as rows and channels as k).
 * Per group g, output pixel p and output channel o:
 *   acc = sum_{y, x, c} in[p's tap (y, x)][g * ci + c] * w[g][o][y][x][c]
 * over the taps as gemmi8_qu8_convolution_create's (stride, dilation, padding), a sum
 * of +1/-1 products: ks * ci - 2 * (the differing bits) for the taps inside the image.
 * Bits past the channels in a pixel's last word, and in a filter tap's, never count.
 *
 * Padding (the flags of create):
 *   GEMMI8_BIN_ONE_PADDING  (0, the default) a tap in the padding holds +1 in every
 *     channel (a zero bit): it adds sum_c w[g][o][y][x][c] (LCE's "one padding");
 *   GEMMI8_BIN_ZERO_PADDING a tap in the padding adds 0, as a real-valued network's
 *     zero padding does; +1/-1 bits cannot hold a 0, so each output pixel near the
 *     border has the padding taps' sums taken off its accumulator (a correction per
 *     pattern of padding taps and output channel, made at setup; exact).
 *
 * Outputs (gemmi8_bin_conv_output.kind), channel g * co + o of each output pixel:
 *   s32        int32_t acc;
 *   f32        float min(max((float) acc * multiplier[c] + bias[c], output_min),
 *              output_max): the product and the sum each rounded (no fused
 *              multiply-add), then the clamp (NaN stays NaN); a folded batch norm and a
 *              fused ReLU. NULL multiplier is 1.0f, NULL bias 0.0f; output_min <=
 *              output_max, neither NaN (-INFINITY and INFINITY: no clamp);
 *   f32_add    float min(max(y + ((float) acc * multiplier[c] + bias[c]), output_min),
 *              output_max), where y is the value the output holds when the run starts:
 *              a residual connection added in the convolution's output stage (the
 *              output set up over the shortcut, which the run overwrites with the
 *              sum). Three roundings (product, + bias, + y), then the clamp, as f32;
 *   bits       packed bits for the next binary layer, GEMMI8_BIN_WORDS(groups * co)
 *              words a pixel (the padding bits past the channels written 0): bit c is
 *              set (-1) when (float) acc * multiplier[c] + bias[c] < 0, computed as
 *              for f32 before the clamp (so a zero result is +1), exactly as
 *              gemmi8_bin_gemm_bits would on the same acc; create turns each
 *              channel's test into an integer threshold on acc, exact for every acc
 *              the layer can produce;
 *   threshold  packed bits as for bits: bit c set when acc < threshold[c], or, for the
 *              channels whose greater[c] is nonzero (greater may be NULL), when
 *              acc > threshold[c];
 *   qs8        int8_t: bias[c] (int32, NULL: 0) + acc requantized by rq as the qs8
 *              GEMMs do (fixed-point or fp32 rounding, per tensor or per channel, zero
 *              point and clamp within -128..127).
 * The per-channel arrays hold groups * co values and are copied at create.
 */
#define GEMMI8_BIN_ONE_PADDING 0u
#define GEMMI8_BIN_ZERO_PADDING 1u

typedef enum gemmi8_bin_output_kind {
  gemmi8_bin_output_s32 = 0,
  gemmi8_bin_output_f32 = 1,
  gemmi8_bin_output_bits = 2,
  gemmi8_bin_output_threshold = 3,
  gemmi8_bin_output_qs8 = 4,
  gemmi8_bin_output_f32_add = 5,
} gemmi8_bin_output_kind;

typedef struct gemmi8_bin_conv_output {
  gemmi8_bin_output_kind kind;
  const float* multiplier;   /* f32, f32_add, bits */
  const float* bias;         /* f32, f32_add, bits */
  float output_min, output_max; /* f32, f32_add */
  const int32_t* threshold;  /* threshold */
  const uint8_t* greater;    /* threshold, or NULL */
  const int32_t* bias_s32;   /* qs8, or NULL */
  const gemmi8_requant* rq;  /* qs8 */
} gemmi8_bin_conv_output;

/*
 * Creates a binary convolution on the convolution operator (setup, run, memory and
 * destroy are gemmi8_convolution_*).
 *   weights  groups x co x kernel_height x kernel_width taps (OHWI per group), each tap
 *            GEMMI8_BIN_WORDS(ci) words of ci bits (the bits past ci ignored); read
 *            during the call only.
 *   flags    GEMMI8_BIN_ONE_PADDING or GEMMI8_BIN_ZERO_PADDING.
 * Setup then takes the input as uint64_t words, input_pixel_stride in words (at least
 * GEMMI8_BIN_WORDS(groups * ci)), at an 8-byte boundary; the output's
 * output_pixel_stride is in its elements (int32_t, float, int8_t, or uint64_t words
 * for the bit outputs, at least GEMMI8_BIN_WORDS(groups * co) of them) and the output
 * aligned to its element. When ci is not a multiple of 64, each run first copies the
 * input with every group's channels starting a word and the bits past them 0
 * (workspace: input pixels x groups x GEMMI8_BIN_WORDS(ci) words). With zero padding,
 * setup also makes the corrections: a vector of groups * co int32 per pattern of
 * padding taps, a pointer per output pixel of an image (workspace too).
 * Returns invalid_parameter for null pointers, a bad geometry (as the 8-bit creates),
 * an unknown kind or flag, a NULL threshold or rq for those kinds, a NaN or inverted
 * clamp, an rq out of range; unsupported_parameter when the layer's depth,
 * kernel_height * kernel_width * ci, exceeds GEMMI8_BIN_MAX_K or the build holds no
 * binary kernels; out_of_memory. On failure *op is left untouched.
 */
GEMMI8_API gemmi8_status gemmi8_bin_convolution_create(const gemmi8_conv_geometry* geometry,
                                                       const uint64_t* weights, uint32_t flags,
                                                       const gemmi8_bin_conv_output* output,
                                                       gemmi8_convolution** op);

/*
 * Max pooling of binary pixels (batch x input_height x input_width, NHWC, channels bits
 * in GEMMI8_BIN_WORDS(channels) words a pixel, strides in words): the maximum of +1/-1
 * values is -1 only where every tap is -1, so an output bit is the AND of the taps'
 * bits (the OR of their +1 indicators). Taps in the padding are skipped; each padding
 * must be smaller than the pool's side. Output size as for the convolution; the padding
 * bits past the channels are written 0. Returns invalid_parameter for null pointers,
 * zero sizes, a padding not below the pool's side, small strides, a window larger than
 * the padded input, overlapping
 * input and output, sizes that overflow.
 */
GEMMI8_API gemmi8_status gemmi8_bin_max_pool(size_t batch, size_t input_height,
                                             size_t input_width, size_t channels,
                                             const uint64_t* input, size_t input_pixel_stride,
                                             size_t pool_height, size_t pool_width,
                                             size_t stride_height, size_t stride_width,
                                             size_t padding_top, size_t padding_left,
                                             size_t padding_bottom, size_t padding_right,
                                             uint64_t* output, size_t output_pixel_stride,
                                             size_t* output_height, size_t* output_width);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GEMMI8_H */
