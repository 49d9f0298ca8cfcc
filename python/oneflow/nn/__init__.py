"""oneflow.nn: Module, Parameter, the layers, init and utils."""

from oneflow.nn import (  # noqa: F401
    attention,  # noqa: E402,F401
    functional,
    image,
    init,
    parallel,
    utils,
)
from oneflow.nn._margin_coinflip import CoinFlip, CombinedMarginLoss  # noqa: F401
from oneflow.nn._quantization import (  # noqa: F401
    FakeQuantization,
    FusedBatchNorm1d,
    FusedBatchNorm2d,
    FusedBatchNorm3d,
    MinMaxObserver,
    MovingAverageMinMaxObserver,
    QatConv1d,
    QatConv2d,
    QatConv3d,
    Quantization,
)
from oneflow.nn.graph import Graph  # noqa: F401
from oneflow.nn.modules.adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: F401
from oneflow.nn.modules.container import (  # noqa: F401
    Container,
    ModuleDict,
    ModuleList,
    ParameterDict,
    ParameterList,
    Sequential,
)
from oneflow.nn.modules.dataset import (  # noqa: F401
    COCOReader,
    CropMirrorNormalize,
    OFRecordBytesDecoder,
    OFRecordImageDecoder,
    OFRecordImageDecoderRandomCrop,
    OFRecordRawDecoder,
    OFRecordReader,
)
from oneflow.nn.modules.extra import *  # noqa: F401,F403
from oneflow.nn.modules.extra2 import *  # noqa: F401,F403
from oneflow.nn.modules.fractional import FractionalMaxPool2d, FractionalMaxPool3d  # noqa: F401
from oneflow.nn.modules.layers import *  # noqa: F401,F403
from oneflow.nn.modules.lazy import *  # noqa: F401,F403
from oneflow.nn.modules.loss import *  # noqa: F401,F403
from oneflow.nn.modules.module import Module  # noqa: F401
from oneflow.nn.modules.rnn import (  # noqa: F401
    GRU,
    LSTM,
    RNN,
    GRUCell,
    LSTMCell,
    RNNBase,
    RNNCell,
    RNNCellBase,
)
from oneflow.nn.modules.sync_batch_norm import SyncBatchNorm  # noqa: F401
from oneflow.nn.parallel import DataParallel  # noqa: F401
from oneflow.nn.parameter import (  # noqa: F401
    Buffer,
    Parameter,
    UninitializedBuffer,
    UninitializedParameter,
)
