"""Tests for the seeded graph generators and the generator-spec parser."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from gswitch.errors import InvalidInput
from gswitch.generators import (
    GENERATORS,
    grid2d,
    parse_generator_spec,
    path,
    rmat,
    road,
    star,
    uniform_random,
)

FACTORIES = {
    "rmat": lambda seed: rmat(8, 8, seed=seed, weighted=True),
    "uniform": lambda seed: uniform_random(100, 500, seed=seed, weighted=True),
    "grid": lambda seed: grid2d(6, 7, weighted=True, seed=seed),
    "road": lambda seed: road(10, 10, seed=seed),
    "star": lambda seed: star(20, weighted=True, seed=seed),
    "path": lambda seed: path(20, weighted=True, seed=seed),
}


@pytest.mark.parametrize("name", FACTORIES)
def test_same_seed_same_graph(name):
    """A seed fixes the graph exactly."""
    assert FACTORIES[name](3).fingerprint == FACTORIES[name](3).fingerprint


@pytest.mark.parametrize("name", ["rmat", "uniform", "grid", "road"])
def test_other_seed_other_graph(name):
    """Different seeds give different graphs."""
    assert FACTORIES[name](3).fingerprint != FACTORIES[name](4).fingerprint


@pytest.mark.parametrize("name", FACTORIES)
def test_weights_are_float32_integers_in_range(name):
    """Generated weights are integers in [1, 64) stored as float32."""
    w = FACTORIES[name](0).weights
    assert w.dtype == np.float32
    assert w.min() >= 1 and w.max() < 64 and np.all(w == np.floor(w))


@pytest.mark.parametrize(("scale", "edge_factor"), [(0, 4), (6, 16), (10, 8)])
def test_rmat_counts(scale, edge_factor):
    """RMAT has 2**scale nodes and edge_factor * 2**scale edges."""
    g = rmat(scale, edge_factor)
    assert g.n_nodes == 2**scale and g.n_edges == edge_factor * 2**scale and g.directed


def test_rmat_is_skewed():
    """RMAT's max degree is far above its mean, unlike a uniform graph of equal size."""
    g = rmat(12, 16, seed=1)
    u = uniform_random(g.n_nodes, g.n_edges, seed=1)
    deg = g.out_degree + g.in_degree
    udeg = u.out_degree + u.in_degree
    assert deg.max() > 20 * deg.mean()
    assert udeg.max() < 3 * udeg.mean()


def test_rmat_unpermuted_hub_is_node_zero():
    """Without the permutation the heaviest quadrant puts the hub at node 0."""
    g = rmat(10, 16, permute=False)
    assert int(np.argmax(g.out_degree)) == 0
    permuted = rmat(10, 16, permute=True)
    assert sorted(g.out_degree.tolist()) == sorted(permuted.out_degree.tolist())


def test_rmat_quadrant_probabilities():
    """With a=1 every edge lands on node 0 -> 0; with d=1 on the last node."""
    assert set(rmat(4, 2, 1.0, 0.0, 0.0, permute=False).indices.tolist()) == {0}
    g = rmat(4, 2, 0.0, 0.0, 0.0, permute=False)
    assert set(g.sources().tolist()) == {15} and set(g.indices.tolist()) == {15}


def test_rmat_undirected_and_policies():
    """Undirected RMAT is symmetric; drop policies remove loops and parallel edges."""
    g = rmat(8, 8, directed=False, duplicates="drop", self_loops="drop")
    assert g.is_symmetric() and g.n_self_loops == 0
    src, dst = g.edges()
    assert len(set(zip(src.tolist(), dst.tolist()))) == g.n_edges


@pytest.mark.parametrize(
    "kwargs", [{"scale": -1}, {"scale": 31}, {"scale": 4, "a": 0.9}, {"scale": 4, "a": -0.1}]
)
def test_rmat_rejects_bad_parameters(kwargs):
    """Out-of-range scale or probabilities raise InvalidInput."""
    with pytest.raises(InvalidInput):
        rmat(**kwargs)


def test_uniform_counts_and_direction():
    """uniform_random has n nodes, m edges; undirected doubles them symmetrically."""
    g = uniform_random(50, 200, seed=2)
    assert g.n_nodes == 50 and g.n_edges == 200 and g.directed
    u = uniform_random(50, 200, seed=2, directed=False)
    assert not u.directed and u.is_symmetric()


def test_uniform_needs_nodes_for_edges():
    """Edges without nodes are an error."""
    with pytest.raises(InvalidInput, match="n >= 1"):
        uniform_random(0, 5)


@pytest.mark.parametrize(("rows", "cols"), [(1, 1), (1, 5), (4, 4), (5, 8)])
def test_grid_matches_networkx(rows, cols):
    """grid2d is networkx's grid_2d_graph with ids r * cols + c."""
    g = grid2d(rows, cols)
    ref = nx.grid_2d_graph(rows, cols)
    expected = {(r1 * cols + c1, r2 * cols + c2) for (r1, c1), (r2, c2) in ref.edges()}
    expected |= {(v, u) for u, v in expected}
    src, dst = g.edges()
    assert set(zip(src.tolist(), dst.tolist())) == expected
    assert g.n_edges == len(expected) and g.n_nodes == rows * cols


def test_grid_degree_counts():
    """Corners have degree 2, border nodes 3, inner nodes 4."""
    rows, cols = 6, 9
    deg = np.bincount(grid2d(rows, cols).out_degree, minlength=5)
    assert deg[2] == 4
    assert deg[3] == 2 * (rows - 2) + 2 * (cols - 2)
    assert deg[4] == (rows - 2) * (cols - 2)


def test_grid_weights_symmetric():
    """u -> v and v -> u carry the same weight."""
    g = grid2d(5, 5, weighted=True)
    a = g.to_scipy()
    assert (a != a.T).nnz == 0


def test_road_removes_ten_percent():
    """road() removes round(10%) of the grid edges and keeps weights symmetric."""
    rows, cols = 30, 40
    full = rows * (cols - 1) + cols * (rows - 1)
    g = road(rows, cols, seed=5)
    assert g.n_edges == 2 * (full - round(0.1 * full))
    assert not g.directed and g.weighted and g.out_degree.max() <= 4
    a = g.to_scipy()
    assert (a != a.T).nnz == 0


@pytest.mark.parametrize("fraction", [0.0, 0.5, 1.0])
def test_road_drop_fraction(fraction):
    """drop_fraction sets the share of removed grid edges."""
    full = 10 * 9 * 2
    assert road(10, 10, drop_fraction=fraction).n_edges == 2 * (full - round(fraction * full))


def test_star_and_path_shapes():
    """star's hub is node 0; path is a chain of n - 1 edges."""
    s = star(10)
    assert s.out_degree.tolist() == [9] + [1] * 9 and not s.directed
    p = path(5, directed=True)
    src, dst = p.edges()
    assert list(zip(src.tolist(), dst.tolist())) == [(0, 1), (1, 2), (2, 3), (3, 4)]
    assert path(5).n_edges == 8 and path(0).n_nodes == 0 and path(1).n_edges == 0


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("rmat:8", lambda: rmat(8)),
        ("rmat:8:4", lambda: rmat(8, 4)),
        ("rmat:8:4,seed=3,weighted", lambda: rmat(8, 4, seed=3, weighted=True)),
        ("rmat:8,permute=false,a=0.6", lambda: rmat(8, a=0.6, permute=False)),
        ("rmat:6,undirected", lambda: rmat(6, directed=False)),
        ("uniform:1000:5000", lambda: uniform_random(1000, 5000)),
        ("grid:4x6", lambda: grid2d(4, 6)),
        ("grid:4:6,weighted,seed=2", lambda: grid2d(4, 6, weighted=True, seed=2)),
        ("grid:5", lambda: grid2d(5, 5)),
        ("road:16X16", lambda: road(16, 16)),
        ("road:16x16,drop=0.25,seed=1", lambda: road(16, 16, drop_fraction=0.25, seed=1)),
        ("star:100", lambda: star(100)),
        (" path:1000,directed=yes ", lambda: path(1000, directed=True)),
    ],
)
def test_parse_generator_spec(spec, expected):
    """Specs build the same graph as the direct call and carry the spec as name."""
    g = parse_generator_spec(spec)
    assert g == expected()
    assert g.directed == expected().directed
    assert g.name == spec.strip()


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ("", "empty spec"),
        ("kronecker:5", "unknown generator 'kronecker'"),
        ("rmat", "got 0 argument"),
        ("rmat:x", "scale must be an integer, got 'x'"),
        ("rmat:0x10", "scale must be an integer, got '0x10'"),
        ("star:5x5", "n must be an integer, got '5x5'"),
        ("uniform:10", "got 1 argument"),
        ("grid:2x3x4", "got 3 argument"),
        ("star:-3", "n must be >= 0"),
        ("star:10,directed", "option 'directed' does not apply to star"),
        ("rmat:5,seed", "seed needs a value"),
        ("rmat:5,weighted=maybe", "must be true or false"),
        ("road:8x8,drop=lots", "must be a number"),
        ("road:8x8,drop=2", "drop_fraction must be in"),
        ("rmat:40", "scale must be <= 30"),
    ],
)
def test_parse_generator_spec_errors(spec, match):
    """Bad specs raise InvalidInput with the reason and the valid forms."""
    with pytest.raises(InvalidInput, match=match) as exc:
        parse_generator_spec(spec)
    assert all(name in str(exc.value) for name in GENERATORS)


def test_malformed_option_is_reported_once():
    """A bad flag value gives the spec error once, not wrapped in a second one."""
    with pytest.raises(InvalidInput) as exc:
        parse_generator_spec("rmat:10,weighted=maybe")
    msg = str(exc.value)
    assert "option weighted must be true or false" in msg
    assert msg.count("bad generator spec") == 1 and msg.count("expected one of") == 1
