"""torch_transpose: transpose, permute and layout conversion at the memory-bandwidth limit.

Importing the package loads the compiled library (which registers the operators
``torch.ops.torch_transpose.*``) and their fake, autograd and vmap rules.
"""
# torch first: _C links against libtorch's shared libraries (libc10.so, ...), which the dynamic
# loader finds only once torch has loaded them; `import torch_transpose` alone failed without it.
import torch  # noqa: F401

try:
    from . import _C  # noqa: F401  (loads the library: registers the operators)
except ImportError as error:  # not built, or built against another torch
    raise ImportError(
        f"torch_transpose's compiled extension did not load ({error}). It must be built against the torch "
        f"that imports it (this is torch {torch.__version__}): in a checkout run `make build` or "
        "`pip install --no-build-isolation -e .`; an installed wheel needs the torch minor version it was "
        "built for.") from error
from . import _fake, _autograd, _vmap, _sharding  # noqa: F401  (registrations)
from ._functions import kernel_launches, explain, permute, to_memory_format, transpose
from ._info import build_info, self_check
from ._switches import kernel_switch_names, kernel_switches

from ._version import __version__
_sharding.register()
with_cuda = bool(_C.with_cuda)

if __import__("os").environ.get("TORCH_TRANSPOSE_INDUCTOR_PASS") == "1":
    from . import inductor_pass  # noqa: F401  (installs itself)


def __getattr__(name):
    # torch_transpose.inductor_pass imports Inductor, which a program that never compiles need not pay for.
    if name == "inductor_pass":
        import importlib
        return importlib.import_module(".inductor_pass", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["transpose", "permute", "to_memory_format", "explain", "kernel_launches", "kernel_switches", "kernel_switch_names", "build_info", "self_check", "with_cuda", "__version__"]
