/* Just enough of the TF Lite 2.14 C ABI for the test delegates (written for this project).
 *
 * Only fields that the test delegates read are named; every struct keeps the runtime's field
 * order up to the last field used, which is all that matters for reading through a pointer.
 * TfLiteRegistration is passed BY VALUE to ReplaceNodeSubsetsWithDelegateKernels, so it is
 * declared in full (2.14 layout) with zeroed spare room after it: the interpreter reads only its
 * own struct size from the copy, newer runtimes that appended fields read zeros there. */
#ifndef EDGE_AGENT_TFLITE_MIN_H
#define EDGE_AGENT_TFLITE_MIN_H

#include <stddef.h>
#include <stdint.h>

typedef enum { kTfLiteOk = 0, kTfLiteError = 1 } TfLiteStatus;

enum { kTfLiteFloat32 = 1, kTfLiteInt8 = 9 };
enum { kTfLiteBuiltinDequantize = 6, kTfLiteBuiltinDelegate = 51 };

typedef struct { int size; int data[]; } TfLiteIntArray;

typedef struct {
  float scale;
  int32_t zero_point;
} TfLiteQuantizationParams;

typedef struct TfLiteTensor {
  int type;                        /* TfLiteType */
  void* data;                      /* TfLitePtrUnion */
  TfLiteIntArray* dims;
  TfLiteQuantizationParams params;
  int allocation_type;
  size_t bytes;
  const void* allocation;
  const char* name;
  struct TfLiteDelegate* delegate;
  int buffer_handle;
  char data_is_stale; /* bool */
  char is_variable;   /* bool */
  struct { int type; void* params; } quantization;
  void* sparsity;
  const TfLiteIntArray* dims_signature;
} TfLiteTensor; /* 112 bytes on LP64: context->tensors is an array of these */

typedef struct TfLiteNode {
  TfLiteIntArray* inputs;
  TfLiteIntArray* outputs;
  TfLiteIntArray* intermediates;
  TfLiteIntArray* temporaries;
  void* user_data;
  /* more fields follow */
} TfLiteNode;

struct TfLiteContext;
struct TfLiteDelegate;

typedef struct TfLiteRegistration {
  void* (*init)(struct TfLiteContext*, const char* buffer, size_t length);
  void (*free)(struct TfLiteContext*, void* buffer);
  TfLiteStatus (*prepare)(struct TfLiteContext*, TfLiteNode*);
  TfLiteStatus (*invoke)(struct TfLiteContext*, TfLiteNode*);
  const char* (*profiling_string)(const struct TfLiteContext*, const TfLiteNode*);
  int32_t builtin_code;
  const char* custom_name;
  int version;
  void* registration_external;
  void* async_kernel;
  uint64_t inplace_operator;
  uint64_t spare_zeroed[8];
} TfLiteRegistration;

typedef struct TfLiteContext {
  size_t tensors_size;
  TfLiteStatus (*GetExecutionPlan)(struct TfLiteContext*, TfLiteIntArray** plan);
  TfLiteTensor* tensors;
  void* impl_;
  TfLiteStatus (*ResizeTensor)(struct TfLiteContext*, TfLiteTensor*, TfLiteIntArray*);
  void (*ReportError)(struct TfLiteContext*, const char* msg, ...);
  TfLiteStatus (*AddTensors)(struct TfLiteContext*, int, int*);
  TfLiteStatus (*GetNodeAndRegistration)(struct TfLiteContext*, int node_index, TfLiteNode** node,
                                         TfLiteRegistration** registration);
  TfLiteStatus (*ReplaceNodeSubsetsWithDelegateKernels)(struct TfLiteContext*, TfLiteRegistration registration,
                                                        const TfLiteIntArray* nodes_to_replace,
                                                        struct TfLiteDelegate* delegate);
  int recommended_num_threads;
  void* GetExternalContext;
  void* SetExternalContext;
  int allow_fp32_relax_to_fp16; /* a bool in the runtime; padded to 8 bytes either way */
  void* profiler;
  void* AllocatePersistentBuffer;
  void* AllocateBufferForEval;
  void* RequestScratchBufferInArena;
  void* GetScratchBuffer;
  void* ResizeTensorExplicit;
  void* PreviewDelegatePartitioning;
  TfLiteTensor* (*GetTensor)(const struct TfLiteContext*, int tensor_index);
  /* more fields follow */
} TfLiteContext;

typedef struct TfLiteDelegate {
  void* data_;
  TfLiteStatus (*Prepare)(TfLiteContext*, struct TfLiteDelegate*);
  void* CopyFromBufferHandle;
  void* CopyToBufferHandle;
  void* FreeBufferHandle;
  int64_t flags;
  void* opaque_delegate_builder;
} TfLiteDelegate;

#endif
