"""Randomized differential sweep of the ``gswitch`` networkx backend against networkx.

Draws small graphs of every networkx class (self loops, isolated nodes, empty and
one-node graphs, several components, views: subgraphs, reversed and undirected ones;
integer, string, tuple and mixed node labels added in shuffled order; weights missing,
zero, integer, float, tiny, huge, infinite, negative, NaN, NumPy scalars, past int64 or
not numbers, under ``weight`` or another name) and calls every function the backend
lists in ``get_info()`` with arguments at their edges (sources not in the graph or
unhashable, ``cutoff=0``, negative and fractional cutoffs and depths, ``k=0``, callable
weights, ...). Each call runs in networkx, and as a networkx user gets it with
``nx.config.backend_priority = ["gswitch"]`` (the small-graph ``should_run`` threshold
lifted, so gswitch takes every call it accepts); with ``--explicit``, also with
``backend="gswitch"``, where a ``NotImplementedError`` (a documented refusal) is allowed.

The answers must be equal (floats within a relative 1e-6, PageRank's float32 ranks
within 2e-6; dicts that networkx keys in the graph's or ``G.edges``' order in that
order), an exception must be met by one of its type (or a subclass), a call gswitch
declined must give networkx's very answer, and where the answer is not unique (strongly
connected components' order, asynchronous label propagation) it must be valid; Prim's
and Boruvka's forests must be networkx's Kruskal forest, as documented. A second phase
calls a function, changes the graph through networkx's API, and calls it again, on the
graph and on a subgraph view taken before the change.

Run by ``tests/test_nx_backend_sweep.py`` with a small fixed budget. A longer sweep::

    python tests/nx_sweep.py --graphs 1000 --seed 7 --explicit

prints the calls made, how many gswitch answered and declined, and every mismatch with a
reproducer; exits 1 when any call mismatched.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import numbers
import random
import sys
from collections.abc import Callable, Iterator
from typing import Any

import networkx as nx
import numpy as np

from gswitch.nxbackend import BackendInterface, _dispatch
from gswitch.nxbackend._info import FUNCTIONS

_COMMUNITY = ("label_propagation_communities", "asyn_lpa_communities")

#: a node that no drawn graph holds
MISSING = "not-a-node"


def _function(name: str) -> Callable:
    if name in _COMMUNITY:
        return getattr(nx.community, name)
    return getattr(nx, name)


# --------------------------------------------------------------------------- graphs

def _labels(rng: random.Random, n: int) -> list:
    scheme = rng.choice(["range", "sparse", "strings", "tuples", "mixed"])
    if scheme == "range":
        return list(range(n))
    if scheme == "sparse":
        return rng.sample(range(-50, 10_000), n)
    if scheme == "strings":
        return [f"v{i}" for i in rng.sample(range(1000), n)]
    if scheme == "tuples":
        return [(i // 3, i % 3) for i in rng.sample(range(1000), n)]
    kinds = [lambda i: i, lambda i: f"s{i}", lambda i: (i, "t"), lambda i: frozenset({i}),
             lambda i: i + 0.5]
    return [rng.choice(kinds)(i) for i in rng.sample(range(1000), n)]


def _weight_value(rng: random.Random, policy: str) -> Any:
    if policy == "int":
        return rng.randint(1, 9)
    if policy == "float":
        return rng.choice([0.5, 0.1, 1.25, 2.2, 3.3, 0.3, 7.0])
    if policy == "zero":
        return rng.choice([0, 0, 1, 2])
    if policy == "huge":
        return rng.choice([2**30, 2**40, 1e200, 3, 2**23 + 1])
    if policy == "tiny":
        return rng.choice([1e-40, 1e-50, 1e-300, 5e-324, 1.0])
    if policy == "negative":
        return rng.choice([-1, 2, 3, -0.5, 1])
    if policy == "nan":
        return rng.choice([float("nan"), 1.0, 2.0, 0.5])
    if policy == "mixed":
        return rng.choice([1, 2, 0.5, True, 3.75, 0])
    if policy == "inf":
        return rng.choice([float("inf"), 1.0, 2.5])
    if policy == "numpy":
        # not np.float32: networkx then sums in float32 (NumPy 2 keeps a Python float
        # weak), gswitch in float64, and their ties differ
        return rng.choice([np.float64(0.1), np.int64(3), np.float64(2.5), np.int8(1)])
    if policy == "bigint":
        return rng.choice([2**70, 1, 2])
    if policy == "str":
        return rng.choice(["1", 1, 2])
    raise ValueError(policy)


POLICIES = ("int", "int", "float", "float", "zero", "huge", "tiny", "negative", "nan",
            "mixed", "inf", "numpy", "bigint", "str")


#: node counts drawn (past 64 nodes, the traversals that carry 64 sources at a time take
#: several batches)
SIZES = (0, 1, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 25, 40, 40, 70, 130)


def random_graph(rng: random.Random, max_nodes: int | None = None) -> tuple[Any, str]:
    """A small random networkx graph and a one-line description of how it was drawn."""
    cls = rng.choice([nx.Graph, nx.DiGraph, nx.MultiGraph, nx.MultiDiGraph])
    n = rng.choice([k for k in SIZES if max_nodes is None or k <= max_nodes])
    names = _labels(rng, n)
    G = cls()
    # some nodes first, in shuffled order; the rest come with their edges
    first = rng.sample(names, rng.randint(0, n))
    G.add_nodes_from(first)
    density = rng.choice([0.0, 0.1, 0.2, 0.35, 0.6, 1.0])
    m = int(density * n * max(n - 1, 0) / (1 if G.is_directed() else 2))
    policy = rng.choice(POLICIES)
    attr = rng.choice(["weight", "weight", "cost"])
    missing = rng.choice([0.0, 0.0, 0.2])
    loops = rng.random() < 0.3
    for _ in range(m):
        u, v = rng.choice(names), rng.choice(names)
        if u == v and not loops:
            continue
        data = {}
        if rng.random() >= missing:
            data[attr] = _weight_value(rng, policy)
        G.add_edge(u, v, **data)
        if G.is_multigraph() and rng.random() < 0.2:
            G.add_edge(u, v, **{attr: _weight_value(rng, policy)})
    G.add_nodes_from(names)  # the isolated rest
    desc = (f"{cls.__name__} n={n} m={G.number_of_edges()} weights={policy} attr={attr} "
            f"missing={missing} loops={loops}")
    view = rng.random()
    if view < 0.06 and n:
        keep = rng.sample(names, rng.randint(1, n))
        return G.subgraph(keep), desc + f" view=subgraph({keep!r})"
    if view < 0.09 and G.is_directed():
        return G.reverse(copy=False), desc + " view=reverse(copy=False)"
    if view < 0.12 and G.is_directed():
        # the view reads u's data from u's side and v's from v's: give both directions
        # the same (with different ones networkx disagrees with itself: Dijkstra reads
        # the sides, Floyd-Warshall and PageRank one datum per edge)
        multi = G.is_multigraph()
        for u, v in set(G.edges()):
            if G.has_edge(v, u):
                datas = ([*G[u][v].values(), *G[v][u].values()] if multi
                         else [G[u][v], G[v][u]])
                first = dict(datas[0])
                for d in datas:
                    d.clear()
                    d.update(first)
        return G.to_undirected(as_view=True), desc + " view=to_undirected(as_view=True)"
    return G, desc


# ------------------------------------------------------------------------ arguments

def _node(rng: random.Random, G: Any) -> Any:
    if len(G) == 0 or rng.random() < 0.08:
        return rng.choice([MISSING, MISSING, MISSING, ["unhashable"]])
    return rng.choice(list(G))


def _weight(rng: random.Random, G: Any) -> Any:
    return rng.choice(["weight", "weight", "cost", None, "absent",
                       lambda u, v, d: 1])


def _cutoff(rng: random.Random) -> Any:
    return rng.choice([None, None, 0, 1, 2, 3, -1, 1.5, 0.5, 100])


def _nodes_arg(rng: random.Random, G: Any) -> Any:
    choice = rng.random()
    if choice < 0.35:
        return None
    if choice < 0.55:
        return _node(rng, G)
    nodes = list(G)
    picked = rng.sample(nodes, rng.randint(0, len(nodes)))
    if rng.random() < 0.2:
        picked.append(MISSING)
    return picked


def _independent_nodes(rng: random.Random, G: Any) -> Any:
    """``nodes`` of ``maximal_independent_set``: none, an independent sample (mostly),
    or nodes that are not (joined, self-looped or missing)."""
    choice = rng.random()
    if choice < 0.3 or not len(G):
        return rng.choice([None, []])
    picked: list = []
    for v in rng.sample(list(G), rng.randint(1, len(G))):
        if choice < 0.85 and any(u in picked or u == v for u in G[v]):
            continue
        picked.append(v)
    if rng.random() < 0.1:
        picked.append(MISSING)
    return picked


def _personalization(rng: random.Random, G: Any) -> Any:
    nodes = list(G)
    if not nodes or rng.random() < 0.1:
        return {MISSING: 1}
    picked = rng.sample(nodes, rng.randint(1, len(nodes)))
    return {v: rng.choice([1, 0.5, 2, 0, 3]) for v in picked}


ARGS: dict[str, Callable[[random.Random, Any], dict]] = {
    "single_source_shortest_path_length":
        lambda r, G: {"source": _node(r, G), "cutoff": _cutoff(r)},
    "all_pairs_shortest_path_length": lambda r, G: {"cutoff": _cutoff(r)},
    "all_pairs_dijkstra_path_length":
        lambda r, G: {"cutoff": _cutoff(r), "weight": _weight(r, G)},
    "floyd_warshall": lambda r, G: {"weight": _weight(r, G)},
    "closeness_centrality": lambda r, G: {
        "u": r.choice([None, None, _node(r, G)]),
        "distance": r.choice([None, None, None, "weight"]),
        "wf_improved": r.random() < 0.5},
    "bfs_layers": lambda r, G: {
        "sources": r.choice([_node(r, G), [_node(r, G), _node(r, G)], [],
                             list(G)[:3], set(list(G)[-2:])])},
    "descendants_at_distance": lambda r, G: {
        "source": _node(r, G), "distance": r.choice([0, 1, 2, 3, -1, 50, 1.5])},
    "bfs_edges": lambda r, G: {
        "source": _node(r, G), "reverse": r.random() < 0.3,
        "depth_limit": r.choice([None, None, 0, 1, 2, -1, 1.5]),
        "sort_neighbors": r.choice([None] * 5 + [sorted_by_str])},
    "bfs_tree": lambda r, G: {
        "source": _node(r, G), "reverse": r.random() < 0.3,
        "depth_limit": r.choice([None, None, 0, 1, 2, -1, 1.5]),
        "sort_neighbors": r.choice([None] * 5 + [sorted_by_str])},
    "single_source_dijkstra_path_length": lambda r, G: {
        "source": _node(r, G), "cutoff": _cutoff(r), "weight": _weight(r, G)},
    "single_source_bellman_ford_path_length": lambda r, G: {
        "source": _node(r, G), "weight": _weight(r, G)},
    "connected_components": lambda r, G: {},
    "number_connected_components": lambda r, G: {},
    "node_connected_component": lambda r, G: {"n": _node(r, G)},
    "is_connected": lambda r, G: {},
    "triangles": lambda r, G: {"nodes": _nodes_arg(r, G)},
    "maximal_independent_set": lambda r, G: {"nodes": _independent_nodes(r, G),
                                             "seed": r.randint(0, 99)},
    "transitivity": lambda r, G: {},
    "clustering": lambda r, G: {"nodes": _nodes_arg(r, G),
                                "weight": r.choice([None, None, "weight"])},
    "average_clustering": lambda r, G: {
        "nodes": r.choice([None, None, _nodes_arg(r, G)]),
        "weight": r.choice([None, None, "weight"]), "count_zeros": r.random() < 0.6},
    "betweenness_centrality": lambda r, G: {
        "k": r.choice([None, None, 0, 1, len(G), max(len(G) // 2, 1), len(G) + 1]),
        "normalized": r.random() < 0.6, "weight": r.choice([None, None, _weight(r, G)]),
        "endpoints": r.random() < 0.3, "seed": r.randint(0, 99)},
    "edge_betweenness_centrality": lambda r, G: {
        "k": r.choice([None, None, 0, 1, len(G), max(len(G) // 2, 1)]),
        "normalized": r.random() < 0.6, "weight": r.choice([None, None, _weight(r, G)]),
        "seed": r.randint(0, 99)},
    "core_number": lambda r, G: {},
    "strongly_connected_components": lambda r, G: {},
    "number_strongly_connected_components": lambda r, G: {},
    "is_strongly_connected": lambda r, G: {},
    "minimum_spanning_edges": lambda r, G: _spanning(r, G, edges=True),
    "maximum_spanning_edges": lambda r, G: _spanning(r, G, edges=True),
    "minimum_spanning_tree": lambda r, G: _spanning(r, G, edges=False),
    "maximum_spanning_tree": lambda r, G: _spanning(r, G, edges=False),
    "k_core": lambda r, G: {"k": r.choice([None, None, 0, 1, 2, 3, 10]),
                            "core_number": r.choice([None] * 4 + [
                                {v: r.randint(0, 3) for v in G}])},
    "label_propagation_communities": lambda r, G: {},
    "asyn_lpa_communities": lambda r, G: {"weight": r.choice([None, None, "weight"]),
                                          "seed": r.randint(0, 99)},
    "pagerank": lambda r, G: {
        "alpha": r.choice([0.85, 0.85, 0.5, 0.0, 0.999, 1.0]),
        "personalization": r.choice([None, None, _personalization(r, G)]),
        "max_iter": r.choice([100, 100, 100, 1, 0]),
        "tol": r.choice([1e-6, 1e-6, 1e-4, 1e-8]),
        "nstart": r.choice([None] * 6 + [_personalization(r, G)]),
        "weight": r.choice(["weight", None, "cost", "absent"]),
        "dangling": r.choice([None] * 6 + [_personalization(r, G)])},
}


def sorted_by_str(nodes: Any) -> list:
    """A ``sort_neighbors`` that sorts any hashable nodes."""
    return sorted(nodes, key=repr)


def _spanning(rng: random.Random, G: Any, *, edges: bool) -> dict:
    kw = {"algorithm": rng.choice(["kruskal", "kruskal", "prim", "boruvka", "bogus"]),
          "weight": rng.choice(["weight", "weight", "cost", None, "absent"]),
          "ignore_nan": rng.random() < 0.4}
    if edges:
        kw["keys"] = rng.random() < 0.7
        kw["data"] = rng.random() < 0.7
    return kw


# --------------------------------------------------------------------------- calling

def _materialize(value: Any) -> Any:
    if isinstance(value, nx.Graph):
        return ("graph", type(value).__name__, dict(value.graph), list(value.nodes(data=True)),
                list(value.edges(keys=True, data=True) if value.is_multigraph()
                     else value.edges(data=True)))
    if isinstance(value, dict):
        return {k: (dict(v) if isinstance(v, dict) else v) for k, v in value.items()}
    if isinstance(value, (Iterator, type({}.values()))):
        return [(_materialize(x) if isinstance(x, dict) else x) for x in value]
    return value


def call(name: str, G: Any, kwargs: dict, backend: str | None) -> tuple:
    """``("ok", answer)`` or ``("raise", exception type name, message, exception
    type)``; ``backend`` ``None`` runs by ``nx.config.backend_priority``.
    """
    func = _function(name)
    extra = {} if backend is None else {"backend": backend}
    try:
        return ("ok", _materialize(func(G, **kwargs, **extra)))
    except Exception as exc:  # every outcome is compared
        return ("raise", type(exc).__name__, str(exc)[:200], type(exc))


class CountingBackend:
    """Count the calls that reach gswitch's implementation of each function (and those
    it declines with ``NotImplementedError``)."""

    def __init__(self) -> None:
        self.ran: collections.Counter = collections.Counter()
        self.declined: collections.Counter = collections.Counter()
        self._saved: dict[str, Any] = {}

    def answered(self) -> int:
        """Calls gswitch answered so far (not declined)."""
        return sum(self.ran.values()) - sum(self.declined.values())

    def __enter__(self) -> CountingBackend:
        for name in FUNCTIONS:
            original = getattr(BackendInterface, name)
            self._saved[name] = original

            def counted(*args: Any, _name: str = name, _f: Callable = original,
                        **kwargs: Any) -> Any:
                self.ran[_name] += 1
                try:
                    return _f(*args, **kwargs)
                except NotImplementedError:
                    self.declined[_name] += 1
                    raise

            setattr(BackendInterface, name, staticmethod(counted))
        self._small = dict(_dispatch.SMALL_GRAPH)
        _dispatch.SMALL_GRAPH.clear()
        self._priority = list(nx.config.backend_priority.algos)
        self._generators = list(nx.config.backend_priority.generators)
        self._quiet = "cache" in nx.config.warnings_to_ignore
        nx.config.warnings_to_ignore.add("cache")
        return self

    def __exit__(self, *exc: Any) -> None:
        for name, original in self._saved.items():
            setattr(BackendInterface, name, staticmethod(original))
        _dispatch.SMALL_GRAPH.update(self._small)
        nx.config.backend_priority.algos = self._priority
        nx.config.backend_priority.generators = self._generators
        if not self._quiet:
            nx.config.warnings_to_ignore.discard("cache")


def as_user(name: str, G: Any, kwargs: dict) -> tuple:
    """The call as a user with ``backend_priority = ["gswitch"]`` makes it."""
    saved = (list(nx.config.backend_priority.algos),
             list(nx.config.backend_priority.generators))
    nx.config.backend_priority.algos = ["gswitch"]
    nx.config.backend_priority.generators = ["gswitch"]
    try:
        return call(name, G, kwargs, None)
    finally:
        nx.config.backend_priority.algos, nx.config.backend_priority.generators = saved


def _same(want: Any, got: Any) -> bool:
    """Equal, NaN equal to NaN (a fallback must give networkx's very answer)."""
    return want == got or repr(want) == repr(got)


# ------------------------------------------------------------------------- comparing

REL = 1e-6


def _close(a: Any, b: Any, rel: float = REL, abs_: float = 1e-12) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, numbers.Real) and isinstance(b, numbers.Real):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if math.isinf(a) or math.isinf(b):
            return a == b
        return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)
    return a == b


def _close_dict(want: dict, got: dict, rel: float = REL, abs_: float = 1e-12) -> str | None:
    if set(want) != set(got):
        return f"keys differ: only networkx {_few(set(want) - set(got))}, " \
               f"only gswitch {_few(set(got) - set(want))}"
    for k in want:
        if isinstance(want[k], dict):
            why = _close_dict(want[k], got[k], rel, abs_)
            if why:
                return f"[{k!r}] {why}"
        elif not _close(want[k], got[k], rel, abs_):
            return f"[{k!r}]: networkx {want[k]!r}, gswitch {got[k]!r}"
    return None


def _few(items: Any) -> str:
    items = list(items)
    return repr(items[:4]) + ("..." if len(items) > 4 else "")


def _exact(want: Any, got: Any, G: Any, kw: dict) -> str | None:
    return None if want == got else f"networkx {_short(want)}, gswitch {_short(got)}"


def _short(x: Any) -> str:
    s = repr(x)
    return s if len(s) < 400 else s[:400] + "..."


def _approx(want: Any, got: Any, G: Any, kw: dict) -> str | None:
    if isinstance(want, dict) and isinstance(got, dict):
        return _close_dict(want, got)
    return None if _close(want, got) else f"networkx {want!r}, gswitch {got!r}"


def _ordered(want: Any, got: Any, G: Any, kw: dict) -> str | None:
    """``_approx``, and a dict's keys in networkx's order (the graph's, or ``G.edges``')."""
    if isinstance(want, dict) and isinstance(got, dict) and list(want) != list(got) \
            and set(want) == set(got):
        return f"keys in another order: networkx {_short(list(want))}, " \
               f"gswitch {_short(list(got))}"
    return _approx(want, got, G, kw)


def _pairs(want: list, got: list, G: Any, kw: dict) -> str | None:
    if [u for u, _ in want] != [u for u, _ in got]:
        return f"sources differ: networkx {_short([u for u, _ in want])}, " \
               f"gswitch {_short([u for u, _ in got])}"
    for (u, a), (_, b) in zip(want, got):
        why = _close_dict(a, b)
        if why:
            return f"from {u!r}: {why}"
    return None


def _pagerank(want: dict, got: dict, G: Any, kw: dict) -> str | None:
    if list(want) != list(got):
        return _ordered(want, got, G, kw)
    # networkx's iteration step for step (personalised too), in float32
    return _close_dict(want, got, rel=0, abs_=2e-6)


def _partition(want: list, got: list, G: Any, kw: dict) -> str | None:
    a, b = {frozenset(c) for c in want}, {frozenset(c) for c in got}
    return None if a == b and len(want) == len(got) else \
        f"networkx {_short(want)}, gswitch {_short(got)}"


def _scc(want: list, got: list, G: Any, kw: dict) -> str | None:
    why = _partition(want, got, G, kw)
    if why:
        return why
    where = {v: i for i, c in enumerate(got) for v in c}
    for u, v in G.edges():
        if where[v] > where[u]:
            return f"component of {v!r} comes after that of {u!r} though {u!r}->{v!r}"
    return None


def _asyn(want: list, got: list, G: Any, kw: dict) -> str | None:
    nodes = [v for c in got for v in c]
    if sorted(map(repr, nodes)) != sorted(map(repr, G)):
        return f"not a partition of the nodes: {_short(got)}"
    label = {v: i for i, c in enumerate(got) for v in c}
    for v in G:
        counts = collections.Counter(label[u] for u in G[v])
        if counts and counts[label[v]] != max(counts.values()):
            return f"{v!r}'s community is not among its neighbours' most frequent"
    return None


def _independent_maximal(want: list, got: list, G: Any, kw: dict) -> str | None:
    """Another set than networkx's may be right: independent, maximal, with ``nodes``."""
    chosen = set(got)
    if len(chosen) != len(got) or not chosen <= set(G):
        return f"not a set of the graph's nodes: {_short(got)}"
    if not set(kw.get("nodes") or ()) <= chosen:
        return f"{_short(got)} lacks nodes asked for"
    for u, v in G.edges():
        if u != v and u in chosen and v in chosen:
            return f"not independent: {u!r} - {v!r}"
    for v in G:
        if v not in chosen and not any(u in chosen for u in G[v]):
            return f"not maximal: {v!r} and its neighbours are all outside"
    return None


_SPANNING = ("minimum_spanning_edges", "maximum_spanning_edges", "minimum_spanning_tree",
             "maximum_spanning_tree")

COMPARE: dict[str, Callable[[Any, Any, Any, dict], str | None]] = {
    "single_source_shortest_path_length": _approx,
    "all_pairs_shortest_path_length": _pairs,
    "all_pairs_dijkstra_path_length": _pairs,
    "floyd_warshall": _approx,
    "closeness_centrality": _ordered,
    "single_source_dijkstra_path_length": _approx,
    "single_source_bellman_ford_path_length": _approx,
    "strongly_connected_components": _scc,
    "label_propagation_communities": _partition,
    "asyn_lpa_communities": _asyn,
    "pagerank": _pagerank,
    "betweenness_centrality": _ordered,
    "edge_betweenness_centrality": _ordered,
    "triangles": _ordered,
    "maximal_independent_set": _independent_maximal,
    "transitivity": _approx,
    "clustering": _ordered,
    "average_clustering": _approx,
}


def compare(name: str, want: tuple, got: tuple, G: Any, kw: dict, *,
            refusal_ok: bool, ran: bool = True) -> str | None:
    """Why ``got`` is not networkx's ``want`` (``None``: it is). ``ran``: whether gswitch
    answered the call (else networkx did, and must have given its very answer)."""
    if got[0] == "raise" and refusal_ok and got[1] == "NotImplementedError":
        return None
    if want[0] == "raise" or got[0] == "raise":
        # the same exception, or one a handler of networkx's catches
        if want[0] == got[0] == "raise" and issubclass(got[3], want[3]):
            return None
        return f"networkx {_outcome(want)}; gswitch {_outcome(got)}"
    if not ran:
        return None if _same(want[1], got[1]) else \
            f"fell back to networkx, yet networkx {_short(want[1])}, got {_short(got[1])}"
    if name in _SPANNING and kw.get("algorithm") != "kruskal":
        # gswitch gives Kruskal's forest whatever the algorithm (networkx's Boruvka
        # leaves out infinite weights: its forest need not span)
        kruskal = call(name, G, {**kw, "algorithm": "kruskal"}, "networkx")
        if kruskal[0] == "ok":
            why = _exact(kruskal[1], got[1], G, kw)
            return None if why is None else f"not networkx's Kruskal forest: {why}"
    try:
        return COMPARE.get(name, _exact)(want[1], got[1], G, kw)
    except Exception as exc:  # a malformed answer
        return f"comparing failed: {type(exc).__name__}: {exc}"


def _outcome(r: tuple) -> str:
    return f"raised {r[1]}: {r[2]}" if r[0] == "raise" else f"returned {_short(r[1])}"


# ---------------------------------------------------------------------------- sweep

def _reproducer(G: Any, name: str, kw: dict) -> str:
    kind = type(G).__name__
    nodes = list(G)
    edges = list(G.edges(data=True))
    return (f"G = nx.{kind}(); G.add_nodes_from({nodes!r}); G.add_edges_from({edges!r}); "
            f"nx.{name}(G, **{kw!r})")


def sweep(graphs: int, seed: int, *, explicit: bool = False,
          functions: list[str] | None = None, calls_per_graph: int = 2,
          max_nodes: int | None = None) -> dict:
    """Run the sweep: ``graphs`` random graphs (of at most ``max_nodes`` nodes), every
    function ``calls_per_graph`` times on each. Returns counts and mismatches (each with
    a reproducer).
    """
    rng = random.Random(seed)
    names = functions or sorted(FUNCTIONS)
    calls: collections.Counter = collections.Counter()
    mismatches: list[dict] = []
    with CountingBackend() as counter:
        for _ in range(graphs):
            G, desc = random_graph(rng, max_nodes)
            for name in names:
                for _ in range(calls_per_graph):
                    kw = ARGS[name](rng, G)
                    want = call(name, G, kw, "networkx")
                    modes = [("priority", False)] + ([("explicit", True)] if explicit else [])
                    for mode, refusal_ok in modes:
                        before = counter.answered()
                        got = (as_user(name, G, kw) if mode == "priority"
                               else call(name, G, kw, "gswitch"))
                        # gswitch answered it, or a call inside it
                        ran = counter.answered() > before
                        calls[name] += 1
                        why = compare(name, want, got, G, kw, refusal_ok=refusal_ok,
                                      ran=ran)
                        if why:
                            mismatches.append({"function": name, "mode": mode, "why": why,
                                               "graph": desc,
                                               "reproducer": _reproducer(G, name, kw)})
    return {"calls": dict(calls), "gswitch_ran": dict(counter.ran),
            "gswitch_declined": dict(counter.declined), "mismatches": mismatches}


# ------------------------------------------------------------------------- mutations

def _some_edge(rng: random.Random, G: Any) -> tuple | None:
    edges = list(G.edges(keys=True) if G.is_multigraph() else G.edges())
    return rng.choice(edges) if edges else None


def _mutate(rng: random.Random, G: Any) -> str:
    """Change ``G`` through networkx's API (which clears ``G.__networkx_cache__``);
    returns what was done."""
    nodes = list(G)
    attr = rng.choice(["weight", "cost"])
    value = rng.choice([1, 2, 5, 0.5, 7.25])
    op = rng.choice(["add_edge", "reweigh", "remove_edge", "add_node", "remove_node",
                     "set_edge_attributes", "add_weighted_edges_from", "update",
                     "clear_edges", "relabel", "remove_edges_from", "add_self_loop"])
    edge = _some_edge(rng, G)
    if op == "add_edge" and nodes:
        u, v = rng.choice(nodes), rng.choice(nodes + ["new"])
        G.add_edge(u, v, **{attr: value})
        return f"G.add_edge({u!r}, {v!r}, {attr}={value!r})"
    if op == "reweigh" and edge is not None:
        G.add_edge(*edge, **{attr: value})
        return f"G.add_edge(*{edge!r}, {attr}={value!r})"
    if op == "remove_edge" and edge is not None:
        G.remove_edge(*edge)
        return f"G.remove_edge(*{edge!r})"
    if op == "remove_node" and nodes:
        u = rng.choice(nodes)
        G.remove_node(u)
        return f"G.remove_node({u!r})"
    if op == "set_edge_attributes" and edge is not None:
        nx.set_edge_attributes(G, {edge: value}, attr)
        return f"nx.set_edge_attributes(G, {{{edge!r}: {value!r}}}, {attr!r})"
    if op == "add_weighted_edges_from" and nodes:
        u, v = rng.choice(nodes), rng.choice(nodes)
        G.add_weighted_edges_from([(u, v, value)], weight=attr)
        return f"G.add_weighted_edges_from([({u!r}, {v!r}, {value!r})], weight={attr!r})"
    if op == "update" and nodes:
        u, v = rng.choice(nodes), rng.choice(nodes)
        G.update(edges=[(u, v)], nodes=["upd"])
        return f"G.update(edges=[({u!r}, {v!r})], nodes=['upd'])"
    if op == "clear_edges":
        G.clear_edges()
        return "G.clear_edges()"
    if op == "relabel" and nodes:
        u = rng.choice(nodes)
        nx.relabel_nodes(G, {u: "renamed"}, copy=False)
        return f"nx.relabel_nodes(G, {{{u!r}: 'renamed'}}, copy=False)"
    if op == "remove_edges_from" and edge is not None:
        G.remove_edges_from([edge])
        return f"G.remove_edges_from([{edge!r}])"
    if op == "add_self_loop" and nodes:
        u = rng.choice(nodes)
        G.add_edge(u, u, **{attr: value})
        return f"G.add_edge({u!r}, {u!r}, {attr}={value!r})"
    G.add_node("added")
    return "G.add_node('added')"


def mutation_sweep(trials: int, seed: int, functions: list[str] | None = None,
                   max_nodes: int | None = None) -> dict:
    """Call a function through gswitch, change the graph through networkx's API, call it
    again: the second answer must be networkx's on the changed graph (the converted graph
    cached in ``G.__networkx_cache__`` must not be reused). A subgraph view taken before
    the change is called too: networkx's view sees the change.
    """
    rng = random.Random(seed)
    names = functions or sorted(FUNCTIONS)
    calls: collections.Counter = collections.Counter()
    mismatches: list[dict] = []
    with CountingBackend() as counter:
        for _ in range(trials):
            G, desc = random_graph(rng, max_nodes)
            if nx.is_frozen(G):
                G = G.copy()
            name = rng.choice(names)
            kw = ARGS[name](rng, G)
            view = G.subgraph(rng.sample(list(G), len(G) // 2 + 1)) if len(G) else None
            for H in (G, view):
                if H is not None:
                    as_user(name, H, kw)  # the first call: converted and cached
            done = [_mutate(rng, G) for _ in range(rng.randint(1, 2))]
            for H, which in ((G, "graph"), (view, "view")):
                if H is None:
                    continue
                want = call(name, H, kw, "networkx")
                before = counter.answered()
                got = as_user(name, H, kw)
                calls[name] += 1
                why = compare(name, want, got, H, kw, refusal_ok=False,
                              ran=counter.answered() > before)
                if why:
                    mismatches.append({"function": name, "mode": f"after mutation ({which})",
                                       "why": why, "graph": f"{desc}; then {'; '.join(done)}",
                                       "reproducer": _reproducer(H, name, kw)})
    return {"calls": dict(calls), "mismatches": mismatches}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--explicit", action="store_true",
                        help="also call with backend='gswitch'")
    parser.add_argument("--max-nodes", type=int, help="draw graphs of at most this many "
                        "nodes")
    parser.add_argument("--function", action="append", dest="functions",
                        help="only this function (repeatable)")
    parser.add_argument("--out", help="write the counts and mismatches here as JSON")
    parser.add_argument("--show", type=int, default=3,
                        help="mismatches shown per function and reason")
    args = parser.parse_args(argv)
    out = sweep(args.graphs, args.seed, explicit=args.explicit, functions=args.functions,
                max_nodes=args.max_nodes)
    changed = mutation_sweep(args.graphs * 4, args.seed, functions=args.functions,
                             max_nodes=args.max_nodes)
    out["mismatches"] += changed["mismatches"]
    out["calls_after_mutation"] = changed["calls"]
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)
    print(f"{'function':42} {'calls':>6} {'gswitch':>8} {'declined':>8}")
    for name in sorted(out["calls"]):
        print(f"{name:42} {out['calls'][name]:6} {out['gswitch_ran'].get(name, 0):8} "
              f"{out['gswitch_declined'].get(name, 0):8}")
    shown: collections.Counter = collections.Counter()
    for m in out["mismatches"]:
        key = (m["function"], m["why"][:25])
        shown[key] += 1
        if shown[key] <= args.show:
            print(f"\n[{m['mode']}] {m['function']}: {m['why']}\n  {m['graph']}\n  "
                  f"{m['reproducer'][:1500]}")
    print(f"\n{len(out['mismatches'])} mismatches in {sum(out['calls'].values())} calls and "
          f"{sum(out['calls_after_mutation'].values())} calls after a mutation")
    return 1 if out["mismatches"] else 0


if __name__ == "__main__":
    sys.exit(main())
