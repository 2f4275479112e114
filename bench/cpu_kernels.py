"""The CPU kernels the cold-start benches compile: K distinct ones from one source (worker-script text)."""

#: ``kernel(c)``: a 64x64 float32 GEMM plus ``c``, a distinct kernel (and cache entry) for every ``c``;
#: ``C[0, 0]`` of ones is ``64 + c``. Needs ``tilelang.language as T`` in the worker script.
MATMUL_PLUS_C = '''
def kernel(c):
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64, 64), "float32"), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(4, 4) as (bx, by):
            acc = T.alloc_local((16, 16), "float32")
            for i, j in T.grid(16, 16):
                acc[i, j] = c
            for k in T.serial(64):
                for i, j in T.grid(16, 16):
                    acc[i, j] += A[by * 16 + i, k] * B[k, bx * 16 + j]
            for i, j in T.grid(16, 16):
                C[by * 16 + i, bx * 16 + j] = acc[i, j]
    return main
'''
