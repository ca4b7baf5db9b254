"""Hostile and odd inputs with the exception each must raise. Used by tests/test_hostile_inputs.py
and by scripts/error_table.py, which writes docs/errors.md from the same list."""
import torch

import torch_transpose as tt


def _x():
    return torch.randn(4, 6)


def _nested():
    return torch.nested.nested_tensor([torch.randn(2, 3), torch.randn(4, 3)])


def _partial_overlap():
    buf = torch.randn(40)
    return tt.transpose(buf[:24].view(4, 6), out=buf[10:34].view(6, 4))


# (name, call, expected exception type); a None type means the call must succeed.
NEEDS_QUANTIZED = {"quantized input"}  # quantized tensors are deprecated (tests/deprecated_apis.py)
CASES = [
    ("sparse COO input", lambda: tt.transpose(torch.eye(3).to_sparse()), NotImplementedError),
    ("quantized input", lambda: tt.transpose(torch.quantize_per_tensor(_x(), 0.1, 0, torch.quint8)), NotImplementedError),
    ("nested input", lambda: tt.transpose(_nested(), 0, 1), NotImplementedError),
    ("sparse CSR input to permute", lambda: tt.permute(torch.eye(3).to_sparse_csr(), (1, 0)), NotImplementedError),
    ("sparse out", lambda: tt.transpose(_x(), out=torch.zeros(6, 4).to_sparse()), RuntimeError),
    ("meta input (works: returns meta)", lambda: tt.transpose(torch.empty(3, 5, device="meta")), None),
    ("out= with an input that requires grad", lambda: tt.transpose(_x().requires_grad_(), out=torch.empty(6, 4)), RuntimeError),
    ("out is self", lambda: (lambda x: tt.transpose(x, 0, 0, out=x))(_x()), RuntimeError),
    ("out partially overlaps self", _partial_overlap, RuntimeError),
    ("out with a stride-0 dim", lambda: tt.transpose(_x(), out=torch.empty(1, 4).expand(6, 4)), RuntimeError),
    ("out of the wrong shape", lambda: tt.transpose(_x(), out=torch.empty(4, 6)), RuntimeError),
    ("out of the wrong dtype", lambda: tt.transpose(_x(), out=torch.empty(6, 4, dtype=torch.float64)), RuntimeError),
    ("dim out of range", lambda: tt.transpose(_x(), 2, 0), IndexError),
    ("transpose of a 1-D tensor with default dims", lambda: tt.transpose(torch.randn(5)), IndexError),
    ("permute with a repeated dim", lambda: tt.permute(_x(), (1, 1)), RuntimeError),
    ("permute with the wrong number of dims", lambda: tt.permute(_x(), (0,)), RuntimeError),
    ("more than 16 dims after merging", lambda: tt.permute(torch.randn([2] * 17), list(range(16, -1, -1))), RuntimeError),
    ("a list instead of a tensor", lambda: tt.transpose([[1, 2], [3, 4]]), TypeError),
    ("a string as a dim", lambda: tt.transpose(_x(), "0", 1), TypeError),
    ("a list as out", lambda: tt.transpose(_x(), out=[[0.0] * 4] * 6), TypeError),
    ("a float in permute's dims", lambda: tt.permute(_x(), (1.0, 0)), TypeError),
    ("a list instead of a tensor (to_memory_format)", lambda: tt.to_memory_format([1.0], torch.channels_last), TypeError),
    ("an int as the memory format", lambda: tt.to_memory_format(torch.randn(1, 2, 3, 4), 3), TypeError),
    ("channels_last of a 3-D tensor", lambda: tt.to_memory_format(torch.randn(2, 3, 4), torch.channels_last), RuntimeError),
]

CUDA_CASES = [
    ("out on another device", lambda: tt.transpose(torch.randn(4, 6, device="cuda"), out=torch.empty(6, 4)), RuntimeError),
    ("self on CPU, out on CUDA", lambda: tt.transpose(torch.randn(4, 6), out=torch.empty(6, 4, device="cuda")), RuntimeError),
]
