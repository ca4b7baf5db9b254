"""Shared test tools: random bit patterns for every dtype, bit-exact comparison, guarded buffers,
reruns of a test file under kernel switches."""
import itertools
import os
import re
import subprocess
import sys

import pytest
import torch

import torch_transpose as tt

# Every dtype that a layout op must move (one per storage width and kind).
ALL_DTYPES = [
    torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
    torch.uint16, torch.uint32, torch.uint64,
    torch.float16, torch.bfloat16, torch.float32, torch.float64,
    torch.complex32, torch.complex64, torch.complex128,
    torch.float8_e4m3fn, torch.float8_e5m2, torch.float8_e4m3fnuz, torch.float8_e5m2fnuz,
]
# One dtype per element width: what the kernels are templated on.
WIDTH_DTYPES = [torch.uint8, torch.bfloat16, torch.float32, torch.float64, torch.complex128]

POISON_BYTE = 0xA5


def random_bits(shape, dtype, device="cpu", generator=None):
    """A tensor of random bit patterns (NaN payloads, -0.0, subnormals included)."""
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=generator).bool().to(device)
    raw = torch.randint(0, 256, (*shape, dtype.itemsize), dtype=torch.uint8, generator=generator)
    return raw.view(dtype).reshape(shape).to(device)


def bits(t):
    """A uint8 view of t's values in logical order, for bit-exact comparison."""
    # empty + copy_ rather than .contiguous(): a size-1 dim may keep an arbitrary stride.
    dense = torch.empty(t.shape, dtype=t.dtype, device=t.device).copy_(t)
    return dense.reshape(-1).view(torch.uint8).cpu()


def assert_bits_equal(actual, expected):
    assert actual.shape == expected.shape, f"shape {tuple(actual.shape)} != {tuple(expected.shape)}"
    assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != {expected.dtype}"
    assert torch.equal(bits(actual), bits(expected)), "values differ bit for bit"


def poisoned(shape, dtype, device):
    """A buffer filled with a recognisable byte pattern that no result is likely to equal."""
    n = 1
    for s in shape:
        n *= s
    raw = torch.full((n * dtype.itemsize,), POISON_BYTE, dtype=torch.uint8, device=device)
    return raw.view(dtype).reshape(shape)


def assert_only_view_written(buffer, view, expected_view_values, before):
    """`view` (a view of `buffer`) holds `expected_view_values`; every other byte is as `before`."""
    assert buffer.is_contiguous() and buffer.storage_offset() == 0, "guard buffers are fresh allocations"
    expected = before.clone()
    # Write the expectation through the same view geometry into the copy of the original buffer.
    expected.as_strided(view.shape, view.stride(), view.storage_offset()).copy_(expected_view_values)
    assert torch.equal(bits(buffer), bits(expected)), "bytes outside out's view changed, or out is wrong"


def check_permute_into_view(x, dims, buf, view):
    """tt.permute(x, dims, out=view) writes x.permute(dims).contiguous() into view and leaves
    the rest of the poisoned buffer buf as it was."""
    before = buf.clone()
    tt.permute(x, dims, out=view)
    assert_only_view_written(buf, view, x.permute(dims).contiguous(), before)


def current_switches():
    """The kernel switches in force in this process (TORCH_TRANSPOSE_KERNELS, or an in-process
    kernel_switches()) as {name: value string}."""
    switches = {}
    for entry in filter(None, tt._C.kernel_switches_in_force().split(",")):
        name, _, value = entry.partition("=")
        switches[name] = value
    return switches


def kernel_switch(name):
    """The value the switches in force give `name`, as a string, or None."""
    return current_switches().get(name)


def parameter_sets(test):
    """Every keyword set pytest runs `test` with (the product of its parametrize marks), so that a
    test can run another test's cases in-process, for example under kernel_switches()."""
    axes = []
    for mark in getattr(test, "pytestmark", []):
        if mark.name != "parametrize":
            continue
        names = [n.strip() for n in mark.args[0].split(",")] if isinstance(mark.args[0], str) else list(mark.args[0])
        axis = []
        for value in mark.args[1]:
            value = value.values if hasattr(value, "values") and not isinstance(value, (tuple, list)) else value
            axis.append(dict(zip(names, value if len(names) > 1 else (value,))))
        axes.append(axis)
    for combination in itertools.product(*axes):
        yield {k: v for part in combination for k, v in part.items()}


def switches_text(switches):
    """TORCH_TRANSPOSE_KERNELS's switches of this process with `switches` ({name: value}) on top,
    as kernel_switches() takes them."""
    return ",".join(f"{k}={v}" for k, v in {**current_switches(), **switches}.items())


def run_with_switches(tests, switches, device):
    """Runs each of `tests` (test functions taking `device`) on `device` for every parameter set
    pytest gives it, in this process, with `switches` ({name: value}) on top of the kernel
    switches in force: each kernel path a switch reaches is tested without a subprocess."""
    with tt.kernel_switches(switches_text(switches)):
        for test in tests:
            for kwargs in parameter_sets(test):
                try:
                    test(device=device, **kwargs)
                except pytest.skip.Exception as skipped:  # a case that did not run must not pass unseen
                    raise AssertionError(f"{test.__name__}({kwargs}) skipped under {switches}: {skipped}") from None


RERUN_MARK = "TT_TESTS_RERUN"  # set in the environment of a run_file_with_switches child


def run_file_with_switches(test_file, switches, selection, passed):
    """Runs `test_file`'s cases matching `selection` in a pytest process of their own with the
    given kernel switches added to TORCH_TRANSPOSE_KERNELS ({name: value}), and
    checks that exactly `passed` of them ran and passed.

    A selection that matches the calling test's own name would rerun it inside its rerun, without
    end : the child marks its environment, and a rerun asked for
    from inside one fails at once."""
    assert os.environ.get(RERUN_MARK) is None, (f"-k {selection!r} selected the test that reruns it: rename that "
                                                "test so that its name does not contain the selection")
    merged = {**current_switches(), **switches}
    env = {**os.environ, "TORCH_TRANSPOSE_KERNELS": ",".join(f"{k}={v}" for k, v in merged.items()), RERUN_MARK: "1"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test_file, "-k", selection],
                          env=env, capture_output=True, text=True)
    assert done.returncode == 0 and re.search(rf"\b{passed} passed", done.stdout), done.stdout[-2000:] + done.stderr[-2000:]


# The element type a CUDA kernel is instantiated for (its first template argument), by element
# size, as the profiler names it.
KERNEL_ELEMENT_TYPES = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "uint2"}


def kernel_template_args(kernels, kernel):
    """The template arguments, as strings, of the first launch of `kernel` among `kernels` (names
    as cuda_kernels_of gives them: '...gather_tile_transpose_kernel<float, 4, 64, false>(...)'),
    or None where it did not run: which instantiation a route reached."""
    for name in kernels:
        found = re.search(rf"(?<!\w){kernel}<([^<>]*)>", name)
        if found:
            return [arg.strip() for arg in found.group(1).split(",")]
    return None


def cuda_kernels_of(fn):
    """The names of the CUDA kernels (and copies) that fn() launches (torch.profiler), for tests
    that must reach one kernel: a route that silently went elsewhere would pass on values alone.
    None where the profiler sees no CUDA activity at all (CUPTI cannot start, as under
    compute-sanitizer): every CUDA op here launches something, so an empty list means a blind
    profiler, not an answer."""
    fn()  # the first call may choose, opt in or compile; profile a second one
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    names = [event.name for event in prof.events() if event.device_type == torch.autograd.DeviceType.CUDA]
    return names or None
