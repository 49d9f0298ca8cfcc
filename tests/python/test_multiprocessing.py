"""oneflow.multiprocessing.spawn / start_processes: fn(i, *args) in fresh processes, failures
raised in the parent with the child's traceback or exit code, as torch.multiprocessing."""

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
