"""Benchmark harness: torch_transpose against copy, eager, torch.compile, Triton and cuBLAS."""
