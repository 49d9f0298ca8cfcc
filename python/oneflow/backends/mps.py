"""oneflow.backends.mps: Apple's Metal back end, which oneflow does not have."""


def is_available():
    return False


def is_built():
    return False
