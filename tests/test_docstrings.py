"""The examples in the public functions' docstrings run and print what they say."""
import doctest

import pytest
import torch

import torch_transpose as tt


@pytest.mark.parametrize("function", [tt.transpose, tt.permute, tt.to_memory_format, tt.build_info],
                         ids=lambda f: f.__name__)
def test_docstring_examples(function):
    if function is tt.build_info and not tt.with_cuda:
        pytest.skip("its example prints the CUDA architectures of a CUDA build")
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = finder.find(function, globs={"torch": torch, "torch_transpose": tt})
    assert tests and tests[0].examples, f"{function.__name__} has no example"
    for test in tests:
        runner.run(test)
    assert runner.failures == 0, f"{runner.failures} example(s) of {function.__name__} failed (output above)"
