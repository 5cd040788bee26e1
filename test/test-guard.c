/*
 * Guard pages around every buffer the public API reads or writes.
 *
 * Every case runs twice: once with each buffer flush against an inaccessible page at
 * its end (the last byte, or the last byte of each row, is followed by the page) and
 * once at its start (the first byte, or the first byte of each row, follows the
 * page). A read or write one byte out faults at once, natively; the fault is caught
 * and reported with the entry point, the shape and the buffer it hit. Every other
 * accessible byte around each buffer is random and compared after every call (inputs
 * must not change, outputs must change only in their elements), and every output
 * element is compared with the reference (ref.c).
 *
 * Buffers, for the kernel set under test:
 *   qu8 / qs8 / qu8s8: B for packing (N x K and K x N: stride equal to the row,
 *     padded, or a page per row), b_zero_point (qu8: 1 or N bytes), bias (N int32),
 *     the packed output of exactly gemmi8_*_pack_size() bytes, the same sources for
 *     *_pack_alloc; A (a_stride == k, padded, or a page per row); the packed weights
 *     where they were packed and after a memcpy into another exactly-sized buffer;
 *     multiplier and shift (fixed point) or scale (fp32), 1 or N values; C (int32 or
 *     8-bit, stride equal to the row, padded, or a page per row).
 *   bin: B (words, both layouts) and the packed weights as above, A rows of words
 *     (a_stride == words, padded, a page per row), scale and bias of N floats, C
 *     (int32, float, bit rows).
 *   bit packing: the float, int8 and uint8 rows and the bit rows they become.
 *   quantization helpers: the floats and bytes of gemmi8_quantize_f32 and
 *     gemmi8_dequantize_f32 (rows x cols, contiguous) with exactly as many scales and
 *     zero points as the axis has (1, rows, cols), both schemes and every range; the
 *     count-long arrays of gemmi8_choose_qparams, gemmi8_quantize_bias (w_scale 1 or
 *     count values) and gemmi8_requant_scales (scale, multiplier, shift); the values of
 *     gemmi8_calibration_update and the per-channel min and max of
 *     gemmi8_calibration_range. Their expected elements are those of the same call on
 *     plain heap copies (test-qhelp.c checks the values against the references).
 *   qd8 / qdu8 (rows quantized at run time): B (both layouts), scale and bias (N
 *     floats), the packed output of exactly gemmi8_qd*_pack_size() bytes, the same
 *     sources for *_pack_alloc; A (int8 / uint8 rows of k bytes), a_scale and
 *     a_zero_point (exactly M values), C (rows of n floats) for the GEMM (plain and
 *     _ex) from the allocated buffer, the packed buffer and its copy; the linear layer's
 *     rows x (k floats each, layouts as A) and C, with a workspace of exactly
 *     gemmi8_qd8_linear_workspace_size() bytes (rounded up to 64 when it ends at the
 *     page) or none.
 *   4-bit weights (qd8 rows): the nibble rows (n rows of exactly ceil(k / 2) bytes,
 *     layouts as B: a row that ends at the page is read to its last byte and no
 *     further, an odd K's pad nibble random), the scales and the zero points (exactly
 *     n * blocks values, blocks = ceil(k / block), 1 for qc4w; every block size, signed
 *     nibbles or zero points in turn), the bias (n floats), the packed output of exactly
 *     gemmi8_qd8_pack_q4_size() bytes, the same sources for _pack_q4_alloc; then the
 *     GEMM (plain and _ex: A rows of k bytes, m row scales and zero points, C rows of
 *     n floats) and the linear layer over them, as for qd8.
 * The layouts of A, B and C and the B orientation come round with the case number,
 * so every combination occurs in every sweep.
 * Shapes: M across the tile heights of every kernel set (1, 2, 4, 6, 7 rows and one
 * main tile plus each remainder), N across the block widths (4, 8, 16, 32, 48, the
 * merged last blocks of 48-column tables) and K across the depth groups (1, 2, 4, 8,
 * 16), binary K and N across 64-bit words. Sweeps pair every M with every K and every
 * M with every N (GEMMI8_TEST_QUICK=1: shorter lists, and every other N for each M),
 * the third dimension drawn from its list.
 */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"
#include "test.h"

#define WORDS(k) GEMMI8_BIN_WORDS(k)

/* ---- faults ----------------------------------------------------------------------
 * A call runs with SIGSEGV and SIGBUS caught: a fault jumps back out of the library
 * and is reported as a failure of the call, with the address it hit. */

static sigjmp_buf fault_env;
static volatile sig_atomic_t fault_armed;
static volatile sig_atomic_t fault_signal;
static void* volatile fault_address;
static struct sigaction saved_segv, saved_bus;

static void on_fault(int sig, siginfo_t* info, void* context)
{
  (void) context;
  if (fault_armed) {
    fault_armed = 0;
    fault_signal = sig;
    fault_address = info->si_addr;
    siglongjmp(fault_env, 1);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

static void faults_catch(void)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &saved_segv);
  sigaction(SIGBUS, &sa, &saved_bus);
}

static void faults_release(void)
{
  sigaction(SIGSEGV, &saved_segv, NULL);
  sigaction(SIGBUS, &saved_bus, NULL);
}

/* ---- calls ---------------------------------------------------------------------------
 * Every entry point under test, described by one struct so that a single function
 * runs any of them with faults caught. */

enum entry {
  /* three of each quantized entry point, in the order of enum qtype (below) */
  E_QU8_PACK,
  E_QS8_PACK,
  E_QU8S8_PACK,
  E_QU8_PACK_ALLOC,
  E_QS8_PACK_ALLOC,
  E_QU8S8_PACK_ALLOC,
  E_QU8_GEMM,
  E_QS8_GEMM,
  E_QU8S8_GEMM,
  E_QU8_GEMM_S32,
  E_QS8_GEMM_S32,
  E_QU8S8_GEMM_S32,
  E_BIN_PACK,
  E_BIN_PACK_ALLOC,
  E_BIN_GEMM_S32,
  E_BIN_GEMM_F32,
  E_BIN_GEMM_BITS,
  E_ROWS_F32,
  E_ROWS_S8,
  E_ROWS_U8,
  /* two of each entry point of rows quantized at run time: qd8, qdu8 */
  E_QD8_PACK,
  E_QDU8_PACK,
  E_QD8_PACK_ALLOC,
  E_QDU8_PACK_ALLOC,
  E_QD8_GEMM_F32,
  E_QDU8_GEMM_F32,
  E_QD8_GEMM_F32_EX,
  E_QDU8_GEMM_F32_EX,
  E_QD8_LINEAR,
  E_QDU8_LINEAR,
  /* 4-bit weights for int8 rows (their GEMMs and linear layer are the qd8 ones) */
  E_QD8_PACK_Q4,
  E_QD8_PACK_Q4_ALLOC,
  /* the quantization helpers */
  E_CHOOSE_QPARAMS,
  E_QUANTIZE_F32,
  E_DEQUANTIZE_F32,
  E_QUANTIZE_BIAS,
  E_REQUANT_SCALES,
  E_CALIBRATION_UPDATE,
  E_CALIBRATION_RANGE,
  E_COUNT
};

static const char* const entry_names[E_COUNT] = {
  "gemmi8_qu8_pack",         "gemmi8_qs8_pack",         "gemmi8_qu8s8_pack",
  "gemmi8_qu8_pack_alloc",   "gemmi8_qs8_pack_alloc",   "gemmi8_qu8s8_pack_alloc",
  "gemmi8_qu8_gemm",         "gemmi8_qs8_gemm",         "gemmi8_qu8s8_gemm",
  "gemmi8_qu8_gemm_s32",     "gemmi8_qs8_gemm_s32",     "gemmi8_qu8s8_gemm_s32",
  "gemmi8_bin_pack",         "gemmi8_bin_pack_alloc",   "gemmi8_bin_gemm_s32",
  "gemmi8_bin_gemm_f32",     "gemmi8_bin_gemm_bits",    "gemmi8_bin_pack_rows_f32",
  "gemmi8_bin_pack_rows_s8", "gemmi8_bin_pack_rows_u8", "gemmi8_qd8_pack",
  "gemmi8_qdu8_pack",        "gemmi8_qd8_pack_alloc",   "gemmi8_qdu8_pack_alloc",
  "gemmi8_qd8_gemm_f32",     "gemmi8_qdu8_gemm_f32",    "gemmi8_qd8_gemm_f32_ex",
  "gemmi8_qdu8_gemm_f32_ex", "gemmi8_qd8_linear_f32",   "gemmi8_qdu8_linear_f32",
  "gemmi8_qd8_pack_q4",      "gemmi8_qd8_pack_q4_alloc",
  "gemmi8_choose_qparams",   "gemmi8_quantize_f32",     "gemmi8_dequantize_f32",
  "gemmi8_quantize_bias",    "gemmi8_requant_scales",   "gemmi8_calibration_update",
  "gemmi8_calibration_range",
};

typedef struct api {
  enum entry entry;
  size_t m, n, k;
  const void* in; /* A (GEMMs), B (packing), the rows to binarize */
  size_t in_stride;
  uint32_t flags;      /* packing: GEMMI8_B_NK or GEMMI8_B_KN */
  int32_t a_zp;        /* quantized packing */
  const uint8_t* b_zp; /* qu8 packing */
  int zp_per_channel;
  const int32_t* bias; /* quantized packing */
  const void* packed;  /* GEMMs */
  const gemmi8_requant* rq;
  const float* scale; /* binary float and bit outputs; qd8 packing */
  const float* fbias;
  const float* a_scale; /* qd8 GEMMs: per row */
  const int32_t* a_zero_point;
  float out_min, out_max; /* qd8 GEMMs and linear layers */
  void* workspace;        /* qd8 linear layers */
  size_t workspace_size;
  const gemmi8_q4_weights* q4; /* 4-bit packing */
  uint8_t zero_point; /* uint8 rows to binarize */
  void* out;          /* C, the packed buffer, the bit rows */
  size_t out_stride;  /* elements or words; packing: the packed size in bytes */
  void** allocated;   /* *_pack_alloc */
  /* quantization helpers: m rows, n columns or count, k channels (calibration) */
  gemmi8_qscheme qscheme;
  gemmi8_qrange qrange;
  gemmi8_qaxis qaxis;
  const float* qscale; /* also w_scale */
  const int32_t* qzp;
  const float* qmax_in; /* choose_qparams: max */
  float a_scale_f, c_scale_f;
  int w_per_channel;
  void* out2; /* a second output: zero points, multiplier, max */
  void* out3; /* shift */
  gemmi8_calibration* cal;
  double percentile;
} api;

static gemmi8_status api_run(const api* x)
{
  const size_t m = x->m, n = x->n, k = x->k;
  switch (x->entry) {
    case E_QU8_PACK:
      return gemmi8_qu8_pack(n, k, x->in, x->in_stride, x->flags, (uint8_t) x->a_zp, x->b_zp,
                             x->zp_per_channel, x->bias, x->out, x->out_stride);
    case E_QS8_PACK:
      return gemmi8_qs8_pack(n, k, x->in, x->in_stride, x->flags, (int8_t) x->a_zp, x->bias,
                             x->out, x->out_stride);
    case E_QU8S8_PACK:
      return gemmi8_qu8s8_pack(n, k, x->in, x->in_stride, x->flags, (uint8_t) x->a_zp, x->bias,
                               x->out, x->out_stride);
    case E_QU8_PACK_ALLOC:
      return gemmi8_qu8_pack_alloc(n, k, x->in, x->in_stride, x->flags, (uint8_t) x->a_zp,
                                   x->b_zp, x->zp_per_channel, x->bias, x->allocated);
    case E_QS8_PACK_ALLOC:
      return gemmi8_qs8_pack_alloc(n, k, x->in, x->in_stride, x->flags, (int8_t) x->a_zp,
                                   x->bias, x->allocated);
    case E_QU8S8_PACK_ALLOC:
      return gemmi8_qu8s8_pack_alloc(n, k, x->in, x->in_stride, x->flags, (uint8_t) x->a_zp,
                                     x->bias, x->allocated);
    case E_QU8_GEMM:
      return gemmi8_qu8_gemm(m, n, k, x->in, x->in_stride, x->packed, x->rq, x->out,
                             x->out_stride);
    case E_QS8_GEMM:
      return gemmi8_qs8_gemm(m, n, k, x->in, x->in_stride, x->packed, x->rq, x->out,
                             x->out_stride);
    case E_QU8S8_GEMM:
      return gemmi8_qu8s8_gemm(m, n, k, x->in, x->in_stride, x->packed, x->rq, x->out,
                               x->out_stride);
    case E_QU8_GEMM_S32:
      return gemmi8_qu8_gemm_s32(m, n, k, x->in, x->in_stride, x->packed, x->out, x->out_stride);
    case E_QS8_GEMM_S32:
      return gemmi8_qs8_gemm_s32(m, n, k, x->in, x->in_stride, x->packed, x->out, x->out_stride);
    case E_QU8S8_GEMM_S32:
      return gemmi8_qu8s8_gemm_s32(m, n, k, x->in, x->in_stride, x->packed, x->out,
                                   x->out_stride);
    case E_BIN_PACK:
      return gemmi8_bin_pack(n, k, x->in, x->in_stride, x->flags, x->out, x->out_stride);
    case E_BIN_PACK_ALLOC:
      return gemmi8_bin_pack_alloc(n, k, x->in, x->in_stride, x->flags, x->allocated);
    case E_BIN_GEMM_S32:
      return gemmi8_bin_gemm_s32(m, n, k, x->in, x->in_stride, x->packed, x->out, x->out_stride);
    case E_BIN_GEMM_F32:
      return gemmi8_bin_gemm_f32(m, n, k, x->in, x->in_stride, x->packed, x->scale, x->fbias,
                                 x->out, x->out_stride);
    case E_BIN_GEMM_BITS:
      return gemmi8_bin_gemm_bits(m, n, k, x->in, x->in_stride, x->packed, x->scale, x->fbias,
                                  x->out, x->out_stride);
    case E_ROWS_F32:
      return gemmi8_bin_pack_rows_f32(m, k, x->in, x->in_stride, x->out, x->out_stride);
    case E_ROWS_S8:
      return gemmi8_bin_pack_rows_s8(m, k, x->in, x->in_stride, x->out, x->out_stride);
    case E_ROWS_U8:
      return gemmi8_bin_pack_rows_u8(m, k, x->in, x->in_stride, x->zero_point, x->out,
                                     x->out_stride);
    case E_QD8_PACK:
    case E_QDU8_PACK:
      return (x->entry == E_QDU8_PACK ? gemmi8_qdu8_pack : gemmi8_qd8_pack)(
          n, k, x->in, x->in_stride, x->flags, x->scale, x->fbias, x->out, x->out_stride);
    case E_QD8_PACK_ALLOC:
    case E_QDU8_PACK_ALLOC:
      return (x->entry == E_QDU8_PACK_ALLOC ? gemmi8_qdu8_pack_alloc : gemmi8_qd8_pack_alloc)(
          n, k, x->in, x->in_stride, x->flags, x->scale, x->fbias, x->allocated);
    case E_QD8_GEMM_F32:
      return gemmi8_qd8_gemm_f32(m, n, k, x->in, x->in_stride, x->a_scale, x->a_zero_point,
                                 x->packed, x->out_min, x->out_max, x->out, x->out_stride);
    case E_QDU8_GEMM_F32:
      return gemmi8_qdu8_gemm_f32(m, n, k, x->in, x->in_stride, x->a_scale, x->a_zero_point,
                                  x->packed, x->out_min, x->out_max, x->out, x->out_stride);
    case E_QD8_GEMM_F32_EX:
      return gemmi8_qd8_gemm_f32_ex(m, n, k, x->in, x->in_stride, x->a_scale, x->a_zero_point,
                                    x->packed, x->out_min, x->out_max, x->out, x->out_stride, NULL);
    case E_QDU8_GEMM_F32_EX:
      return gemmi8_qdu8_gemm_f32_ex(m, n, k, x->in, x->in_stride, x->a_scale, x->a_zero_point,
                                     x->packed, x->out_min, x->out_max, x->out, x->out_stride,
                                     NULL);
    case E_QD8_LINEAR:
    case E_QDU8_LINEAR:
      return (x->entry == E_QDU8_LINEAR ? gemmi8_qdu8_linear_f32 : gemmi8_qd8_linear_f32)(
          m, n, k, x->in, x->in_stride, x->packed, x->out_min, x->out_max, x->out, x->out_stride,
          x->workspace, x->workspace_size, NULL);
    case E_QD8_PACK_Q4:
      return gemmi8_qd8_pack_q4(n, k, x->q4, x->out, x->out_stride);
    case E_QD8_PACK_Q4_ALLOC:
      return gemmi8_qd8_pack_q4_alloc(n, k, x->q4, x->allocated);
    case E_CHOOSE_QPARAMS:
      return gemmi8_choose_qparams(x->qscheme, x->qrange, n, x->in, x->qmax_in, x->out, x->out2);
    case E_QUANTIZE_F32:
      return gemmi8_quantize_f32(x->qscheme, x->qrange, x->qaxis, m, n, x->in, x->qscale, x->qzp,
                                 x->out);
    case E_DEQUANTIZE_F32:
      return gemmi8_dequantize_f32(x->qrange, x->qaxis, m, n, x->in, x->qscale, x->qzp, x->out);
    case E_QUANTIZE_BIAS:
      return gemmi8_quantize_bias(x->qscheme, n, x->in, x->a_scale_f, x->qscale, x->w_per_channel,
                                  x->out);
    case E_REQUANT_SCALES:
      return gemmi8_requant_scales(x->qscheme, n, x->a_scale_f, x->qscale, x->c_scale_f, x->out,
                                   x->out2, x->out3);
    case E_CALIBRATION_UPDATE:
      return gemmi8_calibration_update(x->cal, n, x->in);
    case E_CALIBRATION_RANGE:
      return gemmi8_calibration_range(x->cal, x->percentile, x->out, x->out2);
    case E_COUNT:
      break;
  }
  return gemmi8_status_invalid_parameter;
}

/* Runs the call with faults caught: 0 and its status in *st, or 1 if it faulted. */
static int api_guarded(const api* x, gemmi8_status* st)
{
  if (sigsetjmp(fault_env, 1) != 0) return 1;
  fault_armed = 1;
  const gemmi8_status status = api_run(x);
  fault_armed = 0;
  *st = status;
  return 0;
}

/* ---- fenced buffers of a case ----------------------------------------------------- */

/* How a matrix lies against its page: stride equal to the row, a padded stride (only
 * the last row touches the page), or each row against a page of its own. */
enum layout { L_TIGHT, L_PADDED, L_ROWS, L_COUNT };
static const char* const layout_names[] = {"stride = row", "padded", "a page per row"};

static const char* side_name(t_fence_side side)
{
  return side == T_FENCE_START ? "start" : "end";
}

typedef struct fenced {
  t_fence f;
  const char* name;
  t_elem elem;
  enum layout layout;
  int input; /* read by the library, never written */
  size_t rows, cols, stride; /* elements */
} fenced;

enum { max_fenced = 16 };

/* The buffers of a case, at one side. The mappings are kept from case to case (one
 * set per side) and reused where the geometry matches: most buffers are one page
 * and a guard page, and a case maps a dozen of them per call. */
typedef struct gcase {
  t_fence_side side;
  fenced buf[max_fenced];
  size_t count; /* in use */
  char desc[320];
} gcase;

static gcase cases[2];

static gcase* g_begin(t_fence_side side)
{
  gcase* g = &cases[side == T_FENCE_START];
  g->side = side;
  g->count = 0;
  g->desc[0] = '\0';
  return g;
}

/* Ends the use of the buffers from index `mark` on (their pages stay mapped). */
static void g_release(gcase* g, size_t mark)
{
  if (g->count > mark) g->count = mark;
}

static void g_unmap_all(void)
{
  for (size_t c = 0; c < T_COUNT(cases); c++) {
    for (size_t i = 0; i < max_fenced; i++) t_fence_free(&cases[c].buf[i].f);
    cases[c].count = 0;
  }
}

/* Rows beyond this many take the padded layout instead of a page each: the page per
 * row costs a system call a row, and only the first and last rows are special. */
enum { max_row_pages = 24 };

/* A fenced matrix of rows x cols elements (contents random, not sealed). */
static fenced* g_matrix(gcase* g, const char* name, t_elem elem, size_t rows, size_t cols,
                        enum layout layout)
{
  if (g->count == max_fenced) {
    fprintf(stderr, "test-guard: too many buffers in one case\n");
    exit(2);
  }
  fenced* b = &g->buf[g->count++];
  const size_t es = t_elem_size(elem);
  if (layout == L_ROWS && rows > max_row_pages) layout = L_PADDED;
  b->name = name;
  b->elem = elem;
  b->input = 0;
  b->layout = layout;
  b->rows = rows;
  b->cols = cols;
  if (layout == L_ROWS) {
    t_fence_reinit(&b->f, g->side, rows, cols * es, 0);
    b->stride = b->f.stride / es;
  } else {
    /* padding of 1 to 9 elements: odd and even, not a multiple of the vectors */
    b->stride = cols + (layout == L_PADDED ? 1 + t_below(9) : 0);
    t_fence_reinit(&b->f, g->side, rows, cols * es, b->stride * es);
  }
  return b;
}

static void* body(const fenced* b)
{
  return b->f.body;
}

/* A fenced, sealed copy of rows x cols elements given at src (stride src_stride). */
static fenced* g_input(gcase* g, const char* name, t_elem elem, size_t rows, size_t cols,
                       enum layout layout, const void* src, size_t src_stride)
{
  fenced* b = g_matrix(g, name, elem, rows, cols, layout);
  const size_t es = t_elem_size(elem);
  for (size_t r = 0; r < rows; r++) {
    memcpy(b->f.body + r * b->stride * es, (const unsigned char*) src + r * src_stride * es,
           cols * es);
  }
  t_fence_seal(&b->f);
  b->input = 1;
  return b;
}

/* A fenced, sealed array of exactly count elements. */
static void* g_array(gcase* g, const char* name, t_elem elem, const void* src, size_t count)
{
  return body(g_input(g, name, elem, 1, count, L_TIGHT, src, count));
}

/* Where the expected value of element (r, c) of an output goes. */
static void* g_want(const fenced* b, size_t r, size_t c)
{
  return t_fence_image(&b->f, b->f.body + (r * b->stride + c) * t_elem_size(b->elem));
}

/* Where byte `offset` (counted from the first element) of buffer b lies, as text. */
static void describe_offset(const fenced* b, long offset, char* s, size_t size)
{
  const size_t es = t_elem_size(b->elem), stride = b->stride * es;
  if (offset < 0) {
    snprintf(s, size, "%ld byte%s before its first element", -offset, offset == -1 ? "" : "s");
    return;
  }
  const size_t r = (size_t) offset / stride, in_row = (size_t) offset % stride;
  if (r >= b->rows || (r == b->rows - 1 && in_row >= b->cols * es)) {
    const size_t end = ((b->rows - 1) * b->stride + b->cols) * es;
    const size_t past = (size_t) offset - end + 1;
    snprintf(s, size, "%zu byte%s past its last element", past, past == 1 ? "" : "s");
  } else if (in_row >= b->cols * es) {
    snprintf(s, size, "the gap after row %zu: %zu bytes past its end, %zu before row %zu", r,
             in_row - b->cols * es + 1, stride - in_row, r + 1);
  } else {
    snprintf(s, size, "element [%zu][%zu]", r, in_row / es);
  }
}

/* Names the buffer a fault address belongs to (its map, guard pages included). */
static void describe_fault(const gcase* g, char* s, size_t size)
{
  const unsigned char* p = fault_address;
  const char* sig = fault_signal == SIGBUS ? "SIGBUS" : "SIGSEGV";
  for (size_t i = 0; i < g->count; i++) {
    const fenced* b = &g->buf[i];
    if (p >= b->f.map && p < b->f.map + b->f.map_size) {
      char where[96];
      describe_offset(b, (long) (p - b->f.body), where, sizeof(where));
      snprintf(s, size, "%s at %p: %s of %s", sig, (void*) p, where, b->name);
      return;
    }
  }
  snprintf(s, size, "%s at %p (in none of the fenced buffers)", sig, (void*) p);
}

/* 1 if every buffer of the case equals its sealed image (outputs: with the expected
 * elements written in); else describes the first difference in s. */
static int g_intact(const gcase* g, char* s, size_t size)
{
  for (size_t i = 0; i < g->count; i++) {
    const fenced* b = &g->buf[i];
    long offset;
    if (t_fence_intact(&b->f, &offset)) continue;
    char where[96];
    describe_offset(b, offset, where, sizeof(where));
    const size_t es = t_elem_size(b->elem);
    const size_t stride = b->stride * es;
    if (offset >= 0 && (size_t) offset / stride < b->rows &&
        (size_t) offset % stride < b->cols * es) {
      const unsigned char* elem = b->f.body + (size_t) offset / es * es;
      char got[64], want[64];
      t_format_elem(b->elem, elem, got, sizeof(got));
      t_format_elem(b->elem, t_fence_image(&b->f, elem), want, sizeof(want));
      if (b->input) {
        snprintf(s, size, "the library wrote into its input %s, %s: was %s, now %s", b->name,
                 where, want, got);
      } else {
        snprintf(s, size, "%s, %s: got %s, expected %s", b->name, where, got, want);
      }
    } else {
      snprintf(s, size, "%s written outside its elements: %s", b->name, where);
    }
    return 0;
  }
  return 1;
}

/* Runs the call, then checks the fault, the status and every byte of every buffer
 * of the case: one check. `written`, when not NULL, is an output whose new contents
 * are taken as they are (packed weights) once the call has succeeded. Returns 1 if
 * all is well. */
static int g_call(gcase* g, const api* x, const char* what, fenced* written)
{
  gemmi8_status st = gemmi8_status_invalid_parameter;
  const int faulted = api_guarded(x, &st);
  const char* func = entry_names[x->entry];
  char msg[512];
  if (faulted) {
    describe_fault(g, msg, sizeof(msg));
    t_fail(func, "%s, %s, guard at the %s: %s", g->desc, what, side_name(g->side), msg);
    return 0;
  }
  if (st != gemmi8_status_success) {
    t_fail(func, "%s, %s, guard at the %s: status \"%s\"", g->desc, what, side_name(g->side),
           gemmi8_status_string(st));
    return 0;
  }
  if (written != NULL) {
    memcpy(t_fence_image(&written->f, body(written)), body(written), written->cols);
  }
  if (!g_intact(g, msg, sizeof(msg))) {
    t_fail(func, "%s, %s, guard at the %s: %s", g->desc, what, side_name(g->side), msg);
    return 0;
  }
  t_pass();
  return 1;
}

/* ---- shapes ------------------------------------------------------------------------ */

static const size_t m_full[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
static const size_t m_quick[] = {1, 2, 3, 4, 5, 6, 7, 8, 13};
/* NR 4, 8, 16, 32, 48; 49..64 and 97..112 merge the last two 48-column blocks */
static const size_t q_n_full[] = {1,  2,  3,  4,  5,  7,  8,  9,  12, 15, 16, 17, 24,  31, 32,
                                  33, 40, 47, 48, 49, 56, 63, 64, 65, 80, 95, 96, 97, 112, 113};
static const size_t q_n_quick[] = {1, 4, 5, 8, 9, 16, 17, 32, 33, 48, 49, 65, 97};
/* KR 1, 2, 4, 8, 16 and their remainders */
static const size_t q_k_full[] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  12, 15,
                                  16, 17, 23, 24, 31, 32, 33, 48, 63, 64, 65};
static const size_t q_k_quick[] = {1, 3, 4, 5, 8, 9, 16, 17};
/* NR 4, 8, 32; bit rows of 1, 2 and 3 words */
static const size_t b_n_full[] = {1,  2,  3,  4,  5,  7,  8,  9,  12, 15,  16,  17,
                                  31, 32, 33, 47, 63, 64, 65, 96, 127, 128, 129};
static const size_t b_n_quick[] = {1, 3, 4, 5, 8, 9, 17, 32, 33, 64, 65, 129};
/* 1 to 6 words, full and partial */
static const size_t b_k_full[] = {1,   2,   31,  63,  64,  65,  127, 128,
                                  129, 191, 192, 193, 256, 257, 320, 383};
static const size_t b_k_quick[] = {1, 63, 64, 65, 127, 129, 192};

typedef struct list {
  const size_t* v;
  size_t count;
} list;

#define LIST(full, quick) \
  (t_quick ? (list){quick, T_COUNT(quick)} : (list){full, T_COUNT(full)})

static size_t pick(list l)
{
  return l.v[t_below((uint32_t) l.count)];
}

/* Layouts of a case, from its serial number: every combination comes round. */
typedef struct layouts {
  enum layout a, b, c;
  int b_kn;
} layouts;

static layouts layouts_of(unsigned serial)
{
  layouts l;
  l.a = (enum layout) (serial % L_COUNT);
  l.b = (enum layout) (serial / L_COUNT % L_COUNT);
  l.c = (enum layout) (serial / (L_COUNT * L_COUNT) % L_COUNT);
  l.b_kn = (int) (serial / (L_COUNT * L_COUNT * L_COUNT) % 2);
  return l;
}

/* ---- quantized ------------------------------------------------------------------------ */

enum qtype { QU8, QS8, QU8S8 };
static const char* const qtype_names[] = {"qu8", "qs8", "qu8s8"};

/* The entry point of the type: first is the qu8 one (E_QU8_PACK, ...). */
static enum entry q_entry(enum entry first, enum qtype type)
{
  return (enum entry) ((int) first + (int) type);
}

typedef struct qdata {
  enum qtype type;
  size_t m, n, k;
  layouts lay;
  int32_t a_zp;
  int zp_per_channel; /* qu8 */
  uint8_t* a;         /* m x k */
  uint8_t* b;         /* n x k, or k x n */
  uint8_t* b_zp;      /* n bytes, all equal per tensor (qu8) */
  int32_t* b_zp32;    /* the same as int32, 0 for the symmetric types */
  int32_t* bias;      /* n values or NULL */
  int32_t* acc;       /* m x n */
} qdata;

/* Range of A and C: int8 for qs8, uint8 otherwise. */
static int32_t q_lo(const qdata* d)
{
  return d->type == QS8 ? -128 : 0;
}
static int32_t q_hi(const qdata* d)
{
  return d->type == QS8 ? 127 : 255;
}

static void q_make(qdata* d, enum qtype type, size_t m, size_t n, size_t k,
                   unsigned serial_number)
{
  memset(d, 0, sizeof(*d));
  d->type = type;
  d->m = m;
  d->n = n;
  d->k = k;
  d->lay = layouts_of(serial_number);
  const int32_t lo = q_lo(d), hi = q_hi(d);
  const int32_t zps[] = {lo, hi, type == QS8 ? 0 : 128, (int32_t) t_range(lo, hi)};
  d->a_zp = T_PICK(zps);
  d->a = t_alloc(m * k);
  d->b = t_alloc(n * k);
  t_fill_random(d->a, m * k);
  t_fill_random(d->b, n * k);
  d->b_zp = t_alloc(n);
  d->b_zp32 = t_alloc(n * sizeof(int32_t));
  d->zp_per_channel = type == QU8 && t_below(2);
  const uint8_t zp0 = (uint8_t) t_below(256);
  for (size_t j = 0; j < n; j++) {
    d->b_zp[j] = d->zp_per_channel ? (uint8_t) t_below(256) : zp0;
    d->b_zp32[j] = type == QU8 ? d->b_zp[j] : 0;
  }
  if (t_below(3) != 0) {
    d->bias = t_alloc(n * sizeof(int32_t));
    for (size_t j = 0; j < n; j++) {
      d->bias[j] = t_below(4) == 0 ? (int32_t) t_rand64() : (int32_t) t_range(-70000, 70000);
    }
  }
  d->acc = t_alloc(m * n * sizeof(int32_t));
  ref_q8_acc_mixed(type == QS8, type != QU8, m, n, k, d->a, k, d->a_zp, d->b,
                   d->lay.b_kn ? n : k, d->lay.b_kn, d->b_zp32, d->bias, d->acc);
}

static void q_free(qdata* d)
{
  free(d->a);
  free(d->b);
  free(d->b_zp);
  free(d->b_zp32);
  free(d->bias);
  free(d->acc);
}

/* One requantization: 1 or n values, chosen from the accumulators so that outputs
 * spread over the type's range. */
typedef struct qrequant {
  int32_t* multiplier;
  int32_t* shift;
  float* scale;
} qrequant;

static void q_requant(const qdata* d, int per_channel, qrequant* r, gemmi8_requant* rq)
{
  const size_t count = per_channel ? d->n : 1;
  r->multiplier = t_alloc(count * sizeof(int32_t));
  r->shift = t_alloc(count * sizeof(int32_t));
  r->scale = t_alloc(count * sizeof(float));
  const int32_t lo = q_lo(d), hi = q_hi(d);
  int64_t low0 = 0;
  double real0 = 1.0;
  for (size_t c = 0; c < count; c++) {
    int64_t low = INT64_MAX, high = INT64_MIN;
    for (size_t i = 0; i < d->m; i++) {
      for (size_t j = per_channel ? c : 0; j < (per_channel ? c + 1 : d->n); j++) {
        const int64_t v = d->acc[i * d->n + j];
        low = v < low ? v : low;
        high = v > high ? v : high;
      }
    }
    const double range = high > low ? (double) (high - low) : 1.0;
    const double real = (double) (hi - lo) / range * exp2(3.0 * t_unit() - 1.5);
    if (c == 0) {
      low0 = low;
      real0 = real;
    }
    ref_quantize_multiplier(real, &r->multiplier[c], &r->shift[c]);
    r->scale[c] = (float) real;
  }
  rq->per_channel = per_channel;
  if (t_below(2)) {
    const double centered = (double) lo - (double) low0 * real0;
    rq->zero_point = centered < lo ? lo : centered > hi ? hi : (int32_t) floor(centered + 0.5);
  } else {
    rq->zero_point = (int32_t) t_range(lo, hi);
  }
  rq->min = lo;
  rq->max = hi;
  if (t_below(3) == 0) {
    const int32_t x = (int32_t) t_range(lo, hi), y = (int32_t) t_range(lo, hi);
    rq->min = x < y ? x : y;
    rq->max = x < y ? y : x;
  }
}

static void q_requant_free(qrequant* r)
{
  free(r->multiplier);
  free(r->shift);
  free(r->scale);
}

enum q_output { Q_S32, Q_FIXED_TENSOR, Q_FIXED_CHANNEL, Q_FP32_TENSOR, Q_FP32_CHANNEL, Q_OUTPUTS };
static const char* const q_output_names[] = {"int32 output", "fixedpoint per-tensor",
                                             "fixedpoint per-channel", "fp32 per-tensor",
                                             "fp32 per-channel"};

/* One GEMM from the fenced A and packed buffer into a fenced C, checked; the
 * requantization arrays (exactly 1 or N values) fenced too. */
static void q_gemm(gcase* g, const qdata* d, const fenced* a, const fenced* packed,
                   enum q_output output)
{
  const size_t mark = g->count, m = d->m, n = d->n;
  const t_elem elem = output == Q_S32 ? T_S32 : (d->type == QS8 ? T_S8 : T_U8);
  fenced* c = g_matrix(g, "C", elem, m, n, d->lay.c);
  t_fence_seal(&c->f);
  gemmi8_requant rq;
  memset(&rq, 0, sizeof(rq));
  qrequant r = {NULL, NULL, NULL};
  const int fixed = output == Q_FIXED_TENSOR || output == Q_FIXED_CHANNEL;
  if (output != Q_S32) {
    const int per_channel = output == Q_FIXED_CHANNEL || output == Q_FP32_CHANNEL;
    const size_t count = per_channel ? n : 1;
    q_requant(d, per_channel, &r, &rq);
    rq.mode = fixed ? gemmi8_requant_fixedpoint : gemmi8_requant_fp32;
    if (fixed) {
      rq.multiplier = g_array(g, "multiplier", T_S32, r.multiplier, count);
      rq.shift = g_array(g, "shift", T_S32, r.shift, count);
    } else {
      rq.scale = g_array(g, "scale", T_F32, r.scale, count);
    }
  }
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < n; j++) {
      const int32_t acc = d->acc[i * n + j];
      if (output == Q_S32) {
        memcpy(g_want(c, i, j), &acc, sizeof(acc));
        continue;
      }
      const size_t ch = rq.per_channel ? j : 0;
      const int32_t v = fixed ? ref_output_fixedpoint(acc, r.multiplier[ch], r.shift[ch],
                                                      rq.zero_point, rq.min, rq.max)
                              : ref_output_fp32(acc, r.scale[ch], rq.zero_point, rq.min, rq.max);
      *(uint8_t*) g_want(c, i, j) = (uint8_t) (v & 0xFF);
    }
  }
  const api x = {
      .entry = q_entry(output == Q_S32 ? E_QU8_GEMM_S32 : E_QU8_GEMM, d->type),
      .m = m,
      .n = n,
      .k = d->k,
      .in = body(a),
      .in_stride = a->stride,
      .packed = body(packed),
      .rq = &rq,
      .out = body(c),
      .out_stride = c->stride,
  };
  char what[200];
  snprintf(what, sizeof(what), "%s from %s, C %s (c_stride %zu)", q_output_names[output],
           packed->name, layout_names[c->layout], c->stride);
  g_call(g, &x, what, NULL);
  q_requant_free(&r);
  g_release(g, mark);
}

/* A fenced buffer of exactly the packed size: it must start at a
 * GEMMI8_PACK_ALIGNMENT boundary whichever side touches the page. */
static fenced* g_packed(gcase* g, const char* name, enum entry entry, size_t size)
{
  fenced* b = g_matrix(g, name, T_U8, 1, size, L_TIGHT);
  t_expect((uintptr_t) body(b) % GEMMI8_PACK_ALIGNMENT == 0, entry_names[entry],
           "%s, guard at the %s: %s of exactly %zu bytes does not start at a %d-byte boundary "
           "(the packed size is not a multiple of it)",
           g->desc, side_name(g->side), name, size, GEMMI8_PACK_ALIGNMENT);
  t_fence_seal(&b->f);
  return b;
}

/* The buffer from a *_pack_alloc: aligned, and exact in one int32 GEMM (fenced A and
 * C). */
static void check_allocated(gcase* g, enum entry pack_entry, enum entry gemm_entry,
                            const api* proto, const void* allocated, const int32_t* want,
                            enum layout c_layout)
{
  const size_t mark = g->count, m = proto->m, n = proto->n;
  t_expect((uintptr_t) allocated % GEMMI8_PACK_ALIGNMENT == 0, entry_names[pack_entry],
           "%s, guard at the %s: the allocated buffer %p is not %d-byte aligned", g->desc,
           side_name(g->side), allocated, GEMMI8_PACK_ALIGNMENT);
  fenced* c = g_matrix(g, "C", T_S32, m, n, c_layout);
  t_fence_seal(&c->f);
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < n; j++) memcpy(g_want(c, i, j), &want[i * n + j], sizeof(int32_t));
  }
  api x = *proto;
  x.entry = gemm_entry;
  x.packed = allocated;
  x.out = body(c);
  x.out_stride = c->stride;
  char what[160];
  snprintf(what, sizeof(what), "int32 output from the buffer of %s, C %s (c_stride %zu)",
           entry_names[pack_entry], layout_names[c->layout], c->stride);
  g_call(g, &x, what, NULL);
  g_release(g, mark);
}

static void q_side(const qdata* d, t_fence_side side)
{
  gcase* g = g_begin(side);
  const size_t m = d->m, n = d->n, k = d->k;
  const layouts lay = d->lay;
  const enum qtype type = d->type;
  const size_t b_rows = lay.b_kn ? k : n, b_cols = lay.b_kn ? n : k;

  const fenced* fa = g_input(g, "A", T_U8, m, k, lay.a, d->a, k);
  const fenced* fb = g_input(g, "B", T_U8, b_rows, b_cols, lay.b, d->b, b_cols);
  const uint8_t* b_zp =
      type == QU8 ? g_array(g, "b_zero_point", T_U8, d->b_zp, d->zp_per_channel ? n : 1) : NULL;
  const int32_t* bias = d->bias ? g_array(g, "bias", T_S32, d->bias, n) : NULL;
  char bzp[40] = "symmetric";
  if (type == QU8) {
    snprintf(bzp, sizeof(bzp), "%s (b_zp[0] %u)", d->zp_per_channel ? "per-channel" : "per-tensor",
             (unsigned) d->b_zp[0]);
  }
  snprintf(g->desc, sizeof(g->desc),
           "%s M x N x K = %zu x %zu x %zu, A %s (a_stride %zu), B %s %s (b_stride %zu), "
           "a_zp %" PRId32 ", b_zp %s, bias %s",
           qtype_names[type], m, n, k, layout_names[fa->layout], fa->stride,
           lay.b_kn ? "K x N" : "N x K", layout_names[fb->layout], fb->stride, d->a_zp, bzp,
           bias ? "given" : "NULL");

  size_t size = 0;
  gemmi8_status st = type == QU8   ? gemmi8_qu8_pack_size(n, k, &size)
                     : type == QS8 ? gemmi8_qs8_pack_size(n, k, &size)
                                   : gemmi8_qu8s8_pack_size(n, k, &size);
  if (!t_expect(st == gemmi8_status_success && size > 0, entry_names[q_entry(E_QU8_PACK, type)],
                "%s: %s_pack_size status \"%s\", size %zu", g->desc, qtype_names[type],
                gemmi8_status_string(st), size)) {
    g_release(g, 0);
    return;
  }

  /* packing into exactly the queried size, then the allocating variant, from the same
   * fenced sources */
  fenced* p1 = g_packed(g, "the packed buffer", q_entry(E_QU8_PACK, type), size);
  void* allocated = NULL;
  api x = {
      .entry = q_entry(E_QU8_PACK, type),
      .m = m,
      .n = n,
      .k = k,
      .in = body(fb),
      .in_stride = fb->stride,
      .flags = lay.b_kn ? GEMMI8_B_KN : GEMMI8_B_NK,
      .a_zp = d->a_zp,
      .b_zp = b_zp,
      .zp_per_channel = d->zp_per_channel,
      .bias = bias,
      .out = body(p1),
      .out_stride = size,
      .allocated = &allocated,
  };
  if (!g_call(g, &x, "packing", p1)) {
    g_release(g, 0);
    return;
  }
  x.entry = q_entry(E_QU8_PACK_ALLOC, type);
  if (g_call(g, &x, "packing", NULL)) {
    x.in = body(fa);
    x.in_stride = fa->stride;
    check_allocated(g, q_entry(E_QU8_PACK_ALLOC, type), q_entry(E_QU8_GEMM_S32, type), &x,
                    allocated, d->acc, lay.c);
    gemmi8_packed_free(allocated);
  }

  /* the packed bytes copied into a second exactly-sized buffer */
  fenced* p2 = g_packed(g, "the copy of the packed buffer", q_entry(E_QU8_PACK, type), size);
  memcpy(body(p2), body(p1), size);
  t_fence_seal(&p2->f);
  p1->input = p2->input = 1; /* from here on the GEMMs only read them */

  /* every output kind, from both buffers */
  q_gemm(g, d, fa, p1, Q_S32);
  q_gemm(g, d, fa, p2, Q_S32);
  for (int o = Q_FIXED_TENSOR; o < Q_OUTPUTS; o++) q_gemm(g, d, fa, o % 2 ? p1 : p2, o);
  g_release(g, 0);
}

static unsigned serial; /* cases so far in this run of the group: picks the layouts */

static void q_case(enum qtype type, size_t m, size_t n, size_t k)
{
  qdata d;
  q_make(&d, type, m, n, k, serial++);
  q_side(&d, T_FENCE_END);
  q_side(&d, T_FENCE_START);
  q_free(&d);
}

static void q_sweep(enum qtype type)
{
  const list ms = LIST(m_full, m_quick), ns = LIST(q_n_full, q_n_quick),
             ks = LIST(q_k_full, q_k_quick);
  for (size_t i = 0; i < ms.count; i++) {
    for (size_t j = 0; j < ks.count; j++) q_case(type, ms.v[i], pick(ns), ks.v[j]);
    for (size_t j = 0; j < ns.count; j++) {
      if (!t_quick || (i + j) % 2 == 0) q_case(type, ms.v[i], ns.v[j], pick(ks));
    }
  }
}

/* ---- binary ------------------------------------------------------------------------------ */

typedef struct bdata {
  size_t m, n, k;
  layouts lay;
  uint64_t* a; /* m rows of WORDS(k) */
  uint64_t* b; /* n rows of WORDS(k), or k rows of WORDS(n) */
  int32_t* acc;
  float* scale; /* n values */
  float* bias;
} bdata;

/* Random bits, the padding bits past `bits` in each row random too (never counted). */
static uint64_t* random_bits(size_t rows, size_t bits)
{
  uint64_t* p = t_alloc(rows * WORDS(bits) * sizeof(uint64_t));
  t_fill_random(p, rows * WORDS(bits) * sizeof(uint64_t));
  return p;
}

static void b_make(bdata* d, size_t m, size_t n, size_t k, unsigned serial_number)
{
  memset(d, 0, sizeof(*d));
  d->m = m;
  d->n = n;
  d->k = k;
  d->lay = layouts_of(serial_number);
  d->a = random_bits(m, k);
  d->b = d->lay.b_kn ? random_bits(k, n) : random_bits(n, k);
  d->acc = t_alloc(m * n * sizeof(int32_t));
  ref_bin_acc(m, n, k, d->a, WORDS(k), d->b, d->lay.b_kn ? WORDS(n) : WORDS(k), d->lay.b_kn,
              d->acc);
  d->scale = t_alloc(n * sizeof(float));
  d->bias = t_alloc(n * sizeof(float));
  static const float simple[] = {1.0f, -1.0f, 0.5f, -0.25f, 2.0f};
  const int64_t spread = 2 * (int64_t) sqrt((double) k) + 1;
  for (size_t j = 0; j < n; j++) {
    d->scale[j] = t_below(2) ? T_PICK(simple)
                             : (float) ((t_below(2) ? -1.0 : 1.0) * exp2(6.0 * t_unit() - 3.0));
    /* an integer of K's parity (exact zeros with the simple scales) or any value */
    const int64_t even = 2 * t_range(-spread / 2, spread / 2);
    d->bias[j] = t_below(2) ? d->scale[j] * (float) (even + (int64_t) (k % 2))
                            : (float) ((2.0 * t_unit() - 1.0) * (double) spread);
  }
}

static void b_free(bdata* d)
{
  free(d->a);
  free(d->b);
  free(d->acc);
  free(d->scale);
  free(d->bias);
}

/* One binary GEMM (s32, f32 or bits) from the fenced A and packed buffer into a
 * fenced C; scale and bias, when given, exactly N fenced floats. */
static void b_gemm(gcase* g, const bdata* d, const fenced* a, const fenced* packed,
                   enum entry entry, int with_scale, int with_bias)
{
  const size_t mark = g->count, m = d->m, n = d->n;
  fenced* c = entry == E_BIN_GEMM_BITS
                  ? g_matrix(g, "C", T_U64, m, WORDS(n), d->lay.c)
                  : g_matrix(g, "C", entry == E_BIN_GEMM_S32 ? T_S32 : T_F32, m, n, d->lay.c);
  t_fence_seal(&c->f);
  if (entry == E_BIN_GEMM_S32) with_scale = with_bias = 0;
  const float* scale = with_scale ? d->scale : NULL;
  const float* bias = with_bias ? d->bias : NULL;
  for (size_t i = 0; i < m; i++) {
    if (entry == E_BIN_GEMM_BITS) {
      for (size_t w = 0; w < WORDS(n); w++) {
        uint64_t word = 0;
        for (size_t j = w * 64; j < n && j < w * 64 + 64; j++) {
          if (ref_bin_f32(d->acc[i * n + j], scale, bias, j) < 0.0f) {
            word |= UINT64_C(1) << (j % 64);
          }
        }
        memcpy(g_want(c, i, w), &word, sizeof(word));
      }
      continue;
    }
    for (size_t j = 0; j < n; j++) {
      const int32_t acc = d->acc[i * n + j];
      if (entry == E_BIN_GEMM_S32) {
        memcpy(g_want(c, i, j), &acc, sizeof(acc));
      } else {
        const float v = ref_bin_f32(acc, scale, bias, j);
        memcpy(g_want(c, i, j), &v, sizeof(v));
      }
    }
  }
  const float* fenced_scale = with_scale ? g_array(g, "scale", T_F32, d->scale, n) : NULL;
  const float* fenced_bias = with_bias ? g_array(g, "bias", T_F32, d->bias, n) : NULL;
  const api x = {
      .entry = entry,
      .m = m,
      .n = n,
      .k = d->k,
      .in = body(a),
      .in_stride = a->stride,
      .packed = body(packed),
      .scale = fenced_scale,
      .fbias = fenced_bias,
      .out = body(c),
      .out_stride = c->stride,
  };
  char what[200];
  snprintf(what, sizeof(what), "scale %s, bias %s, from %s, C %s (c_stride %zu)",
           with_scale ? "given" : "NULL", with_bias ? "given" : "NULL", packed->name,
           layout_names[c->layout], c->stride);
  g_call(g, &x, what, NULL);
  g_release(g, mark);
}

static void b_side(const bdata* d, t_fence_side side)
{
  gcase* g = g_begin(side);
  const size_t m = d->m, n = d->n, k = d->k;
  const layouts lay = d->lay;
  const size_t b_rows = lay.b_kn ? k : n, b_words = lay.b_kn ? WORDS(n) : WORDS(k);

  const fenced* fa = g_input(g, "A", T_U64, m, WORDS(k), lay.a, d->a, WORDS(k));
  const fenced* fb = g_input(g, "B", T_U64, b_rows, b_words, lay.b, d->b, b_words);
  snprintf(g->desc, sizeof(g->desc),
           "bin M x N x K = %zu x %zu x %zu, A %s (a_stride %zu words), B %s %s (b_stride %zu "
           "words)",
           m, n, k, layout_names[fa->layout], fa->stride, lay.b_kn ? "K x N" : "N x K",
           layout_names[fb->layout], fb->stride);

  size_t size = 0;
  gemmi8_status st = gemmi8_bin_pack_size(n, k, &size);
  if (!t_expect(st == gemmi8_status_success && size > 0, "gemmi8_bin_pack_size",
                "%s: status \"%s\", size %zu", g->desc, gemmi8_status_string(st), size)) {
    g_release(g, 0);
    return;
  }
  fenced* p1 = g_packed(g, "the packed buffer", E_BIN_PACK, size);
  void* allocated = NULL;
  api x = {
      .entry = E_BIN_PACK,
      .m = m,
      .n = n,
      .k = k,
      .in = body(fb),
      .in_stride = fb->stride,
      .flags = lay.b_kn ? GEMMI8_B_KN : GEMMI8_B_NK,
      .out = body(p1),
      .out_stride = size,
      .allocated = &allocated,
  };
  if (!g_call(g, &x, "packing", p1)) {
    g_release(g, 0);
    return;
  }
  x.entry = E_BIN_PACK_ALLOC;
  if (g_call(g, &x, "packing", NULL)) {
    x.in = body(fa);
    x.in_stride = fa->stride;
    check_allocated(g, E_BIN_PACK_ALLOC, E_BIN_GEMM_S32, &x, allocated, d->acc, lay.c);
    gemmi8_packed_free(allocated);
  }

  fenced* p2 = g_packed(g, "the copy of the packed buffer", E_BIN_PACK, size);
  memcpy(body(p2), body(p1), size);
  t_fence_seal(&p2->f);
  p1->input = p2->input = 1; /* from here on the GEMMs only read them */

  /* every output, from both buffers; scale and bias both given, or one of them */
  const int one = (int) t_below(2);
  b_gemm(g, d, fa, p1, E_BIN_GEMM_S32, 0, 0);
  b_gemm(g, d, fa, p2, E_BIN_GEMM_S32, 0, 0);
  b_gemm(g, d, fa, p1, E_BIN_GEMM_F32, 1, 1);
  b_gemm(g, d, fa, p2, E_BIN_GEMM_F32, one, !one);
  b_gemm(g, d, fa, p2, E_BIN_GEMM_BITS, 1, 1);
  b_gemm(g, d, fa, p1, E_BIN_GEMM_BITS, !one, one);
  g_release(g, 0);
}

static void b_case(size_t m, size_t n, size_t k)
{
  bdata d;
  b_make(&d, m, n, k, serial++);
  b_side(&d, T_FENCE_END);
  b_side(&d, T_FENCE_START);
  b_free(&d);
}

static void b_sweep(void)
{
  const list ms = LIST(m_full, m_quick), ns = LIST(b_n_full, b_n_quick),
             ks = LIST(b_k_full, b_k_quick);
  for (size_t i = 0; i < ms.count; i++) {
    for (size_t j = 0; j < ks.count; j++) b_case(ms.v[i], pick(ns), ks.v[j]);
    for (size_t j = 0; j < ns.count; j++) {
      if (!t_quick || (i + j) % 2 == 0) b_case(ms.v[i], ns.v[j], pick(ks));
    }
  }
}

/* ---- rows quantized at run time (qd8, qdu8) ------------------------------------------- */

typedef struct ddata {
  int u8; /* 1: qdu8 (uint8 rows) */
  size_t m, n, k;
  layouts lay;
  uint8_t* a;     /* m x k, int8 (qd8) or uint8 (qdu8) bytes */
  float* a_scale; /* m */
  int32_t* a_zp;  /* m, in the type's range */
  int8_t* b;      /* n x k, or k x n */
  float* b_scale; /* n */
  float* bias;    /* n values or NULL */
  float* x;       /* m x k finite floats: the linear layer's rows */
  float out_min, out_max;
  float* want;   /* m x n: the GEMM on a */
  float* want_x; /* m x n: the linear layer on x */
} ddata;

/* Element j of a row: the exact accumulator over row - zp, then the header's three
 * float roundings and the clamp. */
static float d_ref(const ddata* d, const uint8_t* row, int32_t zp, float scale, size_t j)
{
  int64_t acc = 0;
  for (size_t kk = 0; kk < d->k; kk++) {
    const int64_t av = d->u8 ? (int64_t) row[kk] : (int64_t) (int8_t) row[kk];
    const int8_t bv = d->lay.b_kn ? d->b[kk * d->n + j] : d->b[j * d->k + kk];
    acc += (av - zp) * bv;
  }
  float v = (float) acc * scale;
  v = v * d->b_scale[j];
  v = v + (d->bias != NULL ? d->bias[j] : 0.0f);
  v = d->out_min > v ? d->out_min : v;
  v = d->out_max < v ? d->out_max : v;
  return v;
}

/* The pieces of the test data the int8 and 4-bit weights share, drawn in this order
 * where each is called. A (m x k bytes) with its row scales and zero points (in the
 * range of the row type: uint8 with u8). */
static void d_rows(ddata* d, int u8)
{
  const size_t m = d->m, k = d->k;
  d->a = t_alloc(m * k);
  t_fill_random(d->a, m * k);
  d->a_scale = t_alloc(m * sizeof(float));
  d->a_zp = t_alloc(m * sizeof(int32_t));
  for (size_t i = 0; i < m; i++) {
    d->a_scale[i] = (float) (0.001 + 0.01 * t_unit());
    d->a_zp[i] = (int32_t) (u8 ? t_range(0, 255) : t_range(-128, 127));
  }
}

/* n biases, or NULL a third of the time. */
static float* d_bias(size_t n)
{
  float* bias = NULL;
  if (t_below(3) != 0) {
    bias = t_alloc(n * sizeof(float));
    for (size_t j = 0; j < n; j++) bias[j] = (float) (t_unit() - 0.5);
  }
  return bias;
}

/* The linear layer's rows x, the clamp (none, or a window a third of the time), and
 * room for the expected outputs. */
static void d_floats(ddata* d)
{
  const size_t m = d->m, n = d->n, k = d->k;
  d->x = t_alloc(m * k * sizeof(float));
  for (size_t i = 0; i < m * k; i++) d->x[i] = (float) ((t_unit() - 0.4) * 8.0);
  d->out_min = -INFINITY;
  d->out_max = INFINITY;
  if (t_below(3) == 0) {
    d->out_min = (float) -t_unit();
    d->out_max = (float) t_unit();
  }
  d->want = t_alloc(m * n * sizeof(float));
  d->want_x = t_alloc(m * n * sizeof(float));
}

static void d_make(ddata* d, int u8, size_t m, size_t n, size_t k, unsigned serial_number)
{
  memset(d, 0, sizeof(*d));
  d->u8 = u8;
  d->m = m;
  d->n = n;
  d->k = k;
  d->lay = layouts_of(serial_number);
  d_rows(d, u8);
  d->b = t_alloc(n * k);
  t_fill_random(d->b, n * k);
  d->b_scale = t_alloc(n * sizeof(float));
  for (size_t j = 0; j < n; j++) d->b_scale[j] = (float) (0.001 + 0.01 * t_unit());
  d->bias = d_bias(n);
  d_floats(d);
  uint8_t* q = t_alloc(k);
  for (size_t i = 0; i < m; i++) {
    float scale;
    int32_t zp;
    if (u8) {
      ref_quantize_row_u8(k, d->x + i * k, q, &scale, &zp);
    } else {
      ref_quantize_row_s8(k, d->x + i * k, (int8_t*) q, &scale, &zp);
    }
    for (size_t j = 0; j < n; j++) {
      d->want[i * n + j] = d_ref(d, d->a + i * k, d->a_zp[i], d->a_scale[i], j);
      d->want_x[i * n + j] = d_ref(d, q, zp, scale, j);
    }
  }
  free(q);
}

static void d_free(ddata* d)
{
  free(d->a);
  free(d->a_scale);
  free(d->a_zp);
  free(d->b);
  free(d->b_scale);
  free(d->bias);
  free(d->x);
  free(d->want);
  free(d->want_x);
}

/* One GEMM (plain or _ex) from the fenced A and the packed weights into a fenced C; the
 * row scales and zero points exactly M fenced values. */
static void d_gemm(gcase* g, const ddata* d, const fenced* a, const void* packed,
                   const char* packed_name, int ex)
{
  const size_t mark = g->count, m = d->m, n = d->n;
  fenced* c = g_matrix(g, "C", T_F32, m, n, d->lay.c);
  t_fence_seal(&c->f);
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < n; j++) memcpy(g_want(c, i, j), &d->want[i * n + j], sizeof(float));
  }
  const api x = {
    .entry = (enum entry)((ex ? E_QD8_GEMM_F32_EX : E_QD8_GEMM_F32) + d->u8),
    .m = m,
    .n = n,
    .k = d->k,
    .in = body(a),
    .in_stride = a->stride,
    .packed = packed,
    .a_scale = g_array(g, "a_scale", T_F32, d->a_scale, m),
    .a_zero_point = g_array(g, "a_zero_point", T_S32, d->a_zp, m),
    .out_min = d->out_min,
    .out_max = d->out_max,
    .out = body(c),
    .out_stride = c->stride,
  };
  char what[160];
  snprintf(what, sizeof(what), "from %s, C %s (c_stride %zu)", packed_name, layout_names[c->layout],
           c->stride);
  g_call(g, &x, what, NULL);
  g_release(g, mark);
}

/* The linear layer from fenced rows x into a fenced C, with a fenced workspace of
 * exactly gemmi8_qd8_linear_workspace_size() bytes (rounded up to 64 where it ends at
 * the page, to start on a 64-byte boundary; its contents are the library's) or none. */
static void d_linear(gcase* g, const ddata* d, const fenced* packed, int with_workspace)
{
  const size_t mark = g->count, m = d->m, n = d->n, k = d->k;
  const enum entry entry = (enum entry)(E_QD8_LINEAR + d->u8);
  const fenced* fx = g_input(g, "x", T_F32, m, k, d->lay.a, d->x, k);
  fenced* c = g_matrix(g, "C", T_F32, m, n, d->lay.c);
  t_fence_seal(&c->f);
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < n; j++) memcpy(g_want(c, i, j), &d->want_x[i * n + j], sizeof(float));
  }
  size_t size = 0;
  const gemmi8_status st = gemmi8_qd8_linear_workspace_size(m, k, &size);
  if (!t_expect(st == gemmi8_status_success && size >= m * k + 8 * m,
                "gemmi8_qd8_linear_workspace_size", "%s: status \"%s\", size %zu", g->desc,
                gemmi8_status_string(st), size)) {
    g_release(g, mark);
    return;
  }
  if (g->side == T_FENCE_END) size = (size + 63) / 64 * 64;
  fenced* ws = NULL;
  if (with_workspace) {
    ws = g_matrix(g, "the workspace", T_U8, 1, size, L_TIGHT);
    t_fence_seal(&ws->f);
    t_expect((uintptr_t) body(ws) % 64 == 0, entry_names[entry],
             "%s, guard at the %s: a workspace of %zu bytes does not start at a 64-byte boundary",
             g->desc, side_name(g->side), size);
  }
  const api x = {
    .entry = entry,
    .m = m,
    .n = n,
    .k = k,
    .in = body(fx),
    .in_stride = fx->stride,
    .packed = body(packed),
    .out_min = d->out_min,
    .out_max = d->out_max,
    .out = body(c),
    .out_stride = c->stride,
    .workspace = ws != NULL ? body(ws) : NULL,
    .workspace_size = ws != NULL ? size : 0,
  };
  char what[200];
  snprintf(what, sizeof(what),
           "x %s (x_stride %zu), workspace %s (%zu bytes), from %s, C %s "
           "(c_stride %zu)",
           layout_names[fx->layout], fx->stride, ws ? "given" : "NULL", ws ? size : 0, packed->name,
           layout_names[c->layout], c->stride);
  g_call(g, &x, what, ws);
  g_release(g, mark);
}

/* From the packing call x into p1 (size bytes): the allocating packer (alloc_entry,
 * into *x->allocated), a copy of p1, and the GEMMs and linear layers on each; releases
 * the case's buffers. */
static void d_packed_runs(gcase* g, const ddata* d, const fenced* fa, api* x, fenced* p1,
                          enum entry alloc_entry, size_t size)
{
  const enum entry pack_entry = x->entry;
  if (!g_call(g, x, "packing", p1)) {
    g_release(g, 0);
    return;
  }
  x->entry = alloc_entry;
  if (g_call(g, x, "packing", NULL)) {
    t_expect((uintptr_t) *x->allocated % GEMMI8_PACK_ALIGNMENT == 0, entry_names[x->entry],
             "%s, guard at the %s: the allocated buffer %p is not %d-byte aligned", g->desc,
             side_name(g->side), *x->allocated, GEMMI8_PACK_ALIGNMENT);
    d_gemm(g, d, fa, *x->allocated, "the allocated buffer", 0);
    gemmi8_packed_free(*x->allocated);
  }
  fenced* p2 = g_packed(g, "the copy of the packed buffer", pack_entry, size);
  memcpy(body(p2), body(p1), size);
  t_fence_seal(&p2->f);
  p1->input = p2->input = 1; /* from here on the GEMMs only read them */

  d_gemm(g, d, fa, body(p1), p1->name, 0);
  d_gemm(g, d, fa, body(p2), p2->name, 1);
  d_linear(g, d, p1, 1);
  d_linear(g, d, p2, 0);
  g_release(g, 0);
}

static void d_side(const ddata* d, t_fence_side side)
{
  gcase* g = g_begin(side);
  const size_t m = d->m, n = d->n, k = d->k;
  const layouts lay = d->lay;
  const size_t b_rows = lay.b_kn ? k : n, b_cols = lay.b_kn ? n : k;
  const char* type = d->u8 ? "qdu8" : "qd8";

  const fenced* fa = g_input(g, "A", d->u8 ? T_U8 : T_S8, m, k, lay.a, d->a, k);
  const fenced* fb = g_input(g, "B", T_S8, b_rows, b_cols, lay.b, d->b, b_cols);
  const float* b_scale = g_array(g, "scale", T_F32, d->b_scale, n);
  const float* bias = d->bias ? g_array(g, "bias", T_F32, d->bias, n) : NULL;
  snprintf(g->desc, sizeof(g->desc),
           "%s M x N x K = %zu x %zu x %zu, A %s (a_stride %zu), B %s %s (b_stride %zu), "
           "bias %s, clamp [%g, %g]",
           type, m, n, k, layout_names[fa->layout], fa->stride, lay.b_kn ? "K x N" : "N x K",
           layout_names[fb->layout], fb->stride, bias ? "given" : "NULL", (double) d->out_min,
           (double) d->out_max);

  size_t size = 0;
  const enum entry pack_entry = (enum entry)(E_QD8_PACK + d->u8);
  gemmi8_status st = d->u8 ? gemmi8_qdu8_pack_size(n, k, &size) : gemmi8_qd8_pack_size(n, k, &size);
  if (!t_expect(st == gemmi8_status_success && size > 0, entry_names[pack_entry],
                "%s: %s_pack_size status \"%s\", size %zu", g->desc, type, gemmi8_status_string(st),
                size)) {
    g_release(g, 0);
    return;
  }
  fenced* p1 = g_packed(g, "the packed buffer", pack_entry, size);
  void* allocated = NULL;
  api x = {
    .entry = pack_entry,
    .n = n,
    .k = k,
    .in = body(fb),
    .in_stride = fb->stride,
    .flags = lay.b_kn ? GEMMI8_B_KN : GEMMI8_B_NK,
    .scale = b_scale,
    .fbias = bias,
    .out = body(p1),
    .out_stride = size,
    .allocated = &allocated,
  };
  d_packed_runs(g, d, fa, &x, p1, (enum entry)(E_QD8_PACK_ALLOC + d->u8), size);
}

static void d_case(int u8, size_t m, size_t n, size_t k)
{
  ddata d;
  d_make(&d, u8, m, n, k, serial++);
  d_side(&d, T_FENCE_END);
  d_side(&d, T_FENCE_START);
  d_free(&d);
}

static void d_sweep(int u8)
{
  const list ms = LIST(m_full, m_quick), ns = LIST(q_n_full, q_n_quick),
             ks = LIST(q_k_full, q_k_quick);
  for (size_t i = 0; i < ms.count; i++) {
    for (size_t j = 0; j < ks.count; j++) d_case(u8, ms.v[i], pick(ns), ks.v[j]);
    for (size_t j = 0; j < ns.count; j++) {
      if (!t_quick || (i + j) % 2 == 0) d_case(u8, ms.v[i], ns.v[j], pick(ks));
    }
  }
}

/* ---- 4-bit weights (qd8 rows) --------------------------------------------------------- */

/* The rows, row scales and zero points, the clamp and the expected outputs are a qd8
 * case's (ddata, u8 0: d_gemm and d_linear run them); the weights are 4-bit. */
typedef struct q4data {
  ddata d;
  size_t block, blocks, row_bytes;
  uint8_t* b;     /* n rows of row_bytes: two nibbles a byte, low first */
  float* scale;   /* n * blocks */
  uint8_t* zp;    /* n * blocks values 0..15, or NULL: signed nibbles */
  float* bias;    /* n values or NULL */
} q4data;

/* C[i][j] from the header: per block the exact sum of (row - zp) * (q - zp), then
 * f = f + (float) sum * scale (the product rounded, then the sum; qc4w: one block of
 * all K), v = f * scale of the row, v = v + bias, the clamp. */
static float q4_ref(const q4data* q, const int8_t* row, int32_t zp, float row_scale, size_t j)
{
  const ddata* d = &q->d;
  const size_t step = q->block != 0 ? q->block : d->k;
  float f = 0.0f;
  for (size_t k0 = 0, bl = 0; k0 < d->k; k0 += step, bl++) {
    int64_t acc = 0;
    for (size_t kk = k0; kk < k0 + step && kk < d->k; kk++) {
      const uint8_t byte = q->b[j * q->row_bytes + kk / 2];
      const int nibble = kk % 2 ? byte >> 4 : byte & 15;
      const int w = q->zp != NULL ? nibble - q->zp[j * q->blocks + bl] : (nibble ^ 8) - 8;
      acc += ((int64_t) row[kk] - zp) * w;
    }
    const float product = (float) (int32_t) acc * q->scale[j * q->blocks + bl];
    f = f + product;
  }
  float v = f * row_scale;
  v = v + (q->bias != NULL ? q->bias[j] : 0.0f);
  v = d->out_min > v ? d->out_min : v;
  v = d->out_max < v ? d->out_max : v;
  return v;
}

static unsigned q4_serial; /* picks the block and the zero-point form, in turn */

static void q4_make(q4data* q, size_t m, size_t n, size_t k, unsigned serial_number)
{
  static const size_t blocks[] = {0, 32, 64, 128, 256};
  memset(q, 0, sizeof(*q));
  ddata* d = &q->d;
  d->m = m;
  d->n = n;
  d->k = k;
  d->lay = layouts_of(serial_number);
  d->lay.b_kn = 0; /* the nibble rows are N x K only */
  q->block = blocks[q4_serial % T_COUNT(blocks)];
  const int with_zp = (int) (q4_serial / T_COUNT(blocks) % 2);
  q4_serial++;
  q->blocks = q->block != 0 ? (k + q->block - 1) / q->block : 1;
  q->row_bytes = (k + 1) / 2;
  d_rows(d, 0);
  q->b = t_alloc(n * q->row_bytes);
  t_fill_random(q->b, n * q->row_bytes); /* an odd K's pad nibbles too */
  q->scale = t_alloc(n * q->blocks * sizeof(float));
  for (size_t x = 0; x < n * q->blocks; x++) q->scale[x] = (float) ((t_unit() - 0.3) * 0.02);
  if (with_zp) {
    q->zp = t_alloc(n * q->blocks);
    for (size_t x = 0; x < n * q->blocks; x++) q->zp[x] = (uint8_t) t_below(16);
  }
  q->bias = d_bias(n);
  d_floats(d);
  int8_t* row = t_alloc(k);
  for (size_t i = 0; i < m; i++) {
    float scale;
    int32_t zp;
    ref_quantize_row_s8(k, d->x + i * k, row, &scale, &zp);
    for (size_t j = 0; j < n; j++) {
      d->want[i * n + j] =
          q4_ref(q, (const int8_t*) d->a + i * k, d->a_zp[i], d->a_scale[i], j);
      d->want_x[i * n + j] = q4_ref(q, row, zp, scale, j);
    }
  }
  free(row);
}

static void q4_free(q4data* q)
{
  d_free(&q->d);
  free(q->b);
  free(q->scale);
  free(q->zp);
  free(q->bias);
}

static void q4_side(const q4data* q, t_fence_side side)
{
  gcase* g = g_begin(side);
  const ddata* d = &q->d;
  const size_t m = d->m, n = d->n, k = d->k;
  const layouts lay = d->lay;

  const fenced* fa = g_input(g, "A", T_S8, m, k, lay.a, d->a, k);
  const fenced* fb = g_input(g, "the nibble rows", T_U8, n, q->row_bytes, lay.b, q->b,
                             q->row_bytes);
  const float* scale = g_array(g, "scale", T_F32, q->scale, n * q->blocks);
  const uint8_t* zp = q->zp ? g_array(g, "zero_point", T_U8, q->zp, n * q->blocks) : NULL;
  const float* bias = q->bias ? g_array(g, "bias", T_F32, q->bias, n) : NULL;
  snprintf(g->desc, sizeof(g->desc),
           "q4 M x N x K = %zu x %zu x %zu, block %zu (%zu a row), %s, A %s (a_stride %zu), "
           "nibble rows %s (b_stride %zu), bias %s, clamp [%g, %g]",
           m, n, k, q->block, q->blocks, zp ? "zero points" : "signed nibbles",
           layout_names[fa->layout], fa->stride, layout_names[fb->layout], fb->stride,
           bias ? "given" : "NULL", (double) d->out_min, (double) d->out_max);

  size_t size = 0;
  const gemmi8_status st = gemmi8_qd8_pack_q4_size(n, k, q->block, &size);
  if (!t_expect(st == gemmi8_status_success && size > 0, entry_names[E_QD8_PACK_Q4],
                "%s: gemmi8_qd8_pack_q4_size status \"%s\", size %zu", g->desc,
                gemmi8_status_string(st), size)) {
    g_release(g, 0);
    return;
  }
  const gemmi8_q4_weights w = {body(fb), fb->stride, q->block, scale, zp, bias};
  fenced* p1 = g_packed(g, "the packed buffer", E_QD8_PACK_Q4, size);
  void* allocated = NULL;
  api x = {
    .entry = E_QD8_PACK_Q4,
    .n = n,
    .k = k,
    .q4 = &w,
    .out = body(p1),
    .out_stride = size,
    .allocated = &allocated,
  };
  d_packed_runs(g, d, fa, &x, p1, E_QD8_PACK_Q4_ALLOC, size);
}

static void q4_case(size_t m, size_t n, size_t k)
{
  q4data q;
  q4_make(&q, m, n, k, serial++);
  q4_side(&q, T_FENCE_END);
  q4_side(&q, T_FENCE_START);
  q4_free(&q);
}

static void q4_sweep(void)
{
  /* depth groups of 8, the blocks and the qc4w chunk of 256, and their remainders */
  static const size_t k_full[] = {1,  2,  3,  7,   8,   9,   15,  16,  17,  31,  32,  33,
                                  63, 64, 65, 127, 128, 129, 255, 256, 257, 300, 513};
  static const size_t k_quick[] = {1, 7, 8, 9, 33, 65, 129, 257};
  const list ms = LIST(m_full, m_quick), ns = LIST(q_n_full, q_n_quick),
             ks = LIST(k_full, k_quick);
  q4_serial = 0;
  for (size_t i = 0; i < ms.count; i++) {
    for (size_t j = 0; j < ks.count; j++) q4_case(ms.v[i], pick(ns), ks.v[j]);
    for (size_t j = 0; j < ns.count; j++) {
      if (!t_quick || (i + j) % 2 == 0) q4_case(ms.v[i], ns.v[j], pick(ks));
    }
  }
}

/* ---- bit packing ---------------------------------------------------------------------- */

static float random_float(void)
{
  static const float special[] = {0.0f,    -0.0f,    INFINITY,     -INFINITY,    NAN,
                                  FLT_MIN, -FLT_MIN, FLT_TRUE_MIN, -FLT_TRUE_MIN};
  if (t_below(8) == 0) return T_PICK(special);
  return (float) ((2.0 * t_unit() - 1.0) * exp2(20.0 * t_unit() - 10.0));
}

/* rows x k values (x, stride k) binarized by `entry` from a fenced copy into fenced
 * bit rows. */
static void x_side(enum entry entry, size_t rows, size_t k, const void* x, uint8_t zero_point,
                   layouts lay, t_fence_side side)
{
  gcase* g = g_begin(side);
  const t_elem elem = entry == E_ROWS_F32 ? T_F32 : (entry == E_ROWS_S8 ? T_S8 : T_U8);
  const size_t words = WORDS(k);
  const fenced* fx = g_input(g, "x", elem, rows, k, lay.a, x, k);
  fenced* out = g_matrix(g, "out", T_U64, rows, words, lay.c);
  t_fence_seal(&out->f);
  snprintf(g->desc, sizeof(g->desc),
           "rows x k = %zu x %zu, x %s (x_stride %zu), out %s (out_stride %zu words)", rows, k,
           layout_names[fx->layout], fx->stride, layout_names[out->layout], out->stride);
  uint64_t* want = t_alloc(rows * words * sizeof(uint64_t));
  if (entry == E_ROWS_F32)
    ref_bin_pack_f32(rows, k, x, k, want, words);
  else if (entry == E_ROWS_S8)
    ref_bin_pack_s8(rows, k, x, k, want, words);
  else
    ref_bin_pack_u8(rows, k, x, k, zero_point, want, words);
  for (size_t r = 0; r < rows; r++) {
    memcpy(g_want(out, r, 0), want + r * words, words * sizeof(uint64_t));
  }
  free(want);
  const api call = {
      .entry = entry,
      .m = rows,
      .k = k,
      .in = body(fx),
      .in_stride = fx->stride,
      .zero_point = zero_point,
      .out = body(out),
      .out_stride = out->stride,
  };
  char what[64];
  snprintf(what, sizeof(what), "zero point %u", (unsigned) zero_point);
  g_call(g, &call, entry == E_ROWS_U8 ? what : "bit rows", NULL);
  g_release(g, 0);
}

static void x_case(size_t rows, size_t k)
{
  const layouts lay = layouts_of(serial++);
  float* xf = t_alloc(rows * k * sizeof(float));
  for (size_t i = 0; i < rows * k; i++) xf[i] = random_float();
  uint8_t* xb = t_alloc(rows * k);
  t_fill_random(xb, rows * k);
  const uint8_t zero_point = (uint8_t) t_below(256);
  for (int side = 0; side < 2; side++) {
    const t_fence_side s = side ? T_FENCE_START : T_FENCE_END;
    x_side(E_ROWS_F32, rows, k, xf, 0, lay, s);
    x_side(E_ROWS_S8, rows, k, xb, 0, lay, s);
    x_side(E_ROWS_U8, rows, k, xb, zero_point, lay, s);
  }
  free(xf);
  free(xb);
}

static void x_sweep(void)
{
  static const size_t rows_full[] = {1, 2, 3, 4, 5, 7, 8, 13};
  static const size_t rows_quick[] = {1, 2, 3, 5};
  /* every k to 70 (vectors of 8, 16, 32 and 64 elements and their tails), then the
   * word boundaries further on */
  static const size_t k_far[] = {95, 96, 97, 127, 128, 129, 191, 192, 193, 255, 256, 257, 300};
  static const size_t k_quick[] = {1,  2,  7,  8,  9,   15,  16,  17,  31,  32,  33,
                                   63, 64, 65, 127, 128, 129, 191, 255, 256, 257};
  const list rows = LIST(rows_full, rows_quick);
  if (t_quick) {
    for (size_t i = 0; i < T_COUNT(k_quick); i++) x_case(rows.v[i % rows.count], k_quick[i]);
  } else {
    for (size_t k = 1; k <= 70; k++) x_case(rows.v[k % rows.count], k);
    for (size_t i = 0; i < T_COUNT(k_far); i++) x_case(rows.v[i % rows.count], k_far[i]);
  }
}

/* ---- quantization helpers ------------------------------------------------------------- */

/* A fenced output of count elements, sealed, its expected elements copied from want. */
static fenced* h_output(gcase* g, const char* name, t_elem elem, size_t count, const void* want)
{
  fenced* b = g_matrix(g, name, elem, 1, count, L_TIGHT);
  t_fence_seal(&b->f);
  memcpy(g_want(b, 0, 0), want, count * t_elem_size(elem));
  return b;
}

static void h_side(size_t rows, size_t cols, unsigned serial_number, t_fence_side side)
{
  const gemmi8_qscheme scheme = (gemmi8_qscheme) (serial_number % 2);
  const gemmi8_qrange range = (gemmi8_qrange) (serial_number / 2 % 3);
  const gemmi8_qaxis axis = (gemmi8_qaxis) (serial_number / 6 % 3);
  const size_t n = rows * cols;
  const size_t count = axis == gemmi8_qaxis_tensor ? 1 : axis == gemmi8_qaxis_row ? rows : cols;
  const int32_t qmin = range == gemmi8_qrange_u8 ? 0 : range == gemmi8_qrange_s8 ? -128 : -127;
  const int32_t qmax = range == gemmi8_qrange_u8 ? 255 : 127;
  float* x = t_alloc(n * sizeof(float));
  float* scale = t_alloc(cols * rows * sizeof(float));
  int32_t* zp = t_alloc(cols * rows * sizeof(int32_t));
  for (size_t i = 0; i < n; i++) x[i] = random_float();
  for (size_t i = 0; i < rows * cols; i++) {
    scale[i] = (float) (0.01 + t_unit());
    zp[i] = range == gemmi8_qrange_s8_symmetric ? 0 : (int32_t) t_range(qmin, qmax);
  }
  /* the expected outputs, from plain heap buffers */
  uint8_t* q = t_alloc(n);
  float* back = t_alloc(n * sizeof(float));
  const char* names[] = {"onnx", "tflite"};
  char what[96];
  snprintf(what, sizeof(what), "%s, range %d, axis %d", names[scheme], (int) range, (int) axis);
  if (gemmi8_quantize_f32(scheme, range, axis, rows, cols, x, scale, zp, q) != 0 ||
      gemmi8_dequantize_f32(range, axis, rows, cols, q, scale, zp, back) != 0) {
    t_fail("gemmi8_quantize_f32", "rows x cols = %zu x %zu, %s: a valid call failed", rows, cols, what);
  }
  gcase* g = g_begin(side);
  snprintf(g->desc, sizeof(g->desc), "rows x cols = %zu x %zu", rows, cols);
  const t_elem qelem = range == gemmi8_qrange_u8 ? T_U8 : T_S8;
  {
    const float* fx = g_array(g, "x", T_F32, x, n);
    const float* fs = g_array(g, "scale", T_F32, scale, count);
    const int32_t* fz = g_array(g, "zero_point", T_S32, zp, count);
    fenced* out = h_output(g, "y", qelem, n, q);
    const api call = {.entry = E_QUANTIZE_F32, .m = rows, .n = cols, .in = fx, .qscheme = scheme,
                      .qrange = range, .qaxis = axis, .qscale = fs, .qzp = fz, .out = body(out)};
    g_call(g, &call, what, NULL);
  }
  g_release(g, 0);
  {
    const uint8_t* fq = g_array(g, "q", qelem, q, n);
    const float* fs = g_array(g, "scale", T_F32, scale, count);
    const int32_t* fz = g_array(g, "zero_point", T_S32, zp, count);
    fenced* out = h_output(g, "x", T_F32, n, back);
    const api call = {.entry = E_DEQUANTIZE_F32, .m = rows, .n = cols, .in = fq, .qrange = range,
                      .qaxis = axis, .qscale = fs, .qzp = fz, .out = body(out)};
    g_call(g, &call, what, NULL);
  }
  g_release(g, 0);
  /* count-long arrays: ranges, biases, scales (n of them) */
  {
    float* lo = t_alloc(n * sizeof(float));
    float* hi = t_alloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) {
      const float a = (float) (t_unit() * 8.0 - 4.0), b = (float) (t_unit() * 8.0 - 4.0);
      lo[i] = a < b ? a : b;
      hi[i] = a < b ? b : a;
    }
    float* s = t_alloc(n * sizeof(float));
    int32_t* z = t_alloc(n * sizeof(int32_t));
    int32_t* bias = t_alloc(n * sizeof(int32_t));
    int32_t* m = t_alloc(n * sizeof(int32_t));
    int32_t* sh = t_alloc(n * sizeof(int32_t));
    float* rs = t_alloc(n * sizeof(float));
    const int per_channel = (int) (serial_number / 18 % 2);
    if (gemmi8_choose_qparams(scheme, range, n, lo, hi, s, z) != 0 ||
        gemmi8_quantize_bias(scheme, n, hi, 0.5f, scale, per_channel, bias) != 0 ||
        gemmi8_requant_scales(scheme, n, 0.5f, scale, 0.25f, rs, m, sh) != 0) {
      t_fail("gemmi8_choose_qparams", "%zu ranges, %s: a valid call failed", n, what);
    }
    const float* flo = g_array(g, "min", T_F32, lo, n);
    const float* fhi = g_array(g, "max", T_F32, hi, n);
    fenced* os = h_output(g, "scale", T_F32, n, s);
    fenced* oz = h_output(g, "zero_point", T_S32, n, z);
    const api c1 = {.entry = E_CHOOSE_QPARAMS, .n = n, .in = flo, .qmax_in = fhi, .qscheme = scheme,
                    .qrange = range, .out = body(os), .out2 = body(oz)};
    g_call(g, &c1, what, NULL);
    g_release(g, 0);
    const float* fb = g_array(g, "bias", T_F32, hi, n);
    const float* fw = g_array(g, "w_scale", T_F32, scale, per_channel ? n : 1);
    fenced* ob = h_output(g, "out", T_S32, n, bias);
    const api c2 = {.entry = E_QUANTIZE_BIAS, .n = n, .in = fb, .qscheme = scheme, .a_scale_f = 0.5f,
                    .qscale = fw, .w_per_channel = per_channel, .out = body(ob)};
    g_call(g, &c2, per_channel ? "per channel" : "per tensor", NULL);
    g_release(g, 0);
    const float* fw2 = g_array(g, "w_scale", T_F32, scale, n);
    fenced* ors = h_output(g, "scale", T_F32, n, rs);
    fenced* om = h_output(g, "multiplier", T_S32, n, m);
    fenced* osh = h_output(g, "shift", T_S32, n, sh);
    const api c3 = {.entry = E_REQUANT_SCALES, .n = n, .qscheme = scheme, .a_scale_f = 0.5f,
                    .qscale = fw2, .c_scale_f = 0.25f, .out = body(ors), .out2 = body(om),
                    .out3 = body(osh)};
    g_call(g, &c3, what, NULL);
    g_release(g, 0);
    free(lo);
    free(hi);
    free(s);
    free(z);
    free(bias);
    free(m);
    free(sh);
    free(rs);
  }
  /* calibration: rows of cols channels */
  {
    gemmi8_calibration *cal = NULL, *plain = NULL;
    float* x_finite = t_alloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) x_finite[i] = isfinite(x[i]) ? x[i] : 1.0f;
    float* lo = t_alloc(cols * sizeof(float));
    float* hi = t_alloc(cols * sizeof(float));
    if (gemmi8_calibration_create(cols, &cal) != 0 || gemmi8_calibration_create(cols, &plain) != 0 ||
        gemmi8_calibration_update(plain, n, x_finite) != 0 ||
        gemmi8_calibration_range(plain, 99.0, lo, hi) != 0) {
      t_fail("gemmi8_calibration_update", "%zu channels: a valid call failed", cols);
    } else {
      const float* fx = g_array(g, "x", T_F32, x_finite, n);
      const api c1 = {.entry = E_CALIBRATION_UPDATE, .n = n, .in = fx, .cal = cal};
      g_call(g, &c1, "rows of channels", NULL);
      g_release(g, 0);
      fenced* ol = h_output(g, "min", T_F32, cols, lo);
      fenced* oh = h_output(g, "max", T_F32, cols, hi);
      const api c2 = {.entry = E_CALIBRATION_RANGE, .cal = cal, .percentile = 99.0,
                      .out = body(ol), .out2 = body(oh)};
      g_call(g, &c2, "percentile 99", NULL);
      g_release(g, 0);
    }
    gemmi8_calibration_destroy(cal);
    gemmi8_calibration_destroy(plain);
    free(x_finite);
    free(lo);
    free(hi);
  }
  free(x);
  free(scale);
  free(zp);
  free(q);
  free(back);
}

static void h_sweep(void)
{
  static const size_t rows_full[] = {1, 2, 3, 4, 5, 7};
  static const size_t cols_full[] = {1, 2, 3, 7, 15, 16, 17, 31, 32, 33, 47, 48, 49, 64, 65};
  static const size_t cols_quick[] = {1, 3, 15, 16, 17, 33};
  const size_t nr = t_quick ? 3 : T_COUNT(rows_full);
  const list cols = LIST(cols_full, cols_quick);
  unsigned serial_number = 0;
  for (size_t r = 0; r < nr; r++) {
    for (size_t c = 0; c < cols.count; c++) {
      for (int side = 0; side < 2; side++) {
        h_side(rows_full[r], cols.v[c], serial_number, side ? T_FENCE_START : T_FENCE_END);
      }
      serial_number += 7; /* steps through the 36 (scheme, range, axis, per channel) */
    }
  }
}

void test_guard(void)
{
  serial = 0;
  faults_catch();
  q_sweep(QU8);
  q_sweep(QS8);
  q_sweep(QU8S8);
  d_sweep(0);
  d_sweep(1);
  q4_sweep();
  b_sweep();
  x_sweep();
  h_sweep();
  faults_release();
  g_unmap_all();
}
