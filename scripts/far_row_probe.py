"""Probe (not the library, not the suite): why output rows far apart cost a tile transpose up to
0.06 of copy (bench/NOTES.md v27) while input rows as far apart cost nothing.

Every pattern below moves 256 MB of fp32 in tiles of ROWS x COLS elements (one program or block
per tile, tiles along a row first, as our lean tile kernel's grid walks them); only the distance
between the rows of a tile changes. Three views of the same addresses:
  * write: a Triton kernel that only stores the tiles (no reads),
  * read: a Triton kernel that only loads them (one sum per tile is stored),
  * transpose: our op, `transpose(x, out=view)` with the output's rows that far apart (64-row
    tiles; the input is dense).
What separates the guesses of v27:
  * DRAM bank or L2 slice conflicts depend on the low address bits of the rows: a stride of
    4 MB plus a small skew (256 B .. 32 KB) would run like near rows;
  * TLB reach depends on how many 2 MB pages a tile's rows touch: 2 MB + 32 KB (64 pages per
    tile, the low bits of 32 KB rows) would run like 4 MB.

    python3 scripts/far_row_probe.py          # on the GPU machine
"""
import sys

import torch

try:
    import triton
    import triton.language as tl
    from triton.testing import do_bench
except ImportError:
    triton = None

MB = 1 << 20
FLOATS = 64 * MB  # 256 MB of fp32 per pattern

if triton is not None:
    @triton.jit
    def write_tiles(out_ptr, stride, ROWS: tl.constexpr, COLS: tl.constexpr):
        # Tile (pid 0 along the row, pid 1 along row groups) -> rows g*ROWS.., cols t*COLS..
        t = tl.program_id(0)
        g = tl.program_id(1)
        r = tl.arange(0, ROWS)[:, None]
        c = tl.arange(0, COLS)[None, :]
        value = (r * COLS + c + t).to(tl.float32)
        tl.store(out_ptr + (g * ROWS + r).to(tl.int64) * stride + t * COLS + c, value)

    @triton.jit
    def read_tiles(in_ptr, sums_ptr, stride, ROWS: tl.constexpr, COLS: tl.constexpr):
        t = tl.program_id(0)
        g = tl.program_id(1)
        r = tl.arange(0, ROWS)[:, None]
        c = tl.arange(0, COLS)[None, :]
        v = tl.load(in_ptr + (g * ROWS + r).to(tl.int64) * stride + t * COLS + c)
        tl.store(sums_ptr + g * tl.num_programs(0) + t, tl.sum(v))


def median_ms(fn):
    return do_bench(fn, warmup=25, rep=150, return_mode="median")


def patterns():
    """(label, row length L in floats, row stride S in floats, rows per tile, cols per tile)."""
    k = 1024 // 4  # floats per KB
    rows = [
        ("rows 32 KB apart", 8192, 8192, 64, 64),
        ("rows 256 KB apart", 65536, 65536, 64, 64),
        ("rows 1 MB apart", 262144, 262144, 64, 64),
        ("rows 2 MB apart", 524288, 524288, 64, 64),
        ("rows 2 MB + 32 KB apart", 524288, 524288 + 32 * k, 64, 64),
        ("rows 4 MB apart", 1048576, 1048576, 64, 64),
        ("rows 4 MB + 256 B apart", 1048576, 1048576 + 64, 64, 64),
        ("rows 4 MB + 1 KB apart", 1048576, 1048576 + k, 64, 64),
        ("rows 4 MB + 4 KB apart", 1048576, 1048576 + 4 * k, 64, 64),
        ("rows 4 MB + 32 KB apart", 1048576, 1048576 + 32 * k, 64, 64),
        ("rows 4 MB apart, 16 x 256 tiles", 1048576, 1048576, 16, 256),
    ]
    return rows


def main():
    if triton is None or not torch.cuda.is_available():
        sys.exit("needs Triton and a CUDA device")
    import torch_transpose as tt

    src = torch.randn(FLOATS, device="cuda")
    dst = torch.empty_like(src)
    copy_ms = median_ms(lambda: dst.copy_(src))
    fill_ms = median_ms(lambda: dst.fill_(1.0))
    read_ms = median_ms(lambda: src.sum())
    print(f"copy 256 MB: {2 * FLOATS * 4 / copy_ms / 1e6:.0f} GB/s (read + write); fill: "
          f"{FLOATS * 4 / fill_ms / 1e6:.0f} GB/s (write); sum: {FLOATS * 4 / read_ms / 1e6:.0f} GB/s (read)")
    print("| pattern | write / fill | read / sum | transpose / copy |")
    print("|---|---|---|---|")
    for label, length, stride, rows, cols in patterns():
        groups = FLOATS // (length * rows)
        buf = torch.empty(groups * rows * stride, device="cuda")
        grid = (length // cols, groups)
        w_ms = median_ms(lambda: write_tiles[grid](buf, stride, rows, cols, num_warps=8))
        sums = torch.empty(grid[0] * grid[1], device="cuda")
        r_ms = median_ms(lambda: read_tiles[grid](buf, sums, stride, rows, cols, num_warps=8))
        cell = "-"
        if rows == 64 and cols == 64:
            # Our op: input (L, 64 G) dense, output (64 G, L) rows `stride` apart.
            x = torch.randn(length, groups * rows, device="cuda")
            out = buf.view(groups * rows, stride)[:, :length]
            tt.transpose(x, 0, 1, out=out)
            if not torch.equal(out.view(torch.int32), x.t().view(torch.int32)):
                sys.exit(f"transpose wrong on {label}")
            t_ms = median_ms(lambda: tt.transpose(x, 0, 1, out=out))
            cell = f"{copy_ms / t_ms:.3f}"
            del x, out
        print(f"| {label} | {fill_ms / w_ms:.3f} | {read_ms / r_ms:.3f} | {cell} |", flush=True)
        del buf, sums
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
