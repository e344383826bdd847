"""The configuration selector: training, the shipped model, picks, fallbacks, explain."""

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest

import gswitch as gs
from gswitch import selector
from gswitch.errors import InvalidInput
from gswitch.generators import grid2d, rmat, road, star
from gswitch.plugins import get_registry
from gswitch.runner import _choose_config, check_combination, with_variant_defaults


def _row(graph, cfg, ms, ratio=0.5, alg="bfs", verified=True):
    return {"algorithm": alg, "graph": graph, "label": "extra:" + json.dumps(cfg),
            "config": cfg, "device_time_ms": ms, "verified": verified,
            "ratio_to_peer": ratio}


A = {"load_balance": "twc", "launch": "persistent"}
B = {"load_balance": "virtual_warp", "load_balance.size": 4, "launch": "persistent"}
C = {"load_balance": "twc", "launch": "host_loop"}
FEATS = {"mesh": selector.graph_features(grid2d(64, 64)),
         "powerlaw": selector.graph_features(rmat(12, 16, seed=1)),
         "hub": selector.graph_features(star(4096))}


def _model(tmp_path, rows=None, **extra):
    rows = rows or [_row("mesh", A, 10.0), _row("mesh", B, 2.0),
                    _row("powerlaw", A, 1.0), _row("powerlaw", B, 9.0),
                    _row("hub", A, 1.0), _row("hub", B, 0.5, ratio=3.0)]
    model = {**selector.train(rows, FEATS), **extra}
    path = tmp_path / "selector.json"
    path.write_text(json.dumps(model))
    return path, model


def test_training_takes_each_graphs_fair_winner_and_equal_ones_by_votes(tmp_path):
    """Each graph's fastest candidate whose call was no slower than the peer wins (B
    collapses on the hub: A is taken there); candidates within 3% count as equal, and
    the one equal on more graphs is taken, so noise does not split the portfolio."""
    _path, model = _model(tmp_path)
    entry = model["algorithms"]["bfs"]
    assert model["space_version"] == selector.model_version(model["algorithms"])
    best = {t["graph"]: entry["portfolio"][t["best"]] for t in entry["training"]}
    assert best == {"mesh": B, "powerlaw": A, "hub": A}
    rows = [_row("mesh", A, 1.00), _row("mesh", C, 0.99), _row("powerlaw", A, 1.0),
            _row("powerlaw", C, 2.0)]
    entry = selector.train(rows, FEATS)["algorithms"]["bfs"]
    assert entry["portfolio"] == [A]  # C is 1% faster on mesh, A is equal on both
    unverified = selector.train([_row("mesh", A, 0.1, verified=False), _row("mesh", B, 5.0)],
                                FEATS)["algorithms"]["bfs"]
    assert unverified["portfolio"] == [B]


def test_picks_follow_the_nearest_training_graph(tmp_path):
    path, _model_data = _model(tmp_path)
    on_mesh = selector.select("bfs", road(40, 40), path)
    assert on_mesh.nearest == "mesh" and on_mesh.config == B
    on_rmat = selector.select("bfs", rmat(13, 8, seed=4), path)
    assert on_rmat.nearest == "powerlaw" and on_rmat.config == A
    assert on_rmat.neighbours[0][1] <= on_rmat.neighbours[1][1] <= on_rmat.neighbours[2][1]
    assert selector.select("sssp", road(40, 40), path) is None  # not modelled
    text = selector.explain("bfs", road(40, 40), path)
    assert "degree_max_over_mean" in text and json.dumps(B, sort_keys=True) in text


def test_a_pick_that_does_not_suit_the_graph_is_passed_over(tmp_path):
    """The overlay wins on the training chain; a grid near it in features gets the next
    nearest graph's entry, with the reason in the note and in explain, while a chain of
    cliques keeps the overlay."""
    from gswitch.generators import clique_chain

    over = {"variant": "overlay", "launch": "persistent"}
    feats = {"chain": selector.graph_features(clique_chain(64, 32)),
             "mesh": selector.graph_features(grid2d(64, 64))}
    rows = [_row("chain", over, 1.0), _row("chain", A, 5.0), _row("mesh", A, 1.0),
            _row("mesh", over, 3.0)]
    path = tmp_path / "selector.json"
    path.write_text(json.dumps(selector.train(rows, feats)))
    chain = selector.select("bfs", clique_chain(128, 32), path, backend="cpu")
    assert chain.config == over and chain.nearest == "chain" and not chain.passed
    # a mesh of the chain's degrees: nearest to the chain, but its parts have long borders
    mesh = gs.Graph.from_scipy(__import__("scipy.sparse", fromlist=["x"]).kron(
        grid2d(32, 32).to_scipy(), np.ones((8, 8))).tocsr())
    pick = selector.select("bfs", mesh, path, backend="cpu")
    assert pick.neighbours[0][0] == "chain"
    assert pick.config == A and pick.nearest == "mesh"
    assert pick.passed[0][0] == "chain" and "overlay" in pick.passed[0][1]
    assert "passed over" in pick.note
    assert "passed over 'chain'" in selector.explain("bfs", mesh, path)


def test_a_formulation_that_cannot_look_at_the_graph_is_passed_over(tmp_path, monkeypatch):
    """Where the overlay cannot even find a graph's boundary (not enough memory), the
    selector takes the next entry and says why; it never raises."""
    from gswitch.algorithms import overlay

    from gswitch._memory import MemoryRefused
    from gswitch.generators import clique_chain

    over = {"variant": "overlay"}
    feats = {"chain": selector.graph_features(clique_chain(64, 32)),
             "mesh": selector.graph_features(grid2d(64, 64))}
    path = tmp_path / "selector.json"
    path.write_text(json.dumps(selector.train(
        [_row("chain", over, 1.0), _row("chain", A, 5.0), _row("mesh", A, 1.0)], feats)))

    def refuse(what, needed, fix):
        raise MemoryRefused(f"{what} needs more memory than there is; {fix}")

    monkeypatch.setattr(overlay, "check_memory", refuse)
    pick = selector.select("bfs", clique_chain(96, 32), path, backend="cpu")
    assert pick.config == A and pick.passed[0][0] == "chain"
    assert "needs more memory" in pick.passed[0][1]


def test_the_diameter_tells_a_sparse_random_graph_from_a_mesh():
    """A sparse random graph has the degrees of a road grid and the short paths of a
    random graph: the shipped model sends it to a random graph's configuration, and
    meshes (grids, roads) to a mesh's."""
    from gswitch.generators import uniform_random

    sparse = uniform_random(1 << 14, 1 << 15, seed=3).symmetrize()
    for alg in ("bfs", "sssp"):
        pick = selector.select(alg, sparse)
        assert pick.nearest.startswith("uniform"), pick.neighbours
        assert pick.features["reach_hops"] < 10
        for mesh in (grid2d(128, 128), road(100, 100, seed=1)):
            assert selector.select(alg, mesh).nearest.startswith(("road", "grid"))


def test_a_model_weighs_only_the_features_it_was_trained_with(tmp_path):
    """A model written before a feature was added (its list and its training graphs
    lack it) picks by the features it has, as it did when written."""
    path, model = _model(tmp_path)
    old = [k for k in model["features"] if k != "reach_hops"]
    model["features"] = old
    for t in model["algorithms"]["bfs"]["training"]:
        t["features"].pop("reach_hops")
    path.write_text(json.dumps(model))
    g = road(40, 40)
    pick = selector.select("bfs", g, path)
    want = min(selector.feature_distance(pick.features, t["features"], old)
               for t in model["algorithms"]["bfs"]["training"])
    assert pick.nearest == "mesh" and pick.distance == pytest.approx(want)
    assert pick.distance != pytest.approx(min(
        selector.feature_distance(pick.features, t["features"])
        for t in model["algorithms"]["bfs"]["training"]))


def test_features_are_cached_on_the_graph():
    g = rmat(10, 8, seed=2)
    f = selector.graph_features(g)
    assert f["n_nodes"] == g.n_nodes and f["degree_mean"] == pytest.approx(g.n_edges / g.n_nodes)
    assert f["degree_max_over_mean"] == pytest.approx(np.diff(g.indptr).max() / f["degree_mean"])
    assert g._selector_features == f
    g._selector_features["n_nodes"] = -1.0  # the cached copy is what a second call returns
    assert selector.graph_features(g)["n_nodes"] == -1.0


@pytest.mark.parametrize("damage", ["missing", "corrupt", "stale", "shape"])
def test_an_unusable_model_warns_once_and_picks_nothing(tmp_path, damage, monkeypatch):
    monkeypatch.setattr(selector, "_WARNED", set())
    path, model = _model(tmp_path)
    if damage == "missing":
        path = tmp_path / "absent.json"
    elif damage == "corrupt":
        path.write_text("{not json")
    elif damage == "stale":
        path.write_text(json.dumps({**model, "space_version": "0000000000"}))
    else:
        path.write_text(json.dumps({**model, "algorithms": {"bfs": {"portfolio": 3}}}))
    with pytest.warns(selector.SelectorWarning) as caught:
        assert selector.select("bfs", road(8, 8), path) is None
    assert len(caught) == 1 and str(path) in str(caught[0].message)
    assert "default configuration" in str(caught[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a second call says nothing more
        assert selector.select("bfs", road(8, 8), path) is None


def test_the_shipped_model_loads_and_covers_bfs_and_sssp():
    """Retrain (benchmarks/train_selector.py) when this fails after a strategy or
    variant change: the shipped model then no longer matches the install."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = selector.load_model()
    assert model is not None
    for alg in ("bfs", "sssp"):
        entry = model["algorithms"][alg]
        assert 1 <= len(entry["portfolio"]) <= selector.PORTFOLIO_SIZE
        assert {t["graph"].split("-")[0] for t in entry["training"]} >= {"rmat", "road",
                                                                          "uniform"}
        for cfg in entry["portfolio"]:  # every entry is a valid combination on its graph
            spec = get_registry().algorithm(alg, cfg.get("variant", "default"))
            full = with_variant_defaults(spec, cfg, "gpu")
            assert check_combination(spec, rmat(8, 8, seed=1, weighted=True), full,
                                     "gpu") is None


def test_runs_take_the_pick_only_on_the_gpu_without_a_config(tmp_path, monkeypatch):
    path, _m = _model(tmp_path)
    monkeypatch.setattr(selector, "MODEL_PATH", path)
    g = road(30, 30)
    cfg, note = _choose_config("bfs", g, None, "gpu")
    assert cfg == B and note.startswith("selector: ") and "'mesh'" in note
    assert _choose_config("bfs", g, None, "cpu") == (None, "default")
    assert _choose_config("bfs", g, "default", "gpu") == (None, "default")
    assert _choose_config("bfs", g, {"launch": "host_loop"}, "gpu")[1] == "given"
    with pytest.raises(InvalidInput, match="'default'"):
        _choose_config("bfs", g, "fastest", "gpu")
    # a pick that is not a valid combination here falls back to the default, saying why
    bad = {**A, "launch": "no_such_launch"}
    path.write_text(json.dumps(selector.train([_row("mesh", bad, 1.0)], FEATS)))
    cfg, note = _choose_config("bfs", g, None, "gpu")
    assert cfg is None and note.startswith("default (the selector's pick is not valid")
    r = gs.run("bfs", g, source=0, backend="cpu")
    assert r.stats["config_source"] == "default"


def test_tuner_auto_mode_falls_back_to_the_selector_on_the_gpu(tmp_path, monkeypatch):
    from gswitch.tuner.resolve import _selector_pick

    path, _m = _model(tmp_path)
    monkeypatch.setattr(selector, "MODEL_PATH", path)
    cfg, note = _selector_pick("bfs", road(30, 30), "gpu")
    assert cfg["load_balance"] == "virtual_warp" and cfg["load_balance.size"] == 4
    assert "selector" in note and "never tuned" in note
    assert _selector_pick("bfs", road(30, 30), "cpu") is None


def test_explain_command(tmp_path):
    out = subprocess.run([sys.executable, "-m", "gswitch", "explain", "bfs", "--generate",
                          "road:32x32", "--json"], capture_output=True, text=True, check=True)
    data = json.loads(out.stdout)
    assert data["features"]["n_nodes"] == 1024 and data["config"] is not None
    assert data["nearest"].startswith(("road", "grid"))
    bad = subprocess.run([sys.executable, "-m", "gswitch", "explain", "nope", "--generate",
                          "road:8x8"], capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown algorithm 'nope'" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def test_reach_hops_and_weight_spread_tell_meshes_and_weights_apart():
    """The diameter estimate is tens of levels on a mesh and a few on a power-law graph;
    the weight spread is zero without weights; both are shown by explain."""
    from gswitch.generators import grid2d, rmat, road, star
    from gswitch.selector import EXTRA_FEATURES, explain, graph_features

    mesh = graph_features(grid2d(200, 200))
    power = graph_features(rmat(14, 8, seed=3).symmetrize())
    hub = graph_features(star(1 << 16))
    weighted = graph_features(road(60, 60, seed=2))
    assert mesh["reach_hops"] >= 20 and power["reach_hops"] <= 4 and hub["reach_hops"] <= 2
    assert mesh["weight_cv"] == 0.0 and mesh["weight_max_over_mean"] == 0.0
    assert weighted["weight_cv"] > 0.1 and weighted["weight_max_over_mean"] > 1.0
    text = explain("bfs", grid2d(50, 50))
    assert all(f"{k}" in text for k in EXTRA_FEATURES) and "not weighed" in text


def test_a_new_algorithm_does_not_make_the_model_stale():
    """The model's version covers the strategies and its own algorithms' variants only."""
    model = selector.load_model()
    assert model is not None
    covered = selector.model_version(model["algorithms"])
    assert model["space_version"] == covered
    assert selector.model_version() != covered  # triangles (and others) are not covered
