"""Probe (not the library, not the suite): do TMA (bulk tensor) stores escape the cost of output
rows far apart?

v30's far-row probe (scripts/far_row_probe.py) found that a kernel which only writes 64-row
tiles whose rows are 4 MB apart runs at 0.945 of a contiguous fill, and that the cost follows the
spread of 2 MB pages a tile writes (TLB reach, probably). That is the write pattern of (2, 1, 0)
on 1024x1024x64 (0.939 of copy), the 5-D permute and the 4-D reversal. The copy engine translates
addresses itself, so its stores might not pay the same price. Same patterns, three pairs:
  * write: Triton stores every element (st.global) / one TMA store per tile (desc.store);
  * transpose: a Triton tile transpose (64 x 64 fp32, load, tl.trans, store) whose output rows
    are that far apart, with plain stores / with a TMA store;
  * ours: torch_transpose.transpose into the same output view (for scale).
Ratios are to a contiguous fill (write) and to a copy of the same bytes (transpose, ours).

    python3 scripts/tma_store_probe.py          # on the GPU machine
"""
import sys

import torch

# The plain write kernel, the timer and the pattern size are the far-row probe's (same folder).
from far_row_probe import FLOATS, median_ms, triton, write_tiles as write_plain

ROWS = COLS = 64

if triton is not None:
    import triton.language as tl
    from triton.tools.tensor_descriptor import TensorDescriptor

    @triton.jit
    def write_tma(out_desc, ROWS: tl.constexpr, COLS: tl.constexpr):
        t = tl.program_id(0)
        g = tl.program_id(1)
        r = tl.arange(0, ROWS)[:, None]
        c = tl.arange(0, COLS)[None, :]
        value = (r * COLS + c + t).to(tl.float32)
        out_desc.store([g * ROWS, t * COLS], value)

    @triton.jit
    def transpose_plain(in_ptr, out_ptr, in_stride, out_stride, ROWS: tl.constexpr, COLS: tl.constexpr):
        # out[r, l] = in[l, r]; program (t, g) writes out rows g*ROWS.., cols t*COLS..
        t = tl.program_id(0)
        g = tl.program_id(1)
        l = (t * COLS + tl.arange(0, COLS)).to(tl.int64)[:, None]
        r = (g * ROWS + tl.arange(0, ROWS)).to(tl.int64)[None, :]
        v = tl.load(in_ptr + l * in_stride + r, eviction_policy="evict_last")  # (COLS l, ROWS r)
        ro = (g * ROWS + tl.arange(0, ROWS)).to(tl.int64)[:, None]
        co = (t * COLS + tl.arange(0, COLS)).to(tl.int64)[None, :]
        tl.store(out_ptr + ro * out_stride + co, tl.trans(v))

    @triton.jit
    def transpose_tma(in_ptr, out_desc, in_stride, ROWS: tl.constexpr, COLS: tl.constexpr):
        t = tl.program_id(0)
        g = tl.program_id(1)
        l = (t * COLS + tl.arange(0, COLS)).to(tl.int64)[:, None]
        r = (g * ROWS + tl.arange(0, ROWS)).to(tl.int64)[None, :]
        v = tl.load(in_ptr + l * in_stride + r, eviction_policy="evict_last")
        out_desc.store([g * ROWS, t * COLS], tl.trans(v))


def spacings():
    """(label, row length L in floats, row stride S in floats)."""
    return [
        ("rows 32 KB apart", 8192, 8192),
        ("rows 1 MB apart", 262144, 262144),
        ("rows 4 MB apart", 1048576, 1048576),
    ]


def main():
    if triton is None or not torch.cuda.is_available():
        sys.exit("needs Triton and a CUDA device")
    import torch_transpose as tt

    # Descriptors made on the device need a scratch allocator; host descriptors do not, but set
    # one anyway so either lowering works.
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    src = torch.randn(FLOATS, device="cuda")
    dst = torch.empty_like(src)
    copy_ms = median_ms(lambda: dst.copy_(src))
    fill_ms = median_ms(lambda: dst.fill_(1.0))
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}")
    print(f"copy 256 MB: {2 * FLOATS * 4 / copy_ms / 1e6:.0f} GB/s; fill {FLOATS * 4 / fill_ms / 1e6:.0f} GB/s")
    print("| pattern | write plain / fill | write TMA / fill | transpose plain / copy | transpose TMA / copy | ours / copy |")
    print("|---|---|---|---|---|---|")
    for label, length, stride in spacings():
        rows_total = FLOATS // length  # output rows
        buf = torch.empty(rows_total * stride, device="cuda")
        out = buf.view(rows_total, stride)[:, :length]
        desc = TensorDescriptor(out, [rows_total, length], [stride, 1], [ROWS, COLS])
        grid = (length // COLS, rows_total // ROWS)
        wp = median_ms(lambda: write_plain[grid](buf, stride, ROWS, COLS, num_warps=8))
        wt = median_ms(lambda: write_tma[grid](desc, ROWS, COLS, num_warps=8))
        x = torch.randn(length, rows_total, device="cuda")
        expected = x.t().view(torch.int32)
        cells = []
        for name, run in (
            ("transpose plain", lambda: transpose_plain[grid](x, out, rows_total, stride, ROWS, COLS, num_warps=8)),
            ("transpose TMA", lambda: transpose_tma[grid](x, desc, rows_total, ROWS, COLS, num_warps=8)),
            ("ours", lambda: tt.transpose(x, 0, 1, out=out)),
        ):
            out.fill_(float("nan"))
            run()
            torch.cuda.synchronize()
            if not torch.equal(out.view(torch.int32), expected):
                sys.exit(f"{name} wrong on {label}")
            cells.append(f"{copy_ms / median_ms(run):.3f}")
        print(f"| {label} | {fill_ms / wp:.3f} | {fill_ms / wt:.3f} | " + " | ".join(cells) + " |", flush=True)
        del buf, out, x, desc
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
