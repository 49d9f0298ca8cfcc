"""oneflow.optim: optimizers and learning-rate schedulers."""

from oneflow.optim import lr_scheduler, swa_utils
from oneflow.optim.algorithms import LAMB, LBFGS, SGD, Adadelta, Adagrad, Adam, AdamW, RMSprop
from oneflow.optim.algorithms_extra import (
    ASGD,
    Adafactor,
    Adamax,
    NAdam,
    RAdam,
    Rprop,
    SparseAdam,
)
from oneflow.optim.optimizer import Optimizer

__all__ = [
    "ASGD",
    "LAMB",
    "LBFGS",
    "SGD",
    "Adadelta",
    "Adafactor",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "NAdam",
    "Optimizer",
    "RAdam",
    "RMSprop",
    "Rprop",
    "SparseAdam",
    "lr_scheduler",
    "swa_utils",
]
