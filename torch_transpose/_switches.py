"""Kernel switches: the in-process form of TORCH_TRANSPOSE_KERNELS (see the README)."""
import contextlib

from . import _C


def kernel_switch_names():
    """Every name TORCH_TRANSPOSE_KERNELS and kernel_switches() take."""
    return list(_C.kernel_switch_names())


@contextlib.contextmanager
def kernel_switches(text: str):
    """Runs the block with the kernel switches ``text`` in force, in place of those set before.

    ``text`` has TORCH_TRANSPOSE_KERNELS's syntax: comma-separated ``name=integer``, ``-name``
    (name=0) or ``+name`` (name=1); ``""`` for none. An unknown name raises ValueError.

    Example::

        with torch_transpose.kernel_switches("-lean_tile"):
            y = torch_transpose.transpose(x)   # the square tile kernel, not lean tiles
    """
    previous = _C.set_kernel_switches(text)
    try:
        yield
    finally:
        _C.set_kernel_switches(previous)
