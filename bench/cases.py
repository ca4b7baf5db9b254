"""The benchmark suite: each case builds its input view and says which layout op it asks for.

A case's op is ("transpose", d0, d1) or ("permute", dims); every implementation materialises
the same values (x.transpose(d0, d1).contiguous() or x.permute(dims).contiguous()).
`touched_fraction` is used / touched bytes for strided inputs (see bench/README.md).
"""
from dataclasses import dataclass, field
from typing import Callable, Tuple

import torch

DTYPES = {
    "fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16, "int8": torch.int8,
    "fp8": torch.float8_e4m3fn, "fp64": torch.float64, "complex64": torch.complex64, "complex128": torch.complex128,
}


@dataclass
class Case:
    name: str
    group: str
    dtype: str
    shape: Tuple[int, ...]              # the input's logical shape
    op: tuple                           # ("transpose", d0, d1) or ("permute", dims)
    make_view: Callable = None          # base tensor -> input view (strided cases)
    base_shape: Tuple[int, ...] = None  # shape of the allocation the view is taken from
    touched_fraction: float = 1.0
    quick: bool = False
    tags: tuple = field(default_factory=tuple)

    def make_input(self, device):
        dtype = DTYPES[self.dtype]
        shape = self.base_shape or self.shape
        if dtype.is_floating_point and dtype.itemsize >= 2 or dtype.is_complex:
            base = torch.randn(shape, device=device, dtype=dtype)
        else:  # int8 and fp8: random bytes
            base = torch.randint(-100, 100, shape, device=device, dtype=torch.int8).view(dtype)
        x = self.make_view(base) if self.make_view else base
        assert tuple(x.shape) == tuple(self.shape), (self.name, x.shape, self.shape)
        return x


def _t(name, group, dtype, shape, quick=False):
    return Case(name, group, dtype, shape, ("transpose", -2, -1), quick=quick)


def _p(name, group, dtype, shape, dims, quick=False):
    return Case(name, group, dtype, shape, ("permute", tuple(dims)), quick=quick)


def transpose_suite():
    cases = []
    for dtype in ["fp32", "fp16", "bf16", "int8", "fp8", "fp64", "complex64"]:
        for n in (8192, 16384):
            cases.append(_t(f"{dtype} {n}x{n}", "square", dtype, (n, n),
                            quick=(n == 8192 and dtype in ("fp32", "bf16", "int8"))))
    for shape in [(8191, 8193), (12345, 6789), (4097, 4095)]:
        cases.append(_t(f"fp32 {shape[0]}x{shape[1]}", "odd", "fp32", shape, quick=shape == (8191, 8193)))
    for shape in [(4194304, 16), (16, 4194304), (4194304, 3), (3, 4194304), (1000000, 7)]:
        cases.append(_t(f"fp32 {shape[0]}x{shape[1]}", "narrow", "fp32", shape, quick=shape in ((4194304, 16), (3, 4194304))))
    for shape in [(256, 512, 512), (4096, 64, 64), (65536, 8, 8), (64, 1024, 3)]:
        cases.append(_t(f"fp32 batched {'x'.join(map(str, shape))}", "batched", "fp32", shape, quick=shape == (256, 512, 512)))
    cases.append(Case("fp32 8192x16384[:, ::2]", "strided", "fp32", (8192, 8192), ("transpose", -2, -1),
                      make_view=lambda b: b[:, ::2], base_shape=(8192, 16384), touched_fraction=2 / 3, quick=True))
    cases.append(Case("fp32 8193x8193[1:, 1:]", "strided", "fp32", (8192, 8192), ("transpose", -2, -1),
                      make_view=lambda b: b[1:, 1:], base_shape=(8193, 8193)))
    cases.append(Case("fp32 (8192x8192).t() (a copy)", "strided", "fp32", (8192, 8192), ("transpose", -2, -1),
                      make_view=lambda b: b.t(), base_shape=(8192, 8192)))
    return cases


def permute_suite():
    cases = []
    for dtype in ("fp32", "bf16"):
        cases.append(_p(f"{dtype} NCHW->NHWC 64x128x56x56", "permute", dtype, (64, 128, 56, 56), (0, 2, 3, 1), quick=dtype == "fp32"))
        cases.append(_p(f"{dtype} NHWC->NCHW 64x56x56x128", "permute", dtype, (64, 56, 56, 128), (0, 3, 1, 2)))
        cases.append(_p(f"{dtype} NCHW->NHWC 32x3x224x224", "permute", dtype, (32, 3, 224, 224), (0, 2, 3, 1), quick=dtype == "fp32"))
        cases.append(_p(f"{dtype} NHWC->NCHW 32x224x224x3", "permute", dtype, (32, 224, 224, 3), (0, 3, 1, 2)))
    for dtype in ("bf16", "fp16"):
        cases.append(_p(f"{dtype} BSHD->BHSD 32x2048x16x128", "permute", dtype, (32, 2048, 16, 128), (0, 2, 1, 3), quick=dtype == "bf16"))
    cases.append(_p("fp32 5-D 20x30x40x50x60 (4,2,0,3,1)", "permute", "fp32", (20, 30, 40, 50, 60), (4, 2, 0, 3, 1)))
    cases.append(_p("fp32 4-D reversal 64x64x64x256", "permute", "fp32", (64, 64, 64, 256), (3, 2, 1, 0)))
    for dims in [(0, 2, 1), (2, 1, 0), (1, 0, 2)]:
        cases.append(_p(f"fp32 1024x1024x64 {dims}", "permute", "fp32", (1024, 1024, 64), dims, quick=dims == (2, 1, 0)))
    return cases


SMALL_CASES = [
    _t("fp32 64x64", "small", "fp32", (64, 64)),
    _t("fp32 256x256", "small", "fp32", (256, 256)),
    _t("fp32 batched 8x64x64", "small", "fp32", (8, 64, 64)),
]

CPU_CASES = [
    _t("fp32 4096x4096", "square", "fp32", (4096, 4096), quick=True),
    _t("bf16 4096x4096", "square", "bf16", (4096, 4096)),
    _t("int8 4096x4096", "square", "int8", (4096, 4096)),
    _t("fp32 8192x8192", "square", "fp32", (8192, 8192)),
    _t("bf16 8192x8192", "square", "bf16", (8192, 8192)),
    _t("int8 8192x8192", "square", "int8", (8192, 8192)),
    _t("fp32 batched 256x256x256", "batched", "fp32", (256, 256, 256), quick=True),
    _t("fp32 1048576x16", "narrow", "fp32", (1048576, 16), quick=True),
    _t("fp32 16x1048576", "narrow", "fp32", (16, 1048576)),
    _p("fp32 NCHW->NHWC 16x64x56x56", "permute", "fp32", (16, 64, 56, 56), (0, 2, 3, 1)),
    # Attention's heads out of the sequence: a row copy (rows of 256 bytes), not a transpose.
    _p("fp32 attention BHSD->BSHD 32x16x512x64", "permute", "fp32", (32, 16, 512, 64), (0, 2, 1, 3)),
]


def model_suite():
    """Layouts that models ask for, at the sizes they ask for them (`python -m bench --suite
    models`). Not issue 3's suite: these are the shapes users bring when they compare us with
    `t().contiguous()`, with the dims and dtypes of common models rather than round powers of
    two, so that a kernel choice that only suits the default suite shows up here."""
    m = "models"
    return [
        # LLM weights: a GEMM that wants the other major order, tied embeddings, weight export.
        _t("bf16 Llama-2 MLP weight 11008x4096", m, "bf16", (11008, 4096)),
        _t("bf16 Llama-3 MLP weight 4096x14336", m, "bf16", (4096, 14336)),
        _t("bf16 Llama-3 embedding 128256x4096", m, "bf16", (128256, 4096)),
        _t("bf16 GPT-2 embedding 50257x768", m, "bf16", (50257, 768)),
        _t("fp8 Llama-3 MLP weight 14336x4096", m, "fp8", (14336, 4096)),
        _t("fp8 DeepSeek-V3 MLP weight 18432x7168", m, "fp8", (18432, 7168)),
        _t("int8 quantized weight 11008x4096", m, "int8", (11008, 4096)),
        # Attention: heads out of and back into the sequence, K transposed, grouped KV heads,
        # timm's fused QKV split.
        _p("bf16 Llama-2 BSHD->BHSD 8x4096x32x128", m, "bf16", (8, 4096, 32, 128), (0, 2, 1, 3)),
        _p("bf16 Llama-2 BHSD->BSHD 8x32x4096x128", m, "bf16", (8, 32, 4096, 128), (0, 2, 1, 3)),
        _p("bf16 K transposed 8x32x4096x128", m, "bf16", (8, 32, 4096, 128), (0, 1, 3, 2)),
        _p("bf16 GQA KV heads 8x4096x8x128", m, "bf16", (8, 4096, 8, 128), (0, 2, 1, 3)),
        _p("fp16 BERT-base heads 32x512x12x64", m, "fp16", (32, 512, 12, 64), (0, 2, 1, 3)),
        _p("fp32 ViT-B heads 64x197x12x64", m, "fp32", (64, 197, 12, 64), (0, 2, 1, 3)),
        _p("bf16 ViT-B fused QKV 64x197x3x12x64", m, "bf16", (64, 197, 3, 12, 64), (2, 0, 3, 1, 4)),
        # Vision: channels-last conversions at ResNet's stages, ViT patches, uint8 images (as
        # int8: the same bytes), Swin's window partition, pixel shuffle, video frames.
        _p("bf16 ResNet NCHW->NHWC 128x256x56x56", m, "bf16", (128, 256, 56, 56), (0, 2, 3, 1)),
        _p("fp16 ResNet NHWC->NCHW 128x56x56x256", m, "fp16", (128, 56, 56, 256), (0, 3, 1, 2)),
        _p("bf16 ResNet stem NCHW->NHWC 128x64x112x112", m, "bf16", (128, 64, 112, 112), (0, 2, 3, 1)),
        _p("bf16 ResNet last stage NCHW->NHWC 128x2048x7x7", m, "bf16", (128, 2048, 7, 7), (0, 2, 3, 1)),
        _p("fp16 ViT-B patches 64x768x14x14", m, "fp16", (64, 768, 14, 14), (0, 2, 3, 1)),
        # The backward of the two above (autograd permutes the gradient back): short output rows.
        _p("bf16 ResNet last stage NHWC->NCHW 128x7x7x2048", m, "bf16", (128, 7, 7, 2048), (0, 3, 1, 2)),
        _p("fp16 ViT-B patches NHWC->NCHW 64x14x14x768", m, "fp16", (64, 14, 14, 768), (0, 3, 1, 2)),
        _p("int8 images NHWC->NCHW 256x224x224x3", m, "int8", (256, 224, 224, 3), (0, 3, 1, 2)),
        _p("bf16 Swin window partition 128x8x7x8x7x128", m, "bf16", (128, 8, 7, 8, 7, 128), (0, 1, 3, 2, 4, 5)),
        _p("fp16 pixel shuffle 16x64x2x2x128x128", m, "fp16", (16, 64, 2, 2, 128, 128), (0, 1, 4, 2, 5, 3)),
        _p("bf16 video NCTHW->NTCHW 8x64x16x56x56", m, "bf16", (8, 64, 16, 56, 56), (0, 2, 1, 3, 4)),
        # Sequences: conv1d's (B, C, T) to (B, T, C), a state-space model's (B, L, D) to (B, D, L).
        _p("fp16 Whisper conv out 32x768x1500", m, "fp16", (32, 768, 1500), (0, 2, 1)),
        _p("bf16 Mamba BLD->BDL 16x4096x2048", m, "bf16", (16, 4096, 2048), (0, 2, 1)),
        # Tables, science and signals: an odd narrow table, fp64, a complex spectrogram.
        _t("fp32 table 1000000x37", m, "fp32", (1000000, 37)),
        _t("fp64 matrix 4096x4096", m, "fp64", (4096, 4096)),
        _p("complex64 spectrogram 64x1025x431", m, "complex64", (64, 1025, 431), (0, 2, 1)),
    ]


SUITES = ("default", "models", "random")


def suite(device, which="default", seed=0, count=60):
    """The benchmark's cases: "default" is the fixed suite (the CPU's own on the CPU), "models"
    the model layouts on either device, "random" `count` layouts drawn from `seed`
    (bench/random_suite.py)."""
    if which not in SUITES:
        raise ValueError(f"suite must be one of {SUITES}, got {which!r}")
    if which == "models":
        return model_suite()
    if which == "random":
        from .random_suite import draw
        return draw(seed, count, device)
    if device == "cpu":
        return CPU_CASES
    return transpose_suite() + permute_suite() + SMALL_CASES
