"""oneflow.nn.image: transforms of batches of images held in TensorBuffers
(oneflow/nn/modules/dataset.py)."""

from oneflow.nn.modules.dataset import ImageBatchAlign as batch_align  # noqa: F401
from oneflow.nn.modules.dataset import ImageDecode as decode  # noqa: F401
from oneflow.nn.modules.dataset import ImageFlip as flip  # noqa: F401
from oneflow.nn.modules.dataset import ImageNormalize as normalize  # noqa: F401
from oneflow.nn.modules.dataset import ImageResize as Resize  # noqa: F401
