"""Calls from several Python threads, and on several CUDA streams, at once give correct results.
The op keeps no shared mutable state (each call plans afresh), which these tests hold it to."""
import threading

import pytest
import torch

import torch_transpose as tt
from helpers import assert_bits_equal, random_bits


def test_many_threads(device):
    shapes = [(33, 65), (128, 7), (3, 40, 50), (64, 64), (5, 6, 7, 8)]
    inputs = [random_bits(s, torch.float32, device) for s in shapes]
    errors = []

    def worker(k):
        try:
            for i in range(30):
                x = inputs[(k + i) % len(inputs)]
                assert_bits_equal(tt.transpose(x, 0, -1), x.transpose(0, -1).contiguous())
                dims = list(reversed(range(x.dim())))
                assert_bits_equal(tt.permute(x, dims), x.permute(dims).contiguous())
        except Exception as e:  # reported on the main thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_many_streams():
    streams = [torch.cuda.Stream() for _ in range(4)]
    inputs = [random_bits((1000 + 37 * k, 900 - 11 * k), torch.float32, "cuda") for k in range(4)]
    torch.cuda.synchronize()
    outputs = []
    for stream, x in zip(streams, inputs):
        with torch.cuda.stream(stream):
            outputs.append([tt.transpose(x) for _ in range(5)])
    torch.cuda.synchronize()
    for x, ys in zip(inputs, outputs):
        for y in ys:
            assert_bits_equal(y, x.t().contiguous())
