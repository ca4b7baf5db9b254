"""torch_transpose.transpose against x.transpose(d0, d1).contiguous(), bit for bit."""
import itertools
import os
import subprocess
import sys

import pytest
import torch

import torch_transpose as tt
from deprecated_apis import uses_quantized
from helpers import (ALL_DTYPES, kernel_switch, WIDTH_DTYPES, assert_bits_equal, assert_only_view_written, check_permute_into_view,
                     cuda_kernels_of, kernel_template_args, poisoned, random_bits, run_file_with_switches)

TILE_EDGES = [1, 31, 32, 33, 63, 64, 65, 127, 128, 129]


def reference(x, d0=-2, d1=-1):
    return x.transpose(d0, d1).contiguous()


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_every_dtype_moves_bits_exactly(device, dtype):
    x = random_bits((67, 45), dtype, device)
    assert_bits_equal(tt.transpose(x), reference(x))
    assert_bits_equal(torch.ops.torch_transpose.transpose(x, 0, 1), reference(x, 0, 1))


def test_nan_payloads_and_negative_zero_survive(device):
    special = torch.tensor([0x7FC00001, 0x7F800001, 0xFFC12345, 0x80000000, 0x00000001, 0x7F800000],
                           dtype=torch.int64).to(torch.int32).view(torch.float32)
    x = special.repeat(7 * 11)[: 7 * 11].reshape(7, 11).to(device)
    assert_bits_equal(tt.transpose(x), reference(x))


@pytest.mark.parametrize("dtype", WIDTH_DTYPES, ids=str)
@pytest.mark.parametrize("m", TILE_EDGES)
def test_shapes_at_tile_boundaries(device, dtype, m):
    for n in TILE_EDGES:
        x = random_bits((m, n), dtype, device)
        assert_bits_equal(tt.transpose(x), reference(x))


@pytest.mark.parametrize("shape", [(1000, 7), (7, 1000), (4099, 3), (3, 4099), (2, 3000), (513, 257)])
@pytest.mark.parametrize("dtype", WIDTH_DTYPES, ids=str)
def test_tall_wide_and_non_square(device, shape, dtype):
    x = random_bits(shape, dtype, device)
    assert_bits_equal(tt.transpose(x), reference(x))


@pytest.mark.parametrize("shape", [(3, 40, 70), (2, 3, 33, 65), (5, 1, 64, 1), (2, 2, 2, 2, 9)])
def test_batched_every_dim_pair(device, shape):
    x = random_bits(shape, torch.float32, device)
    for d0, d1 in itertools.product(range(-len(shape), len(shape)), repeat=2):
        assert_bits_equal(tt.transpose(x, d0, d1), reference(x, d0, d1))


@pytest.mark.parametrize("shape", [(500, 8, 8), (64, 1024, 3), (37, 5, 300), (3, 2, 31, 33), (1000, 2, 2)])
@pytest.mark.parametrize("dtype", WIDTH_DTYPES, ids=str)
def test_batched_narrow_matrices(device, shape, dtype):
    x = random_bits(shape, dtype, device)
    assert_bits_equal(tt.transpose(x), reference(x))
    assert_bits_equal(tt.transpose(x, 0, -1), reference(x, 0, -1))


def strided_views(device, dtype):
    base = random_bits((70, 90), dtype, device)
    big = random_bits((4, 70, 90), dtype, device)
    return {
        "storage_offset": base[5:, 7:],
        "step_columns": base[:, ::2],
        "step_both": base[1::3, 2::5],
        "misaligned_by_one": base[1:, 1:],
        "transposed_view": base.t(),
        "transposed_slice": base.t()[3:50, 1:60],
        "expanded_rows": base[:1].expand(40, 90),
        "expanded_cols": base[:, :1].expand(70, 50),
        "expanded_batch": base[None].expand(3, 70, 90),
        "batched_middle_slice": big[:, 3:60, :],
        "batched_transposed": big.transpose(0, 2),
        "size_zero": base[:0],
        "size_zero_cols": base[:, 5:5],
        "size_one_rows": base[:1],
        "size_one_both": base[:1, :1],
    }


@pytest.mark.parametrize("dtype", [torch.uint8, torch.float16, torch.float32, torch.complex128], ids=str)
def test_strided_inputs(device, dtype):
    for name, x in strided_views(device, dtype).items():
        for d0, d1 in [(-2, -1), (0, -1), (-1, 0)]:
            assert_bits_equal(tt.transpose(x, d0, d1), reference(x, d0, d1)), name


def test_same_dim_is_a_contiguous_copy(device):
    x = random_bits((30, 50), torch.float32, device)[:, ::3]
    for d in (0, 1, -1):
        y = tt.transpose(x, d, d)
        assert y.is_contiguous() and y.data_ptr() != x.data_ptr()
        assert_bits_equal(y, x.contiguous())


def test_output_is_new_even_when_already_contiguous(device):
    x = random_bits((1, 40), torch.float32, device)  # transposing a size-1 dim is a no-op layout
    y = tt.transpose(x)
    assert y.data_ptr() != x.data_ptr()
    assert_bits_equal(y, reference(x))


def test_low_rank_inputs_match_pytorch(device):
    for x in (torch.tensor(3.5, device=device), torch.arange(5.0, device=device)):
        with pytest.raises(IndexError) as ours:
            tt.transpose(x)
        with pytest.raises(IndexError) as theirs:
            x.transpose(-2, -1)
        assert str(ours.value) == str(theirs.value)
        assert_bits_equal(tt.transpose(x, 0, -1), x.transpose(0, -1).contiguous())


def test_dims_out_of_range_raise_index_error(device):
    x = random_bits((3, 4, 5), torch.float32, device)
    for dims in [(3, 0), (0, -4), (7, 7)]:
        with pytest.raises(IndexError):
            tt.transpose(x, *dims)


# ---- out= --------------------------------------------------------------------------------------

def out_views(device, dtype, rows, cols):
    """Views of fresh guard buffers that hold a (rows, cols) result, each with a name."""
    views = {}
    buf = poisoned((rows + 4, cols + 7), dtype, device)
    views["slice"] = (buf, buf[2:2 + rows, 3:3 + cols])
    buf = poisoned((2 * rows + 1, 3 * cols + 2), dtype, device)
    views["stepped"] = (buf, buf[1::2, 2::3][:rows, :cols])
    buf = poisoned((cols + 3, rows + 5), dtype, device)
    views["transposed"] = (buf, buf.t()[1:1 + rows, 2:2 + cols])
    buf = poisoned((rows, cols), dtype, device)
    views["whole"] = (buf, buf)
    return views


@pytest.mark.parametrize("dtype", WIDTH_DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(45, 67), (130, 3), (64, 64), (1, 9)])
def test_out_into_views_touches_only_the_view(device, dtype, shape):
    x = random_bits(shape, dtype, device)
    expected = reference(x)
    for name, (buf, view) in out_views(device, dtype, shape[1], shape[0]).items():
        before = buf.clone()
        returned = tt.transpose(x, out=view)
        assert returned is view, name
        assert_only_view_written(buf, view, expected, before)


def assert_transpose_into_guarded_view(x, first_row, first_col, spare_rows, spare_cols):
    """tt.transpose(x, out=view) for a view at (first_row, first_col) of each matrix of a poisoned
    guard buffer with spare_rows and spare_cols more than the result: the view holds the result,
    and no byte around it changes."""
    rows, cols = x.shape[-1], x.shape[-2]
    guard = poisoned(x.shape[:-2] + (rows + spare_rows, cols + spare_cols), x.dtype, x.device)
    before = guard.clone()
    view = guard[..., first_row:first_row + rows, first_col:first_col + cols]
    tt.transpose(x, out=view)
    assert_only_view_written(guard, view, reference(x), before)


# 1-byte rows that take 16-byte vectors get 256 x 256 tiles on CUDA when a plan has enough of
# them (tile_transpose.cuh): these cases are too small for that rule and take 128 x 128 tiles,
# and test_wide_byte_tiles_forced runs them again with wide tiles forced on. Whole tiles, edge
# tiles on either dim (2064 is a multiple of 16 but not of 256), a batch, and an out= view
# whose rows are 16-byte aligned inside a wider guard buffer.
@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.float8_e4m3fn], ids=str)
@pytest.mark.parametrize("shape", [(512, 768), (2064, 512), (512, 2064), (2, 256, 512)], ids=str)
def test_wide_byte_tiles(device, dtype, shape):
    x = random_bits(shape, dtype, device)
    assert_bits_equal(tt.transpose(x), reference(x))
    assert_transpose_into_guarded_view(x, 1, 16, 2, 32)


def rerun_with_switches(switches, selection, passed):
    """run_file_with_switches (helpers.py) on this file."""
    run_file_with_switches(__file__, switches, selection, passed)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_wide_byte_tiles_forced():
    # The copy engine's tiles, which would take these plans first, are off there.
    rerun_with_switches({"wide_byte_tile": "1", "tma_tile": "0"},
                        "test_wide_byte_tiles and cuda and not forced", 12)


# On sm_90 and newer, 1-byte transposes whose rows take 16-byte vectors go through the copy
# engine in 128 x 128 tiles (tma_byte_tile_transpose.cuh): out-of-range loads read zeros and
# stores are clipped, so these shapes (each above the direct kernel's 32768 elements) put edges
# of 16 to 112 bytes on either side, a tile row narrower than a tile, batches, input rows
# further apart than their length, and an out= view inside a guard buffer. They are small, so
# they take the persistent grid; test_byte_tiles_other_kernels runs them one tile per block and
# on the square tile kernels. On the CPU they check the CPU kernels on the same shapes.
@pytest.mark.parametrize("shape", [(304, 208), (48, 1040), (1040, 48), (3, 160, 304), (2, 1296, 2064)], ids=str)
def test_byte_tiles_with_edges_batches_and_views(device, shape):
    x = random_bits(shape, torch.uint8, device)
    assert_bits_equal(tt.transpose(x), reference(x))
    wide = random_bits(shape[:-1] + (shape[-1] + 48,), torch.uint8, device)[..., 32:32 + shape[-1]]
    assert_bits_equal(tt.transpose(wide), reference(wide))
    assert_transpose_into_guarded_view(x, 2, 48, 3, 64)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("switch", ["tma_persistent", "tma_tile"])
def test_byte_tiles_other_kernels(switch):
    rerun_with_switches({switch: "0"}, "test_byte_tiles_with_edges and cuda", 5)


def test_out_batched_and_op_returns_nothing(device):
    x = random_bits((3, 20, 30), torch.int16, device)
    buf = poisoned((3, 40, 25), torch.int16, device)
    view = buf[:, 5:35, 2:22]
    before = buf.clone()
    assert torch.ops.torch_transpose.transpose_out(x, 1, 2, view) is None
    assert_only_view_written(buf, view, reference(x, 1, 2), before)


def test_out_errors_name_the_argument(device):
    x = random_bits((4, 6), torch.float32, device)
    with pytest.raises(RuntimeError, match="out to have shape"):
        tt.transpose(x, out=torch.empty(4, 6, device=device))
    with pytest.raises(RuntimeError, match="out to have dtype"):
        tt.transpose(x, out=torch.empty(6, 4, dtype=torch.float64, device=device))
    with pytest.raises(RuntimeError, match="internal overlap"):
        tt.transpose(x, out=torch.empty(1, 4, device=device).expand(6, 4))
    with pytest.raises(RuntimeError, match="shares memory with self"):
        tt.transpose(x, 0, 0, out=x)
    square = random_bits((5, 5), torch.float32, device)
    with pytest.raises(RuntimeError, match="shares memory with self"):
        tt.transpose(square, out=square)
    buf = torch.empty(40, device=device)
    with pytest.raises(RuntimeError, match="shares memory with self"):
        tt.transpose(buf[:24].view(4, 6), out=buf[10:34].view(6, 4))


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_out_on_another_device_is_refused():
    x = torch.randn(4, 6, device="cuda")
    with pytest.raises(RuntimeError, match="out on device"):
        tt.transpose(x, out=torch.empty(6, 4))
    with pytest.raises(RuntimeError, match="out on device"):
        tt.transpose(x.cpu(), out=torch.empty(6, 4, device="cuda"))


def test_out_with_grad_is_refused_like_pytorch(device):
    x = torch.randn(4, 6, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        tt.transpose(x, out=torch.empty(6, 4, device=device))
    with torch.no_grad():
        out = torch.empty(6, 4, device=device)
        tt.transpose(x, out=out)
    assert torch.equal(out, x.detach().t())


def test_out_bumps_version_counter(device):
    x = torch.randn(4, 6, device=device)
    out = torch.empty(6, 4, device=device)
    before = out._version
    tt.transpose(x, out=out)
    assert out._version > before


# 4-byte rows that take 8-byte vectors only (250, 514 or 1030 elements, or a base 8 bytes past
# alignment) take window tiles on CUDA (window_tile_transpose.cuh; the square tile kernel under
# TORCH_TRANSPOSE_KERNELS=window_half_vectors=0, as scripts/gpu_check.sh reruns them): ragged tiles on
# both dims, a batch, the 3-D reversal, and out= views inside guard buffers whose rows are 8 bytes
# off the sector grid.
@pytest.mark.parametrize("dtype", [torch.float32, torch.int32], ids=str)
@pytest.mark.parametrize("shape", [(130, 250), (250, 130), (3, 66, 250), (1030, 514)], ids=str)
def test_rows_of_8_byte_vectors(device, dtype, shape):
    check_rows_of_8_byte_vectors(random_bits(shape, dtype, device), spare_cols=6)


def check_rows_of_8_byte_vectors(x, spare_cols):
    """tt.transpose(x) into a fresh tensor; of a copy of x whose base is 8 bytes past alignment;
    the 3-D reversal; and into a guarded view 8 bytes in from its rows' start, with spare_cols
    more elements per row than the result."""
    assert_bits_equal(tt.transpose(x), reference(x))
    step = 8 // x.element_size()  # elements in 8 bytes
    shifted = random_bits((x.numel() + step,), x.dtype, x.device)[step:].view(x.shape)
    assert_bits_equal(tt.transpose(shifted), reference(shifted))
    if x.dim() == 3:
        assert_bits_equal(tt.permute(x, (2, 1, 0)), x.permute(2, 1, 0).contiguous())
    assert_transpose_into_guarded_view(x, 1, step, 3, spare_cols)


# 1- and 2-byte transposes whose rows cannot all take 16-byte vectors: odd rows on both sides,
# rows of 8-byte vectors (514 halves or bytes), output rows on the sector grid with odd input
# rows (131 or 250: for bytes, the byte-quad store of realign window tiles), input rows on the
# 16-byte grid with odd output rows (128 and 96: the kernel's aligned-input form, which loads no
# staging chunks and realigns nothing), a batch and its reversal, a base one element past alignment, `x[1:, 1:]`, and out=
# views inside guard buffers with odd row pitches. On CUDA they take realign window tiles
# (realign_window_tile_transpose.cuh; 2-byte rows of 8-byte vectors keep square tiles on grids
# this small), and
# test_realign_window_tiles_forced runs them with the kernel forced on, forced on without byte
# quads (1-byte tiles then store byte by byte), forced on with every input realigned (inputs on
# the grid too), forced on with each load policy (realign_load_policy), and forced off (the
# square tile kernel with partial vectors or none).
@pytest.mark.parametrize("dtype", [torch.uint8, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("shape", [(130, 257), (600, 301), (256, 131), (96, 250), (3, 70, 99), (1030, 514),
                                   (257, 128), (3, 71, 96)], ids=str)
def test_rows_off_the_vector_grid_small_types(device, dtype, shape):
    x = random_bits(shape, dtype, device)
    assert_bits_equal(tt.transpose(x), reference(x))
    shifted = random_bits((x.numel() + 1,), dtype, device)[1:].view(shape)
    assert_bits_equal(tt.transpose(shifted), reference(shifted))
    inner = random_bits(shape[:-2] + (shape[-2] + 1, shape[-1] + 1), dtype, device)[..., 1:, 1:]
    assert_bits_equal(tt.transpose(inner), reference(inner))
    if x.dim() == 3:
        assert_bits_equal(tt.permute(x, (2, 1, 0)), x.permute(2, 1, 0).contiguous())
    assert_transpose_into_guarded_view(x, 1, 3, 3, 5)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("switches", [{"realign_window": "1"},
                                      {"realign_window": "1", "realign_byte_quads": "0"},
                                      {"realign_window": "1", "realign_aligned_input": "0"},
                                      {"realign_window": "1", "realign_loads": "0"},
                                      {"realign_window": "1", "realign_loads": "1"},
                                      {"realign_window": "1", "realign_loads": "2"},
                                      {"realign_window": "1", "realign_small_tiles": "0"},
                                      {"realign_window": "1", "realign_small_tiles": "0",
                                       "realign_byte_quads": "0"},
                                      {"realign_window": "1", "realign_small_tiles": "0",
                                       "realign_aligned_input": "0"},
                                      {"realign_window": "0"}],
                         ids=["on", "no_byte_quads", "realign_all", "plain_loads", "evict_last", "fetch_256",
                              "large_tiles", "large_tiles_no_byte_quads", "large_tiles_realign_all", "off"])
def test_realign_window_tiles_forced(switches):
    # These shapes give an H200 far fewer than 7 tiles of 128 rows per SM, so by the rule they
    # take tiles of 64 rows (realign_small_tiles_by_default); the large_tiles runs keep 128.
    rerun_with_switches(switches, "test_rows_off_the_vector_grid_small_types and cuda", 24)


def realign_small_tiles_expected(dtype, shape, sm_count):
    """Mirror of realign_small_tiles_by_default (realign_window_tile_transpose.cuh) for the
    transpose of a contiguous (rows, cols) tensor whose storage starts on a 256-byte boundary:
    whether its realign window plan takes tiles of 64 output rows."""
    rows, cols = shape
    element = torch.empty((), dtype=dtype).element_size()
    tile_b, shift = 256 // element, 32 // element
    tiles_a = -(-cols // 128)  # output rows: the input's columns
    extra_b = 0 if rows % shift == 0 else shift - 1  # output rows off the sector grid: shifted windows
    tiles_b = -(-(rows + extra_b) // tile_b)
    tiles = tiles_a * tiles_b
    if element == 1:
        return tiles < 7 * sm_count
    aligned_input = cols * element % 16 == 0
    tall = aligned_input and tiles >= 10 * sm_count and 4 * sm_count < 6 * tiles_b
    return not tall and tiles < 40 * sm_count


# Realign window tiles of 64 output rows where tiles of 128 would give each SM fewer than 40
# (2-byte elements) or 7 (1-byte) and, for 2-byte plans, the matrix is not a tall one with
# aligned input rows (realign_small_tiles_by_default). With 132 SMs (an H100 or H200): fp16
# 2049x2051 (289 tiles of 128 rows), int8 6000x4500 (36 x 24 = 864, shifted windows) and bf16
# 20001x768 (6 x 157 = 942, under 10 per SM) take them; fp16 12289x8193 (6305), int8 6500x4500
# (36 x 26 = 936) and bf16 50257x768 (the GPT-2 embedding: 6 x 393 = 2358 tiles, 528 blocks in
# flight over fewer than 6 bands of 393) keep 128; TORCH_TRANSPOSE_KERNELS=realign_small_tiles=0 or 1
# decides for all (test_realign_tile_rows_switched). The kernel's last template argument is its rows.
# Each shape with whether it takes 64 rows on 132 SMs, worked by hand from the tile counts above.
REALIGN_ROWS_CASES = [((torch.float16, (2049, 2051)), True), ((torch.float16, (12289, 8193)), False),
                      ((torch.int8, (6000, 4500)), True), ((torch.int8, (6500, 4500)), False),
                      ((torch.bfloat16, (20001, 768)), True), ((torch.bfloat16, (50257, 768)), False)]


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_realign_tile_rows_by_grid():
    sm_count = torch.cuda.get_device_properties(0).multi_processor_count
    setting = kernel_switch("realign_small_tiles")
    for (dtype, shape), _ in REALIGN_ROWS_CASES:
        x = random_bits(shape, dtype, "cuda")
        assert_bits_equal(tt.transpose(x), reference(x))
        assert_transpose_into_guarded_view(x, 1, 3, 3, 5)
        kernels = cuda_kernels_of(lambda: tt.transpose(x))
        if kernels is None:  # no profiler (compute-sanitizer): values only
            continue
        args = kernel_template_args(kernels, "realign_window_tile_transpose_kernel")
        if kernel_switch("realign_window") == "0":  # gpu_check.sh's older-paths rerun
            assert args is None, (dtype, shape, kernels)
            continue
        small = realign_small_tiles_expected(dtype, shape, sm_count)
        expected = {"0": "128", "1": "64"}.get(setting, "64" if small else "128")
        assert args is not None and args[-1] == expected, (dtype, shape, kernels)


def test_realign_small_tiles_expected_on_132_sms():
    # The mirror's answers for the shapes above on 132 SMs against the ones worked by hand, so
    # that a slip in the mirror cannot agree with a slip in the kernel's rule.
    for (dtype, shape), small_by_hand in REALIGN_ROWS_CASES:
        assert realign_small_tiles_expected(dtype, shape, 132) == small_by_hand, (dtype, shape)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("small", ["0", "1"])
def test_realign_tile_rows_switched(small):
    rerun_with_switches({"realign_small_tiles": small}, "test_realign_tile_rows_by_grid", 1)


# 2-byte transposes whose rows take 8-byte vectors only: input rows off the 16-byte grid (1300
# or 300 halves, or a base 8 bytes in) with output rows on it, which on CUDA take square tiles
# at 4 blocks per SM (kHalfVectorTileBlocksPerSm, tile_transpose.cuh); output rows off it; both
# off it. Ragged tiles on both dims, a batch, and out= views inside guard buffers whose rows are
# 8 bytes off the grid. test_blocks_per_sm_switched_on_half_vector_rows runs them with 4 blocks forced
# on every such plan, and on none.
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.int16], ids=str)
@pytest.mark.parametrize("shape", [(1000, 1300), (1300, 1000), (1300, 1300), (2, 520, 300)], ids=str)
def test_half_rows_of_8_byte_vectors(device, dtype, shape):
    check_rows_of_8_byte_vectors(random_bits(shape, dtype, device), spare_cols=4)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("blocks", ["0", "1"])
def test_blocks_per_sm_switched_on_half_vector_rows(blocks):
    rerun_with_switches({"half_tile_blocks": blocks}, "test_half_rows_of_8_byte_vectors and cuda", 12)


# The same with output rows alone off the 16-byte grid on a large grid of realign window tiles
# (realign_window_by_default: 4224 tiles of 128 x 128, 32 per SM on an H200), which take them:
# fp16 8 x 4100 x 4096, fresh and into a guarded view whose rows are 8 bytes off the grid (the
# copy 8 bytes in puts the input off the grid too: square tiles).
@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_half_vector_output_rows_on_a_large_grid():
    check_rows_of_8_byte_vectors(random_bits((8, 4100, 4096), torch.float16, "cuda"), spare_cols=4)


# 2-byte plans of 8-byte vectors whose output rows alone are off the 16-byte grid take realign
# window tiles from 4 tiles of 128 rows per SM (realign_window_by_default), square tiles below:
# on 132 SMs bf16 12292x768 (6 x 97 = 582 tiles) takes them, bf16 8196x768 (6 x 65 = 390) not.
# TORCH_TRANSPOSE_KERNELS=realign_window=1 or 0 decides for all (test_half_vector_output_rows_switched).
@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_half_vector_output_rows_realign_by_grid():
    sm_count = torch.cuda.get_device_properties(0).multi_processor_count
    setting = kernel_switch("realign_window")
    for rows, tiles in [(12292, 6 * 97), (8196, 6 * 65)]:
        x = random_bits((rows, 768), torch.bfloat16, "cuda")
        assert_bits_equal(tt.transpose(x), reference(x))
        kernels = cuda_kernels_of(lambda: tt.transpose(x))
        if kernels is None:  # no profiler (compute-sanitizer): values only
            continue
        realign = {"0": False, "1": True}.get(setting, tiles >= 4 * sm_count)
        takes = kernel_template_args(kernels, "realign_window_tile_transpose_kernel") is not None
        assert takes == realign, (rows, kernels)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("realign", ["0", "1"])
def test_half_vector_output_rows_switched(realign):
    rerun_with_switches({"realign_window": realign}, "test_half_vector_output_rows_realign_by_grid", 1)


# 4-byte transposes whose output rows lie 512 KB apart: out= views in guard buffers whose rows
# are 512 KB of floats and two vectors long, with whole tiles, edges on both dims, a batch, and
# the (2, 1, 0) permute of a 3-D tensor into such a view. The H200 writes rows that far apart
# more slowly (docs/performance.md); a kernel for them (long row tiles) was tried on these cases
# and lost, so they take the square tile kernels.
FAR_ROW = 131072 + 8


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32], ids=str)
@pytest.mark.parametrize("shape", [(256, 32), (300, 36), (2, 260, 36)], ids=str)
def test_output_rows_far_apart(device, dtype, shape):
    x = random_bits(shape, dtype, device)
    assert_bits_equal(tt.transpose(x), reference(x))
    rows, cols = shape[-1], shape[-2]
    assert_transpose_into_guarded_view(x, 1, 4, 1, FAR_ROW - cols)  # rows of FAR_ROW elements
    if x.dim() == 2:
        cube = random_bits((cols // 4, 4, rows), dtype, device)  # its (2, 1, 0) into rows 512 KB apart
        guard = poisoned((rows + 1, FAR_ROW), dtype, device)
        check_permute_into_view(cube, (2, 1, 0), guard, guard[1:, 4:4 + cols // 4 * 4].unflatten(1, (4, cols // 4)))


# Whole square tiles (128 for 1- and 2-byte elements, 64 for 4- and 8-byte ones) over none, one
# or two batch dims, the batch dim between the fast ones ((2, 1, 0)), an expanded batch dim,
# input rows and items with gaps, and out= views: on CUDA the plans lean tiles take
# (lean_tile_transpose.cuh; 1-byte ones the copy engine's tiles refuse, the two-batch-dim cases).
# The (2, 1, 0) and reversal plans whose a is one tile (64 for 4- and 8-byte elements, 128 for
# 1- and 2-byte ones) walk batch items first (lean_tiles_items_first), over one and two batch
# dims. test_lean_kernels_off runs them all on the square tile kernel, test_lean_tiles_in_either_walk
# in the other walk.
@pytest.mark.parametrize("dtype", [torch.uint8, torch.bfloat16, torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("shape, dims", [((256, 384), (1, 0)), ((3, 256, 128), (0, 2, 1)), ((128, 3, 256), (2, 1, 0)),
                                         ((2, 3, 128, 256), (3, 1, 0, 2)), ((2, 3, 256, 128), (1, 0, 3, 2)),
                                         ((256, 3, 64), (2, 1, 0)), ((256, 3, 128), (2, 1, 0)),
                                         ((256, 2, 3, 64), (3, 2, 1, 0))], ids=str)
def test_whole_tile_plans(device, dtype, shape, dims):
    x = random_bits(shape, dtype, device)
    assert_bits_equal(tt.permute(x, dims), x.permute(dims).contiguous())
    wide = random_bits(shape[:-1] + (shape[-1] + 32,), dtype, device)[..., 16:16 + shape[-1]]  # rows with gaps
    assert_bits_equal(tt.permute(wide, dims), wide.permute(dims).contiguous())
    if len(shape) == 3:
        expanded = random_bits((1,) + shape[1:], dtype, device).expand(shape)  # a stride-0 batch dim
        assert_bits_equal(tt.permute(expanded, dims), expanded.permute(dims).contiguous())
    result = x.permute(dims).shape
    guard = poisoned(result[:-1] + (result[-1] + 48,), dtype, device)
    check_permute_into_view(x, dims, guard, guard[..., 16:16 + result[-1]])


# 16 lines of 4-byte elements against a dense side (16x4194304 and back in the suite), whole
# 64-element tiles along the wide dim, none or one batch dim (also between the fast dims): on
# CUDA the plans lean narrow tiles take (lean_narrow_transpose.cuh), with the variants of
# test_whole_tile_plans (rows with gaps, a stride-0 batch dim, out= into a guarded view; those
# with a gapped dense side go elsewhere). test_lean_kernels_off runs them on the narrow block and
# warp-pair kernels.
@pytest.mark.parametrize("dtype", [torch.float32, torch.int32], ids=str)
@pytest.mark.parametrize("shape, dims", [((16, 4096), (1, 0)), ((4096, 16), (1, 0)), ((3, 16, 1536), (0, 2, 1)),
                                         ((3, 1536, 16), (0, 2, 1)), ((16, 3, 1536), (1, 2, 0))], ids=str)
def test_sixteen_line_plans(device, dtype, shape, dims):
    test_whole_tile_plans(device, dtype, shape, dims)


# Copies of short rows, 2^k whole 16-byte vectors each, over one to three batch dims (BSHD ->
# BHSD, (1, 0, 2), rows of 256 elements), with the variants of test_whole_tile_plans: on CUDA
# the plans lean rows take (lean_row_copy.cuh). test_lean_kernels_off runs them on row_vector_copy.
@pytest.mark.parametrize("dtype", [torch.uint8, torch.bfloat16, torch.float32, torch.complex128], ids=str)
@pytest.mark.parametrize("shape, dims", [((2, 128, 3, 64), (0, 2, 1, 3)), ((64, 128, 64), (1, 0, 2)),
                                         ((128, 3, 256), (1, 0, 2))], ids=str)
def test_short_row_plans(device, dtype, shape, dims):
    test_whole_tile_plans(device, dtype, shape, dims)


# Odd shapes (4- and 8-byte rows off the 16-byte grid, output rows off the 32-byte sector grid)
# with edge tiles on both dims, over none, one or two batch dims (a batch dim between the fast
# ones in the (2, 1, 0) case), `x[1:, 1:]` of each, and out= into a guarded view whose rows are
# off the grid too: on CUDA the plans lean window tiles take (lean_window_tile_transpose.cuh).
# test_lean_kernels_off runs them on the window tile kernel.
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("shape, dims", [((130, 257), (1, 0)), ((3, 70, 99), (0, 2, 1)), ((99, 3, 70), (2, 1, 0)),
                                         ((2, 3, 70, 99), (1, 0, 3, 2))], ids=str)
def test_window_tile_plans(device, dtype, shape, dims):
    x = random_bits(shape, dtype, device)
    assert_bits_equal(tt.permute(x, dims), x.permute(dims).contiguous())
    inner = random_bits(shape[:-2] + (shape[-2] + 1, shape[-1] + 1), dtype, device)[..., 1:, 1:]
    assert_bits_equal(tt.permute(inner, dims), inner.permute(dims).contiguous())
    result = x.permute(dims).shape
    guard = poisoned(result[:-1] + (result[-1] + 7,), dtype, device)
    check_permute_into_view(x, dims, guard, guard[..., 3:3 + result[-1]])


# The lean kernels' plans again with each lean kernel switched off (on the square tile, narrow
# block and warp-pair, vector row and window tile kernels), and with plain loads in place of L2
# evict_last ones (TORCH_TRANSPOSE_KERNELS=l2_evict_last=0: the lean kernels' other instantiations).
LEAN_PLANS = "(test_whole_tile_plans or test_sixteen_line_plans or test_short_row_plans or test_window_tile_plans)"


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("switch, cases, passed", [("lean_tile", "test_whole_tile_plans", 32),
                                                   ("lean_narrow", "test_sixteen_line_plans", 10),
                                                   ("lean_rows", "test_short_row_plans", 12),
                                                   ("lean_window", "test_window_tile_plans", 8),
                                                   ("l2_evict_last", LEAN_PLANS, 62)],
                         ids=["tiles", "narrow", "rows", "windows", "loads"])  # ids that no rerun's -k selects (it would rerun itself)
def test_lean_kernels_off(switch, cases, passed):
    rerun_with_switches({switch: "0"}, f"{cases} and cuda", passed)


# Lean tiles walk batch items first only where a is one tile and the next item lies nearer in the
# input than the next tile along b (lean_tiles_items_first): every lean tile plan in each walk.
@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("setting", ["0", "1"], ids=["along-b", "by-item"])
def test_lean_tiles_in_either_walk(setting):
    rerun_with_switches({"lean_items_first": setting}, "test_whole_tile_plans and cuda", 32)


def test_misaligned_elements_are_moved_exactly(device):
    # A float32 view whose address is 2 bytes past alignment: the plan splits elements.
    raw = random_bits((2 + 4 * 35 * 23,), torch.uint8, device)
    x = raw[2:].view(torch.int16).view(-1)[: 2 * 35 * 23]
    as_pairs = x.view(torch.int16).reshape(35, 23, 2)
    y = tt.transpose(as_pairs, 0, 1)
    assert_bits_equal(y, as_pairs.transpose(0, 1).contiguous())


# ---- hostile inputs ----------------------------------------------------------------------------------

@uses_quantized
def test_sparse_and_quantized_are_refused():
    with pytest.raises(NotImplementedError):
        tt.transpose(torch.eye(3).to_sparse())
    with pytest.raises((NotImplementedError, RuntimeError)):
        tt.transpose(torch.quantize_per_tensor(torch.randn(3, 4), 0.1, 0, torch.quint8))


def test_meta_tensors_give_meta_results():
    x = torch.empty(3, 5, 7, device="meta")
    y = tt.transpose(x, 0, 2)
    assert y.device.type == "meta" and y.shape == (7, 5, 3) and y.is_contiguous()


def test_non_tensor_arguments_raise_type_error():
    with pytest.raises(TypeError):
        tt.transpose([[1, 2], [3, 4]])
    with pytest.raises(TypeError):
        tt.transpose(torch.randn(2, 3), "0", 1)


# ---- large outputs ---------------------------------------------------------------------------------
# Outputs of 8 MiB or more take the CPU kernel's streaming-store path (csrc/cpu/cpu_kernels.cpp):
# whole tiles are staged and streamed out, edge tiles use plain stores. These shapes sit just
# above that size, with ragged edges in both dims, for every element width and a batch. Every
# output row (the input's row count times the element size) is whole 64-byte lines, as
# streaming needs.
LARGE_CASES = [((2064, 1030), torch.float32), ((2080, 2050), torch.bfloat16), ((4160, 2050), torch.int8),
               ((1032, 1030), torch.complex64), ((732, 740), torch.complex128), ((3, 1040, 700), torch.float32)]


@pytest.mark.parametrize("shape,dtype", LARGE_CASES, ids=lambda v: str(v))
def test_large_outputs_of_every_width(device, shape, dtype):
    x = random_bits(shape, dtype, device)
    assert_bits_equal(tt.transpose(x), reference(x))


# Large outputs whose rows are not whole 64-byte lines (odd widths): on the CPU, AVX-512 tiles of
# 256 bytes walked input rows first with plain stores (BlockOrder::kInputRowsFirst), edges ragged
# in both dims, for every width the blocks take; then into a guarded view whose rows are off
# lines too.
OFF_LINE_CASES = [((2051, 1029), torch.float32), ((4099, 1030), torch.bfloat16), ((4099, 2053), torch.int8),
                  ((1027, 1029), torch.float64), ((1027, 1029), torch.complex64), ((3, 1001, 703), torch.float32)]


@pytest.mark.parametrize("shape,dtype", OFF_LINE_CASES, ids=lambda v: str(v))
def test_large_outputs_off_lines(device, shape, dtype):
    x = random_bits(shape, dtype, device)
    assert x.numel() * x.element_size() >= 8 << 20 and (shape[-2] * x.element_size()) % 64 != 0
    assert_bits_equal(tt.transpose(x, -2, -1), x.transpose(-2, -1).contiguous())
    if x.dim() == 2:
        guard = poisoned((shape[1] + 2, shape[0] + 5), dtype, device)
        before = guard.clone()
        view = guard[1:1 + shape[1], 3:3 + shape[0]]
        tt.transpose(x, out=view)
        assert_only_view_written(guard, view, reference(x), before)


# Streaming needs every output row on a 64-byte line: the first view is, the second falls back.
@pytest.mark.parametrize("row,col", [(1, 16), (1, 4)], ids=["line-aligned rows", "misaligned rows"])
def test_large_out_view_touches_only_the_view(device, row, col):
    x = random_bits((2064, 1030), torch.float32, device)
    guard = poisoned((1030 + 3, 2064 + 16), torch.float32, device)
    before = guard.clone()
    view = guard[row:row + 1030, col:col + 2064]
    tt.transpose(x, out=view)
    assert_only_view_written(guard, view, reference(x), before)


# Streamed tiles whose edges are ragged inside the tile's blocks: out= into a view whose rows
# sit on 64-byte lines (a pitch of 2144 elements, 32 in) past the row's end, so that output
# rows of 2100 elements (the CPU kernel's AVX-512 tiles of 128 bf16, 64 fp32 or 32 fp64: whole
# blocks, streamed, then the last 20 or 4 columns plainly) and 2088 output rows (whole blocks
# and, for bf16 and fp32, 8 rows past them) both end mid-tile. 8.8 MB or more: streamed.
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32, torch.float64, torch.complex64], ids=str)
def test_large_out_view_with_ragged_tiles(device, dtype):
    x = random_bits((2100, 2088), dtype, device)
    guard = poisoned((2088 + 2, 2144), dtype, device)
    before = guard.clone()
    view = guard[1:1 + 2088, 32:32 + 2100]
    tt.transpose(x, out=view)
    assert_only_view_written(guard, view, reference(x), before)


# The CPU tile tests again in processes of their own (the library reads each switch once per
# process), for x86-64 CPUs without AVX-512: where the CPU has AVX-512, 1-, 2-, 4- and 8-byte
# tiles move in its 64-byte blocks, and every other test here runs those. Without it they move
# in AVX2 blocks of the same 64-byte squares (simd_transpose_avx2.cpp), and without AVX2 either
# in SSE2's 16-byte blocks (1-, 2- and 4-byte) and element moves (8-byte). Streamed outputs,
# ragged edges, guarded views and batches included.
TILE_TESTS = ("(test_shapes_at_tile_boundaries or test_tall_wide_and_non_square or test_batched_every_dim_pair or "
              "test_out_into_views_touches_only_the_view or test_wide_byte_tiles or "
              "test_byte_tiles_with_edges_batches_and_views or test_whole_tile_plans or test_large_outputs_of_every_width or "
              "test_large_outputs_off_lines or test_large_out_view_touches_only_the_view or "
              "test_large_out_view_with_ragged_tiles) and cpu")
CPU_TILE_TEST_COUNT = 171


@pytest.mark.parametrize("switches", [{"cpu_avx512": "0"},
                                      {"cpu_avx512": "0", "cpu_avx2": "0"}],
                         ids=["avx2 blocks", "sse2 blocks"])
def test_cpu_tiles_of_other_x86_cpus(switches):
    rerun_with_switches(switches, TILE_TESTS, CPU_TILE_TEST_COUNT)


# ---- CUDA specifics -------------------------------------------------------------------------------

@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_runs_on_the_current_stream():
    stream = torch.cuda.Stream()
    x = torch.randn(2048, 1536, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.stream(stream):
        # Work queued on `stream` before the op: if the op ran elsewhere it could read early.
        x.mul_(2)
        y = tt.transpose(x)
    stream.synchronize()
    assert torch.equal(y, x.t().contiguous())


@pytest.mark.cuda
@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two CUDA devices")
def test_second_device():
    x = random_bits((100, 77), torch.float32, "cuda:1")
    y = tt.transpose(x)
    assert y.device == x.device
    assert_bits_equal(y, reference(x))


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_captured_in_a_cuda_graph_and_replayed_with_new_data():
    # A graph replays the recorded launches on whatever the captured tensors hold at replay
    # time: the op must launch on the capturing stream and keep no host-side copy of the data.
    square = torch.empty(257, 129, device="cuda")
    narrow = torch.empty(5000, 6, device="cuda", dtype=torch.bfloat16)
    five_d = torch.empty(4, 6, 5, 7, 9, device="cuda", dtype=torch.float16)
    guard = poisoned((140, 260), torch.float32, "cuda")
    before = guard.clone()
    out_view = guard[1:130, 2:259]

    def fill(seed):
        gen = torch.Generator().manual_seed(seed)
        for t in (square, narrow, five_d):
            t.copy_(random_bits(t.shape, t.dtype, generator=gen))

    def run():
        return (tt.transpose(square), tt.transpose(narrow), tt.permute(five_d, [4, 2, 0, 3, 1]),
                tt.transpose(square, out=out_view))

    fill(100)  # the warm-up reads them (initcheck flagged a warm-up on empty tensors)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        run()  # warm-up outside capture, as PyTorch asks
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        outputs = run()
    for seed in range(3):
        fill(seed)
        graph.replay()
        assert_bits_equal(outputs[0], square.t().contiguous())
        assert_bits_equal(outputs[1], narrow.t().contiguous())
        assert_bits_equal(outputs[2], five_d.permute(4, 2, 0, 3, 1).contiguous())
        assert_only_view_written(guard, out_view, square.t(), before)


def test_byte_rows_into_wider_aligned_rows(device):
    # A 1-byte transpose whose output rows (74 bytes) lie 112 bytes apart in a wider buffer, each
    # starting on the 16-byte grid: every vector fits, but a bulk tensor store (the copy engine's
    # tiles, sm_90) writes up to the next 16-byte boundary past a row's end, so on the H200 bytes
    # 74-79 of every row were overwritten until such plans left that kernel. Then the
    # same into a batched channels-last view.
    x = random_bits((74, 480), torch.uint8, device)
    buf = poisoned((480, 112), torch.uint8, device)
    check_permute_into_view(x, (1, 0), buf, buf[:, 16:90])
    x = random_bits((2, 74, 16, 16), torch.uint8, device)
    buf = poisoned((2, 16, 16, 112), torch.uint8, device)
    check_permute_into_view(x, (0, 2, 3, 1), buf, buf[..., 16:90])
