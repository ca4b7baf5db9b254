"""A small CUDA subset that reaches every kernel path, for compute-sanitizer runs (scripts/gpu_check.sh).

Paths: tiled transpose (vectorised interior and edges, scalar interior, masked edges) for
each element width; the narrow kernel (both directions, tails, batches); flat tiles (dense and
line walks, vector and scalar); the interleave kernel (lean and looping); row copy (vectorised,
strided, short rows); batched; strided out views. Sizes stay small because every access is instrumented.
"""
import pytest
import torch

import torch_transpose as tt
from helpers import WIDTH_DTYPES, assert_bits_equal, assert_only_view_written, poisoned, random_bits

pytestmark = [pytest.mark.cuda, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]


@pytest.mark.parametrize("dtype", WIDTH_DTYPES, ids=str)
def test_kernel_paths(dtype):
    cases = [
        (random_bits((256, 384), dtype, "cuda"), (0, 1)),         # vectorised interior tiles
        (random_bits((131, 67), dtype, "cuda"), (0, 1)),          # scalar + masked edges
        (random_bits((3, 130, 257), dtype, "cuda"), (1, 2)),      # batched
        (random_bits((300, 5000), dtype, "cuda")[:, 1::2], (0, 1)),  # strided input
        (random_bits((40, 3000), dtype, "cuda"), (0, 0)),         # vectorised row copy
        (random_bits((40, 3000), dtype, "cuda")[:, ::3], (1, 1)),  # strided row copy
        (random_bits((500, 3, 7), dtype, "cuda"), (0, 0)),         # contiguous: merges to one row
        (random_bits((500, 3, 7), dtype, "cuda").transpose(0, 1), (2, 2)),  # short rows
        (random_bits((2, 33, 4, 40), dtype, "cuda"), (1, 2)),      # row-group copy, 40-element rows
        (random_bits((4099, 3), dtype, "cuda"), (0, 1)),           # narrow kernel: dense in, ragged tail
        (random_bits((3, 4099), dtype, "cuda"), (0, 1)),           # narrow kernel: dense out, ragged tail
        (random_bits((5, 16, 700), dtype, "cuda"), (1, 2)),        # narrow kernel: batched, N = 16
        (random_bits((4099, 3), dtype, "cuda")[1:], (0, 1)),       # misaligned base: flat tile instead
        (random_bits((301, 8, 5), dtype, "cuda"), (1, 2)),         # flat tile: batch groups, ragged
        (random_bits((7, 40, 3), dtype, "cuda")[:, ::2], (1, 2)),  # flat tile over a strided view
        (random_bits((200, 144), dtype, "cuda"), (0, 1)),          # vector edge tiles (144 = 128 + 16)
        (random_bits((200, 144), dtype, "cuda")[:, :130], (0, 1)),  # vectors cut by the dim's end
        (random_bits((2000, 20), dtype, "cuda"), (0, 1)),          # flat tile: dense load, vector store
        (random_bits((20, 2000), dtype, "cuda"), (0, 1)),          # flat tile: vector load, dense store
        (random_bits((300, 8, 8), dtype, "cuda"), (1, 2)),         # flat tile: dense groups
        (random_bits((12288, 3), dtype, "cuda"), (0, 1)),          # interleave C = 3, dense in: lean (1-byte: looping)
        (random_bits((3, 12288), dtype, "cuda"), (0, 1)),          # interleave C = 3, planar in
        (random_bits((12288, 4), dtype, "cuda"), (0, 1)),          # interleave C = 4: the looping kernel
    ]
    for x, (d0, d1) in cases:
        assert_bits_equal(tt.transpose(x, d0, d1), x.transpose(d0, d1).contiguous())


def test_out_views():
    x = random_bits((70, 130), torch.float32, "cuda")
    buf = poisoned((300, 90), torch.float32, "cuda")
    view = buf[5::2, 3:73][:130]
    before = buf.clone()
    tt.transpose(x, out=view)
    assert_only_view_written(buf, view, x.t(), before)


def test_permute_and_layouts():
    x = random_bits((2, 3, 33, 65), torch.bfloat16, "cuda")
    assert_bits_equal(tt.permute(x, (0, 2, 3, 1)), x.permute(0, 2, 3, 1).contiguous())
    assert_bits_equal(tt.to_memory_format(x, torch.channels_last), x.contiguous(memory_format=torch.channels_last))
    y = random_bits((3, 30, 4, 5, 60), torch.float32, "cuda")  # gather tiles (a = 60, a run of four dims)
    assert_bits_equal(tt.permute(y, (4, 2, 0, 3, 1)), y.permute(4, 2, 0, 3, 1).contiguous())
    z = random_bits((2, 3, 3, 2816), torch.float32, "cuda")  # lean interleave launches over two batch dims
    assert_bits_equal(tt.permute(z, (1, 0, 3, 2)), z.permute(1, 0, 3, 2).contiguous())


if __name__ == "__main__":  # plain script for compute-sanitizer (no pytest machinery)
    for dtype in WIDTH_DTYPES:
        test_kernel_paths(dtype)
    test_out_views()
    test_permute_and_layouts()
    print("sanitizer subset: all cases passed")
