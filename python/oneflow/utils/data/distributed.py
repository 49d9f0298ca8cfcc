"""DistributedSampler: each of num_replicas processes iterates over its own 1/num_replicas of a
dataset, the shares disjoint and (with padding) of equal length, shuffled alike on every
process by a generator seeded with seed + epoch."""

import math

import oneflow
from oneflow.utils.data.sampler import Sampler


class DistributedSampler(Sampler):
    def __init__(
        self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False
    ):
        # Without arguments: the run's world size and rank (from the communicator once it is
        # initialised, else from the launcher's variables).
        if num_replicas is None:
            num_replicas = oneflow.env.get_world_size()
        if rank is None:
            rank = oneflow.env.get_rank()
        if not isinstance(num_replicas, int) or num_replicas < 1:
            raise ValueError(
                f"DistributedSampler: num_replicas should be a positive integer, got {num_replicas}"
            )
        if rank >= num_replicas or rank < 0:
            raise ValueError(
                f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]"
            )
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.shuffle, self.seed, self.drop_last = 0, shuffle, seed, drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            # Drop the tail so every replica gets the same number of samples.
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            g = oneflow.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = oneflow.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if self.drop_last:
            indices = indices[: self.total_size]
        else:
            # Pad by repeating from the start, so the shares have equal length.
            padding = self.total_size - len(indices)
            if padding > 0 and indices:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        return iter(indices[self.rank : self.total_size : self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Sets the epoch: with shuffle=True each epoch has its own order (the same on every
        replica)."""
        self.epoch = epoch
