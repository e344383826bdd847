"""The plugin manager and registry: built-ins, third-party plugins, duplicates, failures."""

import json
import re
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

import gswitch as gs
import gswitch.plugins as plugins
from gswitch.plugins import AXES, get_registry, reset_registry
from gswitch.strategy import Strategy

# strategies under test do their steps on the CPU (no shortest-path closure)
pytestmark = pytest.mark.usefixtures("super_steps")

BUILTIN_ALGORITHMS = {"bfs", "sssp", "cc", "pagerank"}
STRATEGIES = [(axis, name) for axis in AXES for name in sorted(get_registry().strategies[axis])]
_BASE = {"worklist": "WorklistStrategy", "load_balance": "LoadBalanceStrategy",
         "driving": "DrivingStrategy", "direction": "DirectionStrategy",
         "launch": "LaunchStrategy"}


@pytest.fixture
def plugin_module(tmp_path, monkeypatch):
    """Factory: write a plugin module into tmp_path and load it after the built-ins.

    The registry is reset afterwards so every other test sees the normal plugins.
    """
    names = []
    original = plugins._builtin_modules
    monkeypatch.syspath_prepend(str(tmp_path))

    def make(source):
        name = f"gswitch_test_plugin_{uuid.uuid4().hex[:8]}"
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
        names.append(name)
        extra = tuple(names)
        monkeypatch.setattr(plugins, "_builtin_modules", lambda: original() + extra)
        reset_registry()
        return name

    yield make
    for name in names:
        sys.modules.pop(name, None)
    monkeypatch.setattr(plugins, "_builtin_modules", original)
    reset_registry()


THIRD_PARTY = """
    from gswitch import hookimpl
    from gswitch.strategy import IntRange, LoadBalanceStrategy


    class EdgeChunkLoadBalancer(LoadBalanceStrategy):
        '''Edge chunks of fixed size. After Merrill et al., PPoPP 2012.'''

        name = "edge_chunk"
        params = {"chunk": IntRange(1, 64, 4)}


    @hookimpl
    def gswitch_strategies():
        return [EdgeChunkLoadBalancer]
"""


# ---------------------------------------------------------------------- built-ins
def test_registry_has_builtin_algorithms():
    """The four built-in algorithms are registered under their names."""
    reg = get_registry()
    assert BUILTIN_ALGORITHMS <= set(reg.algorithms)
    for name in BUILTIN_ALGORITHMS:
        assert reg.algorithm(name).name == name
        variant = reg.algorithm(name).variant
        assert reg.sources[("algorithm", name, variant)] == f"gswitch.algorithms.{name}"


def test_registry_has_strategies_on_every_axis():
    """Every one of the five axes has strategies, including the default one."""
    reg = get_registry()
    assert set(reg.strategies) == set(AXES) and len(AXES) == 5
    for axis in AXES:
        assert reg.strategies[axis], f"no strategy on axis {axis}"
        assert gs.DEFAULTS[axis] in reg.strategies[axis]


def test_builtins_load_without_failures():
    """No built-in plugin fails to load or register."""
    assert get_registry().failures == []


def test_unknown_lookups_list_valid_names():
    """Failed lookups name the valid strategies, axes and algorithms."""
    reg = get_registry()
    worklists = ", ".join(sorted(reg.strategies["worklist"]))
    assert {"atomic", "bitmap", "warp_aggregated"} <= set(reg.strategies["worklist"])
    with pytest.raises(gs.InvalidConfig, match=f"choose one of {re.escape(worklists)}"):
        reg.strategy("worklist", "nope")
    with pytest.raises(gs.InvalidConfig, match="axes are worklist, load_balance"):
        reg.strategy("colour", "red")
    algorithms = ", ".join(sorted(reg.algorithms))
    assert {"bfs", "cc", "pagerank", "sssp"} <= set(reg.algorithms)
    with pytest.raises(gs.InvalidInput, match=re.escape(algorithms)):
        reg.algorithm("dfs")


@pytest.mark.parametrize("axis,name", STRATEGIES)
def test_strategy_class_contract(axis, name):
    """Each strategy derives from its axis base, is keyed by its name and cites a source."""
    cls = get_registry().strategy(axis, name)
    assert issubclass(cls, Strategy)
    assert cls.axis == axis and cls.name == name
    assert any(base.__name__ == _BASE[axis] for base in cls.__mro__)
    doc = cls.__doc__ or ""
    assert cls.summary() and cls.summary() != name
    # a source: a publication year or a named system the idea comes from
    assert re.search(r"\b(19|20)\d\d\b|Gunrock|IrGL|Ligra|Galois", doc), doc
    for key, space in cls.params.items():
        assert "." not in key
        space.validate(f"{axis}.{key}", space.default)  # defaults are valid


@pytest.mark.parametrize("axis,name", STRATEGIES)
@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_strategy_check_returns_none_or_reason(axis, name, backend):
    """check() returns None or a non-empty reason string for every algorithm."""
    reg = get_registry()
    cfg = gs.Config({axis: name})
    strategy = cfg.strategy(axis)
    graph = gs.Graph.from_edges([0, 1], [1, 2], [1.0, 2.0])
    for alg in BUILTIN_ALGORITHMS:
        for g in (None, graph):
            reason = strategy.check(reg.algorithm(alg), g, cfg, backend)
            assert reason is None or (isinstance(reason, str) and reason), reason


# ---------------------------------------------------------------------- third-party plugins
def test_third_party_strategy_registers_and_validates(plugin_module):
    """A plugin module adds a strategy that Config then accepts, validates and lists."""
    mod = plugin_module(THIRD_PARTY)
    reg = get_registry()
    assert "edge_chunk" in reg.strategies["load_balance"]
    assert reg.sources[("load_balance", "edge_chunk")] == mod
    cfg = gs.Config({"load_balance": "edge_chunk", "load_balance.chunk": "8"})
    assert cfg["load_balance.chunk"] == 8
    assert "load_balance.size" not in cfg
    assert gs.Config({"load_balance": "edge_chunk"})["load_balance.chunk"] == 4
    with pytest.raises(gs.InvalidConfig, match=r"load_balance.chunk must be in \[1, 64\]"):
        gs.Config({"load_balance": "edge_chunk", "load_balance.chunk": 65})
    with pytest.raises(gs.InvalidConfig, match="edge_chunk"):
        gs.Config({"load_balance": "nope"})
    # the built-ins are still there
    assert {"thread", "virtual_warp"} <= set(reg.strategies["load_balance"])


def test_registry_restored_after_plugin_test():
    """Plugins from other tests are gone once their fixture is finalised."""
    assert "edge_chunk" not in get_registry().strategies["load_balance"]
    with pytest.raises(gs.InvalidConfig):
        gs.Config({"load_balance": "edge_chunk"})


def test_third_party_algorithm_registers(plugin_module):
    """A plugin can add an algorithm that gs.run finds by name."""
    plugin_module("""
        import gswitch as gs


        @gs.algorithm(name="hopcount")
        class HopCount:
            '''Hops from the source.'''

            hops = gs.NodeField("int32", init=gs.INF, at_source=0)
            start = gs.from_source()

            @gs.edge_op
            def step(e):
                e.dst.hops.reduce_min(e.src.hops + 1)


        @gs.hookimpl
        def gswitch_algorithms():
            return [HopCount]
    """)
    g = gs.Graph.from_edges([0, 1, 2], [1, 2, 3])
    r = gs.run("hopcount", g, source=1, backend="cpu")
    assert r.fields["hops"].tolist()[1:] == [0, 1, 2]


def test_duplicate_strategy_name_names_both_sources(plugin_module):
    """Registering a second 'atomic' worklist raises PluginError naming both plugins."""
    mod = plugin_module("""
        from gswitch import hookimpl
        from gswitch.strategy import WorklistStrategy


        class AnotherAtomic(WorklistStrategy):
            '''A clash.'''

            name = "atomic"


        @hookimpl
        def gswitch_strategies():
            return [AnotherAtomic]
    """)
    with pytest.raises(gs.PluginError) as info:
        get_registry()
    msg = str(info.value)
    assert "'atomic'" in msg
    assert "gswitch.strategies.worklist.atomic" in msg
    assert mod in msg


def test_duplicate_algorithm_name_is_error(plugin_module):
    """A second algorithm called 'bfs' raises PluginError naming both plugins."""
    mod = plugin_module("""
        import gswitch as gs
        from gswitch.algorithms.bfs import SPEC


        @gs.hookimpl
        def gswitch_algorithms():
            return [SPEC]
    """)
    with pytest.raises(gs.PluginError, match=rf"'gswitch.algorithms.bfs'.*'{mod}'"):
        get_registry()


def test_plugin_failing_on_import_is_reported(plugin_module):
    """A module that raises on import is listed in failures with a warning; built-ins work."""
    mod = plugin_module("""
        raise RuntimeError("broken plugin on purpose")
    """)
    with pytest.warns(RuntimeWarning, match="broken plugin on purpose"):
        reg = get_registry()
    assert len(reg.failures) == 1
    assert mod in reg.failures[0] and "RuntimeError" in reg.failures[0]
    assert "failed to load" in reg.failures[0]
    r = gs.run("bfs", gs.Graph.from_edges([0, 1], [1, 2]), source=0, backend="cpu")
    assert r.fields["depth"].tolist() == [0, 1, 2]


def test_plugin_failing_in_hook_is_reported(plugin_module):
    """A hook that raises is reported with plugin, hook and cause; others still register."""
    mod = plugin_module("""
        from gswitch import hookimpl


        @hookimpl
        def gswitch_strategies():
            raise ValueError("no strategies today")
    """)
    with pytest.warns(RuntimeWarning, match="no strategies today"):
        reg = get_registry()
    assert len(reg.failures) == 1
    failure = reg.failures[0]
    assert mod in failure and "gswitch_strategies" in failure and "ValueError" in failure
    assert gs.Config()["worklist"] == gs.DEFAULTS["worklist"]
    assert BUILTIN_ALGORITHMS <= set(reg.algorithms)


def test_plugin_returning_non_strategy_is_reported(plugin_module):
    """Returning something that is not a Strategy subclass is a reported failure."""
    mod = plugin_module("""
        from gswitch import hookimpl


        @hookimpl
        def gswitch_strategies():
            return [object]
    """)
    with pytest.warns(RuntimeWarning, match="not a Strategy subclass"):
        reg = get_registry()
    assert any(mod in f for f in reg.failures)


def test_misspelt_hook_fails_loudly(plugin_module):
    """A hookimpl whose name matches no specification is rejected by check_pending."""
    plugin_module("""
        from gswitch import hookimpl


        @hookimpl
        def gswitch_strategy():
            return []
    """)
    with pytest.raises(Exception, match="gswitch_strategy"):
        get_registry()


def test_trace_plugins_prints_hook_calls(plugin_module, monkeypatch, capsys):
    """GSWITCH_TRACE_PLUGINS=1 prints each hook call and the plugins answering to stderr."""
    monkeypatch.setenv("GSWITCH_TRACE_PLUGINS", "1")
    mod = plugin_module(THIRD_PARTY)
    get_registry()
    err = capsys.readouterr().err
    assert "gswitch_strategies" in err and "gswitch_algorithms" in err
    assert "gswitch.strategies.worklist.atomic" in err
    assert mod in err
    assert "gswitch.algorithms.pagerank" in err


def test_no_trace_without_env(plugin_module, monkeypatch, capsys):
    """Without GSWITCH_TRACE_PLUGINS nothing is printed while the registry is built."""
    monkeypatch.delenv("GSWITCH_TRACE_PLUGINS", raising=False)
    plugin_module(THIRD_PARTY)
    get_registry()
    assert "[gswitch plugins]" not in capsys.readouterr().err


@pytest.mark.parametrize("algorithm", ["bfs", "sssp", "cc", "pagerank"])
@pytest.mark.parametrize("diameter", [6, 4000])
def test_built_in_suggestions_are_accepted_on_the_gpu(algorithm, diameter):
    """The configurations the tuner tries first are valid for the algorithm they are
    suggested for (a refused one would be skipped, wasting the warm start).
    """
    from gswitch.config import Config
    from gswitch.plugins import get_plugin_manager
    from gswitch.runner import check_combination

    spec = get_registry().algorithm(algorithm)
    features = {"n_nodes": 10**6, "n_edges": 10**7, "degree_mean": 10.0,
                "degree_max_over_mean": 3.0, "diameter_estimate": diameter}
    lists = get_plugin_manager().hook.gswitch_suggested_configs(
        algorithm=spec, features=features, backend="gpu")
    configs = [c for lst in lists if lst for c in lst]
    assert configs
    refusals = [check_combination(spec, None, Config(c), "gpu") for c in configs]
    assert refusals == [None] * len(configs)
    if algorithm == "bfs" and diameter > 64:
        # resident partitions from a ring first, then the level-synchronous seeds
        assert [Config(c)["driving.schedule"] for c in configs[:2]] == ["ring", "ring"]
        assert Config(configs[0])["renumber"] == "hilbert"
        assert Config(configs[3])["launch"] == "cuda_graph"
        assert not Config(configs[3])["worklist.dedup"]


@pytest.mark.parametrize("diameter", [6, 4000])
def test_sweeps_get_a_pull_suggestion_on_every_kind_of_graph(diameter):
    """PageRank-like sweeps (every node starts) get a pull configuration among their
    first GPU trials, on road-like graphs too, where their best was a pull one.
    """
    from gswitch.config import Config
    from gswitch.plugins import get_plugin_manager

    spec = get_registry().algorithm("pagerank")
    features = {"n_nodes": 10**6, "n_edges": 10**7, "degree_mean": 10.0,
                "degree_max_over_mean": 3.0, "diameter_estimate": diameter}
    lists = get_plugin_manager().hook.gswitch_suggested_configs(
        algorithm=spec, features=features, backend="gpu")
    directions = [Config(c)["direction"] for lst in lists if lst for c in lst[:2]]
    assert "pull" in directions


def test_plugins_add_commands_and_config_modes(capsys):
    """The command line takes commands and --config modes from plugins (the tuner's
    among them); the core's CLI imports no tuner code itself."""
    import gswitch.cli as cli_mod
    from gswitch.cli import main
    from gswitch.plugins import get_plugin_manager

    source = Path(cli_mod.__file__).read_text()
    assert "tuner" not in "".join(line for line in source.splitlines()
                                  if line.lstrip().startswith(("import", "from")))

    class Hello:
        @gs.hookimpl
        def gswitch_add_commands(self, subparsers):
            p = subparsers.add_parser("hello", help="say hello")
            p.set_defaults(handler=lambda args: print("hello from a plugin") or 7)

        @gs.hookimpl
        def gswitch_resolve_config(self, algorithm, graph, mode, backend, options):
            if mode != "everything_topology":
                return None
            return gs.Config({"driving": "topology"}), "a plugin's mode"

    pm = get_plugin_manager()
    plugin = Hello()
    pm.register(plugin, name="test-hello")
    try:
        assert main(["hello"]) == 7
        assert "hello from a plugin" in capsys.readouterr().out
        assert main(["run", "bfs", "--generate", "rmat:6", "--source", "0", "--backend",
                     "cpu", "--config", "everything_topology", "--json"]) == 0
        captured = capsys.readouterr()
        assert "a plugin's mode" in captured.err
        assert json.loads(captured.out)["config"]["driving"] == "topology"
        assert main(["run", "bfs", "--generate", "rmat:6", "--source", "0", "--backend",
                     "cpu", "--config", "nothing_knows_this"]) == 2
        assert "no plugin knows this mode" in capsys.readouterr().err
        # the tuner's commands come the same way
        sub = next(a for a in cli_mod.build_parser()._actions if a.dest == "command")
        assert {"tune", "report", "hello"} <= set(sub.choices)
    finally:
        pm.unregister(plugin)


def test_registry_and_selector_import_no_scipy_sparse_or_tuner():
    """A newcomer's first GPU call loads every plugin and asks the selector; neither may
    import scipy.sparse (0.4 s on its own) or the tuner's optuna: a fresh process checks.
    """
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import gswitch as gs\n"
        "from gswitch.plugins import get_registry\n"
        "from gswitch import selector\n"
        "get_registry()\n"
        "g = gs.Graph.from_edges([0, 1, 2], [1, 2, 3]).symmetrize()\n"
        "selector.select('bfs', g)\n"
        "print(sorted(m for m in ('scipy.sparse', 'optuna', 'networkx') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]", out
