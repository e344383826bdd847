"""The networkx backend's node sets of groups of node ids (components), built through
the complement for a group of more than half the nodes."""

import networkx as nx
import numpy as np

from gswitch.nxbackend._graph import NxGraph
from gswitch.nxbackend._interface import BackendInterface


def _converted(G):
    return BackendInterface.convert_from_nx(G)


def _plain(nxg: NxGraph, groups):
    return [set(nxg.names[g].tolist()) for g in groups]


def test_a_giant_group_is_every_name_less_the_others():
    G = nx.path_graph(["a", "b", "c", "d", "e", "f"])
    nxg = _converted(G)
    groups = [np.array([1]), np.array([0, 2, 3, 5]), np.array([4])]
    got = nxg.member_sets(groups)
    assert got == [{"b"}, {"a", "c", "d", "f"}, {"e"}] == _plain(nxg, groups)


def test_groups_that_do_not_cover_every_node_are_built_plainly():
    """A giant group beside groups that leave nodes out: the complement would hold the
    left-out nodes too, so the group's own names are used."""
    nxg = _converted(nx.path_graph(10))
    groups = [np.arange(6), np.array([7])]  # 6, 8 and 9 in no group
    assert nxg.member_sets(groups) == [set(range(6)), {7}]


def test_small_groups_and_no_groups():
    nxg = _converted(nx.path_graph(4))
    assert nxg.member_sets([np.array([0, 1]), np.array([2, 3])]) == [{0, 1}, {2, 3}]
    assert nxg.member_sets([]) == []


def test_components_through_the_backend_match_networkx():
    G = nx.gnm_random_graph(3000, 2600, seed=7)  # a giant component and many small ones
    got = list(nx.connected_components(G, backend="gswitch"))
    assert got == list(nx.connected_components(G))
    D = nx.gnm_random_graph(2000, 6000, seed=3, directed=True)
    got = list(nx.strongly_connected_components(D, backend="gswitch"))
    # the same components (their order is a valid topological one, tested elsewhere)
    assert set(map(frozenset, got)) == set(map(frozenset, nx.strongly_connected_components(D)))
    assert len(got) == len(set(map(frozenset, got)))
