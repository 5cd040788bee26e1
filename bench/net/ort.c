/*
 * ONNX Runtime through its C API, loaded with dlopen() (see ort.h).
 *
 * The C API is one table of function pointers, OrtApi, returned by
 * OrtGetApiBase()->GetApi(version). ONNX Runtime only ever appends to that table
 * (its sources assert the offsets of the older versions' last entries), so the slot
 * of every function is fixed by the release that introduced it. Only the slots used
 * here are declared, with their argument lists as documented for the C API; the
 * others are opaque pointers, counted so that each declared slot sits at its index.
 * Every function used exists since version 1 of the table. The indices are checked at
 * compile time below (API_SLOT), and the run-time check is that GetApi accepts the
 * version asked for.
 *
 * ONNX Runtime's enums are passed as int (the C ABI of every enum here), its handle
 * types are opaque structs of this file, and strings are char (ONNX Runtime's path
 * character off Windows).
 */
#include "ort.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The table version asked for: that of ONNX Runtime 1.22, the release ort-fetch.sh
 * pins. A library older than that refuses it (GetApi returns NULL); newer ones serve
 * every older version. */
#define ORT_API_VERSION 22

/* ONNX Runtime's handles, opaque here. A NULL status is success. */
typedef struct api_status api_status;
typedef struct api_env api_env;
typedef struct api_session_options api_session_options;
typedef struct api_session api_session;
typedef struct api_value api_value;
typedef struct api_memory_info api_memory_info;
typedef struct api_shape_info api_shape_info; /* OrtTensorTypeAndShapeInfo */
typedef struct api_allocator api_allocator;

/* Values of ONNX Runtime's enums used below. */
enum {
  LOG_WARNING = 2,          /* OrtLoggingLevel */
  EXECUTION_SEQUENTIAL = 0, /* ExecutionMode */
  OPTIMIZE_ALL = 99,        /* GraphOptimizationLevel */
  ALLOCATOR_ARENA = 1,      /* OrtAllocatorType */
  MEMORY_DEFAULT = 0,       /* OrtMemType */
};

/* OrtApi up to its slot 110 (SessionEndProfiling); the comment of each entry is its
 * slot index. */
typedef struct api_table {
  void* slots_0_1[2]; /* CreateStatus, GetErrorCode */
  const char* (*GetErrorMessage)(const api_status* status); /* 2 */
  api_status* (*CreateEnv)(int log_level, const char* log_id, api_env** env); /* 3 */
  void* slots_4_6[3];
  api_status* (*CreateSession)(const api_env* env, const char* model_path,
                               const api_session_options* options,
                               api_session** session); /* 7 */
  void* slots_8_8[1];
  api_status* (*Run)(api_session* session, const void* run_options,
                     const char* const* input_names, const api_value* const* inputs,
                     size_t input_count, const char* const* output_names, size_t output_count,
                     api_value** outputs); /* 9 */
  api_status* (*CreateSessionOptions)(api_session_options** options); /* 10 */
  void* slots_11_12[2];
  api_status* (*SetSessionExecutionMode)(api_session_options* options, int mode); /* 13 */
  api_status* (*EnableProfiling)(api_session_options* options, const char* prefix); /* 14 */
  void* slots_15_22[8];
  api_status* (*SetSessionGraphOptimizationLevel)(api_session_options* options,
                                                  int level); /* 23 */
  api_status* (*SetIntraOpNumThreads)(api_session_options* options, int threads); /* 24 */
  api_status* (*SetInterOpNumThreads)(api_session_options* options, int threads); /* 25 */
  void* slots_26_36[11];
  api_status* (*SessionGetOutputName)(const api_session* session, size_t index,
                                      api_allocator* allocator, char** name); /* 37 */
  void* slots_38_48[11];
  api_status* (*CreateTensorWithDataAsOrtValue)(const api_memory_info* info, void* data,
                                                size_t bytes, const int64_t* shape,
                                                size_t rank, int type,
                                                api_value** value); /* 49 */
  void* slots_50_50[1];
  api_status* (*GetTensorMutableData)(api_value* value, void** data); /* 51 */
  void* slots_52_59[8];
  api_status* (*GetTensorElementType)(const api_shape_info* info, int* type); /* 60 */
  api_status* (*GetDimensionsCount)(const api_shape_info* info, size_t* count); /* 61 */
  api_status* (*GetDimensions)(const api_shape_info* info, int64_t* dims,
                               size_t count); /* 62 */
  void* slots_63_64[2];
  api_status* (*GetTensorTypeAndShape)(const api_value* value, api_shape_info** info); /* 65 */
  void* slots_66_68[3];
  api_status* (*CreateCpuMemoryInfo)(int allocator_type, int memory_type,
                                     api_memory_info** info); /* 69 */
  void* slots_70_75[6];
  api_status* (*AllocatorFree)(api_allocator* allocator, void* p); /* 76 */
  void* slots_77_77[1];
  api_status* (*GetAllocatorWithDefaultOptions)(api_allocator** allocator); /* 78 */
  void* slots_79_91[13];
  void (*ReleaseEnv)(api_env* env);                     /* 92 */
  void (*ReleaseStatus)(api_status* status);            /* 93 */
  void (*ReleaseMemoryInfo)(api_memory_info* info);     /* 94 */
  void (*ReleaseSession)(api_session* session);         /* 95 */
  void (*ReleaseValue)(api_value* value);               /* 96 */
  void* slots_97_98[2];
  void (*ReleaseTensorTypeAndShapeInfo)(api_shape_info* info); /* 99 */
  void (*ReleaseSessionOptions)(api_session_options* options); /* 100 */
  void* slots_101_109[9];
  api_status* (*SessionEndProfiling)(api_session* session, api_allocator* allocator,
                                     char** path); /* 110 */
} api_table;

/* Each declared entry at its index: a miscounted run of padding fails the build. */
#define API_SLOT(name, index)                                                     \
  _Static_assert(offsetof(api_table, name) == (index) * sizeof(void (*)(void)), \
                 #name " is not at slot " #index)
_Static_assert(sizeof(void*) == sizeof(void (*)(void)), "data and code pointers differ");
API_SLOT(GetErrorMessage, 2);
API_SLOT(CreateEnv, 3);
API_SLOT(CreateSession, 7);
API_SLOT(Run, 9);
API_SLOT(CreateSessionOptions, 10);
API_SLOT(SetSessionExecutionMode, 13);
API_SLOT(EnableProfiling, 14);
API_SLOT(SetSessionGraphOptimizationLevel, 23);
API_SLOT(SetIntraOpNumThreads, 24);
API_SLOT(SetInterOpNumThreads, 25);
API_SLOT(SessionGetOutputName, 37);
API_SLOT(CreateTensorWithDataAsOrtValue, 49);
API_SLOT(GetTensorMutableData, 51);
API_SLOT(GetTensorElementType, 60);
API_SLOT(GetDimensionsCount, 61);
API_SLOT(GetDimensions, 62);
API_SLOT(GetTensorTypeAndShape, 65);
API_SLOT(CreateCpuMemoryInfo, 69);
API_SLOT(AllocatorFree, 76);
API_SLOT(GetAllocatorWithDefaultOptions, 78);
API_SLOT(ReleaseEnv, 92);
API_SLOT(ReleaseStatus, 93);
API_SLOT(ReleaseMemoryInfo, 94);
API_SLOT(ReleaseSession, 95);
API_SLOT(ReleaseValue, 96);
API_SLOT(ReleaseTensorTypeAndShapeInfo, 99);
API_SLOT(ReleaseSessionOptions, 100);
API_SLOT(SessionEndProfiling, 110);

/* OrtApiBase, what the library's one exported entry point returns. */
typedef struct api_base {
  const api_table* (*GetApi)(uint32_t version);
  const char* (*GetVersionString)(void);
} api_base;

struct ort_lib {
  void* handle;
  const api_table* api;
  api_env* env;
  api_memory_info* cpu; /* where the input tensors live */
  char version[32];
  char error[1024];
};

struct ort_session {
  ort_lib* lib;
  api_session* session;
  char* output_name; /* the model's first output, copied */
};

static void set_error(ort_lib* lib, const char* format, ...)
{
  va_list args;
  va_start(args, format);
  vsnprintf(lib->error, sizeof(lib->error), format, args);
  va_end(args);
}

/* Turns an ONNX Runtime status into ort_ok or ort_err_runtime with its message
 * after what (the call that failed), and releases it. */
static ort_status check(ort_lib* lib, api_status* status, const char* what)
{
  if (status == NULL) return ort_ok;
  set_error(lib, "%s: %s", what, lib->api->GetErrorMessage(status));
  lib->api->ReleaseStatus(status);
  return ort_err_runtime;
}

static size_t elem_size(ort_elem type)
{
  switch (type) {
  case ort_elem_uint8:
  case ort_elem_int8:
    return 1;
  case ort_elem_float:
  case ort_elem_int32:
    return 4;
  }
  return 0;
}

ort_status ort_open(const char* lib_path, ort_lib** out, char* msg, size_t msg_size)
{
  ort_status st = ort_err_arg;
  ort_lib* lib = NULL;
  if (out == NULL) return ort_err_arg;
  *out = NULL;
  if (msg_size != 0) msg[0] = '\0';
  if (lib_path == NULL) lib_path = getenv("GEMMI8_ORT_LIB");
  if (lib_path == NULL || lib_path[0] == '\0') {
    snprintf(msg, msg_size,
             "no ONNX Runtime library: pass its path or set GEMMI8_ORT_LIB "
             "(sh bench/net/ort-fetch.sh prints one)");
    return ort_err_arg;
  }
  lib = calloc(1, sizeof(*lib));
  if (lib == NULL) {
    snprintf(msg, msg_size, "out of memory");
    return ort_err_memory;
  }
  lib->handle = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
  if (lib->handle == NULL) {
    snprintf(msg, msg_size, "dlopen: %s", dlerror());
    st = ort_err_load;
    goto fail;
  }
  void* sym = dlsym(lib->handle, "OrtGetApiBase");
  if (sym == NULL) {
    snprintf(msg, msg_size, "%s has no OrtGetApiBase: not ONNX Runtime", lib_path);
    st = ort_err_load;
    goto fail;
  }
  /* A data pointer to a function pointer, as POSIX allows for dlsym's result. */
  const api_base* (*get_base)(void);
  memcpy(&get_base, &sym, sizeof(get_base));
  const api_base* base = get_base();
  snprintf(lib->version, sizeof(lib->version), "%s", base->GetVersionString());
  lib->api = base->GetApi(ORT_API_VERSION);
  if (lib->api == NULL) {
    snprintf(msg, msg_size, "ONNX Runtime %s does not serve C API version %d (1.%d or later needed)",
             lib->version, ORT_API_VERSION, ORT_API_VERSION);
    st = ort_err_load;
    goto fail;
  }
  st = check(lib, lib->api->CreateEnv(LOG_WARNING, "gemmi8", &lib->env), "CreateEnv");
  if (st == ort_ok) {
    st = check(lib, lib->api->CreateCpuMemoryInfo(ALLOCATOR_ARENA, MEMORY_DEFAULT, &lib->cpu),
               "CreateCpuMemoryInfo");
  }
  if (st != ort_ok) {
    snprintf(msg, msg_size, "%s", lib->error);
    goto fail;
  }
  *out = lib;
  return ort_ok;

fail:
  ort_close(lib);
  return st;
}

const char* ort_version(const ort_lib* lib)
{
  return lib->version;
}

const char* ort_error(const ort_lib* lib)
{
  return lib->error;
}

ort_status ort_session_create(ort_lib* lib, const char* model_path, int intra_op_threads,
                              const char* profile_prefix, ort_session** out)
{
  if (lib == NULL || model_path == NULL || out == NULL || intra_op_threads < 0) {
    return ort_err_arg;
  }
  *out = NULL;
  const api_table* api = lib->api;
  api_session_options* options = NULL;
  ort_session* s = calloc(1, sizeof(*s));
  if (s == NULL) {
    set_error(lib, "out of memory");
    return ort_err_memory;
  }
  s->lib = lib;
  ort_status st = check(lib, api->CreateSessionOptions(&options), "CreateSessionOptions");
  if (st == ort_ok) {
    st = check(lib, api->SetIntraOpNumThreads(options, intra_op_threads), "SetIntraOpNumThreads");
  }
  if (st == ort_ok) {
    st = check(lib, api->SetInterOpNumThreads(options, 1), "SetInterOpNumThreads");
  }
  if (st == ort_ok) {
    st = check(lib, api->SetSessionExecutionMode(options, EXECUTION_SEQUENTIAL),
               "SetSessionExecutionMode");
  }
  if (st == ort_ok) {
    st = check(lib, api->SetSessionGraphOptimizationLevel(options, OPTIMIZE_ALL),
               "SetSessionGraphOptimizationLevel");
  }
  if (st == ort_ok && profile_prefix != NULL) {
    st = check(lib, api->EnableProfiling(options, profile_prefix), "EnableProfiling");
  }
  if (st == ort_ok) {
    st = check(lib, api->CreateSession(lib->env, model_path, options, &s->session),
               "CreateSession");
  }
  api_allocator* allocator = NULL;
  char* name = NULL;
  if (st == ort_ok) {
    st = check(lib, api->GetAllocatorWithDefaultOptions(&allocator),
               "GetAllocatorWithDefaultOptions");
  }
  if (st == ort_ok) {
    st = check(lib, api->SessionGetOutputName(s->session, 0, allocator, &name),
               "SessionGetOutputName");
  }
  if (st == ort_ok) {
    s->output_name = malloc(strlen(name) + 1);
    if (s->output_name == NULL) {
      set_error(lib, "out of memory");
      st = ort_err_memory;
    } else {
      strcpy(s->output_name, name);
    }
    check(lib, api->AllocatorFree(allocator, name), "AllocatorFree");
  }
  if (options != NULL) api->ReleaseSessionOptions(options);
  if (st != ort_ok) {
    ort_session_release(s);
    return st;
  }
  *out = s;
  return ort_ok;
}

ort_status ort_run(ort_session* s, const char* input_name, ort_elem type, const int64_t* shape,
                   size_t rank, const void* data, ort_tensor* out)
{
  if (s == NULL || input_name == NULL || out == NULL || (shape == NULL && rank != 0) ||
      data == NULL) {
    return ort_err_arg;
  }
  ort_lib* lib = s->lib;
  const api_table* api = lib->api;
  memset(out, 0, sizeof(*out));
  size_t bytes = elem_size(type);
  if (bytes == 0 || rank > ORT_MAX_RANK) {
    set_error(lib, "ort_run: element type %d or rank %zu not handled", (int) type, rank);
    return ort_err_arg;
  }
  for (size_t i = 0; i < rank; i++) {
    if (shape[i] < 0 || (shape[i] != 0 && bytes > SIZE_MAX / (size_t) shape[i])) {
      set_error(lib, "ort_run: dimension %zu (%lld) negative or too large", i,
                (long long) shape[i]);
      return ort_err_arg;
    }
    bytes *= (size_t) shape[i];
  }
  api_value* input = NULL;
  api_value* output = NULL;
  /* The input is only read; the API takes a non-const pointer for values it may
   * also write. */
  ort_status st = check(lib,
                        api->CreateTensorWithDataAsOrtValue(lib->cpu, (void*) data, bytes, shape,
                                                            rank, (int) type, &input),
                        "CreateTensorWithDataAsOrtValue");
  if (st == ort_ok) {
    const char* const output_name = s->output_name;
    const api_value* const inputs[1] = {input};
    st = check(lib, api->Run(s->session, NULL, &input_name, inputs, 1, &output_name, 1, &output),
               "Run");
  }
  if (input != NULL) api->ReleaseValue(input);
  api_shape_info* info = NULL;
  int out_type = 0;
  size_t out_rank = 0;
  if (st == ort_ok) {
    st = check(lib, api->GetTensorTypeAndShape(output, &info), "GetTensorTypeAndShape");
  }
  if (st == ort_ok) st = check(lib, api->GetTensorElementType(info, &out_type), "GetTensorElementType");
  if (st == ort_ok) st = check(lib, api->GetDimensionsCount(info, &out_rank), "GetDimensionsCount");
  if (st == ort_ok && out_rank > ORT_MAX_RANK) {
    set_error(lib, "ort_run: output of rank %zu", out_rank);
    st = ort_err_arg;
  }
  if (st == ort_ok) {
    st = check(lib, api->GetDimensions(info, out->shape, out_rank), "GetDimensions");
  }
  if (info != NULL) api->ReleaseTensorTypeAndShapeInfo(info);
  void* out_data = NULL;
  if (st == ort_ok) {
    st = check(lib, api->GetTensorMutableData(output, &out_data), "GetTensorMutableData");
  }
  if (st != ort_ok) {
    if (output != NULL) api->ReleaseValue(output);
    memset(out, 0, sizeof(*out));
    return st;
  }
  out->type = (ort_elem) out_type;
  out->rank = out_rank;
  out->elements = 1;
  for (size_t i = 0; i < out_rank; i++) out->elements *= (size_t) out->shape[i];
  out->data = out_data;
  out->value = output;
  out->lib = lib;
  return ort_ok;
}

void ort_tensor_free(ort_tensor* t)
{
  if (t == NULL) return;
  if (t->value != NULL) t->lib->api->ReleaseValue((api_value*) t->value);
  memset(t, 0, sizeof(*t));
}

ort_status ort_session_end_profiling(ort_session* s, char* path, size_t path_size)
{
  if (s == NULL || path == NULL || path_size == 0) return ort_err_arg;
  ort_lib* lib = s->lib;
  const api_table* api = lib->api;
  api_allocator* allocator = NULL;
  char* name = NULL;
  ort_status st = check(lib, api->GetAllocatorWithDefaultOptions(&allocator),
                        "GetAllocatorWithDefaultOptions");
  if (st == ort_ok) {
    st = check(lib, api->SessionEndProfiling(s->session, allocator, &name), "SessionEndProfiling");
  }
  if (st != ort_ok) return st;
  if (strlen(name) >= path_size) {
    set_error(lib, "ort_session_end_profiling: path of %zu bytes does not fit", strlen(name));
    st = ort_err_arg;
  } else {
    strcpy(path, name);
  }
  check(lib, api->AllocatorFree(allocator, name), "AllocatorFree");
  return st;
}

void ort_session_release(ort_session* s)
{
  if (s == NULL) return;
  if (s->session != NULL) s->lib->api->ReleaseSession(s->session);
  free(s->output_name);
  free(s);
}

void ort_close(ort_lib* lib)
{
  if (lib == NULL) return;
  if (lib->api != NULL) {
    if (lib->cpu != NULL) lib->api->ReleaseMemoryInfo(lib->cpu);
    if (lib->env != NULL) lib->api->ReleaseEnv(lib->env);
  }
  if (lib->handle != NULL) dlclose(lib->handle);
  free(lib);
}
