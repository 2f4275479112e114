"""libcudart preload: the real one on this machine's toolkit, and the candidate order with dummy libraries."""

import os
import subprocess

import pytest

from conftest import run_python

from tilelang.paddle_runtime import preload

TOOLKIT_CUDART = "/usr/local/cuda/lib64/libcudart.so.13"


def _dummy_cudart(path, version: int) -> str:
    """A tiny shared library that exports cudaRuntimeGetVersion, like the real runtime."""
    path.parent.mkdir(parents=True, exist_ok=True)
    src = path.parent / "dummy.c"
    src.write_text(f"int cudaRuntimeGetVersion(int *v) {{ *v = {version}; return 0; }}\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(path), str(src)], check=True)
    return str(path)


@pytest.mark.skipif(not os.path.exists(TOOLKIT_CUDART), reason="needs the CUDA 13 toolkit at /usr/local/cuda")
def test_after_import_cudart_symbols_are_global():
    proc = run_python("""
        import ctypes, tilelang
        from tilelang.paddle_runtime import preload
        v = ctypes.c_int()
        rc = ctypes.CDLL(None).cudaRuntimeGetVersion(ctypes.byref(v))  # resolved through the global namespace
        r = preload.last_result()
        print("RESULT", rc, v.value, r.path, "|", r.reason)
        """)
    assert proc.returncode == 0, proc.stderr[-2000:]
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT"))
    _, rc, version, path, *_ = line.split()
    assert rc == "0" and int(version) >= 13000
    assert os.path.realpath(path) == os.path.realpath(TOOLKIT_CUDART)
    assert "toolkit /usr/local/cuda" in line


def test_candidate_order(tmp_path, monkeypatch):
    monkeypatch.setattr(preload, "mapped_cudart", lambda: ["/already/mapped/libcudart.so.12"])
    env = {"TILELANG_PADDLE_CUDART": "/explicit/libcudart.so.12", "CUDA_HOME": str(tmp_path / "home")}
    order = [(p, promote) for p, _, promote in preload.candidates("12", [str(tmp_path / "site")], env)]
    paths = [p for p, _ in order]
    assert paths[0] == "/explicit/libcudart.so.12"
    assert order[1] == ("/already/mapped/libcudart.so.12", True)  # promoted, never loaded again
    # Paddle's CUDA major first, in the pip layouts of that major.
    assert paths[2] == str(tmp_path / "site/nvidia/cuda_runtime/lib/libcudart.so.12")
    assert paths[3] == str(tmp_path / "site/nvidia/cu13/lib/libcudart.so.13")
    home = [p for p in paths if p.startswith(str(tmp_path / "home"))]
    system = [p for p in paths if p.startswith("/usr/local/cuda/")]
    assert home and system and paths.index(home[-1]) < paths.index(system[0])
    assert home[0].endswith("lib64/libcudart.so.12")
    assert paths[-3:] == ["libcudart.so.12", "libcudart.so.13", "libcudart.so"]
    assert len(paths) == len(set(paths))


def test_cuda13_layout_preferred_for_cuda13_paddle(tmp_path):
    order = [p for p, _, _ in preload.candidates("13", [str(tmp_path)], {})]
    assert order.index(str(tmp_path / "nvidia/cu13/lib/libcudart.so.13")) < order.index(
        str(tmp_path / "nvidia/cuda_runtime/lib/libcudart.so.12"))
    assert order[-3:] == ["libcudart.so.13", "libcudart.so.12", "libcudart.so"]


def test_env_override_and_broken_candidates_in_a_fresh_process(tmp_path):
    """A broken candidate is recorded and skipped; the next one (pip layout) wins, loaded RTLD_GLOBAL."""
    broken = tmp_path / "broken" / "libcudart.so.12"
    broken.parent.mkdir()
    broken.write_bytes(b"not an ELF file")
    site = tmp_path / "site"
    good = _dummy_cudart(site / "nvidia" / "cuda_runtime" / "lib" / "libcudart.so.12", 12080)
    proc = run_python(f"""
        import ctypes
        from tilelang.paddle_runtime import preload
        preload._RESULT = None  # start over: the real import already preloaded the toolkit's copy,
        preload.mapped_cudart = lambda: []  # which this test must not find
        r = preload.preload("12", True, [{str(site)!r}], {{"TILELANG_PADDLE_CUDART": {str(broken)!r}}},
                            system_roots=(), loader_names=())
        print("CHOSEN", r.path, "|", r.reason)
        print("TRIED", r.tried[0][0])
        """)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"CHOSEN {good} | pip CUDA 12 runtime in {site}" in proc.stdout
    assert f"TRIED {broken}" in proc.stdout


def test_cuda_paddle_with_nothing_loadable_lists_every_path(tmp_path, monkeypatch):
    monkeypatch.setattr(preload, "_RESULT", None)
    monkeypatch.setattr(preload, "mapped_cudart", lambda: [])
    with pytest.raises(ImportError) as info:
        preload.preload("12", True, [str(tmp_path)], {}, system_roots=(), loader_names=("libcudart.so.999",))
    msg = str(info.value)
    assert "Paddle is built with CUDA but no libcudart could be loaded" in msg
    assert str(tmp_path / "nvidia/cuda_runtime/lib/libcudart.so.12") in msg and "libcudart.so.999" in msg
    assert "TILELANG_PADDLE_CUDART=" in msg


def test_cpu_paddle_with_nothing_loadable_is_silent(tmp_path, monkeypatch):
    monkeypatch.setattr(preload, "_RESULT", None)
    monkeypatch.setattr(preload, "mapped_cudart", lambda: [])
    r = preload.preload(None, False, [str(tmp_path)], {}, system_roots=(), loader_names=())
    assert r.path is None and "CPU-only Paddle" in r.reason and len(r.tried) == 2
