"""flow.utils.data: datasets, samplers, collate, and the DataLoader in one process and with
worker processes (order, seeding, errors, crashed workers)."""

import collections
import os
import signal

import numpy as np
import pytest

import oneflow as flow
from oneflow.utils.data import (
    BatchSampler,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    get_worker_info,
    random_split,
)


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"x": np.full(3, i, dtype=np.float32), "y": i * i, "name": f"item{i}"}


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __iter__(self):
        info = get_worker_info()
        wid, nw = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(wid, self.n, nw))


class Failing(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            raise ValueError("bad sample 5")
        return i


class Crashing(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 3:
            os.kill(os.getpid(), signal.SIGKILL)
        return i


def test_datasets():
    x, y = flow.arange(10.0).reshape(5, 2), flow.arange(5)
    ds = TensorDataset(x, y)
    assert len(ds) == 5 and ds[2][1].item() == 2
    cat = ConcatDataset([ds, ds])
    assert len(cat) == 10 and cat[7][1].item() == 2 and cat[-1][1].item() == 4
    sub = Subset(ds, [4, 0])
    assert sub[0][1].item() == 4
    flow.manual_seed(0)
    a, b = random_split(range(10), [7, 3])
    assert len(a) == 7 and sorted(list(a) + list(b)) == list(range(10))
    c, d = random_split(range(10), [0.5, 0.5])
    assert len(c) == len(d) == 5


def test_samplers():
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3]
    flow.manual_seed(1)
    perm = list(RandomSampler(range(10)))
    assert sorted(perm) == list(range(10)) and perm != list(range(10))
    g = flow.Generator()
    g.manual_seed(3)
    r1 = list(RandomSampler(range(10), generator=g))
    g.manual_seed(3)
    assert list(RandomSampler(range(10), generator=g)) == r1
    assert len(list(RandomSampler(range(5), replacement=True, num_samples=12))) == 12
    assert sorted(SubsetRandomSampler([5, 7, 9])) == [5, 7, 9]
    w = list(WeightedRandomSampler([0.0, 0.0, 1.0], 20))
    assert w == [2] * 20
    assert list(BatchSampler(range(7), 3, False)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert len(BatchSampler(range(7), 3, True)) == 2


def test_default_collate():
    Point = collections.namedtuple("Point", ["a", "b"])
    out = default_collate([Point(1, np.ones(2)), Point(2, np.zeros(2))])
    assert isinstance(out, Point) and out.a.numpy().tolist() == [1, 2]
    assert tuple(out.b.shape) == (2, 2)
    batch = default_collate([{"t": flow.ones(2), "s": "a", "f": 0.5}] * 3)
    assert tuple(batch["t"].shape) == (3, 2) and batch["s"] == ["a"] * 3
    assert batch["f"].dtype == flow.float64


@pytest.mark.parametrize("num_workers", [0, 2])
def test_loader_order_and_batching(num_workers):
    dl = DataLoader(Squares(10), batch_size=4, num_workers=num_workers)
    batches = list(dl)
    assert len(batches) == len(dl) == 3
    assert [b["y"].numpy().tolist() for b in batches] == [[0, 1, 4, 9], [16, 25, 36, 49], [64, 81]]
    assert batches[0]["name"] == ["item0", "item1", "item2", "item3"]
    assert tuple(batches[1]["x"].shape) == (4, 3)
    dl = DataLoader(Squares(10), batch_size=4, drop_last=True, num_workers=num_workers)
    assert len(list(dl)) == 2


@pytest.mark.parametrize("num_workers", [0, 2])
def test_loader_shuffle_is_seeded(num_workers):
    def order(seed):
        g = flow.Generator()
        g.manual_seed(seed)
        dl = DataLoader(
            Squares(12), batch_size=3, shuffle=True, generator=g, num_workers=num_workers
        )
        return [v for b in dl for v in b["y"].numpy().tolist()]

    assert order(5) == order(5)
    assert sorted(order(5)) == sorted(i * i for i in range(12))


def test_iterable_dataset_with_workers():
    out = [
        v for b in DataLoader(Stream(10), batch_size=2, num_workers=2) for v in b.numpy().tolist()
    ]
    assert sorted(out) == list(range(10))
    single = list(DataLoader(Stream(5), batch_size=None))
    assert single == [0, 1, 2, 3, 4]


def test_worker_init_and_persistent_workers():
    seen = []
    dl = DataLoader(
        Squares(6),
        batch_size=2,
        num_workers=2,
        persistent_workers=True,
        worker_init_fn=lambda wid: np.random.seed(wid),
        prefetch_factor=1,
    )
    for _ in range(2):
        seen.append([b["y"].numpy().tolist() for b in dl])
    assert seen[0] == seen[1] == [[0, 1], [4, 9], [16, 25]]
    dl._workers.shutdown()


def test_persistent_workers_start_each_pass_afresh():
    # An iterable dataset is iterated again in every pass, not only in the first.
    dl = DataLoader(Stream(6), batch_size=2, num_workers=2, persistent_workers=True)
    passes = [sorted(v for b in dl for v in b.numpy().tolist()) for _ in range(2)]
    assert passes == [list(range(6)), list(range(6))]
    dl._workers.shutdown()
    # Batches still in flight when a pass is left early do not leak into the next pass.
    g = flow.Generator().manual_seed(0)
    dl = DataLoader(
        Squares(40),
        batch_size=4,
        shuffle=True,
        num_workers=2,
        persistent_workers=True,
        generator=g,
    )
    for i, _ in enumerate(dl):
        if i == 1:
            break
    batches = [b["y"].numpy().tolist() for b in dl]
    assert sorted(v for b in batches for v in b) == [i * i for i in range(40)]
    dl._workers.shutdown()


def test_worker_error_is_reraised_with_traceback():
    with pytest.raises(ValueError, match="bad sample 5") as e:
        list(DataLoader(Failing(), batch_size=2, num_workers=2))
    assert "DataLoader worker process" in str(e.value)
    with pytest.raises(ValueError, match="bad sample 5"):
        list(DataLoader(Failing(), batch_size=2))


def test_crashed_worker_raises_instead_of_hanging():
    with pytest.raises(RuntimeError, match="exited unexpectedly"):
        list(DataLoader(Crashing(), batch_size=1, num_workers=2))


def test_argument_errors():
    with pytest.raises(ValueError, match="mutually exclusive"):
        DataLoader(range(4), sampler=SequentialSampler(range(4)), shuffle=True)
    with pytest.raises(ValueError, match="num_workers"):
        DataLoader(range(4), num_workers=-1)
    with pytest.raises(ValueError, match="prefetch_factor"):
        DataLoader(range(4), prefetch_factor=2)


def test_pin_memory_without_an_accelerator_warns_like_torch_and_loads():
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loader = flow.utils.data.DataLoader(list(range(4)), batch_size=2, pin_memory=True)
    if not flow.cuda.is_available():
        assert any("no accelerator is found" in str(w.message) for w in caught)
    assert [b.tolist() for b in loader] == [[0, 1], [2, 3]]


class Images(Dataset):
    """Samples large enough to cross in shared memory: a tensor, an array and a label."""

    def __init__(self, n, shape=(3, 40, 40)):
        self.n, self.shape = n, shape

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        x = flow.full(self.shape, float(i))
        return {"x": x, "a": np.full(self.shape, i, dtype=np.int16), "i": i}


def _check_images(batch):
    idx = batch["i"].numpy()
    np.testing.assert_array_equal(batch["x"].numpy()[:, 0, 0, 0], idx.astype(np.float32))
    assert (batch["x"].numpy() == idx[:, None, None, None]).all()
    assert batch["a"].dtype == flow.int16
    assert (batch["a"].numpy() == idx[:, None, None, None]).all()
    return idx.tolist()


def test_worker_batches_in_shared_memory_stay_intact_across_passes():
    # Note [DataLoader shared memory]: segments are reused once the main process has copied a
    # batch out; batches of another size (the last one) take other segments; a pass left early
    # gives its in-flight segments back.
    from oneflow.utils.data import dataloader as dl_module

    dl = DataLoader(Images(45), batch_size=8, shuffle=True, num_workers=2, persistent_workers=True)
    kept = []
    for epoch in range(4):
        seen = []
        for k, batch in enumerate(dl):
            seen += _check_images(batch)
            kept.append(batch)  # batches are the main process's own copies
            if epoch == 1 and k == 1:
                break
        if epoch != 1:
            assert sorted(seen) == list(range(45))
    for batch in kept:
        _check_images(batch)
    maps = dict(dl._workers.maps)
    # reused: 48 tensors crossed (4 passes, 6 batches, 2 tensors each) in a few segments
    assert maps and len(maps) <= 20
    dl._workers.shutdown()
    assert not dl._workers.maps
    # in the main process default_collate stacks as usual
    assert dl_module._pool is None
    out = default_collate([flow.ones(2, 64, 64), flow.zeros(2, 64, 64)])
    assert out.shape == (2, 2, 64, 64)


def test_worker_batches_from_custom_collate_cross_in_shared_memory():
    def collate(items):
        x = default_collate([it["x"] for it in items]) * 2  # a new tensor, not the segment
        return x, [it["i"] for it in items]

    dl = DataLoader(Images(20), batch_size=5, num_workers=2, collate_fn=collate)
    for x, idx in dl:
        assert (x.numpy() == 2 * np.array(idx, np.float32)[:, None, None, None]).all()
