"""explain() and kernel_launches() name the kernel a call runs, and kernel_switches() steers it.

On the CPU the CUDA selection is read from meta tensors (a dry run on a described 132-SM
device); on a GPU the same dry run must name exactly the kernels the profiler sees."""
import os
import subprocess
import sys

import pytest
import torch

import torch_transpose as tt
from helpers import cuda_kernels_of, random_bits

needs_cuda_build = pytest.mark.skipif(not tt.with_cuda, reason="needs a build with the CUDA kernels")


def meta(*shape, dtype=torch.float32):
    return torch.empty(shape, dtype=dtype, device="meta")


@needs_cuda_build
def test_explain_names_family_and_kernel_with_template_arguments():
    text = tt.explain(meta(8192, 8192), (1, 0))
    plan, kernel = text.splitlines()
    assert plan.startswith("transpose: sizes=[8192, 8192]")
    assert kernel.startswith("kernel: lean_tile: lean_tile_transpose_kernel<unsigned int, 4, 64, "), kernel
    assert "grid=(128, 128, 1)" in kernel


@needs_cuda_build
@pytest.mark.parametrize("shape, dims, family", [
    ((8192, 8192), (1, 0), "lean_tile"),
    ((4194304, 3), (1, 0), "interleave"),
    ((64, 64), (1, 0), "direct"),
    ((100, 100), (0, 1), "device_copy"),
    ((32, 2048, 16, 128), (0, 2, 1, 3), "lean_rows"),
])
def test_chosen_family_is_the_first_candidate(shape, dims, family):
    chosen = tt.kernel_launches(meta(*shape), dims)
    candidates = tt.kernel_launches(meta(*shape), dims, candidates=True)
    assert [l["family"] for l in chosen] == [family]
    assert candidates[0]["family"] == family and candidates[0]["kernel"] == chosen[0]["kernel"]
    families = [l["family"] for l in candidates]
    assert len(families) == len(set(families)), families


@needs_cuda_build
def test_candidates_end_with_the_fallback():
    assert tt.kernel_launches(meta(8192, 8192), (1, 0), candidates=True)[-1]["family"] == "tile"
    assert tt.kernel_launches(meta(1000, 7, 33), (0, 2, 1), candidates=True)[-1]["family"] in ("flat", "narrow")
    text = tt.explain(meta(8192, 8192), (1, 0), candidates=True)
    assert "candidate: tile: tile_transpose_kernel" in text


@needs_cuda_build
def test_sm_count_moves_grid_rules():
    # Rules count tiles per SM: on a large GPU a 512x512 transpose has fewer tiles than SMs and
    # takes half-side tiles; 8192x8190 fp16 takes realign windows of 64 rows, of 128 on 8 SMs.
    square = meta(512, 512)
    assert tt.kernel_launches(square, (1, 0), sm_count=132)[0]["family"] == "small_tile"
    assert tt.kernel_launches(square, (1, 0), sm_count=8)[0]["family"] == "lean_tile"
    odd = meta(8192, 8190, dtype=torch.float16)
    many, few = (tt.kernel_launches(odd, (1, 0), sm_count=n)[0] for n in (132, 8))
    assert many["family"] == few["family"] == "realign_window"
    assert many["kernel"].endswith(", 64>") and few["kernel"].endswith(", 128>")


@needs_cuda_build
def test_kernel_switches_scope_and_restore():
    x = meta(8192, 8192)
    assert tt.kernel_launches(x, (1, 0))[0]["family"] == "lean_tile"
    with tt.kernel_switches("-lean_tile"):
        assert tt.kernel_launches(x, (1, 0))[0]["family"] == "tile"
        with tt.kernel_switches("lean_tile=1"):
            assert tt.kernel_launches(x, (1, 0))[0]["family"] == "lean_tile"
        assert tt.kernel_launches(x, (1, 0))[0]["family"] == "tile"
    assert tt.kernel_launches(x, (1, 0))[0]["family"] == "lean_tile"


def test_kernel_switches_refuse_unknown_names_and_bad_values():
    with pytest.raises(ValueError, match="unknown switch 'no_such_kernel'"):
        with tt.kernel_switches("-no_such_kernel"):
            pass
    with pytest.raises(ValueError, match="expected name=integer"):
        with tt.kernel_switches("lean_tile=yes"):
            pass
    assert "lean_tile" in tt.kernel_switch_names()


@needs_cuda_build
def test_environment_variable_sets_the_switches_at_start():
    code = ("import torch, torch_transpose as tt; "
            "print(tt.kernel_launches(torch.empty(8192, 8192, device='meta'), (1, 0))[0]['family'])")
    env = {**os.environ, "TORCH_TRANSPOSE_KERNELS": "-lean_tile,one_block_per_item=1"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "tile"


@pytest.mark.parametrize("shape, dims, family", [
    ((300, 400), (1, 0), "tiles"),
    ((64, 3, 56, 56), (0, 2, 3, 1), "packed_rows"),
    ((8, 30, 40), (1, 0, 2), "rows"),
])
def test_cpu_tensors_name_their_cpu_family(shape, dims, family):
    x = torch.randn(shape)
    launches = tt.kernel_launches(x, dims)
    assert [l["family"] for l in launches] == [family], launches
    text = tt.explain(x, dims)
    assert text.splitlines()[1].startswith(f"kernel: {family}: "), text
    # Nothing ran: an explained out= view keeps its bytes.
    out = torch.full([shape[d] for d in dims], 7.0)
    tt.explain(x, dims, out)
    assert torch.equal(out, torch.full_like(out, 7.0))


CUDA_LAYOUTS = [((8192, 8192), (1, 0), torch.float32), ((4194304, 3), (1, 0), torch.float32),
                ((2049, 2051), (1, 0), torch.float16), ((8192, 8192), (1, 0), torch.int8),
                ((20, 30, 40, 50, 60), (4, 2, 0, 3, 1), torch.float32), ((64, 128, 56, 56), (0, 2, 3, 1), torch.bfloat16),
                ((32, 2048, 16, 128), (0, 2, 1, 3), torch.bfloat16), ((1000000, 7), (1, 0), torch.float32)]


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("shape, dims, dtype", CUDA_LAYOUTS, ids=str)
def test_dry_run_names_what_the_gpu_runs(shape, dims, dtype):
    x = random_bits(shape, dtype, "cuda")
    launches = tt.kernel_launches(x, dims)
    assert launches and launches[0]["family"]
    ran = cuda_kernels_of(lambda: tt.permute(x, dims))
    if ran is None:
        pytest.skip("the profiler sees no CUDA activity here (compute-sanitizer)")
    for launch in launches:
        base = launch["kernel"].split("<")[0]
        assert any(base in name for name in ran), (launch, ran)
    assert len(ran) == len(launches), (launches, ran)
