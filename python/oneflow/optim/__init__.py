"""oneflow.optim: optimizers and learning-rate schedulers."""

from oneflow.optim import lr_scheduler
from oneflow.optim.algorithms import LAMB, LBFGS, SGD, Adadelta, Adagrad, Adam, AdamW, RMSprop
from oneflow.optim.optimizer import Optimizer

__all__ = [
    "LAMB",
    "LBFGS",
    "SGD",
    "Adadelta",
    "Adagrad",
    "Adam",
    "AdamW",
    "Optimizer",
    "RMSprop",
    "lr_scheduler",
]
