"""Builds torch_transpose._C: CPU + CUDA kernels where nvcc is found, CPU only where it is not.

The source list lives in csrc/SOURCES and is shared with CMakeLists.txt (the LibTorch build).
Set TORCH_TRANSPOSE_CUDA=0 to force a CPU-only build, =1 to insist on CUDA.
"""
import os
import sys
from pathlib import Path

from setuptools import setup

try:
    import torch
    from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension
except ModuleNotFoundError:
    sys.exit("torch_transpose builds against the torch it will run with, and none is importable here. "
             "Install torch first, then build without isolation: pip install --no-build-isolation . "
             "(an isolated build cannot see your torch).")

ROOT = Path(__file__).parent
# The torch versions this source is tested with (README, "Supported versions").
TESTED_TORCH = ((2, 11), (2, 15))
CXX_STANDARD = "c++20"


def library_sources():
    lines = (ROOT / "csrc" / "SOURCES").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def want_cuda():
    choice = os.environ.get("TORCH_TRANSPOSE_CUDA")
    if choice is not None:
        return choice == "1"
    return CUDA_HOME is not None


def extension():
    with_cuda = want_cuda()
    # Without a visible GPU torch cannot infer the architecture; default to Hopper (sm_90),
    # the GPU this project is tuned for. Set TORCH_CUDA_ARCH_LIST to build for others.
    if with_cuda:
        os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0")
    sources = [s for s in library_sources() if with_cuda or not s.endswith(".cu")]
    sources.append("csrc/python_module.cpp")
    # C++20: torch 2.15's headers need it (std::strong_ordering, defaulted operator==), and 2.11's
    # build with it too. CMakeLists.txt sets the same standard.
    cxx = ["-O3", f"-std={CXX_STANDARD}"]
    # at::parallel_for splits work over threads only in code compiled with OpenMP (ATen's
    # header falls back to a plain loop without it): the CPU kernels need -fopenmp. The
    # library then shares libgomp.so.1 with torch, which loads it first.
    link = []
    if sys.platform.startswith("linux"):
        cxx.append("-fopenmp")
        link.append("-fopenmp")
    defines = []
    if with_cuda:
        defines.append(("TORCH_TRANSPOSE_WITH_CUDA", None))
        nvcc = ["-O3", f"-std={CXX_STANDARD}", "--expt-relaxed-constexpr", "-lineinfo"]
        return CUDAExtension("torch_transpose._C", sources, include_dirs=[str(ROOT / "csrc")],
                             define_macros=defines, extra_compile_args={"cxx": cxx, "nvcc": nvcc},
                             extra_link_args=link)
    return CppExtension("torch_transpose._C", sources, include_dirs=[str(ROOT / "csrc")],
                        extra_compile_args={"cxx": cxx}, extra_link_args=link)


def torch_requirement():
    """The extension links against this torch's C++ internals: it runs with the same minor version only."""
    major, minor = (int(part) for part in torch.__version__.split("+")[0].split(".")[:2])
    low, high = TESTED_TORCH
    if (major, minor) < low:
        sys.exit(f"torch_transpose needs torch {low[0]}.{low[1]} or later to build; found torch {torch.__version__}")
    if (major, minor) > high:
        print(f"warning: torch_transpose is tested with torch {low[0]}.{low[1]} to {high[0]}.{high[1]}; "
              f"building against torch {torch.__version__}", file=sys.stderr)
    return f"torch=={major}.{minor}.*"


setup(
    install_requires=[torch_requirement()],
    ext_modules=[extension()],
    cmdclass={"build_ext": BuildExtension.with_options(use_ninja=True)},
)
