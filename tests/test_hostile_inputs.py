"""Every hostile input of tests/hostile_cases.py raises PyTorch's usual exception type, never crashes."""
import pytest
import torch

from deprecated_apis import QUANTIZED_MARKS
from hostile_cases import CASES, CUDA_CASES, NEEDS_QUANTIZED


def _run(call, expected):
    if expected is None:
        call()
        return
    with pytest.raises(expected) as info:
        call()
    assert str(info.value).strip(), "the error must say what is wrong"


@pytest.mark.parametrize("name,call,expected", [
    pytest.param(*case, id=case[0], marks=QUANTIZED_MARKS if case[0] in NEEDS_QUANTIZED else ()) for case in CASES])
def test_hostile_input(name, call, expected):
    _run(call, expected)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("name,call,expected", CUDA_CASES, ids=[c[0] for c in CUDA_CASES])
def test_hostile_input_cuda(name, call, expected):
    _run(call, expected)
