/* A real TF Lite external delegate for the tests (tflite_plugin_create_delegate ABI).
 *
 * It takes over the last int8 -> float32 DEQUANTIZE node of a graph and computes it itself, so
 * the CPU runs everything else and the outputs stay exact. Build variants:
 *   default            works; writes the options it received to the file named by option
 *                      "options_out" and its invoke count to "count_out" (if given); option
 *                      "bias" adds a constant to what it computes (a numerically wrong chip);
 *                      while the file named by option "slow_flag" exists, each invoke first sleeps
 *                      option "slow_ms" milliseconds (a throttled or shared chip)
 *   -DCREATE_RETURNS_NULL  tflite_plugin_create_delegate returns NULL (a broken plugin)
 *   -DFAIL_AT_INVOKE   invoke fails after option "fail_after" successful invokes (default 0),
 *                      or while the file named by option "fail_flag" exists (an unplugged chip)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tflite_min.h"

typedef struct {
  char options_out[1024];
  char count_out[1024];
  char fail_flag[1024];
  char slow_flag[1024];
  long slow_ms;
  long fail_after;
  float bias;
  long invokes;
} DelegateState;

#ifndef CREATE_RETURNS_NULL
static TfLiteTensor* tensor_at(TfLiteContext* context, int index) {
  return context->GetTensor != NULL ? context->GetTensor(context, index) : &context->tensors[index];
}

static TfLiteStatus resize_like(TfLiteContext* context, TfLiteTensor* out, const TfLiteIntArray* dims) {
  TfLiteIntArray* copy = malloc(sizeof(int) * (size_t)(dims->size + 1)); /* the runtime frees it */
  if (copy == NULL) return kTfLiteError;
  copy->size = dims->size;
  memcpy(copy->data, dims->data, sizeof(int) * (size_t)dims->size);
  return context->ResizeTensor(context, out, copy);
}

static void* kernel_init(TfLiteContext* context, const char* buffer, size_t length) {
  (void)context;
  (void)length;
  /* For delegate kernels `buffer` is a TfLiteDelegateParams*, whose first field is the delegate. */
  TfLiteDelegate* delegate = *(TfLiteDelegate* const*)buffer;
  return delegate->data_;
}

static void kernel_free(TfLiteContext* context, void* buffer) {
  (void)context;
  (void)buffer;
}

static TfLiteStatus kernel_prepare(TfLiteContext* context, TfLiteNode* node) {
  TfLiteTensor* in = tensor_at(context, node->inputs->data[0]);
  TfLiteTensor* out = tensor_at(context, node->outputs->data[0]);
  return resize_like(context, out, in->dims);
}

static void write_count(const DelegateState* st) {
  if (st->count_out[0] == '\0') return;
  FILE* f = fopen(st->count_out, "w");
  if (f == NULL) return;
  fprintf(f, "%ld\n", st->invokes);
  fclose(f);
}

static TfLiteStatus kernel_invoke(TfLiteContext* context, TfLiteNode* node) {
  DelegateState* st = (DelegateState*)node->user_data;
#ifdef FAIL_AT_INVOKE
  if (st->invokes >= st->fail_after && st->fail_after >= 0 &&
      (st->fail_flag[0] == '\0' || access(st->fail_flag, F_OK) == 0)) {
    context->ReportError(context, "test delegate: device gone after %ld invokes", st->invokes);
    return kTfLiteError;
  }
#endif
  if (st->slow_flag[0] != '\0' && st->slow_ms > 0 && access(st->slow_flag, F_OK) == 0)
    usleep((useconds_t)(st->slow_ms * 1000));
  TfLiteTensor* in = tensor_at(context, node->inputs->data[0]);
  TfLiteTensor* out = tensor_at(context, node->outputs->data[0]);
  const int8_t* q = (const int8_t*)in->data;
  float* f = (float*)out->data;
  size_t n = out->bytes / sizeof(float);
  if (in->bytes != n) {
    context->ReportError(context, "test delegate: size mismatch %zu vs %zu", in->bytes, n);
    return kTfLiteError;
  }
  for (size_t i = 0; i < n; ++i) f[i] = ((float)q[i] - (float)in->params.zero_point) * in->params.scale + st->bias;
  st->invokes += 1;
  write_count(st);
  return kTfLiteOk;
}

static int is_int8_dequantize(TfLiteContext* context, TfLiteNode* node, TfLiteRegistration* reg) {
  if (reg->builtin_code != kTfLiteBuiltinDequantize || node->inputs->size != 1 || node->outputs->size != 1)
    return 0;
  TfLiteTensor* in = tensor_at(context, node->inputs->data[0]);
  TfLiteTensor* out = tensor_at(context, node->outputs->data[0]);
  return in->type == kTfLiteInt8 && out->type == kTfLiteFloat32 && in->allocation_type != 1; /* not mmap'd */
}

static TfLiteStatus delegate_prepare(TfLiteContext* context, TfLiteDelegate* delegate) {
  TfLiteIntArray* plan = NULL;
  if (context->GetExecutionPlan(context, &plan) != kTfLiteOk) return kTfLiteError;
  int chosen = -1;
  for (int i = 0; i < plan->size; ++i) {
    TfLiteNode* node = NULL;
    TfLiteRegistration* reg = NULL;
    if (context->GetNodeAndRegistration(context, plan->data[i], &node, &reg) != kTfLiteOk) return kTfLiteError;
    if (is_int8_dequantize(context, node, reg)) chosen = plan->data[i];
  }
  if (chosen < 0) return kTfLiteOk; /* nothing to take: the CPU runs the whole graph */
  struct { int size; int data[1]; } nodes = {1, {chosen}};
  TfLiteRegistration reg;
  memset(&reg, 0, sizeof reg);
  reg.init = kernel_init;
  reg.free = kernel_free;
  reg.prepare = kernel_prepare;
  reg.invoke = kernel_invoke;
  reg.builtin_code = kTfLiteBuiltinDelegate;
  reg.custom_name = "EdgeAgentTestDelegate";
  reg.version = 1;
  return context->ReplaceNodeSubsetsWithDelegateKernels(context, reg, (const TfLiteIntArray*)&nodes, delegate);
}

static void copy_opt(char* dst, const char* src) {
  strncpy(dst, src, 1023);
  dst[1023] = '\0';
}

static void record_options(const char* path, char** keys, char** values, size_t n) {
  FILE* f = fopen(path, "w");
  if (f == NULL) return;
  for (size_t i = 0; i < n; ++i) fprintf(f, "%s=%s\n", keys[i], values[i]);
  fclose(f);
}

#endif /* CREATE_RETURNS_NULL */

TfLiteDelegate* tflite_plugin_create_delegate(char** keys, char** values, size_t n,
                                              void (*report_error)(const char*)) {
#ifdef CREATE_RETURNS_NULL
  (void)keys;
  (void)values;
  (void)n;
  if (report_error != NULL) report_error("test delegate: no device present");
  return NULL;
#else
  (void)report_error;
  DelegateState* st = calloc(1, sizeof *st);
  TfLiteDelegate* d = calloc(1, sizeof *d);
  if (st == NULL || d == NULL) {
    free(st);
    free(d);
    return NULL;
  }
  for (size_t i = 0; i < n; ++i) {
    if (strcmp(keys[i], "options_out") == 0) copy_opt(st->options_out, values[i]);
    if (strcmp(keys[i], "count_out") == 0) copy_opt(st->count_out, values[i]);
    if (strcmp(keys[i], "fail_flag") == 0) copy_opt(st->fail_flag, values[i]);
    if (strcmp(keys[i], "slow_flag") == 0) copy_opt(st->slow_flag, values[i]);
    if (strcmp(keys[i], "slow_ms") == 0) st->slow_ms = strtol(values[i], NULL, 10);
    if (strcmp(keys[i], "fail_after") == 0) st->fail_after = strtol(values[i], NULL, 10);
    if (strcmp(keys[i], "bias") == 0) st->bias = strtof(values[i], NULL);
  }
  if (st->options_out[0] != '\0') record_options(st->options_out, keys, values, n);
  d->data_ = st;
  d->Prepare = delegate_prepare;
  d->flags = 1; /* kTfLiteDelegateFlagsAllowDynamicTensors: the bundle has a dynamic batch dim */
  return d;
#endif
}

void tflite_plugin_destroy_delegate(TfLiteDelegate* delegate) {
  if (delegate == NULL) return;
  free(delegate->data_);
  free(delegate);
}
