# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The hot path of a kernel call on Paddle tensors (see :mod:`.fast_launch` for what it accepts).

Per call, in C: one ``dltensor_from_py_object_no_sync`` per tensor argument
(Paddle's ``__dlpack_c_exchange_api__``: pointer, shape, strides, dtype and
device in one call), checks against the table built once per kernel, symbolic
dimensions bound and cross-checked, outputs allocated by the same API
(``managed_tensor_allocator``, then ``managed_tensor_to_py_object_no_sync`` for
the Python tensor), and the compiled entry called through its function pointer
with the GIL released. On a GPU, the current stream comes from the same API's
``current_work_stream`` where the driver says it is the driver's stream, the
library's ``init()`` runs once per GPU (a bit per GPU), and with one GPU visible
the current device is neither read nor switched (launch.py's protocol). An
output the API cannot allocate (an API without the allocator; the unsigned
dtypes Paddle allocates as a signed twin and views) is allocated by the driver
from Python, as before.
All per-call state lives on the C stack: calls from several threads share
nothing but the read-only table.

Anything off the happy path (keyword arguments, a non-tensor, a dtype, shape,
stride or device the table does not accept, a Paddle error) is handed to the
kernel's regular launcher, so every error is raised there (in the user's words,
see :mod:`.arguments`) and every case upstream accepts still works.
"""

from cpython.exc cimport PyErr_Clear
from cpython.pycapsule cimport PyCapsule_GetPointer
from cpython.ref cimport Py_DECREF
from libc.stdint cimport int32_t, int64_t, intptr_t, uint8_t, uint16_t, uint32_t, uint64_t

cdef extern from *:
    """
    #include <stdint.h>
    typedef struct { int32_t device_type; int32_t device_id; } TLP_DLDevice;
    typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } TLP_DLDataType;
    typedef struct {
      void* data; TLP_DLDevice device; int32_t ndim; TLP_DLDataType dtype;
      int64_t* shape; int64_t* strides; uint64_t byte_offset;
    } TLP_DLTensor;
    typedef struct TLP_DLManagedTensorVersioned {
      uint32_t major; uint32_t minor; void* manager_ctx;
      void (*deleter)(struct TLP_DLManagedTensorVersioned* self);
      uint64_t flags; TLP_DLTensor dl_tensor;
    } TLP_DLManagedTensorVersioned;
    /* DLPack 1.3 DLPackExchangeAPI (dlpack.h): header, then five function pointers. */
    typedef struct {
      uint32_t major; uint32_t minor; void* prev_api;
      int (*managed_tensor_allocator)(TLP_DLTensor* prototype, TLP_DLManagedTensorVersioned** out, void* error_ctx,
                                      void (*set_error)(void* error_ctx, const char* kind, const char* message));
      void* managed_tensor_from_py_object_no_sync;
      int (*managed_tensor_to_py_object_no_sync)(TLP_DLManagedTensorVersioned* tensor, void** out_py_object);
      int (*dltensor_from_py_object_no_sync)(void* py_object, TLP_DLTensor* out);
      int (*current_work_stream)(int32_t device_type, int32_t device_id, void** out_current_stream);
    } TLP_ExchangeAPI;
    /* The allocator reports a failure here, not as a Python error: the caller falls back to the driver's
       allocation, which raises Paddle's own error if that fails too. */
    static void tlp_ignore_error(void* error_ctx, const char* kind, const char* message) {
      (void)error_ctx; (void)kind; (void)message;
    }
    /* Why one cast per arity calls every kernel correctly. The compiled `call` entry takes the buffer
       pointers (float*, half_t*, ...), one int (int32_t) or int64_t per symbolic size, and on CUDA the
       stream; it returns int32. We call it as int32_t(intptr_t, ...). On the platforms we build for,
       x86-64 (System V ABI) and AArch64 (AAPCS64, Linux), every integer or pointer argument travels in
       a 64-bit general register or, past the registers, in its own 8-byte stack slot, and a callee
       declared with a 32-bit parameter reads only the low 32 bits; pointers of every type have one
       representation. So the call is the same as one through the exact prototype provided every size
       fits its declared C type, which the launcher checks before the call (dyn_max: a larger value is
       a ValueError, never truncated). The CPU `call` takes no stream: the extra trailing argument is
       passed in a register or in caller-owned stack and never read, as both ABIs allow. Apple's
       AArch64 ABI packs stack arguments and breaks this; the #error below keeps the launcher off
       every other platform. Arities 0..33 = MAX_PARAMS + MAX_DYN + 1: every kernel the limits admit. */
    #if !defined(__linux__) || !(defined(__x86_64__) || defined(__aarch64__))
    #error "the fast launcher's call convention argument holds for Linux x86-64 and AArch64 only"
    #endif
    static int32_t tlp_call(void* fn, int n, intptr_t* a) {
      switch (n) {
    case 0: return ((int32_t (*)(void))fn)();
    case 1: return ((int32_t (*)(intptr_t))fn)(a[0]);
    case 2: return ((int32_t (*)(intptr_t, intptr_t))fn)(a[0], a[1]);
    case 3: return ((int32_t (*)(intptr_t, intptr_t, intptr_t))fn)(a[0], a[1], a[2]);
    case 4: return ((int32_t (*)(intptr_t, intptr_t, intptr_t, intptr_t))fn)(a[0], a[1], a[2], a[3]);
    case 5: return ((int32_t (*)(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t))fn)(a[0], a[1], a[2], a[3], a[4]);
    case 6: return ((int32_t (*)(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t))fn)(a[0], a[1], a[2], a[3], a[4], a[5]);
    case 7: return ((int32_t (*)(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6]);
    case 8: return ((int32_t (*)(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
    case 9: return ((int32_t (*)(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8]);
    case 10: return ((int32_t (*)(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9]);
    case 11: return ((int32_t (*)(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10]);
    case 12: return ((int32_t (*)(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11]);
    case 13: return ((int32_t (*)(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12]);
    case 14: return ((int32_t (*)(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13]);
    case 15: return ((int32_t (*)(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14]);
    case 16: return ((int32_t (*)(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15]);
    case 17: return ((int32_t (*)(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15], a[16]);
    case 18: return ((int32_t (*)(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15], a[16], a[17]);
    case 19: return ((int32_t (*)(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15], a[16], a[17], a[18]);
    case 20: return ((int32_t (*)(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15], a[16], a[17], a[18], a[19]);
    case 21: return ((int32_t (*)(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15], a[16], a[17], a[18], a[19], a[20]);
    case 22: return ((int32_t (*)(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15], a[16], a[17], a[18], a[19], a[20], a[21]);
    case 23: return ((int32_t (*)(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15], a[16], a[17], a[18], a[19], a[20], a[21], a[22]);
    case 24: return ((int32_t (*)(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15], a[16], a[17], a[18], a[19], a[20], a[21], a[22], a[23]);
    case 25: return ((int32_t (*)(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15], a[16], a[17], a[18], a[19], a[20], a[21], a[22], a[23], a[24]);
    case 26: return ((int32_t (*)(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15], a[16], a[17], a[18], a[19], a[20], a[21], a[22], a[23], a[24], a[25]);
    case 27: return ((int32_t (*)(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15], a[16], a[17], a[18], a[19], a[20], a[21], a[22], a[23], a[24], a[25], a[26]);
    case 28: return ((int32_t (*)(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15], a[16], a[17], a[18], a[19], a[20], a[21], a[22], a[23], a[24], a[25], a[26], a[27]);
    case 29: return ((int32_t (*)(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15], a[16], a[17], a[18], a[19], a[20], a[21], a[22], a[23], a[24], a[25], a[26], a[27], a[28]);
    case 30: return ((int32_t (*)(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15], a[16], a[17], a[18], a[19], a[20], a[21], a[22], a[23], a[24], a[25], a[26], a[27], a[28], a[29]);
    case 31: return ((int32_t (*)(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15], a[16], a[17], a[18], a[19], a[20], a[21], a[22], a[23], a[24], a[25], a[26], a[27], a[28], a[29], a[30]);
    case 32: return ((int32_t (*)(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15], a[16], a[17], a[18], a[19], a[20], a[21], a[22], a[23], a[24], a[25], a[26], a[27], a[28], a[29], a[30], a[31]);
    case 33: return ((int32_t (*)(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15], a[16], a[17], a[18], a[19], a[20], a[21], a[22], a[23], a[24], a[25], a[26], a[27], a[28], a[29], a[30], a[31], a[32]);
      }
      return -100000;
    }
    """
    ctypedef struct TLP_DLDevice:
        int32_t device_type
        int32_t device_id
    ctypedef struct TLP_DLDataType:
        uint8_t code
        uint8_t bits
        uint16_t lanes
    ctypedef struct TLP_DLTensor:
        void* data
        TLP_DLDevice device
        int32_t ndim
        TLP_DLDataType dtype
        int64_t* shape
        int64_t* strides
        uint64_t byte_offset
    ctypedef struct TLP_DLManagedTensorVersioned:
        void (*deleter)(TLP_DLManagedTensorVersioned* self) noexcept
        TLP_DLTensor dl_tensor
    ctypedef void (*TLP_SetError)(void* error_ctx, const char* kind, const char* message) noexcept
    ctypedef struct TLP_ExchangeAPI:
        uint32_t major
        int (*managed_tensor_allocator)(TLP_DLTensor* prototype, TLP_DLManagedTensorVersioned** out,
                                        void* error_ctx, TLP_SetError set_error) noexcept
        int (*managed_tensor_to_py_object_no_sync)(TLP_DLManagedTensorVersioned* tensor, void** out) noexcept
        int (*dltensor_from_py_object_no_sync)(void* py_object, TLP_DLTensor* out) noexcept
        int (*current_work_stream)(int32_t device_type, int32_t device_id, void** out_current_stream) noexcept
    void tlp_ignore_error(void* error_ctx, const char* kind, const char* message) noexcept
    int32_t tlp_call(void* fn, int n, intptr_t* a) noexcept nogil

cdef enum:
    MAX_PARAMS = 24
    MAX_DIMS = 8
    MAX_DYN = 8

cdef const TLP_ExchangeAPI* _api = NULL
cdef bint _allocates = False  # the bound API allocates framework tensors from C (DLPack 1.3's allocator)

#: (parameters, dimensions per buffer, symbolic dimensions) a Launcher can hold. tlp_call
#: dispatches every arity up to MAX_PARAMS + MAX_DYN + 1 (the stream), so all of them fit.
LIMITS = (MAX_PARAMS, MAX_DIMS, MAX_DYN)
MAX_CALL_ARGS = MAX_PARAMS + MAX_DYN + 1


def bind_exchange_api(source):
    """Bind a DLPack exchange API; return its DLPack major version (1 is the struct layout declared above).

    ``source``: the API's address (``seams.exchange_api_pointer``, which reads every shape Paddle has
    shipped), or a tensor type whose ``__dlpack_c_exchange_api__`` is the capsule (torch, for the GPU
    stand-in scripts).
    """
    global _api
    cdef intptr_t address
    if isinstance(source, int):
        address = source
    else:
        address = <intptr_t>PyCapsule_GetPointer(source.__dlpack_c_exchange_api__, b"dlpack_exchange_api")
    if address == 0:
        raise ValueError("no DLPack exchange API")
    global _allocates
    _api = <const TLP_ExchangeAPI*>address
    _allocates = _api.managed_tensor_allocator != NULL and _api.managed_tensor_to_py_object_no_sync != NULL
    return _api.major


cdef class Launcher:
    """One compiled kernel's prepared call (built by :func:`.fast_launch.prepare`).

    ``Launcher(runtime, slow, table)``: the kernel's :class:`.launch.KernelRuntime` (the protocol: device,
    switch, allocation, init, stream, restore, errors; read once here), upstream's launcher for every call
    off the happy path, and ``runtime.fast_table()``.
    """

    cdef object slow, tensor_type, outputs_meta, launch_stream, place_for, empty, launch_failed, mismatch
    cdef object too_large, default_device, current_gpu, set_gpu, init_kernel
    cdef void* fn
    cdef int n_params, n_inputs, n_outputs, n_dyn, device_type
    cdef bint stream_in_c      # the current stream from the exchange API's current_work_stream, in C
    cdef bint sole_gpu         # one GPU visible: always current, nothing to switch
    cdef uint64_t initialised  # bit g: the library's init() ran on GPU g (< 64; higher GPUs ask init_kernel)
    cdef int is_output[MAX_PARAMS]
    cdef int out_param[MAX_PARAMS]   # per output, in out_idx order: its parameter index
    cdef int out_in_c[MAX_PARAMS]    # per output: allocated through the exchange API (no view dtype)
    cdef int ndim[MAX_PARAMS]
    cdef int64_t dims[MAX_PARAMS][MAX_DIMS]   # >= 0: static extent; < 0: symbolic dimension -1-k
    cdef uint8_t code[MAX_PARAMS]
    cdef uint8_t bits[MAX_PARAMS]
    cdef uint16_t lanes[MAX_PARAMS]
    cdef int64_t dyn_max[MAX_DYN]  # the largest value of the C type `call` declares each symbolic size with

    def __init__(self, runtime, slow, tuple table):
        cdef int i, k, n_dyn
        cdef intptr_t fn
        fn, params, outputs_meta, dyn_max = table
        n_dyn = len(dyn_max)
        if len(params) > MAX_PARAMS or n_dyn > MAX_DYN:
            raise ValueError("kernel has too many parameters for the fast launcher")
        self.slow, self.fn, self.device_type, self.n_dyn = slow, <void*>fn, runtime.device_type, n_dyn
        self.tensor_type, self.outputs_meta = runtime.tensor_type, outputs_meta
        self.place_for, self.empty, self.launch_failed = runtime.place_for, runtime.empty, runtime.launch_failed
        self.mismatch, self.too_large, self.default_device = runtime.mismatch, runtime.too_large, runtime.default_gpu
        # The GPU steps only where they apply (a CUDA kernel on a driver with CUDA): None skips them in C.
        self.launch_stream = runtime.stream if runtime.cuda else None
        self.current_gpu = runtime.current_gpu if runtime.cuda else None
        self.set_gpu = runtime.set_gpu
        self.init_kernel = runtime.init_once.ensure if runtime.init_once is not None else None
        self.initialised = 0
        self.sole_gpu = runtime.sole_gpu  # False off the GPU path
        # Only where the driver vouches that the API's stream is the one its `stream` returns.
        self.stream_in_c = bool(runtime.cuda and runtime.stream_from_exchange_api and _api != NULL
                                and _api.current_work_stream != NULL)
        for k in range(n_dyn):
            self.dyn_max[k] = min(dyn_max[k], 2**63 - 1)
        self.n_params = len(params)
        self.n_outputs = 0
        for i, (is_out, dt, dims) in enumerate(params):
            if len(dims) > MAX_DIMS:
                raise ValueError("kernel buffer has too many dimensions for the fast launcher")
            self.is_output[i] = 1 if is_out else 0
            self.n_outputs += self.is_output[i]
            self.code[i], self.bits[i], self.lanes[i] = dt
            self.ndim[i] = len(dims)
            for k in range(len(dims)):
                self.dims[i][k] = dims[k]
        self.n_inputs = self.n_params - self.n_outputs
        for k, (i, _dtype, view_dtype, _dims) in enumerate(outputs_meta):
            self.out_param[k] = i
            self.out_in_c[k] = 1 if view_dtype is None else 0

    @property
    def outputs_in_c(self) -> tuple:
        """Per output (out_idx order): whether a call allocates it through the exchange API, in C."""
        return tuple(bool(self.out_in_c[k] and _allocates) for k in range(self.n_outputs))

    cdef int _accept(self, int i, TLP_DLTensor* t, int64_t* dyn, int* bound, int* dev_id) noexcept:
        """0: the tensor fits parameter i (binding symbolic dims); 1: not the fast path; 2: symbolic mismatch."""
        cdef int k
        cdef int64_t want, expected_stride
        if t.ndim != self.ndim[i] or t.dtype.code != self.code[i] or t.dtype.bits != self.bits[i] \
                or t.dtype.lanes != self.lanes[i] or t.device.device_type != self.device_type:
            return 1
        if dev_id[0] < 0:
            dev_id[0] = t.device.device_id
        elif t.device.device_id != dev_id[0]:
            return 1
        for k in range(t.ndim):
            want = self.dims[i][k]
            if want >= 0:
                if t.shape[k] != want:
                    return 1
            elif bound[-1 - want]:
                if t.shape[k] != dyn[-1 - want]:
                    return 2
            else:
                dyn[-1 - want] = t.shape[k]
                bound[-1 - want] = 1
        if t.strides != NULL:  # NULL means compact row-major
            for k in range(t.ndim):
                if t.shape[k] == 0:  # zero-size: no element is addressed, and Paddle reports strides of 0
                    return 0
            expected_stride = 1
            for k in range(t.ndim - 1, -1, -1):
                if t.shape[k] != 1 and t.strides[k] != expected_stride:
                    return 1
                expected_stride *= t.shape[k]
        return 0

    cdef bint _zero_size(self, TLP_DLTensor* dl) noexcept:
        """On the error path: whether a tensor of the call has no elements (the runtime's hint then)."""
        cdef int i, k
        for i in range(self.n_params):
            for k in range(dl[i].ndim):
                if dl[i].shape[k] == 0:
                    return True
        return False

    def __call__(self, *args, **kwargs):
        cdef TLP_DLTensor dl[MAX_PARAMS]
        cdef intptr_t call_args[MAX_PARAMS + MAX_DYN + 1]
        cdef int64_t dyn[MAX_DYN]
        cdef int bound[MAX_DYN]
        cdef int dev_id = -1
        cdef int previous = -1
        cdef int i, j = 0, k, verdict, n = 0
        cdef int32_t rc = 0
        cdef intptr_t stream = 0
        cdef void* raw_stream
        cdef int o
        cdef int64_t want
        cdef int64_t out_shape[MAX_PARAMS][MAX_DIMS]
        cdef TLP_DLTensor proto
        cdef TLP_DLManagedTensorVersioned* managed
        cdef void* raw
        cdef object arg, place = None
        if kwargs or len(args) != self.n_inputs:
            return self.slow(*args, **kwargs)
        for k in range(self.n_dyn):
            bound[k] = 0
        for i in range(self.n_params):
            if self.is_output[i]:
                continue
            arg = args[j]
            j += 1
            if not isinstance(arg, self.tensor_type):
                return self.slow(*args)
            if _api.dltensor_from_py_object_no_sync(<void*>arg, &dl[i]) != 0:
                PyErr_Clear()
                return self.slow(*args)
            verdict = self._accept(i, &dl[i], dyn, bound, &dev_id)
            if verdict == 1:
                return self.slow(*args)
            if verdict == 2:
                raise self.mismatch(args)
        for k in range(self.n_dyn):
            if dyn[k] > self.dyn_max[k]:
                raise self.too_large(args, k)
        if dev_id < 0:  # no tensor input: the runtime's default GPU, as upstream's launcher does
            dev_id = self.default_device()
        # Protocol steps 2-7 (launch.py): the tensors' GPU current from before the outputs are allocated
        # (an allocation on a place makes that GPU current for good) until after the launch.
        # KernelRuntime.select, without its Python frame: -1 when there is nothing to undo.
        if self.current_gpu is not None and not (self.sole_gpu and dev_id == 0):
            previous = self.current_gpu()
            if previous == dev_id:
                previous = -1
            else:
                self.set_gpu(dev_id)
        try:
            outs = None
            if self.n_outputs:
                outs = []
                for o in range(self.n_outputs):
                    i = self.out_param[o]
                    if self.out_in_c[o] and _allocates:
                        for k in range(self.ndim[i]):
                            want = self.dims[i][k]
                            out_shape[o][k] = want if want >= 0 else dyn[-1 - want]
                        proto.data = NULL
                        proto.device.device_type = self.device_type
                        proto.device.device_id = dev_id if dev_id > 0 else 0
                        proto.ndim = self.ndim[i]
                        proto.dtype.code, proto.dtype.bits, proto.dtype.lanes = self.code[i], self.bits[i], self.lanes[i]
                        proto.shape = out_shape[o]
                        proto.strides = NULL
                        proto.byte_offset = 0
                        managed = NULL
                        if _api.managed_tensor_allocator(&proto, &managed, NULL, tlp_ignore_error) == 0 \
                                and managed != NULL:
                            # The tensor's data now; the Python tensor owns it from the next call on.
                            dl[i] = proto
                            dl[i].data = managed.dl_tensor.data
                            dl[i].byte_offset = managed.dl_tensor.byte_offset
                            if _api.managed_tensor_to_py_object_no_sync(managed, &raw) == 0:
                                out = <object>raw
                                Py_DECREF(out)  # the call returned a new reference; `out` holds its own
                                outs.append(out)
                                continue
                            PyErr_Clear()  # not freed here: DLPack says the call steals the tensor
                            return self.slow(*args)
                        PyErr_Clear()
                    # No allocator, a view dtype, or one the API refused: the driver's allocation.
                    if place is None:
                        place = self.place_for(dev_id)
                    _i, dtype, view_dtype, shape = self.outputs_meta[o]
                    out = self.empty([s if s >= 0 else dyn[-1 - s] for s in shape], dtype, place)
                    if view_dtype is not None:
                        out = out.view(view_dtype)
                    if _api.dltensor_from_py_object_no_sync(<void*>out, &dl[i]) != 0:
                        PyErr_Clear()
                        return self.slow(*args)
                    outs.append(out)
            for i in range(self.n_params):
                call_args[n] = <intptr_t>dl[i].data + <intptr_t>dl[i].byte_offset
                n += 1
            for k in range(self.n_dyn):
                call_args[n] = <intptr_t>dyn[k]
                n += 1
            if self.launch_stream is not None:
                raw_stream = NULL
                if self.stream_in_c and _api.current_work_stream(2, dev_id, &raw_stream) == 0:  # 2: kDLCUDA
                    stream = <intptr_t>raw_stream
                else:
                    if self.stream_in_c:
                        PyErr_Clear()  # current_work_stream failed (it may have set a Python error): ask the driver
                    stream = self.launch_stream(dev_id)
                if self.init_kernel is not None and not (dev_id < 64 and (self.initialised >> dev_id) & 1):
                    self.init_kernel(dev_id)
                    if dev_id < 64:
                        self.initialised |= (<uint64_t>1) << dev_id
            call_args[n] = stream
            n += 1
            with nogil:
                rc = tlp_call(self.fn, n, call_args)
        finally:
            if previous >= 0:
                self.set_gpu(previous)
        if rc != 0:
            raise self.launch_failed(self._zero_size(dl))
        if outs is None:
            return []  # upstream's launcher returns an empty list without out_idx
        return outs[0] if len(outs) == 1 else outs
