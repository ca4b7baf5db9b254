"""torch_transpose: transpose, permute and layout conversion at the memory-bandwidth limit.

Importing the package loads the compiled library (which registers the operators
``torch.ops.torch_transpose.*``) and their fake, autograd and vmap rules.
"""
# torch first: _C links against libtorch's shared libraries (libc10.so, ...), which the dynamic
# loader finds only once torch has loaded them; `import torch_transpose` alone failed without it.
import torch  # noqa: F401

from . import _C  # noqa: F401  (loads the library: registers the operators)
from . import _fake, _autograd, _vmap  # noqa: F401  (registrations)
from ._functions import kernel_launches, explain, permute, to_memory_format, transpose
from ._switches import kernel_switch_names, kernel_switches

__version__ = "0.1.0"
with_cuda = bool(_C.with_cuda)

__all__ = ["transpose", "permute", "to_memory_format", "explain", "kernel_launches", "kernel_switches", "kernel_switch_names", "with_cuda", "__version__"]
