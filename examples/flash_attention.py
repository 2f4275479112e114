"""Flash-attention forward (multi-head, [batch, seq, heads, dim] layout) with TileLang on Paddle tensors.

    python examples/flash_attention.py [--batch 2] [--heads 8] [--seq 1024] [--dim 64] [--causal] [--arch sm_90a]
    python examples/flash_attention.py --decode [--batch 4] [--heads 16] [--seq 4096] [--dim 128]

Each block of queries streams over key/value tiles with an online softmax:
scores on tensor cores (``T.gemm``), a running row maximum and sum, and the
output accumulated in registers, so the seq x seq score matrix never exists.
The kernel is CUDA-only (shared memory, tensor-core GEMMs): with a GPU it runs
and is checked against softmax(QK^T / sqrt(d)) V computed with Paddle ops and
timed next to Paddle's ``scaled_dot_product_attention``; without one, ``--arch``
compiles it for that architecture when nvcc is present (TileLang's C target
cannot run it). ``--decode`` runs the decoding shape instead: one query token per
sequence over ``--seq`` cached keys (:func:`flash_decode_fwd`, split over the SMs).
(No `from __future__ import annotations`: TileLang evaluates kernel annotations.)
"""

from common import arch_type, parser, positive_int


def parse_args(argv=None):
    p = parser(__doc__)
    p.add_argument("--batch", type=positive_int, default=2, help="batch size")
    p.add_argument("--heads", type=positive_int, default=8, help="attention heads")
    p.add_argument("--seq", type=positive_int, default=1024, help="sequence length (any value)")
    p.add_argument("--dim", type=positive_int, default=64, help="head dimension")
    p.add_argument("--causal", action="store_true", help="causal (lower-triangular) attention")
    p.add_argument("--decode", action="store_true",
                   help="decode attention: one query token per sequence over --seq cached keys")
    p.add_argument("--arch", type=arch_type, help="compile for this arch (e.g. sm_90a) when there is no GPU")
    args = p.parse_args(argv)
    if args.decode and args.causal:
        p.error("--causal: with --decode the one query token attends to every cached key; drop --causal")
    return args


if __name__ == "__main__":
    parse_args()  # --help and argument errors answer before the seconds Paddle and TileLang take to import

import math  # noqa: E402
import shutil  # noqa: E402

import paddle  # noqa: E402

import tilelang  # noqa: E402
import tilelang.language as T  # noqa: E402
from common import compile_error, paddle_sees_gpu, synchronizer, time_us  # noqa: E402
from quickstart import compute_capability  # noqa: E402


def online_softmax(rows, cols, dim, scale):
    """One key tile's online-softmax update as two macros, shared by the kernels (inlined where called).

    ``stats``: with ``s`` the tile's raw scores ``[rows, cols]``, the running row maximum and sum take the
    tile in and ``s`` becomes ``exp2(s * scale - max * scale)``; ``rescale`` is the old maximum's factor.
    ``finish``: ``s`` is copied to ``p`` (the next GEMM's operand) and ``out`` (``[rows, dim]``),
    accumulated under the old maximum, is rescaled to the new. Split so that the ping-pong schedule can
    run ``stats`` while the previous tile's P V GEMM still writes ``out``.
    """
    acc = "float32"

    @T.macro
    def stats(s, row_max, prev_max, rescale, tile_sum, row_sum):
        T.copy(row_max, prev_max)
        T.fill(row_max, -T.infinity(acc))
        T.reduce_max(s, row_max, dim=1, clear=False)
        for i in T.Parallel(rows):
            row_max[i] = T.max(row_max[i], prev_max[i])
            rescale[i] = T.exp2(prev_max[i] * scale - row_max[i] * scale)
        for i, j in T.Parallel(rows, cols):
            s[i, j] = T.exp2(s[i, j] * scale - row_max[i] * scale)
        T.reduce_sum(s, tile_sum, dim=1)
        for i in T.Parallel(rows):
            row_sum[i] = row_sum[i] * rescale[i] + tile_sum[i]

    @T.macro
    def finish(s, p, out, rescale):
        T.copy(s, p)
        for i, j in T.Parallel(rows, dim):
            out[i, j] *= rescale[i]

    return stats, finish



def past_end_mask(rows, cols, seq):
    """A macro ``mask(s, t)``: in key tile t, if it reaches past ``seq``, the scores of the keys beyond become -inf
    (their rows of K were zero-filled by the load, which a plain softmax would count)."""

    @T.macro
    def mask(s, t):
        if (t + 1) * cols > seq:
            for i, j in T.Parallel(rows, cols):
                s[i, j] = T.if_then_else(t * cols + j < seq, s[i, j], -T.infinity("float32"))

    return mask

# Measured on an H100 against torch SDPA at b4 h16 s4096 d128 (docs/performance.md, "Flash attention"): both
# modes run fastest with FlashAttention-3's ping-pong, 128-key tiles and two K/V buffers (the default `stages`
# below), non-causal with its loads and iteration 0 written out ("producer", 1.00x SDPA against 0.95x for
# "pingpong"), ahead of 192-key tiles non-causal and the serial schedule with 176-key tiles causal; all with fast
# math (--use_fast_math: exp2 as one ex2.approx.ftz). The ping-pong schedules issue Hopper's WGMMA themselves, so
# other GPUs keep the serial schedule with 128x128 tiles.
FA_SCHEDULES = {False: dict(block_N=128, schedule="producer"), True: dict(block_N=128, schedule="pingpong")}
FA_SCHEDULE_NOT_HOPPER = dict(block_N=128, schedule="serial")
# Hopper's dynamic shared memory per block (227 KB) less the 1 KB of the kernel's static barriers.
SHARED_MEMORY_PER_BLOCK = 226 * 1024
FAST_MATH = {"tl.enable_fast_math": True}


def has_wgmma(arch=None) -> bool:
    """Whether kernels for ``arch`` (e.g. "sm_90a"; None: Paddle's current GPU) can issue Hopper's WGMMA.

    WGMMA exists on compute capability 9.x only (Blackwell's tensor cores take tcgen05 instead), and
    ``T.wgmma_gemm`` fails to compile elsewhere rather than fall back.
    """
    capability = compute_capability(arch)
    return capability is not None and capability // 10 == 9


def flash_attention_fwd(batch, heads, seq, dim, causal=False, block_M=128, block_N=None, stages=None, threads=256,
                        schedule=None, arch=None):
    """Flash-attention forward for ``[batch, seq, heads, dim]`` float16 Q, K, V.

    Defaults are for Hopper (H100/H200): 128-query tiles, two consumer warpgroups (256 threads) that
    each own 64 query rows, and ``block_N``/``schedule`` from ``FA_SCHEDULES`` for ``causal``, the
    fastest of the configurations timed on an H100 with upstream tilelang 0.1.15 on torch
    (docs/performance.md); ``FA_SCHEDULE_NOT_HOPPER`` where :func:`has_wgmma` says no for ``arch``
    (default: Paddle's current GPU; pass it when compiling for another). The program carries
    ``FAST_MATH`` as its pass configs.

    ``schedule="serial"``: each tile's Q K^T, softmax and P V in turn. ``"pingpong"`` (FlashAttention-3's
    schedule): iteration t issues Q K_t^T and the previous tile's P V without waiting
    (``T.wgmma_gemm``), runs tile t's softmax while P V is still in flight, and the two warpgroups take
    turns issuing their GEMMs (named barriers 5 and 6), so one's softmax overlaps the other's GEMMs.
    ``"producer"`` (non-causal only, the default there): the same turns, with the loading warpgroup and
    its barriers written out (:func:`producer_pingpong`), which lets iteration 0 skip its P V; it takes
    two K/V buffers and ``threads=256``, ``block_M=128``, and where those do not fit the default is
    ``"pingpong"``.
    ``stages``: how many K/V tiles are in shared memory. Ping-pong takes 1 or 2 (default: 2 where they fit
    in ``SHARED_MEMORY_PER_BLOCK``: at the default 128-key tiles, head dim 176 and below); with 2 the loop
    runs its iterations in pairs over two named K/V buffers, so the next tile loads while this one is in use.
    Serial: T.Pipelined's stages (default 1).

    Any ``seq``: key rows past the end of the sequence are masked out of the
    softmax (their tile is zero-filled by ``T.copy``, which a plain softmax would
    count); causal attention never visits a tile above the diagonal, and its
    query blocks are launched longest-first (the last block has the most tiles),
    so the short ones fill the tail of the grid instead of the long ones.
    """
    chosen = FA_SCHEDULES[bool(causal)] if has_wgmma(arch) else FA_SCHEDULE_NOT_HOPPER
    block_N = chosen["block_N"] if block_N is None else block_N
    two_buffers = (block_M + 4 * block_N) * dim * 2  # bytes of Q (which also stages the output), two K and two V
    if schedule is None:
        schedule = chosen["schedule"]
        if schedule == "producer" and (stages not in (None, 2) or (threads, block_M) != (256, 128)
                                       or two_buffers > SHARED_MEMORY_PER_BLOCK):
            schedule = "pingpong"  # the producer schedule takes two K/V buffers, block_M=128 and threads=256 only
    if schedule not in ("serial", "pingpong", "producer"):
        raise ValueError(f"schedule: expected 'serial', 'pingpong' or 'producer', got {schedule!r}")
    if schedule == "producer":
        if causal:
            raise ValueError("schedule='producer': non-causal only (its loop is laid out for the fixed number of key "
                             "tiles of every query block), got causal=True; use 'pingpong'")
        if (threads, block_M, stages) not in ((256, 128, None), (256, 128, 2)):
            raise ValueError(f"schedule='producer': needs threads=256, block_M=128 and two K/V buffers (stages=2), got "
                             f"threads={threads}, block_M={block_M}, stages={stages}")
        if two_buffers > SHARED_MEMORY_PER_BLOCK:
            raise ValueError(f"schedule='producer': Q and two K and two V tiles of block_N={block_N} keys at dim={dim} "
                             f"need {two_buffers} bytes of shared memory, more than "
                             f"{SHARED_MEMORY_PER_BLOCK}; use 'pingpong' with stages=1")
        return producer_pingpong(batch, heads, seq, dim, block_N)
    pingpong = schedule == "pingpong"
    if stages is None:  # ping-pong: two K/V buffers where they fit
        stages = 2 if pingpong and two_buffers <= SHARED_MEMORY_PER_BLOCK else 1
    double = pingpong and stages == 2
    if pingpong and stages not in (1, 2):
        raise ValueError(f"schedule='pingpong': stages: expected 1 or 2 (K/V buffers), got {stages!r}")
    if pingpong and (threads, block_M) != (256, 128):  # the turns are two warpgroups of 64 query rows
        raise ValueError(f"schedule='pingpong': needs threads=256 and block_M=128 (two warpgroups taking turns), "
                         f"got threads={threads}, block_M={block_M}")
    scale = 1.0 / math.sqrt(dim) * 1.4426950408889634  # softmax via exp2: fold log2(e) into the scale
    shape = [batch, seq, heads, dim]
    dtype, acc = "float16", "float32"
    ragged = seq % block_N != 0  # the last key tile runs past the sequence
    # Ping-pong masks a tile after its Q K^T has landed: a mask written under a branch before the asynchronous
    # WGMMA into the scores made ptxas serialize the kernel's WGMMAs (its C7515 report;
    # tests_paddle/test_examples.py holds every example kernel to none), and masking first was slower even
    # without that report (non-causal at 128-key tiles on an H100; docs/performance.md).
    stats, finish = online_softmax(block_M, block_N, dim, scale)
    mask_past_end = past_end_mask(block_M, block_N, seq)

    @T.macro
    def init_scores(s, bq, t, tiles):
        """Before Q K_t^T (the serial schedule): scores start at 0 (kept) or -inf (masked: past the
        diagonal when causal, or past the sequence's end)."""
        if causal:  # only a tile reaching past the diagonal (or the sequence's end) has masked scores
            if ((t + 1) * block_N > bq * block_M + 1) | ((t + 1) * block_N > seq):
                for i, j in T.Parallel(block_M, block_N):
                    s[i, j] = T.if_then_else((bq * block_M + i >= t * block_N + j) & (t * block_N + j < seq),
                                             0, -T.infinity(acc))
            else:
                T.clear(s)
        elif ragged:  # a per-element mask in every tile
            for i, j in T.Parallel(block_M, block_N):
                s[i, j] = T.if_then_else((t * block_N + j < seq) & (t < tiles), 0, -T.infinity(acc))
        else:
            T.clear(s)

    @T.macro
    def mask_landed_scores(s, bq, t):
        """Ping-pong: once Q K_t^T has landed, masked scores (past the diagonal when causal, past the sequence's
        end) become -inf; only the tiles that have any are visited: without causal, just a tile reaching past
        the sequence's end."""
        if causal:
            if ((t + 1) * block_N > bq * block_M + 1) | ((t + 1) * block_N > seq):
                for i, j in T.Parallel(block_M, block_N):
                    s[i, j] = T.if_then_else((bq * block_M + i >= t * block_N + j) & (t * block_N + j < seq),
                                             s[i, j], -T.infinity(acc))
        else:
            mask_past_end(s, t)

    @T.macro
    def pingpong_step(K, V, q, k, v, s, p, out, state, held, warpgroup, b, h, bq, t, tiles):
        """Ping-pong iteration t, t <= tiles: S = Q K_t^T (t < tiles) and O += P_{t-1} V_{t-1}, both issued
        before either is waited for; iteration `tiles` only finishes the last P V (no softmax: running one on
        all-masked scores there was measured slower at 128-key tiles). With two buffers the loop runs in pairs
        of iterations, and a pair's second past `tiles` does nothing but load (past the sequence's end; the
        pipeline still expects its loads): running it all-masked instead made ptxas spill."""
        row_max, prev_max, rescale, tile_sum, row_sum = state
        T.copy(K[b, t * block_N:(t + 1) * block_N, h, :], k)
        T.copy(V[b, T.max(t - 1, 0) * block_N:(T.max(t - 1, 0) + 1) * block_N, h, :], v)
        if t <= tiles:
            T.clear(s)
            if (t > 0) | (warpgroup == 1):  # warpgroup 0 issues first, then they take turns
                T.sync_threads(5 + warpgroup, 256)
            if t < tiles:
                T.wgmma_gemm(q, k, s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
            T.wgmma_gemm(p, v, out, policy=T.GemmWarpPolicy.FullRow)
            T.named_barrier_arrive(6 - warpgroup, 256)
            T.wait_wgmma(1)
            # The pipeline releases a buffer after its last reader: read K (V) once its GEMM has
            # landed, or the release would follow the asynchronous issue and the next load overwrite it.
            held[0] = k[0, 0]
            if t < tiles:
                mask_landed_scores(s, bq, t)
                stats(s, row_max, prev_max, rescale, tile_sum, row_sum)
            T.wait_wgmma(0)
            held[0] = v[0, 0]
            if t < tiles:
                finish(s, p, out, rescale)

    @T.prim_func
    def main(Q: T.Tensor(shape, dtype), K: T.Tensor(shape, dtype), V: T.Tensor(shape, dtype), O: T.Tensor(shape, dtype)):
        with T.Kernel(T.ceildiv(seq, block_M), heads, batch, threads=threads) as (bx, h, b):
            bq = T.ceildiv(seq, block_M) - 1 - bx if causal else bx
            q = T.alloc_shared([block_M, dim], dtype)
            k = T.alloc_shared([block_N, dim], dtype)
            v = T.alloc_shared([block_N, dim], dtype)
            # Ping-pong stages its output through Q's buffer (each warpgroup's rows are its own, read by its
            # last Q K^T, which has landed): 32 KB less shared memory, measured faster on an H200 and an H100.
            o = None if pingpong else T.alloc_shared([block_M, dim], dtype)
            s = T.alloc_fragment([block_M, block_N], acc)
            p = T.alloc_fragment([block_M, block_N], dtype)
            out = T.alloc_fragment([block_M, dim], acc)
            row_max, prev_max, rescale, tile_sum, row_sum = (T.alloc_fragment([block_M], acc) for _ in range(5))
            state = (row_max, prev_max, rescale, tile_sum, row_sum)
            if double:  # ping-pong's second K and V buffers, for the odd iterations
                k2 = T.alloc_shared([block_N, dim], dtype)
                v2 = T.alloc_shared([block_N, dim], dtype)

            T.copy(Q[b, bq * block_M:(bq + 1) * block_M, h, :], q)
            T.fill(out, 0)
            T.fill(row_sum, 0)
            T.fill(row_max, -T.infinity(acc))
            tiles = T.ceildiv(seq, block_N)
            if causal:  # tiles wholly above the diagonal are never loaded
                tiles = T.min(tiles, T.ceildiv((bq + 1) * block_M, block_N))
            if pingpong:
                held = T.alloc_local([1], dtype)
                warpgroup = T.get_thread_binding() // 128
                T.clear(p)  # iteration 0's P V adds nothing
                if double:  # iterations in pairs, the second on the second buffers: each stage's buffer is named
                    # in the code, where T.Pipelined's own stages offset the WGMMA descriptors by the stage
                    # at run time, which made ptxas serialize the kernel's WGMMAs (C7515). The last pair always
                    # ends past iteration `tiles` (an idle pair more when `tiles` is odd): where every second
                    # iteration was live, the compiler dropped its `t <= tiles` and ptxas spilled (580 bytes at
                    # seq 8192 with 192-key tiles, which ran at 0.57x SDPA on an H100).
                    for u in T.Pipelined(T.ceildiv(tiles + 2, 2), num_stages=1):
                        pingpong_step(K, V, q, k, v, s, p, out, state, held, warpgroup, b, h, bq, 2 * u, tiles)
                        pingpong_step(K, V, q, k2, v2, s, p, out, state, held, warpgroup, b, h, bq, 2 * u + 1, tiles)
                else:
                    for t in T.Pipelined(tiles + 1, num_stages=1):
                        pingpong_step(K, V, q, k, v, s, p, out, state, held, warpgroup, b, h, bq, t, tiles)
                if warpgroup == 0:
                    T.sync_threads(5, 256)  # warpgroup 1's last turn, so no arrival is left pending
            else:
                for t in T.Pipelined(tiles, num_stages=stages):
                    T.copy(K[b, t * block_N:(t + 1) * block_N, h, :], k)
                    init_scores(s, bq, t, tiles)
                    T.gemm(q, k, s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                    stats(s, row_max, prev_max, rescale, tile_sum, row_sum)
                    finish(s, p, out, rescale)
                    T.copy(V[b, t * block_N:(t + 1) * block_N, h, :], v)
                    T.gemm(p, v, out, policy=T.GemmWarpPolicy.FullRow)
            for i, j in T.Parallel(block_M, dim):
                out[i, j] /= row_sum[i]
            T.copy(out, q if pingpong else o)
            T.copy(q if pingpong else o, O[b, bq * block_M:(bq + 1) * block_M, h, :])

    return main.with_attr("tilelang_pass_configs", FAST_MATH)


def producer_pingpong(batch, heads, seq, dim, block_N):
    """Non-causal ping-pong (``schedule="producer"``) with its warp specialisation written out.

    A third warpgroup (threads 256-383) loads Q and the K/V tiles by TMA into two K and two V buffers,
    each with an mbarrier saying "loaded" (the TMA's bytes arrived) and one saying "free" (all 256 consumer
    threads are done with it); the two consumer warpgroups take turns as in ``"pingpong"``. Written out,
    iteration 0 (Q K_0^T and its softmax) runs in straight-line code ahead of the loop, so no iteration
    issues a P V GEMM of an all-zero P. Under T.Pipelined's automatic warp specialisation that iteration
    could not be peeled (its GEMM was laid out over all 12 warps) nor skipped (under ``if t > 0`` ptxas
    serialized the WGMMAs, C7514). For a ragged length the producer loads the last, partial tile first
    (the online softmax takes tiles in any order), so only iteration 0 masks, at a place known when
    compiling. Measured 1.00x SDPA on an H100 at b4 h16 s4096 d128, against 0.95x for ``"pingpong"``
    (docs/performance.md).
    """
    block_M = 128
    scale = 1.0 / math.sqrt(dim) * 1.4426950408889634
    shape = [batch, seq, heads, dim]
    dtype, acc = "float16", "float32"
    tiles = -(-seq // block_N)
    ragged = seq % block_N != 0
    stats, finish = online_softmax(block_M, block_N, dim, scale)
    mask_tail = past_end_mask(block_M, block_N, seq)

    @T.macro
    def load(K, V, k, v, k_full, v_full, k_free, v_free, slot, b, h, u, t):
        """The producer's load t (its u-th into buffer `slot`): K and V of tile t, each once its buffer is free."""
        if t < tiles:
            T.barrier_wait(k_free[slot], (u & 1) ^ 1)
            n = (t + tiles - 1) % tiles if ragged else t  # a ragged length's last tile goes first
            # emit_arrive: the issuing thread's arrival carries the bytes the barrier then waits for.
            T.tma_copy(K[b, n * block_N:(n + 1) * block_N, h, :], k, barrier=k_full[slot],
                       annotations={"emit_arrive": 1})
            T.barrier_wait(v_free[slot], (u & 1) ^ 1)
            T.tma_copy(V[b, n * block_N:(n + 1) * block_N, h, :], v, barrier=v_full[slot],
                       annotations={"emit_arrive": 1})

    @T.macro
    def step(q, k, v, s, p, out, k_full, v_full, k_free, v_free, kb, vb, state, warpgroup, t, limit):
        """Step t, 1 <= t <= limit (<= tiles): Q K_t^T (t < tiles) and P_{t-1} V_{t-1}; past `limit` nothing."""
        row_max, prev_max, rescale, tile_sum, row_sum = state
        if t <= limit:
            T.clear(s)
            T.sync_threads(5 + warpgroup, 256)
            if t < tiles:
                T.barrier_wait(k_full[kb], (t // 2) & 1)
                T.wgmma_gemm(q, k, s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
            T.barrier_wait(v_full[vb], ((t - 1) // 2) & 1)
            T.wgmma_gemm(p, v, out, policy=T.GemmWarpPolicy.FullRow)
            T.named_barrier_arrive(6 - warpgroup, 256)
            T.wait_wgmma(1)
            if t < tiles:
                T.barrier_arrive(k_free[kb])
                stats(s, row_max, prev_max, rescale, tile_sum, row_sum)
            T.wait_wgmma(0)
            T.barrier_arrive(v_free[vb])
            if t < tiles:
                finish(s, p, out, rescale)

    @T.prim_func
    def main(Q: T.Tensor(shape, dtype), K: T.Tensor(shape, dtype), V: T.Tensor(shape, dtype), O: T.Tensor(shape, dtype)):
        with T.Kernel(T.ceildiv(seq, block_M), heads, batch, threads=384) as (bx, h, b):
            q = T.alloc_shared([block_M, dim], dtype)
            k = T.alloc_shared([block_N, dim], dtype)
            k2 = T.alloc_shared([block_N, dim], dtype)
            v = T.alloc_shared([block_N, dim], dtype)
            v2 = T.alloc_shared([block_N, dim], dtype)
            s = T.alloc_fragment([block_M, block_N], acc)
            p = T.alloc_fragment([block_M, block_N], dtype)
            out = T.alloc_fragment([block_M, dim], acc)
            row_max, prev_max, rescale, tile_sum, row_sum = (T.alloc_fragment([block_M], acc) for _ in range(5))
            state = (row_max, prev_max, rescale, tile_sum, row_sum)
            q_full = T.alloc_barrier([1])
            k_full = T.alloc_barrier([1, 1])
            v_full = T.alloc_barrier([1, 1])
            k_free = T.alloc_barrier([256, 256])
            v_free = T.alloc_barrier([256, 256])
            tx = T.get_thread_binding()

            if tx >= 256:  # the producer warpgroup
                T.dec_max_nreg(24)
                T.tma_copy(Q[b, bx * block_M:(bx + 1) * block_M, h, :], q, barrier=q_full[0],
                           annotations={"emit_arrive": 1})
                for u in T.serial(T.ceildiv(tiles, 2)):
                    load(K, V, k, v, k_full, v_full, k_free, v_free, 0, b, h, u, 2 * u)
                    load(K, V, k2, v2, k_full, v_full, k_free, v_free, 1, b, h, u, 2 * u + 1)
            else:
                T.inc_max_nreg(240)
                warpgroup = tx // 128
                T.fill(out, 0)
                T.fill(row_sum, 0)
                T.fill(row_max, -T.infinity(acc))
                T.barrier_wait(q_full[0], 0)
                # Iteration 0: Q K_0^T and its softmax (masked if its tile, the last one, is partial); no P V yet.
                # Warpgroup 0 issues first, then they take turns (named barriers 5 and 6).
                T.barrier_wait(k_full[0], 0)
                T.clear(s)
                if warpgroup == 1:
                    T.sync_threads(6, 256)
                T.wgmma_gemm(q, k, s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                T.named_barrier_arrive(6 - warpgroup, 256)
                T.wait_wgmma(0)
                T.barrier_arrive(k_free[0])
                mask_tail(s, tiles - 1)
                stats(s, row_max, prev_max, rescale, tile_sum, row_sum)
                finish(s, p, out, rescale)
                # Steps 1 .. tiles in pairs, each buffer named in the code (t odd: K_t in k2, V_{t-1} in v; t even:
                # k, v2). The loop's last pair has its first step live and its second idle: with both live, or
                # both idle, ptxas spilled 52-184 bytes at some lengths (and serialized the WGMMAs, C7512, at
                # 4096 keys). So with an even number of tiles the last step (the last P V, on v2) follows it.
                limit = tiles if tiles % 2 else tiles - 1
                for u in T.serial((limit + 1) // 2):
                    step(q, k2, v, s, p, out, k_full, v_full, k_free, v_free, 1, 0, state, warpgroup, 2 * u + 1,
                         limit)
                    step(q, k, v2, s, p, out, k_full, v_full, k_free, v_free, 0, 1, state, warpgroup, 2 * u + 2,
                         limit)
                if tiles % 2 == 0:
                    T.barrier_wait(v_full[1], ((tiles - 1) // 2) & 1)
                    T.sync_threads(5 + warpgroup, 256)
                    T.wgmma_gemm(p, v2, out, policy=T.GemmWarpPolicy.FullRow)
                    T.named_barrier_arrive(6 - warpgroup, 256)
                    T.wait_wgmma(0)
                if warpgroup == 0:
                    T.sync_threads(5, 256)  # warpgroup 1's last turn, so no arrival is left pending
                for i, j in T.Parallel(block_M, dim):
                    out[i, j] /= row_sum[i]
                T.copy(out, q)  # through Q's buffer, as "pingpong"
                T.copy(q, O[b, bx * block_M:(bx + 1) * block_M, h, :])

    return main.with_attr("tilelang_pass_configs", FAST_MATH)


def decode_splits(batch, heads, kv_len, block_N=128, sms=132):
    """KV splits for :func:`flash_decode_fwd`: as many as fill one wave of blocks, one per SM.

    ``sms`` is the GPU's SM count (132 on an H100/H200 SXM). At ``block_N`` 128 and dim 128 a block's
    two stages of K and V take 128 KB of shared memory, so one block fits per SM; more splits than
    one wave run as two or three waves of shorter blocks plus a ragged last one. On an H200 that rule
    took eight decode shapes from 0.58-0.99x to 0.94-1.02x SDPA (docs/performance.md).
    """
    tiles = -(-kv_len // block_N)
    return max(1, min(tiles, sms // (batch * heads)))


def flash_decode_fwd(batch, heads, kv_len, dim, splits=None, block_N=128, threads=128, stages=2):
    """Attention of one query token per sequence over ``kv_len`` cached keys (decoding), float16.

    Q is ``[batch, heads, dim]``, K and V ``[batch, kv_len, heads, dim]`` (the flash-attention
    layout), O ``[batch, heads, dim]``. One block per (batch, head) would leave most of a GPU idle,
    so the keys are cut into ``splits`` ranges (default :func:`decode_splits`): each block runs the
    online softmax over its range and writes its partial output and log-sum-exp to the workspaces
    ``lse_part`` (``[batch, heads, splits]``) and ``o_part`` (``[batch, heads, splits, dim]``),
    both float32; a second kernel in the same call merges the ranges. Compile with ``out_idx=[5]``
    and pass the two workspaces (allocated once, reused by every call):
    ``kernel(q, k, v, lse_part, o_part)`` returns O.

    The query row is repeated over a 16-row tile so the scores and the output run on tensor cores
    (an MMA is 16 rows); reading K and V is the cost, not the arithmetic. Any ``kv_len``: keys past
    the end are masked, a range with no keys contributes nothing.
    """
    splits = decode_splits(batch, heads, kv_len, block_N) if splits is None else splits
    if isinstance(splits, bool) or not isinstance(splits, int) or splits < 1:
        raise ValueError(f"splits: expected a positive int (KV ranges per sequence and head), got {splits!r}")
    scale = 1.0 / math.sqrt(dim) * 1.4426950408889634  # exp2 softmax, as in flash_attention_fwd
    dtype, acc, rows = "float16", "float32", 16
    tiles = T.ceildiv(kv_len, block_N)
    per_split = T.ceildiv(tiles, splits)
    ragged = kv_len % block_N != 0
    stats, finish = online_softmax(rows, block_N, dim, scale)

    @T.prim_func
    def main(Q: T.Tensor([batch, heads, dim], dtype), K: T.Tensor([batch, kv_len, heads, dim], dtype),
             V: T.Tensor([batch, kv_len, heads, dim], dtype), lse_part: T.Tensor([batch, heads, splits], acc),
             o_part: T.Tensor([batch, heads, splits, dim], acc), O: T.Tensor([batch, heads, dim], dtype)):
        with T.Kernel(splits, heads, batch, threads=threads) as (sp, h, b):
            q = T.alloc_shared([rows, dim], dtype)
            k = T.alloc_shared([block_N, dim], dtype)
            v = T.alloc_shared([block_N, dim], dtype)
            o = T.alloc_shared([rows, dim], acc)
            lse = T.alloc_shared([rows], acc)
            p = T.alloc_shared([rows, block_N], dtype)  # shared: the two GEMMs split the tile differently
            s = T.alloc_fragment([rows, block_N], acc)
            out = T.alloc_fragment([rows, dim], acc)
            row_max, prev_max, rescale, tile_sum, row_sum = (T.alloc_fragment([rows], acc) for _ in range(5))

            for i, j in T.Parallel(rows, dim):
                q[i, j] = Q[b, h, j]
            T.fill(out, 0)
            T.fill(row_sum, 0)
            T.fill(row_max, -T.infinity(acc))
            first = sp * per_split
            for t in T.Pipelined(T.max(T.min(per_split, tiles - first), 0), num_stages=stages):
                base = (first + t) * block_N
                T.copy(K[b, base:base + block_N, h, :], k)
                if ragged:
                    for i, j in T.Parallel(rows, block_N):
                        s[i, j] = T.if_then_else(base + j < kv_len, 0, -T.infinity(acc))
                else:
                    T.clear(s)
                T.gemm(q, k, s, transpose_B=True, policy=T.GemmWarpPolicy.FullCol)
                stats(s, row_max, prev_max, rescale, tile_sum, row_sum)
                finish(s, p, out, rescale)
                T.copy(V[b, base:base + block_N, h, :], v)
                T.gemm(p, v, out, policy=T.GemmWarpPolicy.FullCol)
            # An empty range has row_sum 0 and out 0: its part is 0 with log-sum-exp -inf (weight 0).
            for i, j in T.Parallel(rows, dim):
                o[i, j] = out[i, j] / T.max(row_sum[i], 1e-30)
            for i in T.Parallel(rows):
                lse[i] = T.if_then_else(row_sum[i] > 0, T.log2(row_sum[i]) + row_max[i] * scale, -T.infinity(acc))
            for j in T.Parallel(dim):
                o_part[b, h, sp, j] = o[0, j]
            lse_part[b, h, sp] = lse[0]

        with T.Kernel(heads, batch, threads=dim) as (h, b):
            peak = T.alloc_local([1], acc)
            total = T.alloc_local([1], acc)
            weight = T.alloc_local([1], acc)
            merged = T.alloc_fragment([dim], acc)
            peak[0] = -T.infinity(acc)
            for r in T.serial(splits):
                peak[0] = T.max(peak[0], lse_part[b, h, r])
            total[0] = 0
            for r in T.serial(splits):
                total[0] += T.exp2(lse_part[b, h, r] - peak[0])
            T.clear(merged)
            for r in T.serial(splits):
                weight[0] = T.exp2(lse_part[b, h, r] - peak[0]) / total[0]
                for j in T.Parallel(dim):
                    merged[j] += weight[0] * o_part[b, h, r, j]
            for j in T.Parallel(dim):
                O[b, h, j] = merged[j]

    return main


def reference(q, k, v, causal):
    """softmax(Q K^T / sqrt(d)) V in float32 Paddle ops, [batch, seq, heads, dim] in and out."""
    qt, kt, vt = (x.astype("float32").transpose([0, 2, 1, 3]) for x in (q, k, v))
    scores = paddle.matmul(qt, kt, transpose_y=True) / math.sqrt(q.shape[-1])
    if causal:
        seq = q.shape[1]
        scores = scores + paddle.triu(paddle.full([seq, seq], float("-inf")), diagonal=1)
    return paddle.matmul(paddle.nn.functional.softmax(scores, axis=-1), vt).transpose([0, 2, 1, 3])


def sm_count() -> int:
    """SMs of Paddle's current GPU (python/paddle/device/cuda/__init__.py get_device_properties)."""
    return paddle.device.cuda.get_device_properties().multi_processor_count


def main(argv=None) -> int:
    args = parse_args(argv)
    gpu = paddle_sees_gpu()
    if args.decode:
        splits = decode_splits(args.batch, args.heads, args.seq, sms=sm_count() if gpu else 132)
        program = flash_decode_fwd(args.batch, args.heads, args.seq, args.dim, splits=splits)
        what, out_idx = "flash-decode", [5]
    else:
        program = flash_attention_fwd(args.batch, args.heads, args.seq, args.dim, args.causal,
                                      arch=None if gpu else args.arch)
        what, out_idx = "flash-attention forward", [3]
    if not gpu:
        if args.arch and shutil.which("nvcc"):
            try:
                kernel = tilelang.compile(program, out_idx=out_idx, target={"kind": "cuda", "arch": args.arch})
            except Exception as exc:  # noqa: BLE001 - nvcc's verdict, not the whole generated source
                print(f"[compile only] could not compile for {args.arch}: {compile_error(exc)}")
                return 1
            print(f"[compile only] {what} compiled for {args.arch} "
                  f"({len(kernel.get_kernel_source())} chars of CUDA source); Paddle sees no GPU to run it on")
            return 0
        print("Paddle sees no GPU; pass --arch sm_90a (with nvcc) to compile the kernel without running it")
        return 0
    if args.decode:
        return run_decode(tilelang.compile(program, out_idx=out_idx), args, splits)
    kernel = tilelang.compile(program, out_idx=[3])
    shape = [args.batch, args.seq, args.heads, args.dim]
    q, k, v = (paddle.randn(shape).astype("float16") for _ in range(3))
    o = kernel(q, k, v)
    err = float((o.astype("float32") - reference(q, k, v, args.causal)).abs().max())
    ok = err < 2e-2
    print(f"[GPU] flash-attention fwd {shape} causal={args.causal}: max abs err {err:.2e} ({'OK' if ok else 'MISMATCH'})")
    sync = synchronizer(True)
    sdpa = paddle.nn.functional.scaled_dot_product_attention
    print(f"[GPU] {time_us(lambda: kernel(q, k, v), sync):.1f} us per call (TileLang) vs "
          f"{time_us(lambda: sdpa(q, k, v, is_causal=args.causal), sync):.1f} us (scaled_dot_product_attention)")
    return 0 if ok else 1


def run_decode(kernel, args, splits) -> int:
    b, h, s, d = args.batch, args.heads, args.seq, args.dim
    q = paddle.randn([b, h, d]).astype("float16")
    k, v = (paddle.randn([b, s, h, d]).astype("float16") for _ in range(2))
    lse_part = paddle.empty([b, h, splits], dtype="float32")      # workspaces, reused by every call
    o_part = paddle.empty([b, h, splits, d], dtype="float32")
    o = kernel(q, k, v, lse_part, o_part)
    err = float((o.astype("float32") - reference(q.unsqueeze(1), k, v, False).squeeze(1)).abs().max())
    ok = err < 2e-2
    print(f"[GPU] flash-decode q {[b, h, d]} kv {[b, s, h, d]} splits={splits}: max abs err {err:.2e} "
          f"({'OK' if ok else 'MISMATCH'})")
    sync = synchronizer(True)
    sdpa = paddle.nn.functional.scaled_dot_product_attention
    q1 = q.unsqueeze(1)
    print(f"[GPU] {time_us(lambda: kernel(q, k, v, lse_part, o_part), sync):.1f} us per call (TileLang) vs "
          f"{time_us(lambda: sdpa(q1, k, v), sync):.1f} us (scaled_dot_product_attention)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
