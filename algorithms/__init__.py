"""Built-in algorithm definitions, one module each, registered through the plugin hooks."""

BUILTIN_MODULES = (
    "gswitch.algorithms.bfs",
    "gswitch.algorithms.sssp",
    "gswitch.algorithms.cc",
    "gswitch.algorithms.pagerank",
    "gswitch.algorithms.kcore",
    "gswitch.algorithms.mis",
)
