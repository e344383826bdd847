"""Tests for graph loaders and the npz cache vs scipy.io, networkx and hand-written files."""

from __future__ import annotations

import gzip
import os
from collections import Counter
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from scipy.sparse import csgraph

from gswitch.errors import GraphFormatError
from gswitch.generators import rmat
from gswitch.graph import Graph
from gswitch.io import EXTENSIONS, load_graph, save_graph, save_npz
from gswitch.testing.datasets import DatasetUnavailable, metis_graph_dir, metis_graph_path


def write(path: Path, text: str, *, gz: bool = False) -> Path:
    data = text.encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def edge_multiset(g: Graph) -> Counter:
    src, dst = g.edges()
    if g.weighted:
        return Counter(zip(src.tolist(), dst.tolist(), g.weights.tolist()))
    return Counter(zip(src.tolist(), dst.tolist()))


def random_edges(seed: int = 0, n: int = 50, m: int = 400):
    rng = np.random.default_rng(seed)
    return rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(1, 100, m).astype(float)


# ---------------------------------------------------------------------------- Matrix Market
@pytest.mark.parametrize("field", ["real", "integer"])
def test_mtx_general_round_trip_with_scipy(tmp_path, field):
    """A general matrix written by scipy.io.mmwrite loads as the same directed graph."""
    src, dst, w = random_edges()
    m = sp.coo_array((w if field == "real" else w.astype(int), (src, dst)), shape=(50, 50))
    scipy.io.mmwrite(tmp_path / "g.mtx", m, field=field)
    g = load_graph(tmp_path / "g.mtx")
    assert g.directed and g.n_nodes == 50
    assert edge_multiset(g) == Counter(zip(src.tolist(), dst.tolist(), w.tolist()))


def test_mtx_keeps_duplicates_instead_of_summing(tmp_path):
    """Repeated entries stay parallel edges, or are merged by the chosen policy."""
    text = "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 2 4\n1 2 6\n2 3 1\n"
    p = write(tmp_path / "d.mtx", text)
    assert edge_multiset(load_graph(p)) == Counter([(0, 1, 4.0), (0, 1, 6.0), (1, 2, 1.0)])
    assert edge_multiset(load_graph(p, duplicates="min")) == Counter([(0, 1, 4.0), (1, 2, 1.0)])


def test_mtx_symmetric_is_undirected_with_loops_once(tmp_path):
    """A symmetric file gives an undirected graph: both directions, diagonal once."""
    text = (
        "%%MatrixMarket matrix coordinate real symmetric\n% a comment\n"
        "3 3 3\n2 1 5\n3 2 7\n3 3 1\n"
    )
    g = load_graph(write(tmp_path / "s.mtx", text))
    assert not g.directed
    assert edge_multiset(g) == Counter(
        [(1, 0, 5.0), (0, 1, 5.0), (2, 1, 7.0), (1, 2, 7.0), (2, 2, 1.0)]
    )


def test_mtx_symmetric_matches_networkx_graph(tmp_path):
    """A networkx graph written as a symmetric pattern file loads with its edges."""
    ref = nx.petersen_graph()
    m = sp.coo_array(nx.to_scipy_sparse_array(ref, format="coo"))
    scipy.io.mmwrite(tmp_path / "p.mtx", m, field="pattern", symmetry="symmetric")
    g = load_graph(tmp_path / "p.mtx")
    assert not g.weighted and not g.directed
    assert g.n_edges == 2 * ref.number_of_edges()
    src, dst = g.edges()
    assert all(ref.has_edge(int(u), int(v)) for u, v in zip(src, dst))


def test_mtx_pattern_is_unweighted(tmp_path):
    """Pattern files carry no weights."""
    text = "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n"
    g = load_graph(write(tmp_path / "p.mtx", text))
    assert not g.weighted and g.n_edges == 1


def test_mtx_gz(tmp_path):
    """.mtx.gz is decompressed transparently."""
    text = "%%MatrixMarket matrix coordinate real general\n2 2 1\n2 1 3.5\n"
    g = load_graph(write(tmp_path / "a.mtx.gz", text, gz=True))
    assert edge_multiset(g) == Counter([(1, 0, 3.5)])
    assert g.name == "a"


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("hello\n1 2\n", "not a Matrix Market file"),
        ("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", "dense"),
        ("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", "complex"),
        ("%%MatrixMarket matrix coordinate real general\n2 3 1\n1 1 1\n", "square"),
        ("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 nan\n", "NaN"),
        ("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n",
         "declares 2 entries but the file has 1"),
    ],
)
def test_mtx_errors(tmp_path, text, match):
    """Unsupported or malformed Matrix Market files raise GraphFormatError."""
    with pytest.raises(GraphFormatError, match=match):
        load_graph(write(tmp_path / "bad.mtx", text))


# ---------------------------------------------------------------------------- edge lists
@pytest.mark.parametrize("ext", [".txt", ".el", ".edges", ".tsv", ".snap"])
def test_edgelist_round_trip_with_networkx(tmp_path, ext):
    """networkx.write_edgelist output loads as the same multiset of edges."""
    src, dst, w = random_edges(1)
    ref = nx.MultiDiGraph()
    for u, v, x in zip(src.tolist(), dst.tolist(), w.tolist()):
        ref.add_edge(u, v, weight=x)
    p = tmp_path / f"g{ext}"
    nx.write_weighted_edgelist(ref, p, delimiter="\t" if ext == ".tsv" else " ")
    g = load_graph(p)
    assert edge_multiset(g) == Counter(zip(src.tolist(), dst.tolist(), w.tolist()))


def test_edgelist_snap_header_and_comments_anywhere(tmp_path):
    """# and % comment lines are skipped wherever they are; line numbers stay right."""
    text = "# Directed graph\n# Nodes: 4 Edges: 3\n0\t1\n% middle\n1\t2\n  # indented\n2\t3\n"
    g = load_graph(write(tmp_path / "s.txt", text))
    assert edge_multiset(g) == Counter([(0, 1), (1, 2), (2, 3)])
    assert g.directed and not g.weighted


def test_edgelist_csv_and_crlf(tmp_path):
    """Commas and Windows line ends are accepted."""
    g = load_graph(write(tmp_path / "g.csv", "0,1,2.5\r\n1,2,3\r\n"))
    assert edge_multiset(g) == Counter([(0, 1, 2.5), (1, 2, 3.0)])


def test_edgelist_blank_lines_and_no_final_newline(tmp_path):
    """Blank lines are ignored and the last line needs no newline."""
    g = load_graph(write(tmp_path / "g.txt", "\n0 1\n\n\n1 2\n   \n2 0"))
    assert edge_multiset(g) == Counter([(0, 1), (1, 2), (2, 0)])


def test_edgelist_gz_and_unweighted_option(tmp_path):
    """.txt.gz loads; weighted=False drops the third column."""
    p = write(tmp_path / "g.txt.gz", "0 1 5\n1 0 6\n", gz=True)
    assert load_graph(p).weighted
    assert not load_graph(p, weighted=False).weighted


def test_edgelist_undirected_option(tmp_path):
    """directed=False adds each listed edge's reverse."""
    g = load_graph(write(tmp_path / "g.txt", "0 1\n1 2\n"), directed=False)
    assert not g.directed
    assert edge_multiset(g) == Counter([(0, 1), (1, 0), (1, 2), (2, 1)])


def test_edgelist_large_ids_are_kept_zero_based(tmp_path):
    """Ids are used as written; the node count is max id + 1."""
    g = load_graph(write(tmp_path / "g.txt", "0 9\n"))
    assert g.n_nodes == 10


def test_edgelist_policies(tmp_path):
    """Duplicate and self-loop policies apply to edge lists."""
    p = write(tmp_path / "g.txt", "0 1 4\n0 1 2\n1 1 1\n")
    assert edge_multiset(load_graph(p, duplicates="sum", self_loops="drop")) == Counter(
        [(0, 1, 6.0)]
    )
    with pytest.raises(GraphFormatError, match="duplicate edge 0 -> 1"):
        load_graph(p, duplicates="reject")
    with pytest.raises(GraphFormatError, match="self loop at node 1"):
        load_graph(p, self_loops="reject")


def test_edgelist_fast_and_slow_paths_agree(tmp_path):
    """A clean file (fast parser) and the same edges with blank lines (line parser) agree."""
    src, dst, w = random_edges(2, n=1000, m=5000)
    lines = [f"{u} {v} {x:g}" for u, v, x in zip(src, dst, w)]
    clean = write(tmp_path / "a.txt", "\n".join(lines) + "\n")
    messy = write(tmp_path / "b.txt", "\n\n".join(lines) + "\n")
    assert load_graph(clean) == load_graph(messy)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("0 1\n1\n2 3\n", r"g\.txt:2: expected 2 fields"),
        ("0 1\n1 2 3 4\n", r"g\.txt:2: expected 2 fields"),
        ("0 1 2 3\n", r"g\.txt:1: expected 'src dst' or 'src dst weight'"),
        ("0 1\n1 x\n", r"g\.txt:2: destination id 'x' is not an integer"),
        ("0 1\n1.5 2\n", r"g\.txt:2: node id 1\.5 is not an integer"),
        ("# h\n0 1\n-1 2\n", r"g\.txt:3: node id -1 out of range"),
        ("0 1 1\n1 2 nan\n", r"g\.txt:2: edge weight is NaN"),
        ("0 1 1\n1 2 abc\n", r"g\.txt:2: weight 'abc' is not a number"),
        ("0 99999999999\n", r"g\.txt:1: node id 99999999999 out of range"),
        ("0 1 # trailing comment\n", r"g\.txt:1: expected 'src dst'"),
    ],
)
def test_edgelist_errors_name_the_line(tmp_path, text, match):
    """Malformed edge lists raise GraphFormatError with file:line and the bad value."""
    with pytest.raises(GraphFormatError, match=match):
        load_graph(write(tmp_path / "g.txt", text))


def test_edgelist_negative_weights_allowed(tmp_path):
    """Negative weights load (algorithms that forbid them check later)."""
    g = load_graph(write(tmp_path / "g.txt", "0 1 -2.5\n"))
    assert g.weights.tolist() == [-2.5]


def test_empty_edgelist(tmp_path):
    """A file of comments only is an empty graph."""
    g = load_graph(write(tmp_path / "g.txt", "# nothing here\n"))
    assert g.n_nodes == 0 and g.n_edges == 0


# ---------------------------------------------------------------------------- DIMACS
DIMACS = """c 9th DIMACS challenge style
p sp 4 5
c arcs follow
a 1 2 7
a 2 3 1
c a comment between arcs
a 3 1 2
a 4 4 3
a 1 2 9
"""


def test_dimacs_one_based_ids_and_comments_anywhere(tmp_path):
    """a u v w lines become 0-based weighted arcs; c lines anywhere are skipped."""
    g = load_graph(write(tmp_path / "g.gr", DIMACS))
    assert g.directed and g.n_nodes == 4
    assert edge_multiset(g) == Counter(
        [(0, 1, 7.0), (1, 2, 1.0), (2, 0, 2.0), (3, 3, 3.0), (0, 1, 9.0)]
    )


def test_dimacs_matches_networkx_shortest_paths(tmp_path):
    """Distances on the loaded graph equal networkx's on the same arcs (min of parallel)."""
    g = load_graph(write(tmp_path / "g.gr.gz", DIMACS, gz=True), duplicates="min")
    ref = nx.DiGraph()
    ref.add_weighted_edges_from([(0, 1, 7), (1, 2, 1), (2, 0, 2), (3, 3, 3)])
    dist = csgraph.dijkstra(g.to_scipy(), indices=0)
    want = nx.single_source_dijkstra_path_length(ref, 0)
    assert {k: dist[k] for k in want} == pytest.approx(want)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("p sp 3 3\na 1 2 5\na 2 3 7\n", "declares 3 arcs but the file has 2"),
        ("p sp 3 1\na 1 4 5\n", r"g\.gr:2: node id 4 out of range.*1\.\.3"),
        ("p sp 3 1\na 0 2 5\n", r"g\.gr:2: node id 0 out of range"),
        ("p sp 3 1\nx 1 2 5\n", r"g\.gr:2: unknown line type 'x'"),
        ("p sp 3 1\na 1 2\n", r"g\.gr:2: arc line needs"),
        ("a 1 2 3\n", r"g\.gr:1: expected the problem line"),
        ("c only comments\n", "no problem line"),
        ("p max 3 1\na 1 2 3\n", r"g\.gr:1: malformed problem line"),
        ("p sp 3 1\na 1 2 nan\n", r"g\.gr:2: edge weight is NaN"),
        ("p sp 3 1\np sp 3 1\na 1 2 1\n", r"g\.gr:2: second problem line"),
    ],
)
def test_dimacs_errors(tmp_path, text, match):
    """Header mismatches and bad arcs raise GraphFormatError naming the line."""
    with pytest.raises(GraphFormatError, match=match):
        load_graph(write(tmp_path / "g.gr", text))


# ---------------------------------------------------------------------------- METIS
def test_metis_blank_lines_are_isolated_vertices(tmp_path):
    """A blank vertex line is an isolated vertex; % lines are comments."""
    text = "% comment\n5 3\n2 3\n1\n1 5\n\n3\n"
    g = load_graph(write(tmp_path / "g.graph", text))
    assert not g.directed and g.n_nodes == 5 and g.n_edges == 6
    assert g.out_degree.tolist() == [2, 1, 2, 0, 1]
    assert edge_multiset(g) == Counter([(0, 1), (0, 2), (1, 0), (2, 0), (2, 4), (4, 2)])


def test_metis_trailing_isolated_vertex(tmp_path):
    """An isolated last vertex is an empty final line."""
    g = load_graph(write(tmp_path / "g.graph", "3 1\n2\n1\n\n"))
    assert g.n_nodes == 3 and g.out_degree.tolist() == [1, 1, 0]


def test_metis_edge_weights(tmp_path):
    """fmt 001 reads 'neighbour weight' pairs."""
    g = load_graph(write(tmp_path / "g.graph", "3 2 001\n2 4 3 1\n1 4\n1 1\n"))
    assert edge_multiset(g) == Counter([(0, 1, 4.0), (0, 2, 1.0), (1, 0, 4.0), (2, 0, 1.0)])


def test_metis_vertex_sizes_and_weights_skipped(tmp_path):
    """fmt 111 with ncon=2: size and two vertex weights precede the weighted neighbours."""
    text = "3 2 111 2\n9 1 2 2 4 3 1\n9 1 2 1 4\n9 1 2 1 1\n"
    g = load_graph(write(tmp_path / "g.graph", text))
    assert edge_multiset(g) == Counter([(0, 1, 4.0), (0, 2, 1.0), (1, 0, 4.0), (2, 0, 1.0)])


def test_metis_matches_networkx_writer(tmp_path):
    """An adjacency written by hand from a networkx graph loads back as that graph."""
    ref = nx.convert_node_labels_to_integers(nx.karate_club_graph())
    lines = [f"{ref.number_of_nodes()} {ref.number_of_edges()}"]
    lines += [" ".join(str(v + 1) for v in sorted(ref[u])) for u in range(len(ref))]
    g = load_graph(write(tmp_path / "k.graph.gz", "\n".join(lines) + "\n", gz=True))
    expected = nx.to_scipy_sparse_array(ref, nodelist=range(len(ref)), weight=None)
    assert (g.to_scipy() != expected).nnz == 0


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("3 2\n2\n1\n\n", r"2\*2=4 entries, but they hold 2"),
        ("3 1\n2\n1\n", "declares 3 vertices but the file has 2"),
        ("2 1\n2\n1\n1\n", r"g\.graph:4: more vertex lines"),
        ("2 1\n3\n1\n", r"g\.graph:2: node id 3 out of range"),
        ("2 1\n2\n2\n", r"vertex 1 lists 2 but vertex 2 does not list 1"),
        ("2 1 001\n2\n1 1\n", r"g\.graph:2: vertex 1: expected 0 vertex size"),
        ("2 1 2\n2\n1\n", "fmt field must be"),
        ("2 x\n", r"g\.graph:1: edge count 'x' is not an integer"),
        ("2 1\n2 a\n1\n", r"g\.graph:2: entry 'a' is not a number"),
        ("% only a comment\n", "empty METIS file"),
    ],
)
def test_metis_errors(tmp_path, text, match):
    """Inconsistent METIS files raise GraphFormatError."""
    with pytest.raises(GraphFormatError, match=match):
        load_graph(write(tmp_path / "g.graph", text))


# ---------------------------------------------------------------------------- npz
@pytest.mark.parametrize("weighted", [True, False])
@pytest.mark.parametrize("directed", [True, False])
def test_npz_round_trip(tmp_path, weighted, directed):
    """save_npz then load_graph gives an identical graph, read without pickles."""
    g = rmat(8, 4, seed=1, weighted=weighted, directed=directed)
    path = save_npz(g, tmp_path / "g.npz")
    back = load_graph(path)
    assert back == g and back.directed == g.directed and back.weighted == g.weighted
    assert back.name == g.name
    with np.load(path, allow_pickle=False) as z:
        assert {"indptr", "indices", "directed", "format_version"} <= set(z.files)


def test_npz_appends_extension_and_leaves_no_temp_files(tmp_path):
    """A missing .npz suffix is added and the temp file is renamed away."""
    path = save_npz(Graph.from_edges([0], [1]), tmp_path / "cache")
    assert path.name == "cache.npz"
    assert sorted(os.listdir(tmp_path)) == ["cache.npz"]


def test_npz_overwrite_is_atomic(tmp_path):
    """Saving over an existing cache replaces it in one step."""
    p = tmp_path / "g.npz"
    save_npz(Graph.from_edges([0], [1]), p)
    save_npz(Graph.from_edges([0, 1], [1, 2]), p)
    assert load_graph(p).n_edges == 2
    assert sorted(os.listdir(tmp_path)) == ["g.npz"]


def test_npz_policies_on_load(tmp_path):
    """Loading a cache can drop weights and apply the loop / duplicate policies."""
    g = Graph.from_edges([0, 0, 1], [1, 1, 1], [1.0, 2.0, 3.0])
    p = save_npz(g, tmp_path / "g.npz")
    out = load_graph(p, weighted=False, self_loops="drop", duplicates="drop")
    assert not out.weighted and edge_multiset(out) == Counter([(0, 1)])


@pytest.mark.parametrize(
    ("arrays", "match"),
    [
        ({"indptr": np.array([0, 1]), "indices": np.array([0])}, "lacks format_version"),
        (
            {"format_version": np.array(99), "indptr": np.array([0]),
             "indices": np.array([], np.int32), "directed": np.array(True)},
            "version 99",
        ),
        (
            {"format_version": np.array(1), "indptr": np.array([0, 2]),
             "indices": np.array([0], np.int32), "directed": np.array(True)},
            "inconsistent npz arrays",
        ),
        (
            {"format_version": np.array(1), "indptr": np.array([0, 1]),
             "indices": np.array([3], np.int32), "directed": np.array(True)},
            "out of range",
        ),
        (
            {"format_version": np.array(1), "indptr": np.array([0, 1]),
             "indices": np.array([0.5]), "directed": np.array(True)},
            "integer array",
        ),
        (
            {"format_version": np.array(1), "indptr": np.array([0, 1]),
             "indices": np.array([0], np.int32), "weights": np.array([np.nan]),
             "directed": np.array(True)},
            "NaN",
        ),
        (
            {"format_version": np.array(1), "indptr": np.array([0, 1, 1]),
             "indices": np.array([1], np.int32), "directed": np.array(False)},
            "not symmetric",
        ),
        (
            {"format_version": np.array(1), "indptr": np.array([0, 1]),
             "indices": np.array([0], np.int32), "directed": np.array([object()])},
            "pickled",
        ),
        (
            {"format_version": np.array(1), "indptr": np.array([0, 1, 2]),
             "indices": np.array([1, 0], np.int32), "weights": np.array([2.0, 5.0]),
             "directed": np.array(False)},
            r"undirected but edge 0 -> 1 weighs 2 and 1 -> 0 weighs 5",
        ),
        (
            {"format_version": np.array(1), "indptr": np.array([0, 1]),
             "indices": np.array([0], np.int32), "weights": np.array([1e300]),
             "directed": np.array(True)},
            r"weight 1e\+300 of edge 0 -> 0 does not fit float32",
        ),
    ],
)
def test_npz_validation(tmp_path, arrays, match):
    """Hand-made or hostile npz files are rejected with GraphFormatError."""
    p = tmp_path / "bad.npz"
    np.savez(p, **arrays)
    with pytest.raises(GraphFormatError, match=match):
        load_graph(p)


def test_npz_not_a_zip(tmp_path):
    """A truncated cache raises GraphFormatError."""
    p = write(tmp_path / "g.npz", "not a zip")
    with pytest.raises(GraphFormatError, match="npz"):
        load_graph(p)


# ---------------------------------------------------------------------------- dispatch
def test_missing_file(tmp_path):
    """A missing file names the path."""
    with pytest.raises(GraphFormatError, match="not found"):
        load_graph(tmp_path / "nope.txt")


def test_unknown_extension_lists_known_ones(tmp_path):
    """An unknown extension lists every known one."""
    with pytest.raises(GraphFormatError, match=r"unknown graph file extension '\.xyz'") as exc:
        load_graph(write(tmp_path / "g.xyz", "0 1\n"))
    assert all(ext in str(exc.value) for ext in EXTENSIONS)


def test_fmt_overrides_extension(tmp_path):
    """fmt= chooses the parser whatever the name."""
    g = load_graph(write(tmp_path / "g.dat", "p sp 2 1\na 1 2 3\n"), fmt="gr")
    assert edge_multiset(g) == Counter([(0, 1, 3.0)])
    with pytest.raises(GraphFormatError, match="unknown graph format 'nope'"):
        load_graph(tmp_path / "g.dat", fmt="nope")


def test_directory_is_an_error(tmp_path):
    """A directory is not a graph file."""
    d = tmp_path / "x.txt"
    d.mkdir()
    with pytest.raises(GraphFormatError, match="directory"):
        load_graph(d)


def test_corrupt_gzip(tmp_path):
    """A truncated .gz raises GraphFormatError."""
    data = gzip.compress(b"0 1\n" * 1000)[:-20]
    p = tmp_path / "g.txt.gz"
    p.write_bytes(data)
    with pytest.raises(GraphFormatError, match="gzip"):
        load_graph(p)


@pytest.mark.parametrize(("name", "data", "shown"), [
    ("g.txt.gz", b"0 1 5\n1 0 6\n", "it starts with '0 1 5'"),
    ("g.mtx.gz", b"%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 1\n",
     "it starts with '%%MatrixMarket matrix co...'"),
    ("g.gr.GZ", b"p sp 2 1\na 1 2 1\n", "it starts with 'p sp 2 1'"),
    ("g.graph.gz", b"", "it is empty"),
    ("g.txt.gz", b"\x00\x01\x02", "it starts with <3 bytes of binary data>"),
])
def test_a_gz_name_on_data_that_is_not_gzip_is_refused(tmp_path, name, data, shown):
    """A file named .gz that does not hold gzip data is refused in one line that names
    the file, says what is wrong and how to fix it, instead of being read as it is."""
    p = tmp_path / name
    p.write_bytes(data)
    with pytest.raises(GraphFormatError) as err:
        load_graph(p)
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith(f"{p}: not gzip data, though the name ends in .gz")
    assert shown in msg and "rename it without .gz" in msg and "recompress it with gzip" in msg
    p.write_bytes(gzip.compress(data))  # the same content compressed is what the name says
    if data.startswith(b"0 1"):
        assert load_graph(p).n_edges == 2


def test_an_npz_cache_named_gz_is_refused(tmp_path):
    """An npz cache is never gzip-compressed: a .npz.gz name is refused, not read as npz."""
    from gswitch.generators import grid2d

    p = save_graph(grid2d(3, 3), tmp_path / "g.npz")
    renamed = p.rename(tmp_path / "g.npz.gz")
    with pytest.raises(GraphFormatError, match=r"g\.npz\.gz: an npz cache is not "
                       r"gzip-compressed; drop the \.gz"):
        load_graph(renamed)


def test_name_option(tmp_path):
    """name= overrides the file-stem default."""
    p = write(tmp_path / "road.txt.gz", "0 1\n", gz=True)
    assert load_graph(p).name == "road"
    assert load_graph(p, name="custom").name == "custom"


# ---------------------------------------------------------------------------- real graphs
@pytest.fixture(scope="module")
def metis_dir(tmp_path_factory) -> Path:
    """The libmetis-doc example graphs: installed, cached, or downloaded into a temp dir."""
    try:
        return metis_graph_dir(download=False)
    except DatasetUnavailable:
        pass
    with pytest.MonkeyPatch.context() as mp:
        if not os.environ.get("GSWITCH_DATA_DIR"):
            mp.setenv("GSWITCH_DATA_DIR", str(tmp_path_factory.mktemp("datasets")))
        try:
            return metis_graph_dir()
        except DatasetUnavailable as exc:
            pytest.skip(str(exc))


def metis_header(path: Path) -> tuple[int, int]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        for line in f:
            if line.strip() and not line.startswith("%"):
                n, m = line.split()[:2]
                return int(n), int(m)
    raise AssertionError("no header")


@pytest.mark.parametrize("name", ["4elt", "copter2", "mdual"])
def test_real_metis_graphs(metis_dir, name, monkeypatch):
    """The libmetis-doc meshes load with the header's counts, symmetric, scipy's components."""
    monkeypatch.setenv("GSWITCH_DATA_DIR", str(metis_dir.parent))
    path = metis_graph_path(name)
    n, m = metis_header(path)
    g = load_graph(path)
    assert g.n_nodes == n and g.n_edges == 2 * m
    assert not g.directed and g.is_symmetric() and g.n_self_loops == 0
    # reference: scipy's own parse of the adjacency lines
    rows, cols = [], []
    with open(path) as f:
        lines = [ln for ln in f.read().split("\n") if not ln.startswith("%")]
    for u, line in enumerate(lines[1 : n + 1]):
        nbrs = [int(t) - 1 for t in line.split()]
        rows += [u] * len(nbrs)
        cols += nbrs
    ref = sp.csr_array((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    assert (ref != ref.T).nnz == 0
    assert csgraph.connected_components(g.to_scipy())[0] == csgraph.connected_components(ref)[0]
    assert (g.to_scipy() != ref).nnz == 0


# ---------------------------------------------------------------------------- hardening
@pytest.mark.parametrize("name,text", [
    ("big.txt", "0 2147483646\n"),
    ("big.mtx", "%%MatrixMarket matrix coordinate pattern general\n2000000000 2000000000 1\n1 2\n"),
    ("big.gr", "p sp 2000000000 1\na 1 2 1\n"),
    ("big.graph", "2000000000 1\n2\n1\n"),
])
def test_memory_refused_before_allocating(tmp_path, monkeypatch, name, text):
    """Headers and ids that ask for more memory than available are refused with sizes."""
    monkeypatch.setenv("GSWITCH_MEMORY_LIMIT", "1G")
    with pytest.raises(GraphFormatError) as exc:
        load_graph(write(tmp_path / name, text))
    msg = str(exc.value)
    assert ("needs about" in msg and "1.0 GiB available" in msg) or "lines after it" in msg


def test_declared_entries_beyond_file_are_refused(tmp_path):
    """A size line declaring more entries than the file has lines is refused at once."""
    p = write(tmp_path / "g.mtx", "%%MatrixMarket matrix coordinate pattern general\n"
              "3 3 1000000000000\n1 2\n")
    with pytest.raises(GraphFormatError, match="declares 1,000,000,000,000 entries"):
        load_graph(p)


def test_renumber_edge_list(tmp_path):
    """renumber=True maps sparse ids to 0..k-1 and keeps the originals as labels."""
    p = write(tmp_path / "g.txt", "5000000000 7\n7 123456789012\n")
    g = load_graph(p, renumber=True)
    assert g.n_nodes == 3 and list(g.node_labels) == [7, 5000000000, 123456789012]
    with pytest.raises(GraphFormatError, match="renumber=True"):
        load_graph(p)
    with pytest.raises(GraphFormatError, match="edge lists only"):
        load_graph(write(tmp_path / "g.gr", "p sp 1 0\n"), renumber=True)


def test_binary_content_is_described_not_echoed(tmp_path):
    """Binary junk gets a description, never its bytes."""
    p = tmp_path / "junk.mtx"
    p.write_bytes(b"%%MatrixMarket matrix coordinate real general\n\x00\x01\xff\xfe\n")
    with pytest.raises(GraphFormatError) as exc:
        load_graph(p)
    assert "binary" in str(exc.value) and "\\x" not in str(exc.value)


def test_gzip_bomb_is_capped(tmp_path, monkeypatch):
    """A small gzip that inflates past the memory budget is refused while reading."""
    import gzip

    p = tmp_path / "bomb.txt.gz"
    p.write_bytes(gzip.compress(b"0 1\n" * (16 << 20)))  # 64 MiB inflated
    monkeypatch.setenv("GSWITCH_MEMORY_LIMIT", "100M")
    with pytest.raises(GraphFormatError, match="decompressed content exceeds"):
        load_graph(p)


def test_forged_npz_shape_is_refused(tmp_path):
    """An npz member whose header declares more data than it stores is refused unread."""
    import zipfile

    p = tmp_path / "g.npz"
    save_npz(Graph.from_edges([0], [1]), p)
    with zipfile.ZipFile(p) as z:
        members = {name: z.read(name) for name in z.namelist()}
    old = b"'shape': (3,), }" + b" " * 10  # indptr of 2 nodes; headers are space-padded
    new = b"'shape': (99999999999,)}".ljust(len(old))
    assert members["indptr.npy"].count(old) == 1
    members["indptr.npy"] = members["indptr.npy"].replace(old, new)
    with zipfile.ZipFile(p, "w") as z:  # a well-formed zip (CRCs right) around the lie
        for name, data in members.items():
            z.writestr(name, data)
    with pytest.raises(GraphFormatError, match="declares shape"):
        load_graph(p)


@pytest.mark.parametrize("ext", [".mtx", ".txt", ".gr", ".npz", ".mtx.gz", ".el.gz"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("directed", [False, True])
def test_save_graph_round_trip(tmp_path, ext, weighted, directed):
    """save_graph writes every format so that load_graph gives the same arrays back."""
    from gswitch import save_graph
    from gswitch.generators import rmat

    g = rmat(6, 4, seed=2, weighted=weighted, directed=directed)
    back = load_graph(save_graph(g, tmp_path / f"g{ext}"))
    assert back.n_nodes == g.n_nodes
    assert np.array_equal(back.indptr, g.indptr) and np.array_equal(back.indices, g.indices)
    if weighted:
        # parallel edges may come back in another order within their (src, dst) pair
        def triples(x):
            s, d = x.edges()
            order = np.lexsort((x.weights, d, s))
            return s[order], d[order], x.weights[order]

        assert all(np.array_equal(a, b) for a, b in zip(triples(back), triples(g)))
    if ext.startswith((".mtx", ".npz")):
        assert back.directed == g.directed
    assert [p.name for p in tmp_path.iterdir()] == [f"g{ext}"]


def test_save_graph_refuses_metis_and_directories(tmp_path):
    """Unwritable targets are GraphFormatErrors with the fix."""
    from gswitch import save_graph

    g = Graph.from_edges([0], [1])
    with pytest.raises(GraphFormatError, match="METIS is not supported"):
        save_graph(g, tmp_path / "g.graph")
    (tmp_path / "d.mtx").mkdir()
    with pytest.raises(GraphFormatError, match="is a directory"):
        save_graph(g, tmp_path / "d.mtx")
    with pytest.raises(GraphFormatError, match="cannot write"):
        save_graph(g, tmp_path / "missing" / "g.mtx")


def _with_isolated_nodes(directed: bool) -> Graph:
    """Five nodes, the last three isolated (an edge list alone would say two)."""
    return Graph.from_edges([0], [1], [2.5], n_nodes=5, directed=directed, name="iso")


@pytest.mark.parametrize("name", ["g.txt", "g.el", "g.txt.gz"])
@pytest.mark.parametrize("directed", [True, False])
def test_edge_list_round_trip_keeps_node_count_and_direction(tmp_path, name, directed):
    """save_graph then load_graph of an edge list gives an equal graph (same fingerprint)."""
    from gswitch.io import save_graph

    g = _with_isolated_nodes(directed)
    h = load_graph(save_graph(g, tmp_path / name))
    assert h == g and h.n_nodes == 5 and h.directed == directed


def test_edge_list_header_yields_to_the_caller(tmp_path):
    """directed= and renumber= still decide over what a gswitch header says."""
    from gswitch.io import save_graph

    p = save_graph(_with_isolated_nodes(False), tmp_path / "g.txt")
    assert load_graph(p, directed=True).directed
    assert load_graph(p, renumber=True).n_nodes == 2


def test_edge_list_header_with_huge_node_count_is_refused(tmp_path, monkeypatch):
    """A doctored gswitch header cannot make the loader allocate past the memory check."""
    monkeypatch.setenv("GSWITCH_MEMORY_LIMIT", "8G")
    p = write(tmp_path / "g.txt", "# gswitch edge list x: 2000000000 nodes, 1 edges "
              "(directed), 0-based ids: src dst\n0 1\n")
    with pytest.raises(GraphFormatError, match="memory"):
        load_graph(p)
    p = write(tmp_path / "h.txt", "# gswitch edge list x: 9000000000 nodes, 1 edges "
              "(directed), 0-based ids: src dst\n0 1\n")
    with pytest.raises(GraphFormatError, match="int32"):
        load_graph(p)


@pytest.mark.parametrize("ext", ["txt", "gr"])
def test_names_with_line_breaks_do_not_corrupt_text_files(tmp_path, ext):
    """A graph name with a line break is written on one comment line."""
    from gswitch.io import save_graph

    g = Graph.from_edges([0, 1], [1, 2], name="two\nlines 1 2\n")
    h = load_graph(save_graph(g, tmp_path / f"g.{ext}"))
    assert h.n_nodes == 3 and h.n_edges == 2


@pytest.mark.parametrize("policy", [{"duplicates": "first"}, {"self_loops": "ignore"}])
def test_unknown_policy_names_are_refused(tmp_path, policy):
    """A misspelt duplicates/self_loops policy is an error, for every format."""
    from gswitch.errors import InvalidGraph

    g = Graph.from_edges([0, 0], [1, 1])
    for p in (write(tmp_path / "g.txt", "0 1\n0 1\n"), save_npz(g, tmp_path / "g.npz")):
        with pytest.raises(InvalidGraph, match="must be one of"):
            load_graph(p, **policy)


def test_a_format_registers_in_one_place(tmp_path, monkeypatch):
    """A new format module adds its extension, alias, loader and writer with one
    register() call; load_graph and save_graph find it; a clash names both formats."""
    from gswitch.io import formats

    monkeypatch.setattr(formats, "_REGISTRY", dict(formats._REGISTRY))

    def load(path, o):
        src, dst = np.loadtxt(path, dtype=np.int64, ndmin=2).T
        return Graph.from_edges(src, dst, name=o.name)

    def save(graph, path):
        np.savetxt(path, np.column_stack(graph.edges()), fmt="%d")
        return path

    formats.register(formats.Format("pairs", "pair list", (".pairs",), ("pl",), load, save))
    g = rmat(6, seed=2)
    out = save_graph(g, tmp_path / "g.pairs")
    back = load_graph(out)
    assert back.n_edges == g.n_edges and back.name == "g"
    assert load_graph(out, fmt="pl").n_edges == g.n_edges
    with pytest.raises(ValueError, match="'.mtx', which format 'mtx' already has"):
        formats.register(formats.Format("other", "other", (".mtx",), (), load))
    with pytest.raises(GraphFormatError, match="writing METIS is not supported"):
        save_graph(g, tmp_path / "g.graph")


@pytest.mark.parametrize(("name", "text"), [
    ("g.txt", "0 1 2\n1 2 3\n"),
    ("g.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 2\n2 3 3\n"),
    ("g.txt.gz", "0 1 2\n1 2 3\n"),
])
def test_a_utf8_byte_order_mark_is_not_data(tmp_path, name, text):
    """Files saved by editors that write a byte order mark load like files without."""
    data = b"\xef\xbb\xbf" + text.encode()
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    g = load_graph(path)
    assert g.edges()[0].tolist() == [0, 1] and g.edges()[1].tolist() == [1, 2]
    assert g.weights.tolist() == [2.0, 3.0]


def test_a_weight_past_float32_is_refused_in_one_line(tmp_path):
    """Weights are stored as float32: one that would become infinite is refused, from a
    file and from Python; an infinite weight given as such stays infinite."""
    path = tmp_path / "w.txt"
    path.write_text("0 1 1\n1 2 1e39\n")
    with pytest.raises(GraphFormatError, match=r"1e\+39 does not fit float32"):
        load_graph(path)
    from gswitch.errors import InvalidGraph

    with pytest.raises(InvalidGraph, match=r"weights\[0\] = 1e\+40 does not fit float32"):
        Graph.from_edges([0], [1], [1e40])
    assert np.isinf(Graph.from_edges([0], [1], [np.inf]).weights).all()


@pytest.mark.parametrize(("name", "text", "match"), [
    ("g.txt", "0 1 5\n1 2 -\n", r"g\.txt:2: weight '-' is not a number"),
    ("g.txt", "0 1 5\n1 2 +\n", r"g\.txt:2: weight '\+' is not a number"),
    ("g.txt", "0 -\n", r"g\.txt:1: destination id '-' is not an integer"),
    ("g.txt", "0 1 -\n2 3 4 5\n", r"g\.txt:1: weight '-' is not a number"),
    ("g.gr", "p sp 3 2\na 1 2 5\na 2 3 -\n", r"g\.gr:3: arc weight '-' is not a number"),
])
def test_a_lone_sign_is_not_read_as_zero(tmp_path, name, text, match):
    """A '-' or '+' standing alone is refused on its line, not loaded as the number 0."""
    with pytest.raises(GraphFormatError, match=match):
        load_graph(write(tmp_path / name, text))


@pytest.mark.parametrize(("text", "renumber", "match"), [
    ("0 99999999999999999999\n1 9223372036854775807\n", True,
     r"g\.txt:1: node id 99999999999999999999 out of range"),
    ("0 -99999999999999999999\n", True, r"g\.txt:1: node id -99999999999999999999 out of range"),
    ("0 9223372036854775808\n", False, r"g\.txt:1: node id 9223372036854775808 out of range"),
])
def test_ids_past_int64_are_not_clamped(tmp_path, text, renumber, match):
    """An id past int64 is refused with the id as written; NumPy clamped it to the largest
    int64, so with renumber two different ids became one node."""
    with pytest.raises(GraphFormatError, match=match):
        load_graph(write(tmp_path / "g.txt", text), renumber=renumber)


@pytest.mark.parametrize(("name", "text"), [
    ("g.txt", "0 1 99999999999999999999\n"),
    ("g.gr", "p sp 2 1\na 1 2 99999999999999999999\n"),
    ("g.graph", "2 1 001\n2 99999999999999999999\n1 99999999999999999999\n"),
])
def test_an_integer_weight_past_int64_keeps_its_value(tmp_path, name, text):
    """A weight written as an integer past int64 loads as that number (1e20), not as
    NumPy's clamped 9.2e18."""
    g = load_graph(write(tmp_path / name, text))
    assert np.allclose(g.weights, np.float32(1e20))


@pytest.mark.parametrize(("name", "text", "match"), [
    ("g.txt", "0 1 1_5\n", r"g\.txt:1: weight '1_5' is not a number"),
    ("g.txt", "0 1_0\n", r"g\.txt:1: destination id '1_0' is not an integer"),
    ("g.gr", "p sp 20 1\na 1 1_0 1\n", r"g\.gr:2: arc head '1_0' is not an integer"),
    ("g.gr", "p sp 3 1\na 1 2 1_0\n", r"g\.gr:2: arc weight '1_0' is not a number"),
    ("g.graph", "1_0 0\n", r"g\.graph:1: node count '1_0' is not an integer"),
])
def test_python_digit_separators_are_not_numbers(tmp_path, name, text, match):
    """'1_0' is Python syntax, not a number in a graph file: it was read as 10."""
    with pytest.raises(GraphFormatError, match=match):
        load_graph(write(tmp_path / name, text))


@pytest.mark.parametrize(("name", "clean", "messy"), [
    ("g.txt", "0 1.0\n2 3e0\n", "0 1.0\n\n# a comment\n2 3e0\n"),
    ("g.gr", "p sp 3 2\na 1 2.0 3\na 2 3 1\n", "p sp 3 2\na 1 2.0 3\n\na 2 3 1\n"),
])
def test_integral_float_ids_load_whichever_parser_reads_them(tmp_path, name, clean, messy):
    """Ids written as integral floats (1.0, 3e0) load on the fast path; a blank line that
    sends the file to the line parser must not turn them into an error."""
    a = load_graph(write(tmp_path / name, clean))
    b = load_graph(write(tmp_path / ("messy_" + name), messy))
    assert a.n_edges == 2 and edge_multiset(a) == edge_multiset(b)


def test_float_ids_past_two_to_the_53_are_not_merged(tmp_path):
    """9007199254740993 and 9007199254740992 are two nodes even when another id written as
    a float (1.0) makes NumPy read the whole file as floats, where both are 2**53."""
    text = "9007199254740993 1.0\n9007199254740992 2\n"
    g = load_graph(write(tmp_path / "g.txt", text), renumber=True)
    assert g.n_nodes == 4
    assert g.node_labels.tolist() == [1, 2, 9007199254740992, 9007199254740993]


@pytest.mark.parametrize(("text", "match"), [
    ("p sp 3 1\na 1 2 3a\n", r"g\.gr:2: arc weight '3a' is not a number"),
    ("p sp 3 1\na 1 a2 3\n", r"g\.gr:2: arc head 'a2' is not an integer"),
    ("p sp 3 1\na1 2 3\n", r"g\.gr:2: unknown line type 'a1'"),
])
def test_dimacs_a_stray_letter_a_is_refused(tmp_path, text, match):
    """Only the first token of an arc line is 'a'; the fast parser blanked every 'a' and
    loaded these lines as arcs."""
    with pytest.raises(GraphFormatError, match=match):
        load_graph(write(tmp_path / "g.gr", text))


@pytest.mark.parametrize(("name", "text", "options"), [
    ("g.txt", "0 1 2\n1 0 5\n", {"directed": False}),
    ("g.txt", "# gswitch edge list g: 2 nodes, 4 edges (undirected, both directions listed), "
     "0-based ids: src dst weight\n0 1 2\n0 1 5\n1 0 5\n1 0 2\n", {}),
    ("g.graph", "2 2 001\n2 2 2 5\n1 5 1 2\n", {}),
    ("g.graph", "2 2 001\n2 2 2 5\n1 5 1 2\n", {"directed": True}),
    ("g.mtx", "%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n2 1 2\n2 1 5\n", {}),
])
def test_drop_keeps_the_same_edge_both_ways_on_undirected_graphs(tmp_path, name, text, options):
    """duplicates='drop' on an undirected graph keeps one of the parallel edges for both
    directions; kept per direction, the graph had weight 2 from 0 to 1 and 5 back."""
    g = load_graph(write(tmp_path / name, text), duplicates="drop", **options)
    src, dst = g.edges()
    assert sorted(zip(src.tolist(), dst.tolist(), g.weights.tolist())) == [(0, 1, 2.0),
                                                                            (1, 0, 2.0)]


def test_renumbered_undirected_edge_list_keeps_its_labels(tmp_path):
    """An undirected edge list gswitch wrote, loaded with renumber, keeps the original ids
    in node_labels (marking it undirected dropped them)."""
    text = ("# gswitch edge list g: 2 nodes, 2 edges (undirected, both directions listed), "
            "0-based ids: src dst\n10 20\n20 10\n")
    g = load_graph(write(tmp_path / "g.txt", text), renumber=True)
    assert not g.directed and g.node_labels.tolist() == [10, 20]


def test_metis_edge_weights_must_agree_in_both_lists(tmp_path):
    """METIS weighs each undirected edge once: vertex 1 giving edge 1-2 weight 5 and vertex
    2 giving it 6 is refused on vertex 1's line (it loaded as an undirected graph whose
    edge weighed 5 one way and 6 the other)."""
    with pytest.raises(GraphFormatError, match=r"g\.graph:2: vertex 1 lists 2 with weight 5 "
                       r"but vertex 2 lists 1 with weight 6"):
        load_graph(write(tmp_path / "g.graph", "2 1 001\n2 5\n1 6\n"))


MTX_REAL = "%%MatrixMarket matrix coordinate real general\n3 3 1\n"
MTX_INT = "%%MatrixMarket matrix coordinate integer general\n3 3 1\n"


@pytest.mark.parametrize(("text", "match"), [
    (MTX_INT + "1 2 1.5\n", r"g\.mtx:3: value '1\.5' is not an integer, but the banner"),
    (MTX_INT + "1 2 2.5e0\n", r"g\.mtx:3: value '2\.5e0' is not an integer, but the"),
    (MTX_INT + "1 2 3abc\n", r"g\.mtx:3: value '3abc' is not an integer"),
    (MTX_REAL + "1 2 0x10\n", r"g\.mtx:3: value '0x10' is not a number"),
    (MTX_REAL + "1 2 5.6.7\n", r"g\.mtx:3: value '5\.6\.7' is not a number"),
    (MTX_REAL + "1 2 5-3\n", r"g\.mtx:3: value '5-3' is not a number"),
    (MTX_REAL + "1 2 1e+\n", r"g\.mtx:3: value '1e\+' is not a number"),
    (MTX_REAL + "1 2 5.6e\r\n", r"g\.mtx:3: value '5\.6e' is not a number"),
    (MTX_REAL + "1 2 3 4\n", r"g\.mtx:3: expected 'row column value' \(field real\), got 4"),
    ("%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 2 7\n",
     r"g\.mtx:3: expected 'row column' \(field pattern\), got 3"),
    (MTX_REAL + "0 2 1\n", r"g\.mtx:3: row index 0 out of range: the size line declares 3 "
     r"rows and columns, so indices must be in 1\.\.3"),
    (MTX_REAL + "1 4 1\n", r"g\.mtx:3: column index 4 out of range"),
    (MTX_REAL + "1 2 1\n2 3 1\n", r"g\.mtx: the size line declares 1 entries but the file has 2"),
])
def test_mtx_entries_are_read_whole(tmp_path, text, match):
    """Matrix Market values are read whole and each line holds exactly its fields; scipy's
    reader took a number's prefix and ignored the rest of the line, so '1.5' in an
    integer file weighed 1, '0x10' weighed 0 and '1 2 3 4' weighed 3."""
    with pytest.raises(GraphFormatError, match=match):
        load_graph(write(tmp_path / "g.mtx", text))


@pytest.mark.parametrize("text", [
    MTX_REAL.replace("3 3 1", "3 3 2") + "% a comment between entries\n1 2 2.5\n\n2 3 -1e-2\n",
    "%%matrixmarket MATRIX coordinate Real GENERAL\n3 3 2\n1 2 2.5\n2 3 -1e-2\n",
    MTX_REAL.replace("3 3 1", "3 3 2") + "1 2 2.5\r\n2 3 -.01\r\n",
    MTX_REAL.replace("3 3 1", "3 3 2") + "1 2.0 +2.5\n2 3 -1e-2\n",
])
def test_mtx_comments_case_and_number_forms_load_like_scipy(tmp_path, text):
    """Comment lines among the entries, a banner in any case and number forms scipy's
    reader refuses (+2.5, an index 2.0) load as the plain file does."""
    plain = MTX_REAL.replace("3 3 1", "3 3 2") + "1 2 2.5\n2 3 -0.01\n"
    want = scipy.io.mmread(write(tmp_path / "plain.mtx", plain))
    g = load_graph(write(tmp_path / "g.mtx", text))
    assert edge_multiset(g) == Counter(zip(want.row.tolist(), want.col.tolist(),
                                           np.float32(want.data).tolist()))


def test_mtx_integer_values_written_as_floats_keep_their_value(tmp_path):
    """An integer field's 1e3 and 2.0 weigh 1000 and 2 (scipy's reader read 1 and 2)."""
    g = load_graph(write(tmp_path / "g.mtx", MTX_INT.replace("3 3 1", "3 3 2")
                         + "1 2 1e3\n2 3 2.0\n"))
    assert edge_multiset(g) == Counter([(0, 1, 1000.0), (1, 2, 2.0)])


def test_mtx_skew_symmetric_diagonal_is_refused(tmp_path):
    """A skew-symmetric matrix has a zero diagonal (a = -a), so a stored diagonal entry is
    an error on its line; it loaded as a self loop of weight 1."""
    text = "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 2\n2 1 3\n1 1 1.0\n"
    with pytest.raises(GraphFormatError, match=r"g\.mtx:4: entry \(1, 1\) is on the diagonal"):
        load_graph(write(tmp_path / "g.mtx", text))


@pytest.mark.parametrize("name", ["g.gr", "g.gr.gz"])
def test_dimacs_round_trip_keeps_an_undirected_graph_undirected(tmp_path, name):
    """save_graph's promise: a .gr file it wrote loads back as the graph it was, so an
    undirected graph comes back undirected (it came back directed, and minimum spanning
    forests on it differed); a .gr from elsewhere, both directions listed, stays directed."""
    g = Graph.from_edges([0, 1, 2], [1, 2, 0], [4.0, 2.5, 1.0], n_nodes=4, directed=False)
    back = load_graph(save_graph(g, tmp_path / name))
    assert back == g and not back.directed
    assert load_graph(save_graph(g, tmp_path / name), directed=True).directed
    other = write(tmp_path / "other.gr", "p sp 2 2\na 1 2 1\na 2 1 1\n")
    assert load_graph(other).directed


def test_mtx_unsupported_symmetry_lists_every_supported_one(tmp_path):
    """The refusal of a hermitian banner names all three symmetries gswitch reads (it
    left out skew-symmetric)."""
    text = "%%MatrixMarket matrix coordinate real hermitian\n2 2 1\n2 1 1\n"
    with pytest.raises(GraphFormatError, match=r"g\.mtx:1: .*'hermitian' is not supported; "
                       "use general, symmetric or skew-symmetric"):
        load_graph(write(tmp_path / "g.mtx", text))
