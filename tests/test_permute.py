"""torch_transpose.permute and to_memory_format against native PyTorch, bit for bit."""
import itertools
import math
import os
import random

import pytest
import torch

import torch_transpose as tt
from helpers import (switches_text, KERNEL_ELEMENT_TYPES, kernel_switch, assert_bits_equal, assert_only_view_written, check_permute_into_view,
                     cuda_kernels_of, kernel_template_args, poisoned, random_bits, run_with_switches)


def reference(x, dims):
    return x.permute(dims).contiguous()


@pytest.mark.parametrize("shape", [(3, 5, 7), (1, 33, 65), (17, 1, 9)])
@pytest.mark.parametrize("dtype", [torch.uint8, torch.bfloat16, torch.float32, torch.complex128], ids=str)
def test_every_permutation_of_rank_3(device, shape, dtype):
    x = random_bits(shape, dtype, device)
    for dims in itertools.permutations(range(3)):
        assert_bits_equal(tt.permute(x, dims), reference(x, dims))


@pytest.mark.parametrize("shape", [(2, 3, 5, 7), (4, 1, 33, 3), (3, 65, 2, 17)])
@pytest.mark.parametrize("dtype", [torch.int8, torch.float16, torch.float32, torch.float64], ids=str)
def test_every_permutation_of_rank_4(device, shape, dtype):
    x = random_bits(shape, dtype, device)
    for dims in itertools.permutations(range(4)):
        assert_bits_equal(tt.permute(x, dims), reference(x, dims))


@pytest.mark.parametrize("rank", [5, 6, 7, 8])
def test_random_permutations_of_higher_rank(device, rank):
    rng = random.Random(rank)
    for trial in range(12):
        shape = [rng.choice([1, 2, 3, 4, 5]) for _ in range(rank)]
        dtype = rng.choice([torch.uint8, torch.int16, torch.float32, torch.complex64])
        x = random_bits(shape, dtype, device)
        if trial % 3 == 1:  # a strided input: step through the first non-trivial dim
            x = random_bits([s * 2 for s in shape], dtype, device)[tuple(slice(0, None, 2) for _ in shape)]
        dims = list(range(rank))
        rng.shuffle(dims)
        negative = [d - rank if rng.random() < 0.3 else d for d in dims]
        assert_bits_equal(tt.permute(x, negative), reference(x, dims))


def test_strided_and_expanded_inputs(device):
    base = random_bits((6, 10, 14), torch.float32, device)
    views = [base[:, ::2, 1:], base.transpose(0, 2), base[:1].expand(4, 10, 14), base[:, :1, :].expand(6, 5, 14),
             base[2:, 3:, 5:]]
    for x in views:
        for dims in itertools.permutations(range(3)):
            assert_bits_equal(tt.permute(x, dims), reference(x, dims))


def test_attention_and_channels_last_layouts(device):
    bshd = random_bits((2, 33, 4, 40), torch.bfloat16, device)
    assert_bits_equal(tt.permute(bshd, (0, 2, 1, 3)), reference(bshd, (0, 2, 1, 3)))
    nchw = random_bits((2, 3, 17, 19), torch.float32, device)
    assert_bits_equal(tt.permute(nchw, (0, 2, 3, 1)), reference(nchw, (0, 2, 3, 1)))
    nhwc = random_bits((2, 17, 19, 3), torch.float32, device)
    assert_bits_equal(tt.permute(nhwc, (0, 3, 1, 2)), reference(nhwc, (0, 3, 1, 2)))


def check_fresh_and_guarded_outputs(x, dims):
    """tt.permute into a fresh tensor, and into a view one element in from every edge of a
    poisoned buffer, equals x.permute(dims).contiguous() and writes nothing else."""
    expected = reference(x, dims)
    assert_bits_equal(tt.permute(x, dims), expected)
    buf = poisoned(tuple(s + 2 for s in expected.shape), x.dtype, x.device)
    check_permute_into_view(x, dims, buf, buf[tuple(slice(1, 1 + s) for s in expected.shape)])


@pytest.mark.parametrize("dtype", [torch.uint8, torch.bfloat16, torch.float32, torch.complex128], ids=str)
def test_row_copies_whose_groups_step_through_one_dim(device, dtype):
    # Copies of short rows whose last batch dim splits into whole groups of rows: each thread
    # locates its group once and steps through that dim (row_copy.cuh). Into a fresh tensor and
    # into a guarded view of a larger buffer.
    for shape, dims in [((2, 512, 3, 32), (0, 2, 1, 3)), ((512, 8, 32), (1, 0, 2))]:
        x = random_bits(shape, dtype, device)
        check_fresh_and_guarded_outputs(x, dims)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.bfloat16, torch.float32, torch.float64], ids=str)
def test_packed_narrow_output_rows(device, dtype):
    # NCHW -> NHWC of 2, 4 and 8 channels and pixel shuffle (r = 2): output rows of c elements
    # back to back, which the CPU builds by interleaving whole 16-byte vectors of c input rows
    # (interleave_rows, simd_transpose.h) and the spatial tail past the last whole vector one
    # element at a time. Into a fresh tensor and into a contiguous view between guard bytes.
    def check(x, dims):
        expected = reference(x, dims)
        assert_bits_equal(tt.permute(x, dims), expected)
        n = expected.numel()
        buf = poisoned((n + 128,), dtype, device)
        check_permute_into_view(x, dims, buf, buf[64:64 + n].view(expected.shape))
    for c in (2, 4, 8):
        for hw in ((7, 9), (16, 16), (33, 35)):
            check(random_bits((3, c, *hw), dtype, device), (0, 2, 3, 1))
    check(random_bits((2, 3, 2, 2, 24, 40), dtype, device), (0, 1, 4, 2, 5, 3))


@pytest.mark.parametrize("dtype", [torch.uint8, torch.bfloat16, torch.float32, torch.float64], ids=str)
def test_packed_rows_of_every_channel_count(device, dtype):
    # NCHW -> NHWC and NHWC -> NCHW of 2 to 16 channels: on the CPU (AVX-512; VBMI for bytes) c
    # input rows become output rows of c elements back to back by lane permutes of c whole
    # 64-byte registers, and back (packed_rows.h), up to 64 / element size channels (without
    # AVX-512, test_packed_rows_without_avx512: shuffles of 16-byte registers, two a 32-byte
    # register with AVX2); planes of 135 elements leave a tail past the last whole register for
    # the older paths, planes of 640 none; planes of 56 (int8, bf16) and 135 (fp32, fp64) are an
    # odd number of 16-byte registers, the last of which the AVX2 form moves alone. Into a fresh tensor, a contiguous view between guard bytes (still packed) and a view
    # one element in from every edge (rows no longer back to back). TORCH_TRANSPOSE_KERNELS=cpu_packed_rows=0
    # runs the same on the older paths (test_packed_rows_switched_off).
    for c in range(2, 17):
        for hw in ((9, 15), (16, 40), (7, 8)):
            for shape, dims in (((2, c, *hw), (0, 2, 3, 1)), ((2, *hw, c), (0, 3, 1, 2))):
                x = random_bits(shape, dtype, device)
                check_fresh_and_guarded_outputs(x, dims)
                expected = reference(x, dims)
                buf = poisoned((expected.numel() + 128,), dtype, device)
                check_permute_into_view(x, dims, buf, buf[64:64 + expected.numel()].view(expected.shape))


@pytest.mark.parametrize("dtype", [torch.uint8, torch.float32], ids=str)
def test_large_packed_rows(device, dtype):
    # Outputs of 24 MiB or more of NCHW -> NHWC and NHWC -> NCHW of 3 channels: on the CPU
    # the lane permutes stream their stores where every register lands on a whole 64-byte line.
    # Into a fresh tensor and a view 64 bytes into a guarded buffer (streamed), a view one element
    # in (plain stores; for the unpack, output rows padded by 64 bytes on each side: streamed).
    guard = 64 // dtype.itemsize
    plane = (24 << 20) // (3 * dtype.itemsize * 2)  # two items of 3 channels: just over 24 MiB
    w = 64 * 16
    h = plane // w + 1
    for shape, dims in (((2, 3, h, w), (0, 2, 3, 1)), ((2, h, w, 3), (0, 3, 1, 2))):
        x = random_bits(shape, dtype, device)
        expected = reference(x, dims)
        assert expected.numel() * expected.element_size() >= 24 << 20
        assert_bits_equal(tt.permute(x, dims), expected)
        n = expected.numel()
        buf = poisoned((n + 2 * guard,), dtype, device)
        check_permute_into_view(x, dims, buf, buf[guard:guard + n].view(expected.shape))
        check_permute_into_view(x, dims, buf, buf[1:1 + n].view(expected.shape))
        rows = poisoned((*expected.shape[:-1], expected.shape[-1] + 2 * guard), dtype, device)
        check_permute_into_view(x, dims, rows, rows[..., guard:-guard])


def test_packed_rows_of_16_byte_elements(device):
    # complex128 NCHW -> NHWC and back of 2 to 16 channels: on the CPU packs move 16-byte
    # elements one by one along runs of the long side (pack_elements, C fixed at compile time),
    # unpacks go by tiles. Planes of 135 and 640 elements; into a fresh tensor, a packed view
    # between guard elements and a view one element in from every edge.
    for c in range(2, 17):
        for hw in ((9, 15), (16, 40)):
            for shape, dims in (((2, c, *hw), (0, 2, 3, 1)), ((2, *hw, c), (0, 3, 1, 2))):
                x = random_bits(shape, torch.complex128, device)
                check_fresh_and_guarded_outputs(x, dims)
                expected = reference(x, dims)
                buf = poisoned((expected.numel() + 8,), torch.complex128, device)
                check_permute_into_view(x, dims, buf, buf[4:4 + expected.numel()].view(expected.shape))


# What CPUs without AVX-512 or AVX2, or with packed rows off, run (the switches stand in for
# such CPUs): the packed-row tests again on the CPU, in this process, under kernel_switches().
# Without AVX-512, packed rows go by 16-byte shuffles, two a 32-byte register with AVX2
# (packed_rows_shuffles.cpp), and interleaves for packs of 2, 4 and 8 elements in a vector,
# streamed where the output is 24 MiB or more; without AVX2 too (the Atoms and Pentiums before
# 2020, x86-64 builds under emulators), the same shuffles one 16-byte register at a time.
PACKED_ROW_SWITCH_RUNS = {
    "packed rows off": ({"cpu_packed_rows": "0"}, ("test_packed_rows_of_every_channel_count", "test_large_packed_rows",
                                                   "test_packed_rows_of_16_byte_elements")),
    "no AVX-512": ({"cpu_avx512": "0"}, ("test_packed_rows_of_every_channel_count", "test_large_packed_rows",
                                         "test_packed_narrow_output_rows",
                                         "test_packed_channels_against_whole_vector_planes")),
    "no AVX-512 or AVX2": ({"cpu_avx512": "0", "cpu_avx2": "0"}, ("test_packed_rows_of_every_channel_count",
                                                                  "test_large_packed_rows",
                                                                  "test_packed_channels_against_whole_vector_planes")),
}


@pytest.mark.parametrize("run", list(PACKED_ROW_SWITCH_RUNS))
def test_packed_rows_under_cpu_switches(run):
    switches, tests = PACKED_ROW_SWITCH_RUNS[run]
    with tt.kernel_switches(switches_text(switches)):
        # the switch is in force in this process: packed rows off leaves their family
        packed = tt.kernel_launches(torch.empty(2, 8, 16, 40), (0, 2, 3, 1))[0]["family"] == "packed_rows"
        assert packed == (switches.get("cpu_packed_rows") != "0")
    run_with_switches([globals()[name] for name in tests], switches, "cpu")


def test_short_row_copies_of_every_length(device):
    # Row copies of 1-8193 bytes: on the CPU rows under 8 KiB into outputs that stay in cache
    # (under 256 bytes into larger ones) are copied inline in pieces of 64 bytes and a last piece
    # that ends at the row's end, or two overlapping pieces of 32, 16, 8 or 4 bytes
    # (row_copy_avx512.cpp; memcpy for longer rows, and for all without AVX-512:
    # test_row_copies_without_avx512). Into
    # a guarded view whose rows have guard bytes on both sides. Then batches of thousands of rows
    # over three batch dims, split between threads mid-dim, where each thread's cursor starts.
    for n in [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 200, 256, 257, 320, 513,
              1000, 1024, 4097, 8191, 8192, 8193]:
        check_fresh_and_guarded_outputs(random_bits((3, 5, n), torch.uint8, device), (1, 0, 2))
    check_fresh_and_guarded_outputs(random_bits((24, 50, 3, 8), torch.uint8, device), (2, 0, 1, 3))
    check_fresh_and_guarded_outputs(random_bits((7, 300, 5, 12), torch.bfloat16, device), (1, 2, 0, 3))


def test_large_row_copies_of_whole_lines(device):
    # Row copies of at least 24 MiB whose rows are whole 64-byte lines on both sides: on the CPU
    # the output is streamed row by row, with the input rows 16 ahead prefetched where rows are
    # 1 KiB or less (row_copy_avx512.cpp). Rows of 64, 128, 256 and 2048 bytes; into a fresh
    # tensor, into a guarded view whose rows still start on lines (64 guard bytes before each row
    # and after it: streamed too) and into one whose rows do not (one element in: plain stores).
    for shape, dims, dtype in [((1024, 384, 64), (1, 0, 2), torch.uint8), ((4, 16, 3072, 64), (0, 2, 1, 3), torch.bfloat16),
                               ((4, 16, 1536, 64), (0, 2, 1, 3), torch.float32),
                               ((2, 8, 768, 512), (0, 2, 1, 3), torch.float32)]:
        x = random_bits(shape, dtype, device)
        expected = reference(x, dims)
        assert expected.numel() * expected.element_size() >= 24 << 20
        assert_bits_equal(tt.permute(x, dims), expected)
        guard = 64 // dtype.itemsize
        buf = poisoned((*expected.shape[:-1], expected.shape[-1] + 2 * guard), dtype, device)
        check_permute_into_view(x, dims, buf, buf[..., guard:-guard])
        check_permute_into_view(x, dims, buf, buf[..., 1:1 + expected.shape[-1]])


@pytest.mark.parametrize("switches", [{"cpu_avx512": "0"},
                                      {"cpu_avx512": "0", "cpu_avx2": "0"}],
                         ids=["avx2", "neither"])
def test_row_copies_without_avx512(switches):
    # The same where the CPU has no AVX-512: the same inline copies in AVX2 moves (two 32-byte
    # streaming stores a line), and without AVX2 either, the cursor's rows by memcpy.
    run_with_switches((test_short_row_copies_of_every_length, test_large_row_copies_of_whole_lines), switches, "cpu")


@pytest.mark.parametrize("dtype", [torch.uint8, torch.bfloat16, torch.float32, torch.float64], ids=str)
def test_row_copies_longer_than_a_block_and_shorter_than_a_chunk(device, dtype):
    # Video NCTHW -> NTCHW: rows of H x W = 3136 elements, more vectors than a block has threads,
    # fewer than one chunk: on CUDA row_vector_copy takes them (or, with the switch below, the
    # chunk copy, whose last chunk moves whole vectors; row_copy.cuh). Then rows of 20004 elements with gaps in a guarded
    # buffer: several chunks, the last partial, and for 1- and 2-byte elements 4 elements after
    # the last whole 16-byte vector.
    x = random_bits((2, 5, 3, 56, 56), dtype, device)
    check_fresh_and_guarded_outputs(x, (0, 2, 1, 3, 4))
    rows = random_bits((3, 20032), dtype, device)[:, 16:16 + 20004]
    buf = poisoned((3, 20048), dtype, device)
    check_permute_into_view(rows, (0, 1), buf, buf[:, 16:16 + 20004])


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_rows_of_up_to_a_chunk_on_the_chunk_copy():
    # Rows of whole vectors up to one chunk take row_vector_copy; with
    # TORCH_TRANSPOSE_KERNELS=medium_rows=0 the chunk copy's guarded vectors take them all again.
    run_with_switches((test_row_copies_longer_than_a_block_and_shorter_than_a_chunk,), {"medium_rows": "0"}, "cuda")


@pytest.mark.parametrize("dtype", [torch.uint8, torch.bfloat16, torch.float32, torch.float64], ids=str)
def test_fused_qkv_splits(device, dtype):
    # ViT's fused QKV split (B, S, 3, H, D) -> (3, B, H, S, D): rows of D elements over four batch
    # dims. In bf16 on an H200 row_vector_copy walks the first two in input order by the rule
    # (walk_rows_in_input_order, row_copy.cuh), ViT's heads (B, S, H, D) -> (B, H, S, D) in output
    # order; test_qkv_layouts_in_either_walk forces each walk. Fresh outputs, and guarded views one
    # element in from every edge.
    check_fresh_and_guarded_outputs(random_bits((8, 197, 3, 12, 64), dtype, device), (2, 0, 3, 1, 4))
    check_fresh_and_guarded_outputs(random_bits((4, 1024, 3, 12, 64), dtype, device), (2, 0, 3, 1, 4))
    check_fresh_and_guarded_outputs(random_bits((8, 197, 12, 64), dtype, device), (0, 2, 1, 3))
    # Input rows with gaps (a slice of wider rows): no two input rows chain, so input order.
    wide = random_bits((4, 197, 3, 12, 80), dtype, device)[..., 8:72]
    check_fresh_and_guarded_outputs(wide, (2, 0, 3, 1, 4))


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("walk", ["0", "1"])
def test_qkv_layouts_in_either_walk(walk):
    # TORCH_TRANSPOSE_KERNELS=row_walk=0 / 1: every row_vector_copy plan in output / input order.
    run_with_switches((test_fused_qkv_splits,), {"row_walk": walk}, "cuda")


@pytest.mark.parametrize("r", [2, 3, 4])
@pytest.mark.parametrize("dtype", [torch.uint8, torch.bfloat16, torch.float32, torch.float64], ids=str)
def test_pixel_shuffle_layouts_with_short_lines(device, dtype, r):
    # Pixel shuffle (N, C, r, r, H, W) -> (N, C, H, r, W, r) and its inverse, W = 32..256: lines
    # shorter than the interleave kernel's warp chunk, which on CUDA then holds several whole items
    # (wants_packed_lines, interleave_transpose.cuh), the last chunk part full (546 items); W = 96
    # does not divide a chunk (one item each). Fresh outputs, and guarded views one element in.
    for w in (32, 64, 96, 128, 256):
        check_fresh_and_guarded_outputs(random_bits((3, 7, r, r, 13, w), dtype, device), (0, 1, 4, 2, 5, 3))
        check_fresh_and_guarded_outputs(random_bits((3, 7, 13, r, w, r), dtype, device), (0, 1, 3, 5, 2, 4))


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_short_lines_one_item_per_chunk_when_packing_is_off():
    # TORCH_TRANSPOSE_KERNELS=packed_lines=0: the layouts above take one half-filled chunk per item again.
    run_with_switches((test_pixel_shuffle_layouts_with_short_lines,), {"packed_lines": "0"}, "cuda")


def check_bases_off_the_grid(shape, dims, dtype, device):
    """tt.permute of inputs that start 1, 2 and 3 elements into their storage (off the 16-byte
    grid) equals x.permute(dims).contiguous()."""
    numel = math.prod(shape)
    for shift in (1, 2, 3):
        shifted = random_bits((numel + shift,), dtype, device)[shift:].view(shape)
        assert_bits_equal(tt.permute(shifted, dims), reference(shifted, dims))


@pytest.mark.parametrize("dtype", [torch.uint8, torch.bfloat16, torch.float32, torch.float64], ids=str)
def test_channels_last_of_small_spatial_grids(device, dtype):
    # NCHW -> NHWC where H x W is short: ResNet's last stage (7 x 7), ViT-B's patch grid (14 x 14),
    # 16 x 16, and rows of 32. On CUDA span tiles take 1- and 2-byte ones whose rows are not whole
    # 16-byte vectors (span_tile_transpose.cuh; the switch below sends them all, or none): a partial last
    # tile of channels, a base 1-3 elements in (the span's ragged ends), batch items an element
    # further apart than packed (each item's span starts elsewhere off the grid), and outputs into
    # an aligned view of a wider poisoned buffer (rows of C + 32, a part vector at the tile's
    # end), and into a view one element in (off the grid: other kernels). H x W of 49, 196, 256,
    # 32, 35 and 54 elements (every size_a % 4).
    for n, c, h, w in [(3, 2048, 7, 7), (2, 208, 14, 14), (2, 80, 16, 16), (3, 48, 4, 8), (5, 144, 7, 7),
                       (4, 80, 5, 7), (3, 64, 6, 9)]:
        x = random_bits((n, c, h, w), dtype, device)
        check_fresh_and_guarded_outputs(x, (0, 2, 3, 1))
        check_bases_off_the_grid((n, c, h, w), (0, 2, 3, 1), dtype, device)
        spread = random_bits((n, c * h * w + 1), dtype, device)[:, :c * h * w].view(n, c, h, w)
        assert_bits_equal(tt.permute(spread, (0, 2, 3, 1)), reference(spread, (0, 2, 3, 1)))
        buf = poisoned((n, h + 2, w, c + 32), dtype, device)
        check_permute_into_view(x, (0, 2, 3, 1), buf, buf[:, 1:1 + h, :, 16:16 + c])
        part = x[:, :c - 6]
        check_permute_into_view(part, (0, 2, 3, 1), buf, buf[:, 1:1 + h, :, 16:16 + c - 6])


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("switches", [{"span_tiles": "0"}, {"span_tiles": "1"},
                                      {"span_tiles": "1", "span_whole_lines": "1"},
                                      {"span_tiles": "1", "span_whole_lines": "1",
                                       "span_rotation": "3"}],
                         ids=["off", "forced", "whole-lines", "whole-lines-step-3"])
def test_channels_last_of_small_grids_with_span_tiles_switched(switches):
    # TORCH_TRANSPOSE_KERNELS=span_tiles=1: every plan span tiles fit takes them (rows of whole vectors
    # too); 0: none does (square, window and realign window tiles again). The test's grids are
    # too small for the whole-line store rule (2-byte, at least 4 tiles per SM): with
    # TORCH_TRANSPOSE_KERNELS=span_whole_lines=1 every span tile plan stores whole lines, each lane's
    # gather rotated by the bank model's step or by a forced one (3: the 8 lanes of a line take
    # every rotation 0-7 of a 2-byte vector).
    run_with_switches((test_channels_last_of_small_spatial_grids,), switches, "cuda")


@pytest.mark.parametrize("dtype", [torch.uint8, torch.bfloat16, torch.float32, torch.float64], ids=str)
def test_channels_first_of_small_spatial_grids(device, dtype):
    # NHWC -> NCHW where H x W is short (the backward of the test above): output rows of 49, 196,
    # 256, 32, 35 and 54 elements, packed. On CUDA output span tiles take 1- to 4-byte ones whose
    # rows are not whole 16-byte vectors (output_span_tile_transpose.cuh; the switches below send
    # them all, or none, or all to item tiles' parts): a partial last tile of channels, input rows
    # cut short of their stride (ragged tails), a base 1-3 elements in (off the grid: item tiles'
    # parts for 1- and 2-byte elements, other kernels for wider ones), outputs into a view of a wider poisoned buffer whose items
    # start off the grid (the spans' first and last vectors), and a 2-D matrix into rows of 100.
    for n, h, w, c in [(3, 7, 7, 2048), (2, 14, 14, 208), (2, 16, 16, 80), (3, 4, 8, 48), (5, 7, 7, 144),
                       (4, 5, 7, 80), (3, 6, 9, 64)]:
        x = random_bits((n, h, w, c), dtype, device)
        check_fresh_and_guarded_outputs(x, (0, 3, 1, 2))
        cut = x[..., :c - 6]
        assert_bits_equal(tt.permute(cut, (0, 3, 1, 2)), reference(cut, (0, 3, 1, 2)))
        check_bases_off_the_grid((n, h, w, c), (0, 3, 1, 2), dtype, device)
        buf = poisoned((n, c + 3, h, w), dtype, device)
        check_permute_into_view(x, (0, 3, 1, 2), buf, buf[:, 1:1 + c])
        check_permute_into_view(cut, (0, 3, 1, 2), buf, buf[:, 2:2 + c - 6])
    matrix = random_bits((100, 1024), dtype, device)
    check_fresh_and_guarded_outputs(matrix, (1, 0))


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("setting", ["0", "1"], ids=["off", "forced"])
def test_channels_first_of_small_grids_with_output_span_tiles_switched(setting):
    # TORCH_TRANSPOSE_KERNELS=output_span_tiles=1: every plan output span tiles fit takes them (4- and
    # 8-byte ones and rows of 16-byte vectors too); 0: none does (square, window and realign
    # window tiles again).
    run_with_switches((test_channels_first_of_small_spatial_grids,), {"output_span_tiles": setting}, "cuda")


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_channels_first_of_small_grids_with_item_parts_forced():
    # TORCH_TRANSPOSE_KERNELS=item_parts=1: item tiles cut every item whose input rows are too long for
    # them into parts, from input rows on the 16-byte grid too (the rule leaves those to output
    # span tiles): parts of whole vectors, the last part of a row cut short of its stride shorter.
    run_with_switches((test_channels_first_of_small_spatial_grids,), {"item_parts": "1"}, "cuda")


def check_maps_transposed(shape, dtype, device):
    """A batch x heads x rows x cols tensor transposed in its last two dims equals eager's: into a
    fresh and a guarded output, with its rows cut short of their stride (x[..., :cols - 3]), from
    bases 1-3 elements in, and into a poisoned buffer whose items are a row apart (output spans
    that start off the grid)."""
    dims = (0, 1, 3, 2)
    b, h, rows, cols = shape
    x = random_bits(shape, dtype, device)
    check_fresh_and_guarded_outputs(x, dims)
    cut = x[..., :cols - 3]
    assert_bits_equal(tt.permute(cut, dims), reference(cut, dims))
    check_bases_off_the_grid(shape, dims, dtype, device)
    buf = poisoned((b, h, cols + 1, rows), dtype, device)
    check_permute_into_view(x, dims, buf, buf[:, :, 1:])


@pytest.mark.parametrize("dtype", [torch.uint8, torch.bfloat16, torch.float32, torch.float64], ids=str)
def test_transposed_attention_maps(device, dtype):
    # Attention maps (batch x heads x T x T) transposed in their last two dims: ViT-B/16's 197
    # tokens, CLIP ViT-B/32's 50 and 131, whose rows start off the 16-byte grid. On CUDA item tiles
    # take the 1- and 2-byte ones, realigning each input row's segment as they load it: whole items
    # of 50, items of 131 and 197 cut into parts (item_tile_transpose.cuh; the switches below send
    # them to output span tiles, or to none of these): rows cut short of their stride
    # (x[..., :T - 3]), bases 1-3 elements in, and outputs into a poisoned buffer whose items are a
    # row apart (spans that start off the grid).
    for b, h, t in [(2, 3, 197), (3, 2, 50), (1, 2, 131)]:
        check_maps_transposed((b, h, t, t), dtype, device)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("switches", [{"output_span_realign": "0"},
                                      {"output_span_tiles": "1", "output_span_realign": "1"},
                                      {"item_parts": "0"},
                                      {"item_tiles": "0", "output_span_tiles": "1",
                                       "output_span_realign": "1"}],
                         ids=["off", "forced", "whole items", "output span tiles forced"])
def test_attention_maps_with_realigned_output_spans_switched(switches):
    # TORCH_TRANSPOSE_KERNELS=output_span_realign=0: input rows off the grid never take output span tiles
    # or item tiles (realign window, window and square tiles again); both switches at 1: every
    # plan output span tiles fit takes them or item tiles, 4-byte ones and rows of whole vectors
    # too; TORCH_TRANSPOSE_KERNELS=item_parts=0: items too long for item tiles take output span tiles'
    # realigned loads; with item tiles off too, every plan output span tiles fit takes them.
    run_with_switches((test_transposed_attention_maps,), switches, "cuda")


@pytest.mark.parametrize("dtype", [torch.uint8, torch.bfloat16, torch.float32, torch.float64], ids=str)
def test_transposed_maps_of_small_items(device, dtype):
    # Batches of small matrices transposed in their last two dims, each past the direct kernel's
    # 32768 elements: Swin's window attention (49 tokens), CLIP ViT-B/32's (50), input rows of 41
    # into output rows of 100, and rows on the 16-byte grid (48 and 28 elements). On CUDA item
    # tiles take the 1- and 2-byte ones (and fp32 rows of 28 on the grid), several whole items a
    # tile (item_tile_transpose.cuh; the switch below sends them back to one item a tile): rows
    # cut short of their stride, bases 1-3 elements in, and outputs into a poisoned buffer whose
    # items are a row apart (spans that start off the grid).
    for shape in [(5, 3, 49, 49), (4, 4, 50, 50), (2, 5, 100, 41), (4, 4, 50, 48), (6, 4, 50, 28)]:
        check_maps_transposed(shape, dtype, device)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_small_items_with_item_tiles_off():
    # TORCH_TRANSPOSE_KERNELS=item_tiles=0: output span tiles of one item a tile take these plans again.
    run_with_switches((test_transposed_maps_of_small_items,), {"item_tiles": "0"}, "cuda")


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_channels_last_of_vit_patch_grids(dtype):
    # ViT-B's patch grid (768 channels of 14 x 14) and a 10 x 10 one at their models' batch sizes:
    # grids of 768 span tiles, enough for the whole-line store rule on an H200 (at least 4 tiles
    # per SM), into a fresh tensor and a guarded view of a wider buffer.
    for n, c, h, w in [(64, 768, 14, 14), (256, 384, 10, 10)]:
        x = random_bits((n, c, h, w), dtype, "cuda")
        check_fresh_and_guarded_outputs(x, (0, 2, 3, 1))
        buf = poisoned((n, h, w, c + 16), dtype, "cuda")
        check_permute_into_view(x, (0, 2, 3, 1), buf, buf[..., 8:8 + c])


@pytest.mark.parametrize("dtype", [torch.uint8, torch.bfloat16, torch.float32], ids=str)
def test_box_tiles_whose_output_lines_are_half_vectors(device, dtype):
    # The 5-D permute's layout with output lines (d0) of 30, 24 and 12 elements: on CUDA the box
    # tile kernel stores 8 bytes at a time where d0 is whole 8-byte but not 16-byte vectors
    # (fp32 30, uint8 24, bf16 12), 16 bytes where it is whole 16-byte vectors. Into a fresh
    # tensor and into a guarded view of a larger buffer. bf16 fresh outputs take half-vector
    # gather tiles unless TORCH_TRANSPOSE_KERNELS=gather_half_vectors=0 (test_box_tiles_where_half_vector_gather_is_off).
    dims = (4, 2, 0, 3, 1)
    for d0 in (30, 24, 12):
        x = random_bits((2, d0, 3, 50, 60), dtype, device)
        check_fresh_and_guarded_outputs(x, dims)


def test_kernel_template_args_reads_profiler_names():
    # The route checks below read instantiations from names as the profiler demangles them (the
    # form cuobjdump printed for this library's kernels): a name with another kernel whose name
    # ends in the one asked for, and a launch list without it.
    names = ["void torch_transpose::realigned_output_span_tile_transpose_kernel<unsigned short, 4, true>("
             "unsigned short const*, unsigned short*, torch_transpose::RealignedOutputSpanTileArgs)",
             "void torch_transpose::box_tile_transpose_kernel<uint2, 2, 2, true>(uint2 const*, uint2*, "
             "torch_transpose::BoxTileArgs)",
             "void torch_transpose::gather_tile_transpose_kernel<unsigned char, 16, 128, false, true, false, 2>("
             "unsigned char const*, unsigned char*, torch_transpose::GatherTileArgs)"]
    assert kernel_template_args(names, "box_tile_transpose_kernel") == ["uint2", "2", "2", "true"]
    assert kernel_template_args(names, "gather_tile_transpose_kernel")[-1] == "2"
    assert kernel_template_args(names, "output_span_tile_transpose_kernel") is None
    assert kernel_template_args(names[:1], "box_tile_transpose_kernel") is None


@pytest.mark.parametrize("dtype", [torch.uint8, torch.bfloat16, torch.float32, torch.float64], ids=str)
def test_box_tiles_of_tiny_matrices(device, dtype):
    # Batches of 7 x 9 matrices: on CUDA box tiles take a chunk of whole matrices a tile, the
    # largest chunk (within 64 below the tile budget) whose runs are whole 16-byte vectors
    # (box_chunk: 80 bf16 and 40 fp32 matrices of 800, where 100 and 50 would leave both sides
    # element by element; fp64's largest is one), else such a chunk down to half the budget
    # (uint8: 160, where the window's 200 is not whole vectors), the largest
    # under TORCH_TRANSPOSE_KERNELS=box_vector_chunks=0 (test_tiny_matrices_by_largest_box_chunk); and
    # tiles of whole vectors load densely (BoxTileArgs::dense_loads) unless TORCH_TRANSPOSE_KERNELS=box_dense_loads=0,
    # and store by their period (BoxTileArgs::periodic_lanes: the output is one run of 63-element
    # items) unless TORCH_TRANSPOSE_KERNELS=box_periodic_stores=0.
    # Into a fresh tensor and a guarded view one element in (element by element).
    x = random_bits((800, 7, 9), dtype, device)
    check_fresh_and_guarded_outputs(x, (0, 2, 1))
    kernels = cuda_kernels_of(lambda: tt.permute(x, (0, 2, 1))) if device == "cuda" else None
    if kernels is not None:  # None: no profiler (compute-sanitizer), values only
        e = x.element_size()
        vector_chunks = kernel_switch("box_vector_chunks") != "0"
        v = {1: 16 if vector_chunks else 1, 2: 8 if vector_chunks else 1, 4: 4 if vector_chunks else 1, 8: 2}[e]
        # <T, VIN, VOUT, kEvictLast, kDenseLoads, kPeriodicStores>
        box = kernel_template_args(kernels, "box_tile_transpose_kernel")
        # Whole-vector tiles of 7 x 9 (odd both ways) load densely and store by their period.
        dense = v > 1 and kernel_switch("box_dense_loads") != "0"
        periodic = v > 1 and kernel_switch("box_periodic_stores") != "0"
        assert box is not None and box[:3] == [KERNEL_ELEMENT_TYPES[e], str(v), str(v)], (v, kernels)
        assert box[4:] == ["true" if dense else "false", "true" if periodic else "false"], (dense, periodic, kernels)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("switch", ["box_vector_chunks", "box_dense_loads",
                                    "box_periodic_stores"])
def test_tiny_matrices_by_largest_box_chunk(switch):
    # Each switch off in turn: the largest chunk (element by element), whole-vector chunks
    # through the load walk, or through the store walk.
    run_with_switches((test_box_tiles_of_tiny_matrices, test_box_tiles_of_small_matrix_batches), {switch: "0"}, "cuda")


@pytest.mark.parametrize("dtype", [torch.uint8, torch.bfloat16, torch.float32, torch.float64], ids=str)
def test_box_tiles_of_small_matrix_batches(device, dtype):
    # Batches of small matrices whose output is one run: on CUDA box tiles store them by their
    # period (lcm(a * b, vector) elements) where it keeps 3/4 of a block's threads busy: 3 x 5
    # (15 1-byte vectors a period), 8 x 8 (rows whole), 5 x 12, 11 x 13 (1-byte: 143 vectors,
    # the store walk); also a batch dim that continues neither side (a permute whose batch dim
    # moves). Into a fresh tensor and a guarded view one element in (element by element).
    for shape, dims in [((960, 3, 5), (0, 2, 1)), ((384, 8, 8), (0, 2, 1)), ((480, 5, 12), (0, 2, 1)),
                        ((640, 11, 13), (0, 2, 1)), ((6, 160, 7, 9), (1, 0, 3, 2))]:
        check_fresh_and_guarded_outputs(random_bits(shape, dtype, device), dims)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_half_vector_gather_tiles(device, dtype):
    # 2-byte layouts of the 5-D permute's kind whose input fast dim a = 60 is not whole 16-byte
    # vectors: on CUDA gather tiles of side 64 with 8-byte vectors take them
    # (gather_half_vectors), box tiles under TORCH_TRANSPOSE_KERNELS=gather_half_vectors=0. Output lines
    # of 30 and 12, a partial last run tile, two batch dims; into a fresh tensor, into a guarded
    # view one element in (off the 8-byte grid: box tiles) and into a view of rows at a padded
    # pitch that keeps the 8-byte grid.
    for shape, dims in [((2, 30, 3, 50, 60), (4, 2, 0, 3, 1)), ((2, 12, 3, 50, 60), (4, 2, 0, 3, 1)),
                        ((2, 24, 3, 10, 60), (4, 2, 0, 3, 1)), ((2, 3, 24, 4, 60), (1, 0, 4, 3, 2))]:
        x = random_bits(shape, dtype, device)
        check_fresh_and_guarded_outputs(x, dims)
        out_shape = tuple(shape[d] for d in dims)
        if len(shape) == 5 and dims[0] == 4:
            run = math.prod(out_shape[1:])
            buf = poisoned((out_shape[0], run + 8), dtype, device)
            check_permute_into_view(x, dims, buf, buf[:, 4:4 + run].view(out_shape))
        kernels = cuda_kernels_of(lambda: tt.permute(x, dims)) if device == "cuda" else None
        if kernels is not None:  # None: no profiler (compute-sanitizer), values only
            gather = kernel_template_args(kernels, "gather_tile_transpose_kernel")  # <T, V, kTile, ...>
            half_vector_gather = gather is not None and gather[:3] == ["unsigned short", "4", "64"]
            # TORCH_TRANSPOSE_KERNELS=gather_tile=0 (gpu_check.sh's older-paths rerun) turns gather tiles off.
            expected = all(kernel_switch(switch) != "0" for switch in
                           ("gather_half_vectors", "gather_tile"))
            assert half_vector_gather == expected, kernels


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_box_tiles_where_half_vector_gather_is_off():
    # TORCH_TRANSPOSE_KERNELS=gather_half_vectors=0: box tiles take the 2-byte layouts above, and the box
    # tile test's bf16 cases (a = 60) meet box tiles again.
    run_with_switches((test_half_vector_gather_tiles, test_box_tiles_whose_output_lines_are_half_vectors),
                      {"gather_half_vectors": "0"}, "cuda")


@pytest.mark.parametrize("dtype", [torch.uint8, torch.bfloat16, torch.float32, torch.float64], ids=str)
def test_gather_tiles_over_the_outputs_run(device, dtype):
    # Layouts whose output fast dim b (under 32) continues into other dims of the output, while
    # the input's fast dim a is another: on CUDA gather tiles take them (a tile over a and that
    # merged run; a partial a tile, a partial last run tile, one and two batch dims, a run of
    # three dims). Into a fresh tensor (aligned: gather tiles) and into a guarded view one element
    # in from every edge (misaligned: box or flat tiles).
    for shape, dims in [((2, 30, 3, 50, 64), (4, 2, 0, 3, 1)), ((2, 24, 3, 10, 80), (4, 2, 0, 3, 1)),
                        ((20, 4, 144), (2, 1, 0)), ((3, 20, 4, 144), (0, 3, 2, 1)),
                        ((2, 3, 24, 4, 80), (1, 0, 4, 3, 2)), ((3, 24, 4, 80), (3, 0, 2, 1))]:
        x = random_bits(shape, dtype, device)
        check_fresh_and_guarded_outputs(x, dims)
    # A stepped run dim (rows stay 16-byte aligned), and an expanded one.
    x = random_bits((40, 4, 144), dtype, device)[::2]
    assert_bits_equal(tt.permute(x, (2, 1, 0)), reference(x, (2, 1, 0)))
    x = random_bits((20, 1, 144), dtype, device).expand(20, 4, 144)
    assert_bits_equal(tt.permute(x, (2, 1, 0)), reference(x, (2, 1, 0)))


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("fetch_256", ["0", "1"])
def test_gather_tiles_with_and_without_256_byte_fills(fetch_256):
    # gather_fetch_256: whether the gather tiles' evict_last loads ask L2 for
    # 256-byte fills (by default the 5-D route's do, and the ragged rows' of 2-byte elements:
    # gather_loads). evict_last is forced so that 2-byte tiles of the 5-D route, which
    # load without it by default, take both instantiations too; the ragged rows' cases run along.
    run_with_switches((test_gather_tiles_over_the_outputs_run, test_ragged_output_rows_over_the_outputs_run),
                      {"gather_fetch_256": fetch_256, "l2_evict_last": "1"}, "cuda")


# Layouts whose fast dims are both 32 or more and whose output run continues b into other dims
# that the input does not merge (the 4-D reversal's layout): output rows (b) of 35 and 33
# elements (not whole 16-byte vectors in any width), 40 (whole vectors from 2-byte elements on,
# not whole tiles; not whole 1-byte vectors), 48 (whole vectors, not whole tiles), 136 (longer
# than a 1-byte tile, not whole 1-byte vectors) and 128 (whole tiles); a = 64, 80 (a partial a
# tile), 96, 256 (over b = 40, 48 and 128: a and the run whole tiles in every width, so gather
# tiles run without an edge path, gather_whole_tiles, as 4- and 8-byte ones do on a = 64 but
# over b = 35) and 128 (over b = 48 with a run of 1008: one edge tile in 8 for 1-byte elements,
# which go element by element, gather_edges); runs of 1120 and 1056 (a partial last run tile); a
# batch dim. On CUDA gather tiles take by rule (wants_gather_rows) all but b = 128 of 2- to
# 8-byte elements; of 1-byte ones b = 35, 33 and 40, and b = 48 where the kernel needs no
# masked-vector edges; every layout under TORCH_TRANSPOSE_KERNELS=gather_rows=1, none under =0.
RAGGED_ROW_LAYOUTS = [((35, 4, 8, 64), (3, 2, 1, 0)), ((35, 4, 8, 80), (3, 2, 1, 0)),
                      ((2, 33, 4, 8, 96), (0, 4, 3, 2, 1)), ((40, 4, 8, 64), (3, 2, 1, 0)),
                      ((48, 4, 8, 64), (3, 2, 1, 0)), ((136, 2, 4, 64), (3, 2, 1, 0)),
                      ((128, 2, 4, 256), (3, 2, 1, 0)), ((40, 4, 8, 256), (3, 2, 1, 0)),
                      ((48, 4, 8, 256), (3, 2, 1, 0)), ((48, 3, 7, 128), (3, 2, 1, 0))]

NO_EDGES, VECTOR_EDGES, SCALAR_EDGES = 0, 1, 2  # GatherEdgeKind


def gather_edges_expected(dtype, shape):
    """The edge path of gather tiles serving a RAGGED_ROW_LAYOUTS case (gather_edges): none where
    a (the input's last dim) and the run (the three before it) are whole tiles of 128 (1- and
    2-byte elements) or 64, unless TORCH_TRANSPOSE_KERNELS=gather_whole_tiles=0; else element by element
    for 1-byte elements where at most one tile in 8 is an edge tile (or as
    gather_scalar_edges says), masked vectors otherwise."""
    tile = 128 if dtype.itemsize <= 2 else 64
    a, run = shape[-1], shape[-4] * shape[-3] * shape[-2]
    if kernel_switch("gather_whole_tiles") != "0" and a % tile == 0 and run % tile == 0:
        return NO_EDGES
    tiles = -(-a // tile) * -(-run // tile)
    few_edge_tiles = (tiles - (a // tile) * (run // tile)) * 8 <= tiles
    scalar = {"0": False, "1": True}.get(kernel_switch("gather_scalar_edges"), few_edge_tiles)
    return SCALAR_EDGES if dtype.itemsize == 1 and scalar else VECTOR_EDGES


def gather_tiles_expected(dtype, shape):
    """Whether gather tiles should serve a RAGGED_ROW_LAYOUTS case under this process's switches."""
    setting = kernel_switch("gather_rows")
    if setting == "0" or kernel_switch("gather_tile") == "0":
        return False
    if setting == "1":
        return True
    b = shape[-4]  # the input's dim -4 is the output's fast dim
    if dtype.itemsize > 1:
        return b != 128
    return b in (35, 33, 40) or (b == 48 and gather_edges_expected(dtype, shape) != VECTOR_EDGES)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.bfloat16, torch.float32, torch.float64], ids=str)
def test_ragged_output_rows_over_the_outputs_run(device, dtype):
    # Into a fresh tensor, into a guarded view whose rows keep the fresh layout's alignment (the
    # outermost dim's slice 1..1+n of a poisoned buffer: gather tiles too), and into a view one
    # element in from every edge (misaligned: other kernels).
    for shape, dims in RAGGED_ROW_LAYOUTS:
        x = random_bits(shape, dtype, device)
        check_fresh_and_guarded_outputs(x, dims)
        out_shape = tuple(shape[d] for d in dims)
        buf = poisoned((out_shape[0] + 2, *out_shape[1:]), dtype, device)
        check_permute_into_view(x, dims, buf, buf[1:1 + out_shape[0]])
        kernels = cuda_kernels_of(lambda: tt.permute(x, dims)) if device == "cuda" else None
        if kernels is not None:  # the route; None: no profiler (compute-sanitizer), values only
            gather = kernel_template_args(kernels, "gather_tile_transpose_kernel")  # the last: its GatherEdgeKind
            assert (gather is not None) == gather_tiles_expected(dtype, shape), kernels
            if gather is not None:
                assert int(gather[-1]) == gather_edges_expected(dtype, shape), kernels


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("switches", [{"gather_rows": "0"}, {"gather_rows": "1"},
                                      {"gather_rows": "1", "gather_whole_tiles": "0"},
                                      {"gather_rows": "1", "gather_scalar_edges": "1"},
                                      {"gather_scalar_edges": "0"}],
                         ids=["rows_off", "rows_on", "rows_on_edges_kept", "rows_on_scalar_edges", "vector_edges_only"])
def test_ragged_rows_switched(switches):
    # TORCH_TRANSPOSE_KERNELS=gather_rows=0: window, realign window, square and TMA byte tiles take the
    # layouts above; =1: gather tiles take every one of them, with TORCH_TRANSPOSE_KERNELS=gather_whole_tiles=0
    # the whole-tile ones through a kernel with an edge path, with TORCH_TRANSPOSE_KERNELS=gather_scalar_edges=1
    # 1-byte edge tiles element by element wherever they are. TORCH_TRANSPOSE_KERNELS=gather_scalar_edges=0
    # under the rule: 1-byte plans with edges that would go element by element go elsewhere.
    run_with_switches((test_ragged_output_rows_over_the_outputs_run,), switches, "cuda")


def check_output_in_aligned_window(x, dims, left):
    """tt.permute into columns [left, left + n) of rows padded by 2 * left: rows stay 16-byte
    aligned when left is a multiple of 16 bytes, so full-vector kernels can take the view."""
    shape = tuple(x.shape[d] for d in dims)
    n = shape[-1]
    buf = poisoned(shape[:-1] + (n + 2 * left,), x.dtype, x.device)
    check_permute_into_view(x, dims, buf, buf[..., left:left + n])


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_two_byte_tiles_of_whole_64_element_lines(device, dtype):
    # Fast dims of whole 64- but not 128-element tiles (NCHW -> NHWC with H x W = 1344 = 21 x 64,
    # and back; 192 x 320): on CUDA these take compact 64 x 64 tiles (compact_tile_transpose.cuh).
    # Fresh outputs, guarded views one element in (narrower vectors: other kernels), and views
    # 64 elements in, which keep 16-byte rows.
    for shape, dims in [((2, 128, 24, 56), (0, 2, 3, 1)), ((2, 24, 56, 128), (0, 3, 1, 2)), ((192, 320), (1, 0))]:
        x = random_bits(shape, dtype, device)
        check_fresh_and_guarded_outputs(x, dims)
        check_output_in_aligned_window(x, dims, 64)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32], ids=str)
def test_sixteen_lines_into_dense_rows(device, dtype):
    # 16 lines of 4-byte elements into rows of 16, the lines a whole number of 128-element tiles:
    # on CUDA the narrow block kernel (narrow_block_transpose.cuh). Batched, and lines with a gap.
    for x in [random_bits((16, 4096), dtype, device), random_bits((3, 16, 1536), dtype, device),
              random_bits((16, 2576), dtype, device)[:, :2560]]:
        dims = tuple(range(x.dim() - 2)) + (x.dim() - 1, x.dim() - 2)
        check_fresh_and_guarded_outputs(x, dims)
        check_output_in_aligned_window(x, dims, 16)


# (dtype, N): dense rows of 12 to 64 bytes, whole 4-byte words: the shortest, odd and even word
# counts, 16 (the narrow kernel's widest), past it below 32 elements and from 32 on.
NARROW_WORD_LINES = [(torch.uint8, 16), (torch.int8, 12), (torch.int8, 16), (torch.int8, 20), (torch.int8, 32),
                     (torch.int8, 64), (torch.bfloat16, 10), (torch.bfloat16, 16), (torch.bfloat16, 24),
                     (torch.float16, 14), (torch.float16, 16), (torch.float16, 32)]


@pytest.mark.parametrize("dtype,lines", NARROW_WORD_LINES, ids=lambda p: str(p))
def test_lines_of_narrow_elements(device, dtype, lines):
    # N lines of 1- and 2-byte elements against dense rows of N (12 to 64 bytes): on CUDA narrow
    # word tiles (narrow_word_transpose.cuh), both directions. Lines of whole tiles (8192) and
    # lines whose last tile is partial (5008: whole 16-byte chunks); NCHW <-> NHWC in batches;
    # an expanded batch dim (stride 0); input lines with a gap; two batch dims that do not merge.
    # Fresh outputs, guarded views one element in (other kernels), and outputs in an aligned
    # window (output lines with a gap, or dense rows at an offset).
    n = lines
    cases = [(random_bits((n, 8192), dtype, device), (1, 0)),
             (random_bits((8192, n), dtype, device), (1, 0)),
             (random_bits((n, 5008), dtype, device), (1, 0)),
             (random_bits((5008, n), dtype, device), (1, 0)),
             (random_bits((3, n, 40, 48), dtype, device), (0, 2, 3, 1)),
             (random_bits((3, 40, 48, n), dtype, device), (0, 3, 1, 2)),
             (random_bits((1, n, 3072), dtype, device).expand(3, n, 3072), (0, 2, 1)),
             (random_bits((n, 5040), dtype, device)[:, :5008], (1, 0)),
             (random_bits((2, 3, n, 1040), dtype, device), (1, 0, 3, 2))]
    for x, dims in cases:
        check_fresh_and_guarded_outputs(x, dims)
        check_output_in_aligned_window(x, dims, 16)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("switches", [{"narrow_words": "0"},
                                      {"narrow_word_fetch_256": "0"},
                                      {"narrow_word_fetch_256": "1"},
                                      {"l2_evict_last": "0"}],
                         ids=["other kernels", "no fills", "fills both ways", "plain loads"])
def test_narrow_element_lines_switched(switches):
    # The same plans with narrow word tiles off (the narrow kernel, which took those of up to 16
    # lines before, and the flat, square and TMA byte tiles, which took longer ones, still serve
    # them), and with each load flavour that their rules leave out: no 256-byte fills for lines
    # in, fills for dense in, plain loads.
    run_with_switches((test_lines_of_narrow_elements,), switches, "cuda")


@pytest.mark.parametrize("channels", [2, 3, 4, 7, 8, 9, 15, 16])
@pytest.mark.parametrize("dtype", [torch.uint8, torch.bfloat16, torch.float32, torch.float64], ids=str)
def test_packed_channels_against_whole_vector_planes(device, dtype, channels):
    # NCHW <-> NHWC and (C, L) <-> (L, C) with C = 2..16, planes of whole 16-byte vectors (3360 and
    # 20016 elements, each ending inside a warp's chunk) and more than 32768 elements: on CUDA the
    # interleave kernel where interleave_max_c allows (interleave_transpose.cuh: C = 9 and 15 take
    # two passes), the narrow kernels elsewhere. Fresh outputs; guarded views one element in
    # (other kernels); whole-item slices of a guarded buffer and planar outputs in an aligned
    # window, which keep 16-byte vectors (the interleave kernel again where the slice is aligned).
    # Two batch dims that do not merge, then three (lean interleave launches take up to two,
    # lean_interleave_transpose.cuh; the looping kernel the rest).
    for shape, dims in [((6, channels, 48, 70), (0, 2, 3, 1)), ((6, 48, 70, channels), (0, 3, 1, 2)),
                        ((channels, 20016), (1, 0)), ((20016, channels), (1, 0)),
                        ((2, 3, channels, 2816), (1, 0, 3, 2)), ((2, 3, 2816, channels), (1, 0, 3, 2)),
                        ((2, 3, 2, channels, 1408), (2, 1, 0, 4, 3))]:
        x = random_bits(shape, dtype, device)
        check_fresh_and_guarded_outputs(x, dims)
        out_shape = tuple(x.shape[d] for d in dims)
        buf = poisoned((out_shape[0] + 2,) + out_shape[1:], dtype, device)
        check_permute_into_view(x, dims, buf, buf[1:1 + out_shape[0]])
        check_output_in_aligned_window(x, dims, 16)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_packed_channels_on_the_looping_interleave_kernel():
    # The interleave plans above that lean_interleave_takes (C = 3 of 2- to 8-byte elements, C = 2
    # of 4- and 8-byte ones) with up to two batch dims take lean launches by default; with
    # TORCH_TRANSPOSE_KERNELS=lean_interleave=0 the looping kernel takes them all again.
    run_with_switches((test_packed_channels_against_whole_vector_planes,), {"lean_interleave": "0"}, "cuda")


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_packed_channels_with_the_load_flavours_their_rules_skip():
    # The interleave plans above are small, so by the rules 2-byte C = 3 planar inputs load without
    # the evict_last hints (interleave_evict_last_rule: on lean launches those hints are for calls
    # of more than 64 MB) and 2-byte C = 3 dense inputs go through shared memory
    # (interleave_direct_loads). Forced here: evict_last loads and direct loads wherever a kernel
    # has them.
    run_with_switches((test_packed_channels_against_whole_vector_planes,), {"l2_evict_last": "1", "interleave_direct": "1"}, "cuda")


@pytest.mark.parametrize("dtype", [torch.uint8, torch.float16, torch.float32, torch.complex128], ids=str)
def test_dense_copies_into_fresh_and_guarded_outputs(device, dtype):
    # A permute whose input is already in the output's order is one dense run on both sides
    # (CUDA: cudaMemcpyAsync). Into a fresh tensor, and into the middle of a poisoned buffer,
    # 1 or 2 elements in, so that the run starts off the vector grid for narrow types.
    for shape, dims in [((37, 53), (1, 0)), ((3, 5, 7, 11), (3, 2, 1, 0))]:
        x = random_bits(shape[::-1], dtype, device).permute(*dims)  # column-major: x.permute(dims) is dense
        expected = reference(x, dims)
        assert_bits_equal(tt.permute(x, dims), expected)
        for start in (1, 2):
            n = expected.numel()
            buf = poisoned((n + 4,), dtype, device)
            check_permute_into_view(x, dims, buf, buf[start:start + n].view(expected.shape))


@pytest.mark.parametrize("memory_format,shape", [
    (torch.channels_last, (2, 3, 9, 11)),
    (torch.channels_last, (4, 64, 5, 1)),
    (torch.channels_last_3d, (2, 5, 3, 4, 6)),
    (torch.contiguous_format, (2, 3, 9, 11)),
    (torch.channels_last, (2, 64, 136, 130)),  # 9 MB of fp16: large-output paths on the CPU
])
def test_to_memory_format(device, memory_format, shape):
    for x in (random_bits(shape, torch.float16, device),
              random_bits(shape, torch.float16, device).contiguous(memory_format=memory_format)):
        y = tt.to_memory_format(x, memory_format)
        expected = x.contiguous(memory_format=memory_format)
        assert y.is_contiguous(memory_format=memory_format) and y.stride() == expected.stride()
        assert y.data_ptr() != x.data_ptr()
        assert_bits_equal(y, expected)


def test_to_memory_format_of_wrong_rank_raises():
    with pytest.raises(RuntimeError, match="rank 4"):
        tt.to_memory_format(torch.randn(2, 3, 4), torch.channels_last)


def test_identity_permute_into_channels_last_out(device):
    x = random_bits((3, 8, 5, 7), torch.float32, device)
    out = torch.empty_like(x, memory_format=torch.channels_last)
    assert tt.permute(x, (0, 1, 2, 3), out=out) is out
    assert_bits_equal(out, x)
    assert out.stride() == x.contiguous(memory_format=torch.channels_last).stride()


def test_permute_out_into_stepped_view_of_guarded_buffer(device):
    x = random_bits((3, 4, 5), torch.int32, device)
    buf = poisoned((12, 11, 8), torch.int32, device)
    check_permute_into_view(x, (2, 1, 0), buf, buf[1::2, 2:9:2, 1:4][:5, :4, :3])


def test_permute_errors(device):
    x = torch.randn(2, 3, 4, device=device)
    with pytest.raises(RuntimeError, match="len\\(dims\\) = 2"):
        tt.permute(x, (0, 1))
    with pytest.raises(RuntimeError, match="must not repeat"):
        tt.permute(x, (0, 1, 1))
    with pytest.raises(IndexError):
        tt.permute(x, (0, 1, 3))
    with pytest.raises(IndexError):
        tt.permute(x, (0, 1, -4))
    with pytest.raises(RuntimeError, match="out to have shape"):
        tt.permute(x, (2, 1, 0), out=torch.empty(2, 3, 4, device=device))
    with pytest.raises(RuntimeError, match="out to have dtype"):
        tt.permute(x, (2, 1, 0), out=torch.empty(4, 3, 2, dtype=torch.int32, device=device))


def test_rank_limit_after_merging_is_reported():
    # 17 dims of size 2 that no merge can join (a full reversal keeps them all apart).
    x = torch.randn([2] * 17)
    with pytest.raises(RuntimeError, match="at most 16 dims"):
        tt.permute(x, list(reversed(range(17))))
    # The same rank merges down when the permutation keeps neighbours together.
    assert_bits_equal(tt.permute(x, list(range(17))), x)


def test_zero_and_one_sized_dims(device):
    for shape in [(0, 3, 4), (2, 0, 1), (1, 1, 1), (5, 1, 7)]:
        x = random_bits(shape, torch.float32, device)
        for dims in itertools.permutations(range(3)):
            assert_bits_equal(tt.permute(x, dims), reference(x, dims))


def test_explain_describes_the_plan(device):
    x = torch.empty(8, 3, 16, 16, device=device)
    assert tt.explain(x, (0, 2, 3, 1)).startswith("transpose: sizes=[8, 256, 3]")
    assert tt.explain(x, (0, 1, 2, 3)).startswith("copy: sizes=[6144]")
    out = torch.empty(8, 16, 16, 3, device=device)
    assert "in_fast=1 out_fast=2" in tt.explain(x, (0, 2, 3, 1), out)
    assert tt.explain(torch.empty(4, 0), (1, 0)) == "empty: nothing to move"
    assert tt.explain(torch.empty(8, 3, 16, 16, device="meta"), (0, 2, 3, 1)).startswith("transpose:")


def test_large_channels_last_output(device):
    # Above the CPU kernel's streaming-store size (8 MiB); 80 channels: ragged tiles, and rows of
    # 320 bytes, whole 64-byte lines, so they stream.
    x = random_bits((2, 80, 128, 130), torch.float32, device)
    assert_bits_equal(tt.permute(x, [0, 2, 3, 1]), reference(x, [0, 2, 3, 1]))
