"""TorchScript and quantized tensors are deprecated in the torch versions we support (torch.jit
warns from 2.11, quantized tensor creation from 2.15) but still work, so the tests that use them
stay. They carry these marks: the deprecation warning is expected, and the test skips once a torch
has removed the API."""
import pytest
import torch

HAS_TORCHSCRIPT = all(callable(getattr(torch.jit, name, None)) for name in ("script", "trace", "save", "load"))
HAS_QUANTIZED = callable(getattr(torch, "quantize_per_tensor", None))

TORCHSCRIPT_MARKS = [pytest.mark.filterwarnings(r"ignore:`torch\.jit\.\w+` is deprecated"),
                     pytest.mark.skipif(not HAS_TORCHSCRIPT, reason="this torch has no TorchScript")]
QUANTIZED_MARKS = [pytest.mark.filterwarnings(r"ignore:torch\.quantize_per_tensor.* deprecated"),
                   pytest.mark.skipif(not HAS_QUANTIZED, reason="this torch has no quantized tensors")]


def _marked(marks):
    def apply(test):
        for mark in marks:
            test = mark(test)
        return test
    return apply


uses_torchscript = _marked(TORCHSCRIPT_MARKS)
uses_quantized = _marked(QUANTIZED_MARKS)
