"""Running the order-free algorithms under a driving strategy, checked against scipy.

BFS, SSSP and CC by label propagation reduce with ``min`` into ``e.dst`` and read no step
number, so any order of updates reaches the same answer: the algorithms that spatial
local iteration, kernel unrolling and asynchronous driving accept. A driving plugin's
own tests can run them the same way::

    from gswitch.testing.order_free import ORDER_FREE_OUTPUT, run_checked
    for alg in ORDER_FREE_OUTPUT:
        run_checked(alg, graph, {"driving": "my_driving"})
"""

from __future__ import annotations

from typing import Any

from .reference import compare, reference

__all__ = ["ORDER_FREE_OUTPUT", "WORKLISTS", "run_checked"]

#: The order-free algorithms and the field that holds each one's answer.
ORDER_FREE_OUTPUT = {"bfs": "depth", "sssp": "dist", "cc": "comp"}
#: The built-in worklists, each of which may seed or take the pushes of a driving style.
WORKLISTS = ("atomic", "warp_aggregated", "block_aggregated", "chunked", "hierarchical",
             "bitmap", "prefix_sum")


def run_checked(algorithm: str, graph: Any, config: dict[str, Any],
                backend: str = "cpu") -> Any:
    """Run ``algorithm`` (one of :data:`ORDER_FREE_OUTPUT`) on ``graph`` with ``config``
    (push direction added; CC as label propagation; BFS and SSSP from node 0) and assert
    that the answer is the reference's.

    Parameters
    ----------
    algorithm : str
        ``"bfs"``, ``"sssp"`` or ``"cc"``.
    graph : Graph
        The graph.
    config : dict
        Configuration keys, the driving strategy's among them.
    backend : str
        ``"cpu"`` or ``"gpu"``.

    Returns
    -------
    Result
        The run's result.

    Raises
    ------
    AssertionError
        The answer differs from scipy's.
    """
    import gswitch as gs

    kw = {} if algorithm == "cc" else {"source": 0}
    extra = {"variant": "label_propagation"} if algorithm == "cc" else {}
    r = gs.run(algorithm, graph, backend=backend,
               config={"direction": "push", **extra, **config}, **kw)
    problem = compare(algorithm, r.fields[ORDER_FREE_OUTPUT[algorithm]],
                      reference(algorithm, graph, **kw))
    assert problem is None, (algorithm, graph.name, config, problem)
    return r
