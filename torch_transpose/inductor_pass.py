"""An opt-in torch.compile pass: layout copies written the usual way become our ops.

    import torch_transpose
    torch_transpose.inductor_pass.enable()            # CUDA graphs from now on
    with torch_transpose.inductor_pass.enabled(devices=("cuda", "cpu")):
        model = torch.compile(model)                  # the pass runs when the model compiles

or TORCH_TRANSPOSE_INDUCTOR_PASS=1 in the environment at import.

After autograd, `x.t().contiguous()`, `.transpose()`, `.mT`, `.movedim()` and `.permute()`
followed by `.contiguous()` are an `aten.permute` then an `aten.clone(memory_format=
torch.contiguous_format)`, and `x.contiguous(memory_format=torch.channels_last)` is one
`aten.clone`. The pass turns those copies into `torch_transpose.permute` and
`torch_transpose.to_memory_format`, in forward and backward graphs alike.

Our ops are opaque to Inductor: a copy that Inductor would fuse with pointwise work on either
side (`(w * 2).t().contiguous()`, `w.t().contiguous() * 2`: one kernel each today) would become
two kernels and an extra round trip through memory. So a copy is rewritten only where it fuses
with nothing: its input comes from a graph input, an extern kernel (mm, convolution, attention,
collectives, custom ops) or a view of one, and every use of its result is a graph output, an
extern kernel or a view leading only to those.

It is a post-grad custom pass with a uuid, so the FX graph cache keeps working; it runs after a
pass the user had installed there, which it keeps.
"""
import contextlib
import os

import torch
from torch._inductor import config
from torch._inductor.custom_graph_pass import CustomGraphPass, get_hash_for_files

aten = torch.ops.aten
_ops = torch.ops.torch_transpose

# Ops that only reinterpret their input: a copy reached through them reads or feeds the same
# memory as through their source.
VIEWS = {aten.view.default, aten.reshape.default, aten._unsafe_view.default, aten.permute.default,
         aten.expand.default, aten.slice.Tensor, aten.select.int, aten.unsqueeze.default,
         aten.squeeze.dim, aten.squeeze.dims, aten.squeeze.default, aten.as_strided.default,
         aten.alias.default}
# Ops that Inductor runs as library calls, never fused with a neighbour.
EXTERN = {aten.mm.default, aten.addmm.default, aten.bmm.default, aten.baddbmm.default,
          aten.convolution.default, aten.convolution_backward.default, aten._scaled_mm.default,
          aten._scaled_dot_product_flash_attention.default,
          aten._scaled_dot_product_efficient_attention.default,
          aten._scaled_dot_product_cudnn_attention.default,
          aten._flash_attention_forward.default, aten._efficient_attention_forward.default,
          aten._fft_r2c.default, aten._fft_c2c.default, aten._fft_c2r.default}
MEMORY_FORMATS_OF_RANK = {4: torch.channels_last, 5: torch.channels_last_3d}


def _is_extern(node):
    if node.op != "call_function":
        return False
    target = node.target
    if target in EXTERN:
        return True
    # Ops outside aten and prims (collectives, our ops, users' custom ops) are never lowered to
    # fused kernels.
    return isinstance(target, torch._ops.OpOverload) and target.namespace not in ("aten", "prims")


def _source_fuses_with_nothing(node):
    """The copy's input comes from a graph input or an extern kernel, through views only."""
    while node.op == "call_function" and node.target in VIEWS:
        node = node.args[0]
    return node.op == "placeholder" or _is_extern(node)


def _uses_fuse_with_nothing(node):
    """Every use of node's result is a graph output, an extern kernel, or a view leading only to those."""
    for user in node.users:
        if user.op == "output" or _is_extern(user):
            continue
        if user.op == "call_function" and user.target in VIEWS and user.args[0] is node and _uses_fuse_with_nothing(user):
            continue
        return False
    return True


def _value(node):
    value = node.meta.get("val")
    return value if isinstance(value, torch.Tensor) else None


def _replacement(clone, devices):
    """(op, args) that computes the clone node, or None where the pass leaves it alone."""
    if clone.op != "call_function" or clone.target is not aten.clone.default or len(clone.args) != 1:
        return None
    result, source = _value(clone), clone.args[0]
    if result is None or result.device.type not in devices:
        return None
    memory_format = clone.kwargs.get("memory_format")
    if memory_format is torch.contiguous_format and getattr(source, "target", None) is aten.permute.default:
        base, dims = source.args[0], [int(d) % result.dim() for d in source.args[1]]
        if dims == sorted(dims):  # the identity: no layout change
            return None
        if not (_source_fuses_with_nothing(base) and _uses_fuse_with_nothing(clone)):
            return None
        return _ops.permute.default, (base, dims)
    if memory_format is not None and memory_format is MEMORY_FORMATS_OF_RANK.get(result.dim()):
        if not (_source_fuses_with_nothing(source) and _uses_fuse_with_nothing(clone)):
            return None
        return _ops.to_memory_format.default, (source, memory_format)
    return None


def rewrite_layout_copies(graph, devices=("cuda",)):
    """Rewrites the graph's layout copies that fuse with nothing into our ops; returns how many."""
    devices = set(devices)
    rewritten = 0
    for clone in list(graph.nodes):
        replacement = _replacement(clone, devices)
        if replacement is None:
            continue
        op, args = replacement
        source = clone.args[0]
        with graph.inserting_before(clone):
            ours = graph.call_function(op, args)
        ours.meta.update(clone.meta)
        clone.replace_all_uses_with(ours)
        graph.erase_node(clone)
        if source.op == "call_function" and source.target is aten.permute.default and not source.users:
            graph.erase_node(source)
        rewritten += 1
    return rewritten


class LayoutCopyPass(CustomGraphPass):
    """The pass as Inductor's post-grad custom pass: runs the pass that was installed before it
    (if any), then rewrites layout copies on `devices`."""

    def __init__(self, devices, previous=None):
        self.devices = tuple(sorted(set(devices)))
        self.previous = previous

    def __call__(self, graph):
        if self.previous is not None:
            self.previous(graph)
        rewrite_layout_copies(graph, self.devices)

    def uuid(self):
        # A previous pass without a uuid opts the graph out of caching, as it would alone.
        previous = None
        if self.previous is not None:
            previous = self.previous.uuid() if hasattr(self.previous, "uuid") else None
            if previous is None:
                return None
        return ("torch_transpose.inductor_pass", get_hash_for_files((__file__,)), self.devices, previous)


def enable(devices=("cuda",)):
    """Installs the pass for graphs compiled from now on, on tensors of `devices`; keeps any pass
    already installed as Inductor's post-grad custom post pass and runs it first."""
    current = config.post_grad_custom_post_pass
    previous = current.previous if isinstance(current, LayoutCopyPass) else current
    config.post_grad_custom_post_pass = LayoutCopyPass(devices, previous)


def disable():
    """Removes the pass, leaving the pass it had found installed."""
    current = config.post_grad_custom_post_pass
    if isinstance(current, LayoutCopyPass):
        config.post_grad_custom_post_pass = current.previous


def is_enabled():
    return isinstance(config.post_grad_custom_post_pass, LayoutCopyPass)


@contextlib.contextmanager
def enabled(devices=("cuda",)):
    """The pass for what compiles inside the block; the configuration before it afterwards."""
    before = config.post_grad_custom_post_pass
    enable(devices)
    try:
        yield
    finally:
        config.post_grad_custom_post_pass = before


if os.environ.get("TORCH_TRANSPOSE_INDUCTOR_PASS") == "1":
    enable()
