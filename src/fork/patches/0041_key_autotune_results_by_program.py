"""Key autotune results by the programs the tuner compiles, not its source text; the target, our build and tvm-ffi.

File: tilelang/autotuner/tuner.py. ``AutoTuner.generate_cache_key`` hashes
the decorated function's source text (``inspect.getsource``), its arguments,
the configs, the compile and profiling arguments and TileLang's version. An
edit outside that text (a module constant the kernel body reads, a helper it
calls) changes the program but not the key, so the writable autotune cache
and the bundles (patch 0039) served the old pick with the old program's
numbers; nor did the key hold our build id or tvm-ffi's version, as every
kernel's key does; and a comment or docstring edit inside the function
changed the key, so a bundle built before it was refused (or retuned) though
every program was the same. ``tilelang.paddle_runtime.cache.key.tuned_key``
replaces the source text with each config's elaborated program (its
TVMScript's SHA-256, as a kernel's key holds its program) and adds the
resolved target and the fields every kernel's key holds (build id, tvm-ffi).
Elaborating a config that fails logs nothing: nothing is built then.
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0041_key_autotune_results_by_program",
    file="tilelang/autotuner/tuner.py",
    reason="an edited constant or helper got the old autotuned kernel from the caches; an edited comment lost it",
    edits=(
        Edit('        key_string = json.dumps(key_data, sort_keys=True)\n'
             '        return hashlib.sha256(key_string.encode()).hexdigest()\n',
             '        from tilelang.paddle_runtime.cache import key as _tlp_key  # tilelang-paddle patch 0041\n\n'
             '        return _tlp_key.tuned_key(key_data, self)\n'),
    ),
    forwarded="no: not filed from here. https://github.com/tile-ai/tilelang/issues/1250 (open) reports the same "
              "key by inspect.getsource(fn) in upstream's writable autotune cache; this patch's test "
              "(tests_paddle/test_release_edits.py) is the reproduction to add there",
    checked_against=("0.1.15",),
    drop_when="upstream's autotune key covers the generated programs, the target and tvm-ffi",
)
