"""gswitch: irregular graph algorithms on GPUs, with execution strategies tuned per graph.

Write an algorithm once as operators over active nodes (:func:`algorithm`,
:class:`NodeField`, :func:`edge_op`), run it with :func:`run` on the CPU engine or a
GPU, and choose how it executes with a :class:`Config` of strategy plugins. Graphs come
from files (:func:`load_graph`, :func:`save_graph`), generators
(:mod:`gswitch.generators`), networkx or scipy.sparse (:func:`as_graph`).
"""

from ._version import __version__
from .algorithm import (
    INF,
    NODE_ID,
    AlgorithmSpec,
    EdgeField,
    HostEdges,
    HostStep,
    NodeField,
    Param,
    RawOperator,
    StepTotal,
    algorithm,
    all_nodes,
    chosen_nodes,
    edge_op,
    from_source,
    host_step,
    node_op,
    per_node_input,
    raw_edge_op,
    stage,
)
from .config import DEFAULTS, Config
from .errors import (
    AlgorithmError,
    DeadlineExceeded,
    DeviceError,
    GraphFormatError,
    GswitchError,
    InvalidConfig,
    InvalidGraph,
    InvalidInput,
    KernelCompileError,
    PluginError,
)
from .expr import maximum, minimum, where
from .graph import Graph
from .hookspecs import hookimpl
from .io import load_graph, save_graph
from .result import Result
from .runner import as_graph, gpu_available, release, run

__all__ = [
    "__version__",
    "Graph",
    "load_graph",
    "save_graph",
    "as_graph",
    "run",
    "release",
    "Result",
    "Config",
    "DEFAULTS",
    "gpu_available",
    "algorithm",
    "AlgorithmSpec",
    "NodeField",
    "EdgeField",
    "HostEdges",
    "Param",
    "StepTotal",
    "INF",
    "NODE_ID",
    "from_source",
    "all_nodes",
    "per_node_input",
    "chosen_nodes",
    "stage",
    "host_step",
    "HostStep",
    "edge_op",
    "node_op",
    "raw_edge_op",
    "RawOperator",
    "where",
    "minimum",
    "maximum",
    "hookimpl",
    "GswitchError",
    "GraphFormatError",
    "InvalidGraph",
    "InvalidConfig",
    "InvalidInput",
    "AlgorithmError",
    "PluginError",
    "KernelCompileError",
    "DeviceError",
    "DeadlineExceeded",
]
