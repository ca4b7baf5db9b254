"""Tensor-parallel attention whose head split and merge are torch_transpose ops on DTensors.

The q, k and v projections are column-parallel and the output projection row-parallel
(torch.distributed.tensor.parallel), so every rank holds its share of the heads; the split
(B, S, H, D) -> (B, H, S, D) and the merge back run our kernel on each rank's local shard,
with no collective. The result is compared with the same model on one process.

    python examples/python/tensor_parallel_attention.py                  # CPU, gloo, 2 ranks
    python examples/python/tensor_parallel_attention.py --device cuda    # NCCL, one rank per GPU
"""
import argparse
import os
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.distributed.tensor import DTensor

import torch_transpose as tt


class Attention(nn.Module):
    def __init__(self, dim=64, heads=8):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.q, self.k, self.v, self.out = (nn.Linear(dim, dim) for _ in range(4))

    def split_heads(self, x):  # (B, S, H*D) -> (B, H, S, D)
        b, s, _ = x.shape
        return tt.permute(x.view(b, s, -1, self.head_dim), (0, 2, 1, 3))

    def forward(self, x):
        q, k, v = self.split_heads(self.q(x)), self.split_heads(self.k(x)), self.split_heads(self.v(x))
        # Attention is local to each head: on DTensors sharded by head, each rank computes its
        # own heads and the result is that rank's shard of the heads again.
        local = [t.to_local() if isinstance(t, DTensor) else t for t in (q, k, v)]
        scores = torch.softmax(local[0] @ tt.transpose(local[1], -2, -1) / self.head_dim ** 0.5, dim=-1)
        heads = scores @ local[2]
        if isinstance(q, DTensor):
            heads = DTensor.from_local(heads, q.device_mesh, q.placements)
        merged = tt.permute(heads, (0, 2, 1, 3))  # (B, S, H, D)
        b, s = merged.shape[:2]
        return self.out(merged.reshape(b, s, -1))


def run_rank(rank, world, device, port, result_path):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Shard
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

    backend = "nccl" if device == "cuda" else "gloo"
    store = dist.TCPStore("127.0.0.1", port, world, is_master=rank == 0)
    dist.init_process_group(backend, store=store, rank=rank, world_size=world)
    try:
        if device == "cuda":
            torch.cuda.set_device(rank)
        torch.manual_seed(0)
        model = Attention().to(device)
        reference = Attention().to(device)
        reference.load_state_dict(model.state_dict())
        x = torch.randn(2, 16, 64, device=device)
        mesh = init_device_mesh(device, (world,))
        # Keep the projections' outputs as DTensors sharded on the head dim, so that the head
        # split and merge run on DTensors.
        column = ColwiseParallel(use_local_output=False)
        parallelize_module(model, mesh, {"q": column, "k": column, "v": column,
                                         "out": RowwiseParallel(input_layouts=Shard(-1))})
        got = model(x)
        want = reference(x)
        error = (got - want).abs().max().item()
        if rank == 0:
            with open(result_path, "w") as f:
                f.write(f"{error}\n")
        assert error < 1e-4, f"rank {rank}: tensor-parallel output differs from one process by {error}"
        dist.barrier()  # no rank tears its group down while another still talks to it
    finally:
        dist.destroy_process_group()
    # Checked and done: skip the interpreter's exit-time teardown, where gloo's threads can abort.
    os._exit(0)


def free_port():
    """A loopback port nobody listens on now, for the ranks' store."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--world", type=int, default=None, help="ranks (default: 2 on the CPU, every GPU on CUDA)")
    args = parser.parse_args()
    world = args.world or (torch.cuda.device_count() if args.device == "cuda" else 2)
    with tempfile.TemporaryDirectory() as tmp:
        result = os.path.join(tmp, "result")
        mp.spawn(run_rank, args=(world, args.device, free_port(), result), nprocs=world, join=True)
        with open(result) as f:
            error = float(f.read())
    print(f"tensor-parallel attention on {world} {args.device} rank(s): max difference from one process {error:.2e}")


if __name__ == "__main__":
    main()
