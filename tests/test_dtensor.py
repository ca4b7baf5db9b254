"""Every op on DTensors (torch.distributed.tensor): the sharding rules on a fake process group
(placements, shapes, no collective), and values on real gloo ranks against native PyTorch."""
import os

import pytest
import torch
import torch.distributed as dist

import torch_transpose as tt
from helpers import assert_bits_equal, random_bits

pytestmark = pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not available")

if dist.is_available():
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor, Replicate, Shard, distribute_tensor
    from torch.distributed.tensor.debug import CommDebugMode
    from torch.distributed.tensor.placement_types import Partial


@pytest.fixture
def fake_world(request):
    """A fake process group of the given size: sharding propagation runs, values do not."""
    from torch.testing._internal.distributed.fake_pg import FakeStore
    if dist.is_initialized():
        dist.destroy_process_group()
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=request.param)
    yield request.param
    dist.destroy_process_group()


def ops_of(x, perm):
    """Each op as a function of a DTensor, with the permutation it applies."""
    rank = x.dim()
    t = list(range(rank))
    t[0], t[-1] = t[-1], t[0]
    return {
        "permute": (lambda d: tt.permute(d, perm), perm),
        "transpose": (lambda d: tt.transpose(d, 0, -1), t),
        "to_memory_format": (lambda d: tt.to_memory_format(d, torch.channels_last), list(range(rank))),
    }


def expected_placement(placement, perm):
    if isinstance(placement, Shard):
        return Shard(perm.index(placement.dim))
    return placement


@pytest.mark.parametrize("fake_world", [2, 3, 4, 5], indirect=True)
@pytest.mark.parametrize("op_name", ["permute", "transpose", "to_memory_format"])
def test_every_placement_maps_through_without_a_collective(fake_world, op_name):
    world = fake_world
    mesh = init_device_mesh("cpu", (world,))
    shape = (2 * world + 1, world + 3, 3 * world - 1, world + 2)  # uneven shards on every dim
    x = torch.randn(shape)
    perm = [2, 0, 3, 1]
    fn, applied = ops_of(x, perm)[op_name]
    placements = [Replicate(), Partial()] + [Shard(d) for d in range(x.dim())]
    for placement in placements:
        dx = distribute_tensor(x, mesh, [placement]) if not isinstance(placement, Partial) else \
            DTensor.from_local(torch.randn(shape), mesh, [placement])
        with CommDebugMode() as comms:
            y = fn(dx)
        assert isinstance(y, DTensor)
        assert comms.get_total_counts() == 0, (placement, comms.get_comm_counts())
        assert y.placements == (expected_placement(placement, applied),), (placement, y.placements)
        assert tuple(y.shape) == tuple(shape[p] for p in applied)


@pytest.mark.parametrize("fake_world", [4], indirect=True)
def test_two_dim_mesh_keeps_both_shardings(fake_world):
    mesh = init_device_mesh("cpu", (2, 2))
    dx = distribute_tensor(torch.randn(8, 6, 10), mesh, [Shard(0), Shard(2)])
    with CommDebugMode() as comms:
        y = tt.permute(dx, (2, 0, 1))
    assert comms.get_total_counts() == 0
    assert y.placements == (Shard(1), Shard(0))
    assert tuple(y.shape) == (10, 8, 6)


@pytest.mark.parametrize("fake_world", [4], indirect=True)
def test_permute_cache_tells_permutations_apart(fake_world):
    # register_sharding keys its cache on int arguments only; dims must be part of the key.
    mesh = init_device_mesh("cpu", (4,))
    dx = distribute_tensor(torch.randn(8, 6, 10), mesh, [Shard(0)])
    first, second = tt.permute(dx, [1, 0, 2]), tt.permute(dx, [2, 1, 0])
    assert first.placements == (Shard(1),) and tuple(first.shape) == (6, 8, 10)
    assert second.placements == (Shard(2),) and tuple(second.shape) == (10, 6, 8)


@pytest.mark.parametrize("fake_world", [2], indirect=True)
def test_out_variants_write_the_local_shard(fake_world):
    mesh = init_device_mesh("cpu", (2,))
    dx = distribute_tensor(torch.randn(8, 6), mesh, [Shard(1)])
    out = distribute_tensor(torch.empty(6, 8), mesh, [Shard(0)])
    with CommDebugMode() as comms:
        tt.transpose(dx, 0, 1, out=out)
        tt.permute(dx, (1, 0), out=out)
    assert comms.get_total_counts() == 0
    assert out.placements == (Shard(0),)


@pytest.mark.parametrize("fake_world", [2], indirect=True)
def test_gradients_come_back_in_the_inputs_placement(fake_world):
    mesh = init_device_mesh("cpu", (2,))
    dx = distribute_tensor(torch.randn(8, 6, 4), mesh, [Shard(0)]).requires_grad_()
    y = tt.permute(dx, (2, 0, 1))
    assert y.placements == (Shard(1),)
    # A gradient sharded as the output is: the backward permute maps it back to Shard(0).
    grad = distribute_tensor(torch.randn(4, 8, 6), mesh, [Shard(1)])
    with CommDebugMode() as comms:
        y.backward(grad)
    assert comms.get_total_counts() == 0
    assert dx.grad.placements == (Shard(0),)
    assert tuple(dx.grad.shape) == (8, 6, 4)


@pytest.mark.parametrize("fake_world", [2], indirect=True)
def test_compiled_fullgraph_on_dtensors_matches_eager(fake_world):
    mesh = init_device_mesh("cpu", (2,))
    dx = distribute_tensor(torch.randn(8, 6, 4), mesh, [Shard(0)])

    def f(d):
        return tt.transpose(tt.permute(d, (2, 0, 1)), 0, 1)

    torch._dynamo.reset()
    compiled = torch.compile(f, fullgraph=True, backend="aot_eager")(dx)
    eager = f(dx)
    assert compiled.placements == eager.placements == (Shard(0),)
    assert tuple(compiled.shape) == tuple(eager.shape)


def _full_tensor_gatherer(device, backend, world):
    """DTensor -> the whole tensor on the CPU. gloo's all-gather of CUDA tensors through DTensor's
    functional collectives crashed the ranks (torch 2.11, H100, 2026-12-06), so gloo ranks on the
    GPU gather their local results on a CPU mesh of the same group instead."""
    if device == "cuda" and backend == "gloo":
        cpu_mesh = init_device_mesh("cpu", (world,))
        return lambda d: DTensor.from_local(d.to_local().cpu(), cpu_mesh, d.placements, shape=d.shape,
                                            stride=d.stride()).full_tensor()
    return lambda d: d.full_tensor().cpu()


def _values(rank, world, port, device, backend):
    store = dist.TCPStore("127.0.0.1", port, world, is_master=rank == 0)
    dist.init_process_group(backend, store=store, rank=rank, world_size=world)
    try:
        if device == "cuda":
            torch.cuda.set_device(0)
        mesh = init_device_mesh(device, (world,))
        full_tensor = _full_tensor_gatherer(device, backend, world)
        generator = torch.Generator().manual_seed(0)
        for dtype in (torch.float32, torch.bfloat16, torch.int8, torch.complex64):
            x = random_bits((7, 5, 9, 4), dtype, "cpu", generator).to(device)
            for placement in [Replicate()] + [Shard(d) for d in range(x.dim())]:
                dx = distribute_tensor(x, mesh, [placement])
                checks = {
                    "permute": (tt.permute(dx, (2, 0, 3, 1)), x.permute(2, 0, 3, 1).contiguous()),
                    "transpose": (tt.transpose(dx, 1, 3), x.transpose(1, 3).contiguous()),
                    "to_memory_format": (tt.to_memory_format(dx, torch.channels_last),
                                         x.contiguous(memory_format=torch.channels_last)),
                }
                for name, (got, want) in checks.items():
                    assert_bits_equal(full_tensor(got), want.cpu())
                out = distribute_tensor(torch.empty(9, 7, 4, 5, dtype=dtype, device=device), mesh,
                                        [expected_placement(placement, [2, 0, 3, 1])])
                tt.permute(dx, (2, 0, 3, 1), out=out)
                assert_bits_equal(full_tensor(out), x.permute(2, 0, 3, 1).contiguous().cpu())
        dist.barrier()  # no rank tears its group down while another still talks to it
    finally:
        dist.destroy_process_group()
    # Every check passed. Leave without the interpreter's exit-time teardown, where gloo's
    # threads aborted a rank about once in twenty runs ("terminate called without an active
    # exception") after its work was done and checked.
    os._exit(0)


def free_port():
    """A loopback port nobody listens on now, for the ranks' store."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_ranks(tmp_path, device, backend="gloo", world=2):
    import torch.multiprocessing as mp
    mp.spawn(_values, args=(world, free_port(), device, backend), nprocs=world, join=True)


def test_gloo_two_ranks_values_are_bit_exact(tmp_path):
    _run_ranks(tmp_path, "cpu")


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_gloo_two_ranks_share_the_gpu_and_values_are_bit_exact(tmp_path):
    _run_ranks(tmp_path, "cuda")


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_nccl_one_rank_mesh_values_are_bit_exact(tmp_path):
    _run_ranks(tmp_path, "cuda", backend="nccl", world=1)
