"""oneflow.nn.graph: nn.Graph, recorded-and-replayed static graphs (graph.py), their settings
(graph_config.py), the module proxy (graph_block.py) and graph-mode optimizer updates
(optimizer_update.py)."""

from oneflow.nn.graph.graph import Graph
from oneflow.nn.graph.graph_block import GraphModule
from oneflow.nn.graph.graph_config import GraphConfig

__all__ = ["Graph", "GraphConfig", "GraphModule"]
