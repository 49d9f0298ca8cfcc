"""oneflow.multiprocessing.spawn / start_processes: fn(i, *args) in fresh processes, failures
raised in the parent with the child's traceback or exit code, as torch.multiprocessing."""

import mp_spawn_helpers
import numpy as np
import pytest
from mp_spawn_helpers import exit_with, fail_on_one, write_rank

import oneflow as flow
import oneflow.multiprocessing as mp


def test_spawn_runs_each_rank(tmp_path):
    assert mp.spawn(write_rank, args=(str(tmp_path), 5), nprocs=2) is None
    for i in range(2):
        assert (tmp_path / f"rank{i}.txt").read_text() == str(5.0 + i)
    ctx = mp.spawn(write_rank, args=(str(tmp_path), 7), nprocs=2, join=False)
    assert len(ctx.pids()) == 2
    while not ctx.join():
        pass
    assert (tmp_path / "rank1.txt").read_text() == "8.0"


def test_failures_are_raised_in_the_parent():
    with pytest.raises(mp.ProcessRaisedException, match="rank one failed on purpose") as e:
        mp.spawn(fail_on_one, nprocs=2)
    assert e.value.error_index == 1 and "ValueError" in str(e.value)
    with pytest.raises(mp.ProcessExitedException, match="exit code 3") as e:
        mp.spawn(exit_with, args=(3,), nprocs=2)
    assert e.value.exit_code == 3
    assert mp.get_context("spawn") is not None and hasattr(mp, "Queue")
    assert flow.multiprocessing is mp


def test_spawned_data_parallel_ranks_agree(tmp_path):
    import socket

    from mp_spawn_helpers import ddp_step

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(ddp_step, args=(2, port, str(tmp_path)), nprocs=2)
    values = [float((tmp_path / f"ddp{i}.txt").read_text()) for i in range(2)]
    assert values[0] == values[1]  # the averaged gradient gave every rank the same update


def test_share_memory_and_is_shared():
    t = flow.arange(6.0).reshape(2, 3)
    assert not t.is_shared()
    assert t.share_memory_() is t and t.is_shared()
    np.testing.assert_array_equal(t.numpy(), np.arange(6.0).reshape(2, 3))
    assert t[1].is_shared()  # views share the storage
    assert flow.empty(0).share_memory_().numel() == 0
    p = flow.nn.Parameter(flow.ones(3))
    p.share_memory_()
    assert isinstance(p, flow.nn.Parameter) and p.is_shared() and p.requires_grad
    (p * 2).sum().backward()
    np.testing.assert_array_equal(p.grad.numpy(), [2.0, 2.0, 2.0])
    m = flow.nn.Sequential(flow.nn.Linear(3, 2), flow.nn.BatchNorm1d(2))
    assert m.share_memory() is m
    assert all(x.is_shared() for x in list(m.parameters()) + list(m.buffers()))
    with pytest.raises(RuntimeError, match="global"):
        flow.ones(2, placement=flow.placement("cpu", [0]), sbp=flow.sbp.broadcast).share_memory_()


def _fork_child(t, p):
    t.add_(1.0)
    p.data.mul_(2.0)


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_tensors_cross_processes_as_shared_memory(method, tmp_path):
    ctx = mp.get_context(method)
    if method == "fork":
        t, p = flow.zeros(4).share_memory_(), flow.nn.Parameter(flow.ones(2)).share_memory_()
        proc = ctx.Process(target=_fork_child, args=(t, p))  # inherited mapping
        proc.start()
        proc.join()
        assert proc.exitcode == 0
        np.testing.assert_array_equal(t.numpy(), [1.0] * 4)
        np.testing.assert_array_equal(p.detach().numpy(), [2.0, 2.0])
        return
    # spawn: the arguments are pickled; tensors travel as shared memory (not shared yet: moved)
    t = flow.zeros(2)
    model = flow.nn.Linear(2, 1)
    before = model.weight.detach().numpy().copy()
    mp.spawn(mp_spawn_helpers.add_to_shared, args=(t, model), nprocs=2)
    assert t.is_shared()
    np.testing.assert_array_equal(t.numpy(), [10.0, 20.0])
    np.testing.assert_allclose(model.weight.detach().numpy(), before + 2.0)


def test_hogwild_training_updates_the_shared_model():
    flow.manual_seed(0)
    model = flow.nn.Linear(4, 1)
    model.share_memory()
    start = model.weight.detach().numpy().copy()
    mp.spawn(mp_spawn_helpers.hogwild_train, args=(model, 40), nprocs=2)
    w = model.weight.detach().numpy()
    assert not np.allclose(w, start)
    # both processes descended toward the same target weights
    target = np.array([[1.0, -2.0, 0.5, 3.0]])
    assert np.abs(w - target).sum() < np.abs(start - target).sum() / 2


def test_non_leaf_tensor_with_grad_is_refused_by_the_pickler():
    import io
    from multiprocessing.reduction import ForkingPickler

    x = flow.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="non-leaf"):
        ForkingPickler(io.BytesIO()).dump(x)
