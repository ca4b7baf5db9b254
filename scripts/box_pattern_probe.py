"""Probe (not the library, not the suite): is the 5-D permute's gap (box tiles, 0.87 of copy in
v31) the box kernel's or its address pattern's?

The suite's case is x.permute(4, 2, 0, 3, 1) of a 20x30x40x50x60 fp32 tensor: out[i4, i2, i0, i3,
i1] = x[i0, i1, i2, i3, i4]. Our box kernel moves tiles of all of i4 (60, the input's fast dim),
all of i1 (30, the output's) and C items of i3 (which continues a run on both sides): 30 input
runs of 240 C bytes, 480 KB apart, and 60 output runs of 120 C bytes, 4.8 MB apart.

Here Triton runs the same tiles (padded to powers of two and masked) three ways: the transpose,
its loads alone (one sum per tile stored) and its stores alone (no loads), for chunks C of 1, 2,
4 and 8 items of i3 and 4 or 8 warps. If Triton's transpose reaches ours or less while its
loads and stores alone run near a copy's rate, the pattern of both sides together is the limit;
if it beats ours, the box kernel is.

    python3 scripts/box_pattern_probe.py          # on the GPU machine
"""
import sys

import torch

try:
    import triton
    import triton.language as tl
    from triton.testing import do_bench
except ImportError:
    triton = None

SHAPE = (20, 30, 40, 50, 60)
DIMS = (4, 2, 0, 3, 1)

if triton is not None:
    @triton.jit
    def _tile(pid, D0: tl.constexpr, D1: tl.constexpr, D2: tl.constexpr,
              D3: tl.constexpr, D4: tl.constexpr, C: tl.constexpr, B1: tl.constexpr, B4: tl.constexpr):
        # Tiles in the output's order of the batch dims: chunk of i3 fastest, then i0, then i2.
        chunks = tl.cdiv(D3, C)
        j = pid % chunks
        rest = pid // chunks
        i0 = rest % D0
        i2 = rest // D0
        i1 = tl.arange(0, B1)[:, None, None]
        i3 = j * C + tl.arange(0, C)[None, :, None]
        i4 = tl.arange(0, B4)[None, None, :]
        mask = (i1 < D1) & (i3 < D3) & (i4 < D4)
        x_off = (((i0 * D1 + i1) * D2 + i2) * D3 + i3) * D4 + i4
        y_off = (((i4 * D2 + i2) * D0 + i0) * D3 + i3) * D1 + i1
        return x_off, y_off, mask

    @triton.jit
    def box_transpose(x_ptr, y_ptr, D0: tl.constexpr, D1: tl.constexpr, D2: tl.constexpr,
              D3: tl.constexpr, D4: tl.constexpr, C: tl.constexpr, B1: tl.constexpr, B4: tl.constexpr):
        x_off, _, mask = _tile(tl.program_id(0), D0, D1, D2, D3, D4, C, B1, B4)
        v = tl.load(x_ptr + x_off, mask)
        # Stored through offsets laid out in the output's order, so Triton moves the tile
        # through shared memory and writes along i1.
        _, y_off, _ = _tile(tl.program_id(0), D0, D1, D2, D3, D4, C, B1, B4)
        vt = tl.permute(v, (2, 1, 0))
        yt = tl.permute(y_off, (2, 1, 0))
        mt = tl.permute(mask, (2, 1, 0))
        tl.store(y_ptr + yt, vt, mt)

    @triton.jit
    def box_loads(x_ptr, sums_ptr, D0: tl.constexpr, D1: tl.constexpr, D2: tl.constexpr,
              D3: tl.constexpr, D4: tl.constexpr, C: tl.constexpr, B1: tl.constexpr, B4: tl.constexpr):
        x_off, _, mask = _tile(tl.program_id(0), D0, D1, D2, D3, D4, C, B1, B4)
        v = tl.load(x_ptr + x_off, mask, other=0.0)
        tl.store(sums_ptr + tl.program_id(0), tl.sum(tl.sum(tl.sum(v, 2), 1), 0))

    @triton.jit
    def box_stores(y_ptr, D0: tl.constexpr, D1: tl.constexpr, D2: tl.constexpr,
              D3: tl.constexpr, D4: tl.constexpr, C: tl.constexpr, B1: tl.constexpr, B4: tl.constexpr):
        _, y_off, mask = _tile(tl.program_id(0), D0, D1, D2, D3, D4, C, B1, B4)
        yt = tl.permute(y_off, (2, 1, 0))
        mt = tl.permute(mask, (2, 1, 0))
        tl.store(y_ptr + yt, (yt & 1023).to(tl.float32), mt)


def median_ms(fn):
    return do_bench(fn, warmup=25, rep=200, return_mode="median")


def main():
    if triton is None or not torch.cuda.is_available():
        sys.exit("needs Triton and a CUDA device")
    import torch_transpose as tt

    x = torch.randn(SHAPE, device="cuda")
    expect = x.permute(DIMS).contiguous()
    y = torch.empty_like(expect)
    src = x.view(-1)
    dst = torch.empty_like(src)
    n = src.numel()
    copy_ms = median_ms(lambda: dst.copy_(src))
    fill_ms = median_ms(lambda: dst.fill_(1.0))
    sum_ms = median_ms(lambda: src.sum())
    ours_ms = median_ms(lambda: tt.permute(x, DIMS))
    print(f"copy {2 * n * 4 / copy_ms / 1e6:.0f} GB/s (read + write), fill {n * 4 / fill_ms / 1e6:.0f}, "
          f"sum {n * 4 / sum_ms / 1e6:.0f}; ours (box tiles) {copy_ms / ours_ms:.3f} of copy")
    print("| C | warps | transpose / copy | loads / sum | stores / fill |")
    print("|---|---|---|---|---|")
    D0, D1, D2, D3, D4 = SHAPE
    for c in (1, 2, 4, 8):
        tiles = D0 * D2 * triton.cdiv(D3, c)
        sums = torch.empty(tiles, device="cuda")
        for warps in (4, 8):
            args = (D0, D1, D2, D3, D4, c, 32, 64)
            y.fill_(float("nan"))
            box_transpose[(tiles,)](x, y, *args, num_warps=warps)
            if not torch.equal(y.view(torch.int32), expect.view(torch.int32)):
                sys.exit(f"Triton box transpose wrong for C = {c}")
            t = median_ms(lambda: box_transpose[(tiles,)](x, y, *args, num_warps=warps))
            r = median_ms(lambda: box_loads[(tiles,)](x, sums, *args, num_warps=warps))
            w = median_ms(lambda: box_stores[(tiles,)](y, *args, num_warps=warps))
            print(f"| {c} | {warps} | {copy_ms / t:.3f} | {sum_ms / r:.3f} | {fill_ms / w:.3f} |", flush=True)


if __name__ == "__main__":
    main()
