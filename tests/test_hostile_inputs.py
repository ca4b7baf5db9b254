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


def _message_cases(make):
    """Errors that both the C++ op layer (real tensors) and the Python fake kernels (under
    torch.compile, FakeTensorMode) check; make() turns a real tensor into the kind under test."""
    ops = torch.ops.torch_transpose
    x = make(torch.randn(4, 6))
    return {
        "out of the wrong shape": lambda: ops.transpose_out(x, 0, 1, make(torch.empty(4, 6))),
        "out of the wrong rank": lambda: ops.transpose_out(x, 0, 1, make(torch.empty(6, 4, 1))),
        "out of the wrong dtype": lambda: ops.permute_out(x, [1, 0], make(torch.empty(6, 4, dtype=torch.bfloat16))),
        "too few dims": lambda: ops.permute(x, [0]),
        "too few dims into out": lambda: ops.permute_out(x, [0], make(torch.empty(6, 4))),
        "a repeated dim": lambda: ops.permute(x, [1, -1]),
        "a dim out of range": lambda: ops.permute(x, [0, 2]),
        "a transpose dim out of range": lambda: ops.transpose(x, -3, 0),
    }


def _error_of(call):
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the test compares whatever was raised
        return type(error), str(error).splitlines()[0]
    return None


@pytest.mark.parametrize("name", list(_message_cases(lambda t: t)))
def test_python_checks_say_what_the_cpp_checks_say(name):
    from torch._subclasses.fake_tensor import FakeTensorMode
    cpp = _error_of(_message_cases(lambda t: t)[name])
    mode = FakeTensorMode()
    with mode:
        python = _error_of(_message_cases(mode.from_tensor)[name])
    assert cpp is not None and cpp == python, (cpp, python)
