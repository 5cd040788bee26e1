/*
 * A small wrapper around ONNX Runtime's C API, loaded at run time with dlopen(), so
 * that nothing of ONNX Runtime is needed to build: no header, no library to link.
 * It covers what a one-model comparison needs: a session on one thread (or a given
 * count) with full graph optimization and sequential execution, one input, one
 * output, and the session's profile.
 *
 * Errors: every function that can fail returns an ort_status; on failure the lib's
 * message (ort_error()) says what failed, with ONNX Runtime's own message when the
 * failure came from it. Nothing is thread-safe beyond what ONNX Runtime guarantees:
 * use one lib from one thread.
 */
#ifndef GEMMI8_BENCH_ORT_H
#define GEMMI8_BENCH_ORT_H

#include <stddef.h>
#include <stdint.h>

typedef enum ort_status {
  ort_ok = 0,
  ort_err_load = 1,    /* dlopen, the entry point or the API version */
  ort_err_runtime = 2, /* an error status returned by ONNX Runtime */
  ort_err_arg = 3,     /* a caller's mistake: NULL, a rank out of range, a type */
  ort_err_memory = 4,
} ort_status;

/* Element types, with ONNX's TensorProto numbers (which ONNX Runtime uses too). */
typedef enum ort_elem {
  ort_elem_float = 1,
  ort_elem_uint8 = 2,
  ort_elem_int8 = 3,
  ort_elem_int32 = 6,
} ort_elem;

enum { ORT_MAX_RANK = 8 };

typedef struct ort_lib ort_lib;
typedef struct ort_session ort_session;

/* An output tensor. data points into ONNX Runtime's own value, valid until
 * ort_tensor_free(). */
typedef struct ort_tensor {
  ort_elem type;
  size_t rank;
  int64_t shape[ORT_MAX_RANK];
  size_t elements;
  void* data;
  void* value; /* the OrtValue that owns data */
  ort_lib* lib;
} ort_tensor;

/*
 * Loads the library at lib_path (NULL: the environment variable GEMMI8_ORT_LIB) and
 * its API table, and creates the environment (logging warnings and worse). On
 * failure *lib is NULL and msg (msg_size bytes, may be 0) says why.
 */
ort_status ort_open(const char* lib_path, ort_lib** lib, char* msg, size_t msg_size);

/* The library's version string, e.g. "1.22.0". */
const char* ort_version(const ort_lib* lib);

/* The message of the last failure on lib (or a session or tensor of it). */
const char* ort_error(const ort_lib* lib);

/*
 * A session on the model at model_path: intra_op_threads threads inside an operator
 * (the calling thread included; 0 is ONNX Runtime's default, one per core),
 * inter-op threads 1, sequential execution, graph optimization level "all" (every
 * rewrite, the NHWC layout ones included). profile_prefix non-NULL turns profiling
 * on: ONNX Runtime writes every run's node timings to a JSON file named from it.
 * The session remembers the name of the model's first output.
 */
ort_status ort_session_create(ort_lib* lib, const char* model_path, int intra_op_threads,
                              const char* profile_prefix, ort_session** session);

/*
 * Runs the session on one input tensor (read in place, not copied) and returns its
 * first output in *out, to be released with ort_tensor_free().
 */
ort_status ort_run(ort_session* session, const char* input_name, ort_elem type,
                   const int64_t* shape, size_t rank, const void* data, ort_tensor* out);

void ort_tensor_free(ort_tensor* t);

/*
 * Ends the profiling of a session created with a profile prefix and copies the path
 * of the JSON file ONNX Runtime wrote into path (path_size bytes; a longer path is
 * ort_err_arg).
 */
ort_status ort_session_end_profiling(ort_session* session, char* path, size_t path_size);

/* Releases a session; NULL is allowed. */
void ort_session_release(ort_session* session);

/* Releases the environment and unloads the library; NULL is allowed. Every session
 * must be released first. */
void ort_close(ort_lib* lib);

#endif
