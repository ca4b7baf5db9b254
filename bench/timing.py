"""Median time of a callable through torch.utils.benchmark (which synchronises CUDA)."""
import time

import torch
import torch.utils.benchmark as benchmark


# A warm-up lasts at least this many calls, however long they take.
WARMUP_CALLS = 10


def warm_up(fn, warmup_s):
    """Calls fn for at least warmup_s seconds and at least WARMUP_CALLS times. On the CPU VM the
    first calls of a process that keeps freed memory (bench/cpu_memory.py) grow the heap and
    fault it in: a 64 MiB output took up to 230 ms a call (huge pages the host backs afresh)
    for 4-8 calls, then 2.9 ms; a 90 MB one 164-326 ms for 5 calls (1.3 s), then 5-7 ms. The
    heap grows because a freed block is just too small for the next aligned request of the
    same size, until freed blocks merge. Those slow calls are alike, so no test of "settled"
    tells them from a slow steady state; the first implementation of a case meets them. One
    warm-up call left them inside the timed calls (fp32 4096^2 read 1 GB/s in one suite run),
    and so did a fixed second of calls on the 90 MB case (docs/performance.md)."""
    start = time.perf_counter()
    calls = 0
    while calls < WARMUP_CALLS or time.perf_counter() - start < warmup_s:
        fn()
        calls += 1


def median_seconds(fn, min_run_time, warmup_s=0.0):
    """warmup_s: warm up for at least this long, until the calls settle (warm_up), before timing."""
    fn()  # warm-up: module load, compilation, autotuning, allocator growth
    if warmup_s > 0:
        warm_up(fn, warmup_s)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    # Timer runs the statement with num_threads=1 unless told otherwise. On the CPU that held
    # ours and eager to one thread while torch.compile's C++ keeps its own OpenMP thread count
    # (until 2026-11-30 the CPU results were measured that way); time every implementation
    # with the threads torch has (--threads sets them).
    timer = benchmark.Timer(stmt="fn()", globals={"fn": fn}, num_threads=torch.get_num_threads())
    return timer.blocked_autorange(min_run_time=min_run_time).median


# Calls captured back to back in one graph. One replay of a single 128 KB call took 2.5-4 us,
# about what `graph.replay()` costs the host, and the ours/eager ratio of fp32 8x64x64 swung
# 0.62-1.30 between runs with the same kernels (docs/performance.md); spread over 20 calls, the
# replay's own cost is a small part of each call's time, as in a captured model.
CALLS_PER_GRAPH = 20


def median_seconds_graphed(fn, min_run_time, calls=CALLS_PER_GRAPH):
    """Seconds per call when `calls` calls are captured back to back in one CUDA graph and the
    graph is replayed (no Python overhead; the replay's launch cost shared by the calls)."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            fn()
    return median_seconds(graph.replay, min_run_time) / calls
