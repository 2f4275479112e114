// The fixed part of every operator tilelang.paddle.custom_op generates (tilelang/paddle/op_codegen.py
// renders it, then appends the op's own functions). Its helpers are prefixed Tlp/kTlp and the generated
// code's locals tlp_, names op_codegen refuses for buffers, so no user name can collide with them.
// TILELANG_OP_CUDA (0 or 1) is defined before this text.
// The op needs no Python bindings (Paddle generates the op's Python API itself). Skipping them
// (paddle/extension.h includes paddle/utils/pybind.h only without PADDLE_NO_PYTHON) keeps Python.h
// and Paddle's ATen compatibility headers out, which on CUDA builds pull in cuBLAS and cuDNN headers.
#define PADDLE_NO_PYTHON
#include <dlfcn.h>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <mutex>
#include <string>
#include <vector>

#include "paddle/extension.h"

#if TILELANG_OP_CUDA
#if !defined(PADDLE_WITH_CUDA)
#error "a CUDA TileLang operator is compiled as CUDA source with PADDLE_WITH_CUDA (paddle.utils.cpp_extension does both for .cu files)"
#endif
// Paddle's own current-device getter and setter, declared PADDLE_API in paddle/phi/backends/gpu/gpu_info.h
// and defined in paddle/phi/backends/gpu/cuda/cuda_info.cc (cudaGetDevice / cudaSetDevice in Paddle's CUDA
// runtime). Declared here rather than included: that header includes cuBLAS and cuDNN headers, which
// are not part of every CUDA install, and the op needs neither.
namespace phi {
namespace backends {
namespace gpu {
int GetCurrentDeviceId();
void SetDeviceId(int device_id);
}  // namespace gpu
}  // namespace backends
}  // namespace phi
#endif

namespace {

constexpr int kTlpMaxDevices = 256;

// One TileLang kernel library, loaded with dlopen(RTLD_LOCAL): every TileLang library exports the same
// call/init names, so each keeps its own namespace.
struct TlpKernelLib {
  TlpKernelLib(const char* op, const char* file);
  std::string path;
  void* call = nullptr;  // cast to the kernel's exact prototype where it is called
  int32_t (*init)() = nullptr;
  const char* (*last_error)() = nullptr;
  std::string error;
  // get_last_error() may return NULL: never build a std::string from it directly.
  std::string LastError() const {
    const char* text = last_error ? last_error() : nullptr;
    return text ? std::string(text) : std::string("(the kernel library gave no error text)");
  }
#if TILELANG_OP_CUDA
  // init() sets per-device function attributes (the dynamic shared memory limit): once per GPU.
  std::atomic<bool> ready[kTlpMaxDevices] = {};
  std::mutex init_mutex;
#endif
};

std::string TlpOwnDirectory() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&TlpOwnDirectory), &info) == 0 || info.dli_fname == nullptr) return ".";
  std::string path(info.dli_fname);
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

TlpKernelLib::TlpKernelLib(const char* op, const char* file) : path(TlpOwnDirectory() + "/" + file) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    error = std::string("cannot load the TileLang kernel library ") + path + ": " + (why ? why : "unknown error");
  } else {
    init = reinterpret_cast<int32_t (*)()>(dlsym(handle, "init"));
    last_error = reinterpret_cast<const char* (*)()>(dlsym(handle, "get_last_error"));
    call = dlsym(handle, "call");
    if (call == nullptr) {
      error = std::string("the TileLang kernel library ") + path + " has no `call` entry";
#if !TILELANG_OP_CUDA
    } else if (init != nullptr && init() != 0) {  // a CPU library initialises once, at load
      error = std::string("the TileLang kernel library ") + path + " failed to initialise: " + LastError();
      call = nullptr;
#endif
    }
  }
  // Paddle's predictor reports a failing PD_CHECK as a bare std::exception: say why here too.
  if (!error.empty()) std::fprintf(stderr, "%s: %s\n", op, error.c_str());
}

void* TlpPtr(const paddle::Tensor& t) { return const_cast<void*>(t.data()); }

// Every question the op asks Paddle about places, devices, streams and memory is one of the Tlp
// helpers in this file; op_codegen.py's generated functions only call them (a test holds it to that).

// A new output on the place of the op's first input (paddle::empty, declared in paddle/phi/api/include/api.h).
paddle::Tensor TlpEmpty(const std::vector<int64_t>& shape, paddle::DataType dtype, const paddle::Tensor& first) {
  return paddle::empty(shape, dtype, first.place());
}

void TlpCheckInput(const char* op, const char* name, const paddle::Tensor& t, paddle::DataType dtype,
                const std::vector<int64_t>& statics, const std::vector<int>& symbols, int64_t* dims, bool* bound,
                const char* first, const paddle::Tensor& first_tensor) {
  const phi::Place& place = first_tensor.place();
#if TILELANG_OP_CUDA
  PD_CHECK(t.is_gpu(), op, ": input ", name, " must be a GPU tensor (this operator runs a CUDA kernel), got ",
           t.place().DebugString());
  PD_CHECK(t.place() == place, op, ": input ", name, " is on ", t.place().DebugString(), " but input ", first,
           " is on ", place.DebugString(), "; put every input on one GPU");
#else
  PD_CHECK(t.is_cpu(), op, ": input ", name, " must be a CPU tensor (this operator runs a CPU kernel), got ",
           t.place().DebugString());
#endif
  PD_CHECK(t.dtype() == dtype, op, ": input ", name, " must have dtype ", phi::DataTypeToString(dtype), ", got ",
           phi::DataTypeToString(t.dtype()));
  // Kernels read row-major memory; a strided view would be read as if it were compact.
  PD_CHECK(t.numel() == 0 || t.is_contiguous(), op, ": input ", name,
           " is not contiguous; pass a contiguous tensor (tensor.contiguous())");
  const std::vector<int64_t> shape = t.shape();
  PD_CHECK(shape.size() == statics.size(), op, ": input ", name, " must be ", statics.size(), "-d, got ",
           shape.size(), "-d");
  for (size_t i = 0; i < shape.size(); ++i) {
    if (symbols[i] < 0) {
      PD_CHECK(shape[i] == statics[i], op, ": input ", name, " dimension ", i, " must be ", statics[i], ", got ",
               shape[i]);
    } else if (bound[symbols[i]]) {
      PD_CHECK(shape[i] == dims[symbols[i]], op, ": input ", name, " dimension ", i, " is ", shape[i],
               ", but another input gave that symbolic dimension ", dims[symbols[i]]);
    } else {
      dims[symbols[i]] = shape[i];
      bound[symbols[i]] = true;
    }
  }
}

// A symbolic size bound from the inputs must fit the C type the kernel's call() declares it with.
void TlpCheckSize(const char* op, const char* input, int axis, const char* symbol, int64_t value, int64_t max_value,
                  const char* ctype) {
  PD_CHECK(value <= max_value, op, ": input ", input, " dimension ", axis, " is the symbolic ", symbol, "=", value,
           ", which does not fit the kernel's ", ctype, " parameter (at most ", max_value,
           "); declare it T.dynamic(\"", symbol, "\", \"int64\") for sizes beyond that");
}

void TlpKernelFailed(const char* op, const TlpKernelLib& lib, std::initializer_list<paddle::Tensor> tensors) {
  std::string why = lib.LastError();
#if TILELANG_OP_CUDA
  for (const paddle::Tensor& t : tensors) {
    if (t.numel() == 0) {
      why += " (" TLP_ZERO_SIZE_HINT ")";  // rendered from tilelang.paddle_runtime.launch.ZERO_SIZE_HINT
      break;
    }
  }
#endif
  PD_THROW(op, ": the TileLang kernel failed: ", why);
}

#if TILELANG_OP_CUDA
// The GPU a (GPU) tensor is on, from its place (phi::Place::GetDeviceId, paddle/phi/common/place.h).
int TlpDeviceOf(const paddle::Tensor& t) { return t.place().GetDeviceId(); }

// Paddle's current stream of the tensor's GPU (Tensor::stream, paddle/phi/api/lib/tensor.cc), as call() takes it.
void* TlpStreamOf(const paddle::Tensor& t) { return reinterpret_cast<void*>(t.stream()); }

// Makes a GPU current for the kernel call and restores the previous one afterwards, as Paddle's own
// phi::backends::gpu::GPUDeviceGuard (paddle/phi/backends/gpu/gpu_info.h) does with the same two calls.
class TlpCurrentGpu {
 public:
  explicit TlpCurrentGpu(int device) : previous_(phi::backends::gpu::GetCurrentDeviceId()) {
    if (previous_ == device) {
      previous_ = -1;
    } else {
      phi::backends::gpu::SetDeviceId(device);
    }
  }
  ~TlpCurrentGpu() {
    if (previous_ >= 0) phi::backends::gpu::SetDeviceId(previous_);
  }
  TlpCurrentGpu(const TlpCurrentGpu&) = delete;
  TlpCurrentGpu& operator=(const TlpCurrentGpu&) = delete;

 private:
  int previous_;
};

// Runs the library's init() once per GPU, with that GPU current.
void TlpInitOnDevice(const char* op, TlpKernelLib& lib, int device) {
  PD_CHECK(device >= 0 && device < kTlpMaxDevices, op, ": GPU index ", device, " is beyond the ", kTlpMaxDevices,
           " this operator supports");
  if (lib.init == nullptr || lib.ready[device].load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> hold(lib.init_mutex);
  if (lib.ready[device].load(std::memory_order_relaxed)) return;
  PD_CHECK(lib.init() == 0, op, ": the TileLang kernel library ", lib.path, " failed to initialise on gpu:", device,
           ": ", lib.LastError());
  lib.ready[device].store(true, std::memory_order_release);
}
#endif

}  // namespace
