"""What a build of torch_transpose was made for and what it runs with, and a quick self-check."""
import platform

import torch

from . import _C


def build_info() -> dict:
    """The package version; the torch and CUDA the extension was built against and those it runs
    with; the CUDA architectures compiled in; the CPU SIMD level in use; the devices seen.

    Example::

        >>> torch_transpose.build_info()["cuda_architectures"]
        '900'
    """
    from . import __version__
    info = {"version": __version__, **_C.build_info()}
    info["torch_running"] = torch.__version__
    info["cuda_running"] = torch.version.cuda
    info["cpu"] = platform.processor() or platform.machine()
    info["devices"] = [torch.cuda.get_device_name(i) + f" (sm_{''.join(map(str, torch.cuda.get_device_capability(i)))})"
                       for i in range(torch.cuda.device_count())] if torch.cuda.is_available() else []
    return info


SELF_CHECK_LAYOUTS = [((257, 130), (1, 0), torch.float32), ((3, 64, 33, 17), (0, 2, 3, 1), torch.bfloat16),
                      ((5, 7, 9, 11, 13), (4, 2, 0, 3, 1), torch.int8), ((1000, 3), (1, 0), torch.complex128)]


def self_check(devices=None) -> list:
    """Permutes a few layouts on each device and compares the bytes with native PyTorch's.
    Returns (device, layout, ok) rows."""
    from ._functions import permute
    if devices is None:
        devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() and _C.with_cuda else [])
    rows = []
    generator = torch.Generator().manual_seed(0)
    for device in devices:
        for shape, dims, dtype in SELF_CHECK_LAYOUTS:
            bits = torch.randint(0, 256, shape + (dtype.itemsize,), dtype=torch.uint8, generator=generator)
            x = bits.view(dtype).reshape(shape).to(device)
            ours, native = permute(x, dims), x.permute(dims).contiguous()
            same = torch.equal(ours.reshape(-1).view(torch.uint8), native.reshape(-1).view(torch.uint8))
            rows.append((device, f"{str(dtype).replace('torch.', '')} {'x'.join(map(str, shape))} {dims}", same))
    return rows
