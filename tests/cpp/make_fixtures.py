"""Saves artefacts from Python for the C++ tests (tests/cpp/test_cpp_api.cpp):
a TorchScript module and an AOTInductor package (CPU) that call torch_transpose's ops.

Usage: python tests/cpp/make_fixtures.py OUT_DIR
"""
import sys
import warnings
from pathlib import Path

import torch

import torch_transpose as tt

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from deprecated_apis import HAS_TORCHSCRIPT  # noqa: E402


class Scripted(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.torch_transpose.transpose(x, 0, 1) + 1


class Exported(torch.nn.Module):
    def forward(self, x):
        return tt.permute(tt.transpose(x, 0, 1) * 2, [2, 0, 1])


def main(out_dir):
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    # TorchScript is deprecated (tests/deprecated_apis.py): without it the C++ test of the
    # scripted module skips, told so by this marker file.
    no_torchscript = out / "no_torchscript"
    if HAS_TORCHSCRIPT:
        no_torchscript.unlink(missing_ok=True)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", r"`torch\.jit\.\w+` is deprecated")
            torch.jit.save(torch.jit.script(Scripted()), str(out / "scripted_transpose.pt"))
    else:
        no_torchscript.write_text("this torch has no TorchScript\n")
    aoti = out / "permute_cpu.pt2"
    if not aoti.exists():  # AOTInductor compiles C++: reuse a package from an earlier run
        program = torch.export.export(Exported(), (torch.randn(3, 4, 5),))
        torch._inductor.aoti_compile_and_package(program, package_path=str(aoti))
    print(f"fixtures in {out}")


if __name__ == "__main__":
    main(sys.argv[1])
