"""The deprecated non-underscore initialisers that torch.nn.init still carries for eye_ and
dirac_: they warn (FutureWarning) and forward to the in-place forms."""

import warnings

from oneflow.nn.init import dirac_, eye_

__all__ = ["dirac", "eye"]


def _deprecated(method):
    new_name = method.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(
            f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.",
            FutureWarning,
            stacklevel=2,
        )
        return method(*args, **kwargs)

    deprecated_init.__name__ = old_name
    deprecated_init.__doc__ = f"See :func:`~oneflow.nn.init.{new_name}`."
    return deprecated_init


eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
