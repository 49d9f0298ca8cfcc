"""torch.nn.utils.convert_parameters: parameters to one vector and back."""

from oneflow.nn.utils import parameters_to_vector, vector_to_parameters  # noqa: F401
