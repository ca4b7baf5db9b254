"""The benchmark's torch.compile anchor compiles every case of a suite. Dynamo keeps compiled
code per code object and all cases share bench.impls' lambdas, so once config.recompile_limit
(8) cases had compiled, Dynamo ran every later case in eager mode without an error: the H200
suites before 2026-11-30 12:30 UTC timed eager under the name "compile" from their ninth case on."""
import functools

import pytest
import torch
from torch._dynamo.utils import counters

from bench import impls


class _TransposeCase:
    name = "a transpose"
    op = ("transpose", 0, 1)


def test_every_case_gets_its_own_compiled_graph(monkeypatch):
    # The eager backend keeps the test fast; what is checked is Dynamo's capture, which is the
    # same for every backend. More dtype and shape changes than the recompile limit allows.
    monkeypatch.setattr(torch, "compile", functools.partial(torch.compile, backend="eager"))
    dtypes = [torch.float32, torch.float16, torch.bfloat16, torch.int8, torch.uint8, torch.float64, torch.complex64,
              torch.int16, torch.int32, torch.int64, torch.float32, torch.float16]
    assert len(dtypes) > torch._dynamo.config.recompile_limit
    for i, dtype in enumerate(dtypes):
        x = torch.arange((5 + i) * (7 + i)).reshape(5 + i, 7 + i).to(dtype)
        before = counters["stats"]["unique_graphs"]  # Dynamo's reset leaves its counters
        fn = impls.compiled(_TransposeCase, x)  # compiles on its first call
        assert counters["stats"]["unique_graphs"] == before + 1, f"case {i} ({dtype}) was not compiled"
        assert torch.equal(fn(), x.t().contiguous())
        assert counters["stats"]["unique_graphs"] == before + 1, f"case {i} ({dtype}) compiled again when timed"
    torch._dynamo.reset()


def test_a_case_dynamo_does_not_capture_stops_the_run(monkeypatch):
    # With no recompiles allowed, Dynamo falls back to eager for the very first call.
    monkeypatch.setattr(torch, "compile", functools.partial(torch.compile, backend="eager"))
    # Dynamo's own patch: monkeypatch's undo deletes the attribute from Dynamo's config module.
    with torch._dynamo.config.patch(recompile_limit=0):
        with pytest.raises(RuntimeError, match="captured no graph for a transpose"):
            impls.compiled(_TransposeCase, torch.zeros(3, 4))
    torch._dynamo.reset()
