"""Median time of a callable through torch.utils.benchmark (which synchronises CUDA)."""
import torch
import torch.utils.benchmark as benchmark


def median_seconds(fn, min_run_time):
    fn()  # warm-up: module load, compilation, autotuning, allocator growth
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    # Timer runs the statement with num_threads=1 unless told otherwise. On the CPU that held
    # ours and eager to one thread while torch.compile's C++ keeps its own OpenMP thread count
    # (until 2026-11-30 the CPU results were measured that way); time every implementation
    # with the threads torch has (--threads sets them).
    timer = benchmark.Timer(stmt="fn()", globals={"fn": fn}, num_threads=torch.get_num_threads())
    return timer.blocked_autorange(min_run_time=min_run_time).median


def median_seconds_graphed(fn, min_run_time):
    """The same call captured in a CUDA graph and timed as graph replays (no Python overhead)."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return median_seconds(graph.replay, min_run_time)
