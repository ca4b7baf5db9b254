"""Minimal repro: an argument error raised by the op, on CPU then CUDA (diagnosing a segfault)."""
import sys

import torch

import torch_transpose as tt

device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
x = torch.randn(4, 6, device=device)
for label, call in [
    ("index error", lambda: tt.transpose(x, 5, 0)),
    ("permute length", lambda: torch.ops.torch_transpose.permute.default(x, [0])),
    ("out shape", lambda: torch.ops.torch_transpose.transpose_out.default(x, 0, 1, torch.empty(4, 6, device=device))),
]:
    try:
        call()
        print(device, label, "no error?!", flush=True)
    except Exception as e:
        print(device, label, type(e).__name__, str(e).splitlines()[0][:100], flush=True)
