"""Tensors past int32 indexing: more than 2^31 elements, and one dim longer than 2^31.
Marked slow (several GB each): `make test` deselects them, so run them explicitly:
    pytest tests/test_huge.py -m slow
Values follow index arithmetic (x[i, j] = (i + 3 j) mod 256), so results are checked at sampled
positions against the formula as well as against PyTorch."""
import pytest
import torch

import torch_transpose as tt

pytestmark = pytest.mark.slow


def patterned(rows, cols, device):
    # Built in uint8 from a 256-long cycle: an int64 arange of 2^31 rows alone would take 17 GB.
    cycle = torch.arange(256, device=device).to(torch.uint8)
    row = cycle.repeat((rows + 255) // 256)[:rows]
    col = (3 * torch.arange(cols, device=device)).remainder(256).to(torch.uint8)
    return row[:, None] + col[None, :]  # uint8 arithmetic wraps mod 256


def check_samples(y, rows, cols, count=2000):
    gen = torch.Generator().manual_seed(0)
    i = torch.randint(0, rows, (count,), generator=gen)
    j = torch.randint(0, cols, (count,), generator=gen)
    # corners and the int32 boundary region too
    i = torch.cat([i, torch.tensor([0, rows - 1, 0, rows - 1])])
    j = torch.cat([j, torch.tensor([0, 0, cols - 1, cols - 1])])
    got = y[j.to(y.device), i.to(y.device)].cpu()
    assert torch.equal(got, ((i + 3 * j) % 256).to(torch.uint8))


def free_bytes(device):
    if device == "cuda":
        return torch.cuda.mem_get_info()[0]
    import os
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.parametrize("rows,cols", [(3 * 2**15, 2**15), (2**31 + 3, 2)], ids=["3x2^30 elements", "2^31+3 rows"])
def test_more_than_int32_elements(device, rows, cols):
    need = 2 * rows * cols + rows + 2**28
    if free_bytes(device) < need:
        pytest.skip(f"needs {need / 2**30:.1f} GiB free on {device}")
    x = patterned(rows, cols, device)
    y = tt.transpose(x)
    assert y.shape == (cols, rows)
    check_samples(y, rows, cols)
    assert torch.equal(y, x.t())
    del y
    plan = tt.explain(x, (1, 0))
    assert "index=64" in plan, plan


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_50000_squared_fp16():
    x = torch.randn(50000, 50000, device="cuda", dtype=torch.float16)
    y = tt.transpose(x)
    assert torch.equal(y, x.t())
