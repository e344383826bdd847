"""Configuration selector: a configuration for a graph from cheap features, without tuning.

The model (``gswitch/models/selector.json``, plain JSON: no pickle) holds, per algorithm, a
small *portfolio* of configurations and the *training graphs* they were measured on:
each training graph's features and the portfolio entry that was fastest there among
those whose call was never slower than the plain-CuPy or cuSPARSE peer of the same run
(``benchmarks/train_selector.py`` writes it from ``bench_formulations.py`` runs). A
graph the model has never seen gets the entry of its nearest training graph by feature
distance (Euclidean on ``log2(1 + x)`` of each feature): a nearest-neighbour rule that
``gswitch explain`` can show whole.

Features cost one pass over the out-degrees (milliseconds on 4M nodes, against tens of
milliseconds for a BFS of the same graph) and are cached on the :class:`Graph`. The model
records the strategy space it was trained on (:func:`model_version`); a model that is
missing, corrupt or trained on another space gives one warning per process and no pick,
so runs fall back to the default configuration.
"""

from __future__ import annotations

import hashlib
import json
import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .arrayops import sorted_unique

__all__ = ["FEATURES", "EXTRA_FEATURES", "MODEL_PATH", "Pick", "SelectorWarning", "explain",
           "graph_features", "load_model", "model_version", "select", "train"]

#: The features a pick depends on, in the model's order. ``reach_hops``: breadth-first
#: levels from a node until :data:`REACH_NODES` nodes are reached (median of two
#: samples): a diameter estimate, 1 to 4 on power-law and random graphs of mean degree
#: 8 or more, 5 to 10 on sparse random graphs, tens on meshes and road networks. It is
#: what tells a sparse random graph (short paths) from a mesh of the same degrees.
FEATURES = ("n_nodes", "n_edges", "degree_mean", "degree_max_over_mean", "degree_cv",
            "reach_hops")
#: Features computed and shown (``gswitch explain``) but not yet weighed: the shipped
#: model's training graphs do not vary them enough to weigh them (see :data:`WEIGHTS`).
#: ``weight_cv`` and ``weight_max_over_mean``: the spread of the edge weights (zero
#: without weights), from at most 65,536 sampled weights.
EXTRA_FEATURES = ("weight_cv", "weight_max_over_mean")
#: Nodes a ``reach_hops`` sample reaches before it counts its levels.
REACH_NODES = 2048
#: The model shipped with the package.
MODEL_PATH = Path(__file__).parent / "models" / "selector.json"
#: Layout of the model file.
MODEL_SCHEMA = 1
#: Entries a portfolio keeps at most.
PORTFOLIO_SIZE = 8
#: Candidates within this factor of a training graph's fastest count as equals there.
NEAR_BEST = 1.03


class SelectorWarning(UserWarning):
    """The selector's model cannot be used; runs take the default configuration."""


@dataclass(frozen=True)
class Pick:
    """What the selector chose for one (algorithm, graph), and why."""

    algorithm: str
    config: dict[str, Any]
    features: dict[str, float]
    nearest: str
    distance: float
    #: every training graph with its distance and entry, nearest first
    neighbours: tuple[tuple[str, float, int], ...] = ()
    #: nearer training graphs whose entry was passed over: (graph, why it does not suit)
    passed: tuple[tuple[str, str], ...] = ()

    @property
    def note(self) -> str:
        """One line: where the configuration came from."""
        over = "".join(f"; {g!r}'s entry passed over: {why}" for g, why in self.passed)
        return (f"selector: the best of the nearest training graph {self.nearest!r} "
                f"(feature distance {self.distance:.2f}){over}")


def graph_features(graph: Any) -> dict[str, float]:
    """Sizes and out-degree moments of ``graph``, computed once and kept on it.

    ``degree_max_over_mean`` is the skew that separates power-law graphs (thousands)
    from meshes (about 1); ``degree_cv`` (standard deviation over mean) separates
    uniform random graphs from both.
    """
    cached = getattr(graph, "_selector_features", None)
    if cached is not None:
        return dict(cached)
    n, m = int(graph.n_nodes), int(graph.n_edges)
    deg = np.diff(graph.indptr)
    mean = m / n if n else 0.0
    feats = {"n_nodes": float(n), "n_edges": float(m), "degree_mean": float(mean),
             "degree_max_over_mean": float(deg.max() / mean) if n and mean else 0.0,
             "degree_cv": float(deg.std() / mean) if n and mean else 0.0,
             "reach_hops": _reach_hops(graph.indptr, graph.indices, n),
             **_weight_spread(getattr(graph, "weights", None))}
    try:
        graph._selector_features = feats
    except AttributeError:  # a graph-like object without the slot: computed every time
        pass
    return dict(feats)


def _reach_hops(indptr: np.ndarray, indices: np.ndarray, n: int, samples: int = 2,
                seed: int = 0) -> float:
    """Median over ``samples`` start nodes (the sources of random edges, so none is
    isolated) of the breadth-first levels until :data:`REACH_NODES` nodes (or the whole
    component) are reached. A sample reads at most 2**15 edges, so a hub costs no more
    than a mesh: a level that would read more reads its first edges only.
    """
    m = indices.size
    if n == 0 or m == 0:
        return 0.0
    budget = 1 << 15
    seen = np.zeros(n, dtype=bool)
    rng = np.random.default_rng(seed)
    hops = []
    for e in rng.integers(0, m, samples):
        start = int(np.searchsorted(indptr, e, side="right") - 1)
        frontier = np.array([start], dtype=np.int64)
        seen[start] = True
        touched = [frontier]
        reached, level, edges = 1, 0, 0
        while frontier.size and reached < REACH_NODES and edges < budget:
            lo = indptr[frontier].astype(np.int64)
            deg = indptr[frontier + 1] - lo
            cum = np.cumsum(deg)
            take = int(min(cum[-1], budget - edges))
            if take == 0:
                break
            edges += take
            slot = np.arange(take)
            owner = np.searchsorted(cum, slot, side="right")  # whose row each slot reads
            nb = indices[lo[owner] + slot - (cum - deg)[owner]]
            # a sort, not np.unique, whose first call imports numpy.ma (13 to 22 ms of
            # a process's first call)
            frontier = sorted_unique(nb[~seen[nb]]).astype(np.int64, copy=False)
            seen[frontier] = True
            touched.append(frontier)
            reached += frontier.size
            level += 1
        for t in touched:  # clear for the next sample without a pass over every node
            seen[t] = False
        hops.append(level)
    return float(np.median(hops))


def _weight_spread(weights: np.ndarray | None) -> dict[str, float]:
    """Coefficient of variation and max over mean of at most 65,536 evenly sampled
    weights (zeros without weights).
    """
    if weights is None or weights.size == 0:
        return {"weight_cv": 0.0, "weight_max_over_mean": 0.0}
    w = np.asarray(weights[:: max(1, weights.size // 65536)], dtype=np.float64)
    mean = float(w.mean())
    if not mean > 0 or not np.isfinite(mean):
        return {"weight_cv": 0.0, "weight_max_over_mean": 0.0}
    return {"weight_cv": float(w.std() / mean), "weight_max_over_mean": float(w.max() / mean)}


#: Weight of each feature in the distance: the shape of the degree distribution and the
#: diameter decide which strategies win; size only breaks ties (a 4K-node RMAT graph is
#: an RMAT graph).
WEIGHTS = {"n_nodes": 0.1, "n_edges": 0.1, "degree_mean": 1.0, "degree_max_over_mean": 1.0,
           "degree_cv": 1.0, "reach_hops": 1.0}


def feature_distance(a: dict[str, float], b: dict[str, float],
                     features: tuple[str, ...] | list[str] = FEATURES) -> float:
    """Weighted Euclidean distance on ``log2(1 + x)`` of each of ``features`` (twice as
    large is as far as half as large; the skew's thousands do not drown the mean
    degree), with :data:`WEIGHTS`.
    """
    return math.sqrt(sum((WEIGHTS[k] * (math.log2(1.0 + max(a.get(k, 0.0), 0.0))
                                        - math.log2(1.0 + max(b.get(k, 0.0), 0.0)))) ** 2
                         for k in features))


def model_version(algorithms: Any = None) -> str:
    """Short hash of the strategies validated on a device (names, backends, parameter
    spaces) and of the
    variants of ``algorithms`` (default: every registered one) with what they support:
    what a stored configuration needs to mean the same thing. Defaults do not count, so
    re-choosing one keeps the model; nor do algorithms the model does not cover, so
    adding one keeps it too. Strategies not yet validated on a GPU do not count either:
    the tuner's GPU search, which the model is trained from, leaves them out, so they
    join the hash (and the model goes stale) when they are validated.
    """
    from .plugins import AXES, get_registry

    reg = get_registry()
    names = set(reg.variants) if algorithms is None else set(algorithms)
    data: dict[str, Any] = {"schema": MODEL_SCHEMA}
    # strategies and parameters not yet validated on a device are left out: the tuner's
    # GPU search the model is trained from leaves them out too
    for axis in AXES:
        data[axis] = {name: {"backends": list(cls.backends),
                             "params": {p: repr(s) for p, s in sorted(cls.params.items())
                                        if p not in cls.unvalidated_params}}
                      for name, cls in sorted(reg.strategies[axis].items()) if cls.validated}
    data["variants"] = {name: {v: {k: list(x) for k, x in sorted(s.supports.items())}
                               for v, s in sorted(fam.items())}
                        for name, fam in sorted(reg.variants.items()) if name in names}
    text = json.dumps(data, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:10]


_WARNED: set[str] = set()
_MODELS: dict[tuple[str, float], dict | None] = {}


def _warn_once(message: str) -> None:
    if message not in _WARNED:
        _WARNED.add(message)
        warnings.warn(message, SelectorWarning, stacklevel=3)


def load_model(path: str | Path | None = None) -> dict | None:
    """The selector model at ``path`` (default: the packaged one), or ``None`` with one
    :class:`SelectorWarning` per process when it is missing, corrupt or stale.
    """
    p = Path(path) if path is not None else MODEL_PATH
    try:
        key = (str(p), p.stat().st_mtime)
    except OSError:
        _warn_once(f"selector model {p} not found; runs use the default configuration "
                   "(python benchmarks/train_selector.py writes it)")
        return None
    if key in _MODELS:
        return _MODELS[key]
    model = None
    try:
        data = json.loads(p.read_text())
        if not isinstance(data, dict) or data.get("schema") != MODEL_SCHEMA or \
                not isinstance(data.get("algorithms"), dict):
            raise ValueError(f"not a schema-{MODEL_SCHEMA} selector model")
        for alg, entry in data["algorithms"].items():
            if not isinstance(entry.get("portfolio"), list) or \
                    not isinstance(entry.get("training"), list):
                raise ValueError(f"algorithm {alg!r} lacks a portfolio or training graphs")
        version = model_version(data["algorithms"])
        if data.get("space_version") != version:
            _warn_once(f"selector model {p} was trained on strategy space "
                       f"{data.get('space_version')!r}, this install has {version!r}; "
                       "runs use the default configuration until "
                       "python benchmarks/train_selector.py retrains it")
        else:
            model = data
    except (OSError, ValueError, AttributeError, TypeError) as exc:
        _warn_once(f"selector model {p} is unreadable ({exc}); runs use the default "
                   "configuration (python benchmarks/train_selector.py rewrites it)")
    _MODELS[key] = model
    return model


def _unsuited(algorithm: str, config: dict[str, Any], graph: Any, backend: str
              ) -> str | None:
    """Why the formulation ``config`` names would not pay on ``graph``: its ``suited``
    (:func:`gswitch.algorithm`), asked only of formulations that declare one.
    """
    from .errors import GswitchError
    from .plugins import get_registry

    try:
        spec = get_registry().algorithm(algorithm, config.get("variant", "default"))
    except GswitchError:  # a variant this install lacks: the run's own check says so
        return None
    suited = getattr(spec, "suited", None)
    if suited is None or not hasattr(graph, "indptr"):
        return None
    try:
        return suited(graph, backend)
    except GswitchError as exc:  # it could not even look (memory): it does not suit
        return str(exc)


def select(algorithm: str, graph: Any, path: str | Path | None = None,
           backend: str = "gpu") -> Pick | None:
    """The model's configuration for ``algorithm`` on ``graph``, or ``None`` (no usable
    model, or none for this algorithm).

    The entry of the nearest training graph, unless its formulation says it would not
    pay on ``graph`` (``suited``: the overlay variants on parts with long boundaries);
    then the next nearest graph's entry that does, the ones passed over named in the
    pick's note.
    """
    model = load_model(path)
    if model is None or algorithm not in model["algorithms"]:
        return None
    entry = model["algorithms"][algorithm]
    if not entry["training"]:
        return None
    feats = graph_features(graph)
    # a model weighs the features it was trained with (one from before a feature was
    # added has none of its values)
    used = [k for k in model.get("features", FEATURES) if k in WEIGHTS]
    ranked = sorted(((t["graph"], feature_distance(feats, t["features"], used),
                      int(t["best"])) for t in entry["training"]), key=lambda x: x[1])
    passed: list[tuple[str, str]] = []
    for name, dist, best in ranked:
        config = dict(entry["portfolio"][best])
        why = _unsuited(algorithm, config, graph, backend)
        if why is None:
            return Pick(algorithm, config, feats, name, dist, tuple(ranked), tuple(passed))
        passed.append((name, why))
    return None


def explain(algorithm: str, graph: Any, path: str | Path | None = None) -> str:
    """What the selector sees and picks for ``algorithm`` on ``graph``, as text."""
    feats = graph_features(graph)
    lines = [f"{algorithm} on {getattr(graph, 'name', '') or 'the graph'}:", "features:"]
    lines += [f"  {k:22s} {feats[k]:.4g}" for k in FEATURES]
    lines += [f"  {k:22s} {feats[k]:.4g}  (shown, not weighed)" for k in EXTRA_FEATURES]
    pick = select(algorithm, graph, path)
    if pick is None:
        lines.append("no selector entry for this algorithm: the default configuration runs")
        return "\n".join(lines)
    lines.append("training graphs, nearest first (distance, entry):")
    lines += [f"  {g:28s} {d:6.2f}  #{i}" for g, d, i in pick.neighbours]
    for g, why in pick.passed:
        lines.append(f"passed over {g!r}'s entry: {why}")
    entry = next(i for g, _, i in pick.neighbours if g == pick.nearest)
    lines.append(f"chosen: portfolio entry #{entry}, the best on {pick.nearest!r}:")
    lines.append("  " + json.dumps(pick.config, sort_keys=True))
    return "\n".join(lines)


def train(rows: list[dict], features: dict[str, dict[str, float]],
          algorithms: list[str] | None = None) -> dict:
    """A model from ``bench_formulations.py`` rows and the features of their graphs.

    Per algorithm and graph, the candidate rows (``label`` ``extra:...``: a named
    configuration; a ``default`` row means whatever the default was then) that were
    verified and whose call was no slower than the run's peer compete on
    device time (when none qualifies, every verified row does); each graph's winner
    joins the portfolio (at most :data:`PORTFOLIO_SIZE`, the winners of the most graphs
    first) and the graph becomes a training point pointing at it.

    Parameters
    ----------
    rows : list of dict
        Rows of one or more ``bench_formulations.py`` JSON files.
    features : dict
        :func:`graph_features` of each graph, by the rows' ``graph`` name.
    algorithms : list of str, optional
        Which algorithms to model (default: every one in ``rows``).
    """
    by_alg: dict[str, dict[str, list[dict]]] = {}
    for r in rows:
        if algorithms is not None and r["algorithm"] not in algorithms:
            continue
        if r.get("device_time_ms") is None or not r.get("verified") or \
                not str(r.get("label", "")).startswith("extra:"):
            continue
        by_alg.setdefault(r["algorithm"], {}).setdefault(r["graph"], []).append(r)
    out: dict[str, Any] = {}
    for alg, graphs in sorted(by_alg.items()):
        # per graph the near-best candidates (within NEAR_BEST of the fastest fair one);
        # of those, each graph takes the one near-best on the most graphs: timing noise
        # between equals never splits the portfolio
        near: dict[str, list[dict]] = {}
        for gname, cands in sorted(graphs.items()):
            if gname not in features:
                raise ValueError(f"no features for training graph {gname!r}")
            fair = [c for c in cands if c.get("ratio_to_peer") is None
                    or c["ratio_to_peer"] <= 1.0] or cands
            best = min(c["device_time_ms"] for c in fair)
            near[gname] = [c for c in fair if c["device_time_ms"] <= NEAR_BEST * best]
        votes: dict[str, int] = {}
        for cands in near.values():
            for k in {json.dumps(c["config"], sort_keys=True) for c in cands}:
                votes[k] = votes.get(k, 0) + 1
        winners = {g: min(cands, key=lambda c: (-votes[json.dumps(c["config"], sort_keys=True)],
                                                c["device_time_ms"]))
                   for g, cands in near.items()}
        keys = [json.dumps(w["config"], sort_keys=True) for w in winners.values()]
        order = sorted(set(keys), key=lambda k: (-keys.count(k), k))[:PORTFOLIO_SIZE]
        portfolio = [json.loads(k) for k in order]
        training = []
        for gname, w in sorted(winners.items()):
            k = json.dumps(w["config"], sort_keys=True)
            if k not in order:
                continue
            training.append({"graph": gname, "features": features[gname],
                             "best": order.index(k),
                             "device_time_ms": round(float(w["device_time_ms"]), 4)})
        out[alg] = {"portfolio": portfolio, "training": training}
    return {"schema": MODEL_SCHEMA, "space_version": model_version(out), "features": FEATURES,
            "algorithms": out}
