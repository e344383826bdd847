"""Built-in algorithm definitions, one module each, registered through the plugin hooks."""

BUILTIN_MODULES = (
    "gswitch.algorithms.bfs",
    "gswitch.algorithms.sssp",
    "gswitch.algorithms.cc",
    "gswitch.algorithms.pagerank",
    "gswitch.algorithms.triangles",
    "gswitch.algorithms.ppr",
    "gswitch.algorithms.betweenness",
    "gswitch.algorithms.betweenness_weighted",
    "gswitch.algorithms.kcore",
    "gswitch.algorithms.mis",
    "gswitch.algorithms.lpa",
    "gswitch.algorithms.scc",
    "gswitch.algorithms.msf",
    "gswitch.algorithms.msbfs",
    "gswitch.algorithms.overlay",
)
