"""Strategy configuration: defaults, validation, JSON, replace, --set parsing, combinations."""

import json
import math

import numpy as np
import pytest

import gswitch as gs
from gswitch.combinations import axis_options, iter_configs, valid_configs
from gswitch.config import GLOBAL_KEYS, Config, parse_set_options
from gswitch.plugins import AXES, get_registry
from gswitch.strategy import Categorical

ALGORITHMS = ["bfs", "sssp", "cc", "pagerank"]
#: the classic formulations, which support every strategy (the hand counts assume it)
CLASSIC = {"bfs": "default", "sssp": "bellman_ford", "cc": "label_propagation",
           "pagerank": "residual_push"}


def _classic(name):
    return get_registry().algorithm(name, CLASSIC[name])


# ---------------------------------------------------------------------- defaults
def test_defaults_filled():
    """An empty config takes the default strategies, their defaults and the global keys."""
    cfg = gs.Config()
    assert cfg.to_dict() == {
        "worklist": "warp_aggregated",
        "worklist.dedup": False,
        "load_balance": "virtual_warp",
        "load_balance.size": 8,
        "driving": "data",
        "driving.unroll": 0,
        "driving.unroll_lanes_log2": 0,
        "direction": "push",
        "launch": "host_loop",
        "block_size": 256,
        "worklist_capacity": 0,
        "read_before_atomic": True,
        "l2_prefetch": False,
        "renumber": "none",
        "variant": "default",
    }
    assert {a: cfg[a] for a in AXES} == gs.DEFAULTS


def test_chosen_strategy_params_get_defaults():
    """Choosing a strategy with parameters fills in its declared defaults."""
    reg = get_registry()
    declared = reg.strategy("launch", "persistent").params["blocks_per_sm"].default
    cfg = gs.Config({"driving": "temporal", "launch": "persistent"})
    assert cfg["driving.threshold"] == 0.05
    assert cfg["launch.blocks_per_sm"] == declared
    assert cfg.options("driving") == {"threshold": 0.05}
    assert cfg.strategy("driving").options == {"threshold": 0.05}
    assert cfg.options("worklist") == {"dedup": False}
    assert type(cfg.strategy("launch")).__name__ == "PersistentLaunch"


def test_config_is_a_hashable_mapping():
    """Equal configs are equal and hash alike; key() is canonical JSON."""
    a = gs.Config({"block_size": 128, "worklist": "atomic"})
    b = gs.Config({"worklist": "atomic", "block_size": "128"})
    assert a == b and hash(a) == hash(b) and a.key() == b.key()
    assert json.loads(a.key())["block_size"] == 128
    assert len(a) == len(list(a)) == len(a.to_dict())
    assert a != gs.Config()


# ---------------------------------------------------------------------- unknown names
def test_unknown_key_lists_valid_keys():
    """An unknown key is refused and the message lists the axes and global keys."""
    with pytest.raises(gs.InvalidConfig) as info:
        gs.Config({"colour": "red"})
    msg = str(info.value)
    assert "'colour'" in msg
    for key in list(AXES) + list(GLOBAL_KEYS):
        assert key in msg


def test_unknown_axis_prefix_is_unknown_key():
    """A dotted key on a non-axis is an unknown key, not silently ignored."""
    with pytest.raises(gs.InvalidConfig, match="unknown config key 'colour.size'"):
        gs.Config({"colour.size": 3})


def test_unknown_strategy_lists_valid_names():
    """An unknown strategy name lists the strategies of that axis."""
    with pytest.raises(gs.InvalidConfig) as info:
        gs.Config({"load_balance": "edge_split"})
    msg = str(info.value)
    assert "'edge_split'" in msg
    for name in get_registry().strategies["load_balance"]:
        assert name in msg


def test_unknown_strategy_param_lists_its_params():
    """A parameter the chosen strategy does not declare names the valid ones."""
    with pytest.raises(gs.InvalidConfig, match="its parameters: load_balance.size"):
        gs.Config({"load_balance.width": 4})


def test_param_of_unchosen_strategy_is_error():
    """Setting virtual_warp's size while load_balance=thread is an error, not a no-op."""
    with pytest.raises(gs.InvalidConfig, match="not a parameter of load_balance strategy 'thread'"):
        gs.Config({"load_balance": "thread", "load_balance.size": 8})
    with pytest.raises(gs.InvalidConfig, match="driving.threshold"):
        gs.Config({"driving": "data", "driving.threshold": 0.1})


# ---------------------------------------------------------------------- values
@pytest.mark.parametrize("value", [64, 96, 256, 1024, "128", 512.0])
def test_block_size_valid(value):
    """block_size accepts multiples of 32 in 64..1024, from ints, strings or whole floats."""
    assert gs.Config({"block_size": value})["block_size"] == int(float(value))


@pytest.mark.parametrize("value,match", [
    (80, "multiple of 32"),
    (100, "multiple of 32"),
    (32, r"\[64, 1024\]"),
    (1056, r"\[64, 1024\]"),
    (0, r"\[64, 1024\]"),
    (128.5, "must be an integer"),
    ("big", "must be an integer"),
])
def test_block_size_invalid(value, match):
    """Bad block sizes are refused with the rule and the value."""
    with pytest.raises(gs.InvalidConfig, match=match) as info:
        gs.Config({"block_size": value})
    assert "block_size" in str(info.value)


@pytest.mark.parametrize("size", [2, 4, 8, 16, 32])
def test_virtual_warp_sizes_valid(size):
    """Every declared virtual-warp size is accepted and reaches the strategy."""
    cfg = gs.Config({"load_balance.size": size})
    assert cfg["load_balance.size"] == size
    assert cfg.strategy("load_balance").threads_per_item() == size


@pytest.mark.parametrize("size", [1, 3, 64, "x"])
def test_virtual_warp_sizes_invalid(size):
    """Sizes outside the declared choices are refused, listing the choices."""
    with pytest.raises(gs.InvalidConfig, match="one of 2, 4, 8, 16, 32"):
        gs.Config({"load_balance": "virtual_warp", "load_balance.size": size})


def test_virtual_warp_size_from_string():
    """A size given as text (from --set) is converted to the declared int choice."""
    assert gs.Config({"load_balance.size": "16"})["load_balance.size"] == 16


@pytest.mark.parametrize("value,ok", [
    (0.0005, True), (0.3, True), (1.0, True), ("0.25", True),
    (0.0001, False), (1.5, False), (-0.1, False), (math.nan, False), ("lots", False),
])
def test_temporal_threshold_range(value, ok):
    """driving.threshold must be a number in [0.0005, 1]."""
    given = {"driving": "temporal", "driving.threshold": value}
    if ok:
        assert gs.Config(given)["driving.threshold"] == float(value)
    else:
        with pytest.raises(gs.InvalidConfig, match="driving.threshold must be"):
            gs.Config(given)


def test_atomic_free_choice():
    """topology's atomic_free accepts booleans (or their text) only."""
    cfg = gs.Config({"driving": "topology", "driving.atomic_free": "True"})
    assert cfg["driving.atomic_free"] is True
    for text, flag in (("true", True), ("FALSE", False), ("False", False),
                       (np.True_, True), (np.False_, False)):
        cfg = gs.Config({"driving": "topology", "driving.atomic_free": text})
        assert cfg["driving.atomic_free"] is flag
    with pytest.raises(gs.InvalidConfig, match="driving.atomic_free"):
        gs.Config({"driving": "topology", "driving.atomic_free": "maybe"})


def test_worklist_capacity_range():
    """worklist_capacity is a non-negative integer."""
    assert gs.Config({"worklist_capacity": 4096})["worklist_capacity"] == 4096
    with pytest.raises(gs.InvalidConfig, match="worklist_capacity"):
        gs.Config({"worklist_capacity": -1})


# ---------------------------------------------------------------------- JSON and replace
def test_json_round_trip(tmp_path):
    """to_json -> from_json and from_file give an equal config."""
    cfg = gs.Config({"driving": "temporal", "driving.threshold": 0.2, "worklist": "atomic",
                     "load_balance.size": 32, "block_size": 512})
    text = cfg.to_json()
    assert json.loads(text) == cfg.to_dict()
    assert gs.Config.from_json(text) == cfg
    path = tmp_path / "cfg.json"
    path.write_text(text)
    again = gs.Config.from_file(path)
    assert again == cfg and again["driving.threshold"] == 0.2


def test_from_json_errors(tmp_path):
    """Bad JSON, a non-object and a missing file are InvalidConfig errors."""
    with pytest.raises(gs.InvalidConfig, match="not valid JSON"):
        gs.Config.from_json("{block_size: 1")
    with pytest.raises(gs.InvalidConfig, match="must be an object, got list"):
        gs.Config.from_json("[1, 2]")
    with pytest.raises(gs.InvalidConfig, match="cannot read config file"):
        gs.Config.from_file(tmp_path / "missing.json")
    with pytest.raises(gs.InvalidConfig, match="multiple of 32"):
        gs.Config.from_json('{"block_size": 100}')


def test_replace_drops_old_strategy_params():
    """Switching strategy on an axis drops the old strategy's params and adds the new ones."""
    cfg = gs.Config({"load_balance": "virtual_warp", "load_balance.size": 32,
                     "driving": "temporal", "driving.threshold": 0.3})
    thread = cfg.replace(load_balance="thread")
    assert thread["load_balance"] == "thread"
    assert "load_balance.size" not in thread
    assert thread["driving.threshold"] == 0.3  # other axes untouched
    topo = cfg.replace(driving="topology")
    assert "driving.threshold" not in topo and topo["driving.atomic_free"] is False
    same = cfg.replace(load_balance="virtual_warp")
    assert same["load_balance.size"] == 32  # same strategy keeps its params
    assert cfg["load_balance.size"] == 32  # the original is unchanged
    assert cfg.replace(**{"load_balance.size": 4})["load_balance.size"] == 4


def test_replace_validates():
    """replace() validates like the constructor."""
    with pytest.raises(gs.InvalidConfig, match="multiple of 32"):
        gs.Config().replace(block_size=100)
    cfg = gs.Config()
    for _ in range(2):  # a refused change is refused again, never remembered as valid
        with pytest.raises(gs.InvalidConfig, match="multiple of 32"):
            cfg.replace(block_size=100)


def test_replace_keeps_its_copies():
    """The same change of the same Config gives the same (unchanging) copy; other
    changes give others, equal to a Config built from scratch."""
    cfg = gs.Config({"launch": "persistent"})
    a = cfg.replace(driving="topology", **{"driving.atomic_free": True})
    assert cfg.replace(**{"driving.atomic_free": True}, driving="topology") is a
    b = cfg.replace(driving="topology")
    assert b is not a and b["driving.atomic_free"] is False and a["driving.atomic_free"]
    assert a == gs.Config({"launch": "persistent", "driving": "topology",
                           "driving.atomic_free": True})
    assert gs.Config({"launch": "persistent"}).replace(driving="topology") is not b


# ---------------------------------------------------------------------- --set parsing
def test_parse_set_options_converts_numbers():
    """Numbers and booleans are converted; names stay strings."""
    got = parse_set_options(["block_size=128", "driving.threshold=0.1", "worklist=atomic",
                             "driving.atomic_free=true", " launch = persistent "])
    assert got == {"block_size": 128, "driving.threshold": 0.1, "worklist": "atomic",
                   "driving.atomic_free": True, "launch": "persistent"}
    assert type(got["block_size"]) is int and type(got["driving.threshold"]) is float


def test_parse_set_options_keeps_json_non_scalars_as_text():
    """A value that parses as a JSON list or string stays the raw text."""
    got = parse_set_options(['worklist="atomic"', "x=[1]", "y=1e-3"])
    assert got == {"worklist": '"atomic"', "x": "[1]", "y": 0.001}


@pytest.mark.parametrize("item", ["novalue", "=3", " =3"])
def test_parse_set_options_rejects_malformed(item):
    """Items without key=value are refused with the item shown."""
    with pytest.raises(gs.InvalidConfig, match="key=value"):
        parse_set_options([item])


def test_parse_set_options_feed_config():
    """Parsed --set options make a valid Config."""
    cfg = gs.Config(parse_set_options(["load_balance=thread", "block_size=64"]))
    assert cfg["load_balance"] == "thread" and cfg["block_size"] == 64


# ---------------------------------------------------------------------- combinations
def _option_counts():
    """Per axis: {strategy name: number of categorical-parameter combinations}."""
    counts = {}
    for axis in AXES:
        counts[axis] = {}
        for name, cls in get_registry().strategies[axis].items():
            n = 1
            for space in cls.params.values():
                if isinstance(space, Categorical):
                    n *= len(space.choices)
            counts[axis][name] = n
    return counts


def _expected_valid_count(spec, backend):
    """(valid, total): the product of option counts, less the combinations a check refuses."""
    per = {a: sum(c.values()) for a, c in _option_counts().items()}
    total = math.prod(per.values())
    # atomic_free=True needs monotone reductions: one of topology's two variants goes
    monotone = all(k.monotone for k in spec.edge.activating)
    driving = per["driving"] - (0 if monotone else 1)
    # priority driving (two policies) needs a priority key; subset, a formulation
    # that declares it
    driving -= 0 if spec.priority is not None else 2
    driving -= 0 if "subset" in spec.supports.get("driving", ()) else 1
    # spatial (steps or a ring) and async are counted apart: they take push only, and
    # only an order-free operator
    counts = _option_counts()["driving"]
    driving -= counts["spatial"] + counts["async"]
    ok = 0
    for name, extra in (("spatial", {"driving.schedule": "steps"}),
                        ("spatial", {"driving.schedule": "ring"}), ("async", {})):
        cfg = gs.Config({"driving": name, **extra})
        strat = get_registry().strategy("driving", name)(cfg.strategy("driving").options)
        ok += strat.check(spec, None, cfg, backend) is None
    rest = per["load_balance"] * driving * per["direction"]
    rest_spatial = per["load_balance"] * ok
    if backend != "gpu":
        return per["worklist"] * (rest + rest_spatial) * per["launch"], total
    # on the GPU cuda_graph needs a worklist that never grows: one bounded by itself
    # (bitmap, prefix_sum, a dedup queue), or for a level-synchronous algorithm
    # (first_hit_final) any queue in data-driven steps
    options = [Config(dict(o)) for o in axis_options()[AXES.index("worklist")]]
    bounded = sum(1 for c in options if c.strategy("worklist").bounded(None, c))
    growing = len(options) - bounded
    valid = per["worklist"] * rest * (per["launch"] - 1) + bounded * rest
    valid += per["worklist"] * rest_spatial * (per["launch"] - 1) + bounded * rest_spatial
    if spec.first_hit_final:
        valid += growing * per["load_balance"] * per["direction"]  # data driving only
    return valid, total


def test_option_counts_by_hand():
    """The categorical search space is as declared: 12 x 12 x 10 x 17 x 3 combinations."""
    counts = _option_counts()
    assert {a: sum(c.values()) for a, c in counts.items()} == {
        "worklist": 2 + 2 + 1 + 2 + 2 + 2 + 1, "load_balance": 1 + 5 + 1 + 5,
        "driving": 1 + 2 + 1 + 2 + 1 + 2 + 1, "direction": 1 + 8 + 8, "launch": 3}
    assert len(list(iter_configs())) == 12 * 12 * 10 * 17 * 3


@pytest.mark.slow  # the full product (73,440 configurations) per case: .ci/run runs it
@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("backend", ["gpu", "cpu"])
def test_valid_configs_count_and_filter(algorithm, backend):
    """valid_configs keeps exactly the combinations whose strategies all accept the algorithm."""
    spec = _classic(algorithm)
    configs = valid_configs(spec, backend)
    expected, total = _expected_valid_count(spec, backend)
    assert len(configs) == expected
    assert len({c.key() for c in configs}) == len(configs)  # no duplicates
    for cfg in configs:
        if backend == "gpu" and cfg["launch"] == "cuda_graph":
            assert cfg.strategy("worklist").bounded(None, cfg) or (
                spec.first_hit_final and cfg["driving"] == "data")
        if algorithm == "pagerank":
            assert not cfg.get("driving.atomic_free", False)
    if backend == "gpu":
        assert expected < total


@pytest.mark.slow  # the full product: .ci/run runs it
def test_valid_configs_by_hand():
    """Hand counts: cuda_graph needs one of the 7 bounded worklist options (bitmap,
    prefix_sum, five dedup queues); pagerank refuses atomic_free (add is not monotone)."""
    assert len(valid_configs(_classic("bfs"), "gpu")) == (
        12 * 12 * 4 * 17 * 2 + 7 * 12 * 4 * 17 + 5 * 12 * 1 * 17  # + plain queues, data
        + 3 * (12 * 12 * 1 * 1 * 2 + 7 * 12 * 1 * 1))  # spatial (steps, ring), async: push
    assert len(valid_configs(_classic("pagerank"), "gpu")) == (
        12 * 12 * 3 * 17 * 2 + 7 * 12 * 3 * 17)
    assert len(valid_configs(_classic("pagerank"), "cpu")) == 12 * 12 * 3 * 17 * 3
    assert any(c.get("driving.atomic_free") for c in valid_configs(_classic("bfs"), "gpu"))


def test_key_is_built_once():
    """key() is computed once per Config (every GPU call asks) and stays canonical."""
    a = gs.Config({"worklist": "atomic"})
    assert a.key() is a.key()
    assert a.key() == json.dumps(a.to_dict(), sort_keys=True)


@pytest.mark.parametrize("values,needle", [
    (3, "must be a mapping"),
    ("best.json", "Config.from_file"),
    ([("driving", "data")], "must be a mapping"),
    ({1: "data"}, "keys must be strings"),
])
def test_config_of_a_non_mapping_is_invalid_config(values, needle):
    """Config(...) of something that is not a mapping of str keys is InvalidConfig."""
    with pytest.raises(gs.errors.InvalidConfig, match=needle):
        gs.Config(values)


def test_choices_of_mixed_types_keep_their_own_values():
    """A choice list that mixes a flag with other values accepts each as itself."""
    from gswitch.strategy import Categorical

    assert Categorical((None, True, False), None).validate("k", None) is None
    assert Categorical((0.5, "auto", True), 0.5).validate("k", 0.5) == 0.5
    assert Categorical((0.5, "auto", True), 0.5).validate("k", "true") is True
    with pytest.raises(gs.errors.InvalidConfig):
        Categorical((0.5, "auto", True), 0.5).validate("k", 1)


@pytest.mark.parametrize("values,needle", [
    ({"block_size": True}, "block_size must be an integer; got true"),
    ({"driving": "temporal", "driving.threshold": True},
     "driving.threshold must be a number; got true"),
    ({"direction": "pull", "direction.group": True}, "direction.group must be one of 1, 4"),
    ({"read_before_atomic": 1}, "read_before_atomic must be one of True, False; got 1"),
    ({"l2_prefetch": 0.0}, "l2_prefetch must be one of False, True; got 0.0"),
])
def test_booleans_are_not_numbers(values, needle):
    """JSON true/false for a numeric key (or a numeric choice) is refused rather than read
    as 1 or 0, and a number for a flag is refused rather than read as true or false.
    """
    with pytest.raises(gs.errors.InvalidConfig, match=needle):
        gs.Config(values)


# ---------------------------------------------------------------------- shared configs
def test_shared_config_is_built_once_per_distinct_values():
    """Equal values give the same validated Config; values of another type (a flag as
    a number) or another value give their own, validated as Config validates them."""
    a = gs.Config.shared({"launch": "persistent", "block_size": 128})
    assert gs.Config.shared({"block_size": 128, "launch": "persistent"}) is a
    assert a == gs.Config({"launch": "persistent", "block_size": 128})
    assert gs.Config.shared(None) is gs.Config.shared({})
    assert gs.Config.shared(None) == gs.Config()
    assert gs.Config.shared({"block_size": 160}) is not gs.Config.shared({"block_size": 128})
    assert gs.Config.shared({"worklist.dedup": np.True_})["worklist.dedup"] is True
    with pytest.raises(gs.InvalidConfig, match="worklist.dedup must be one of"):
        gs.Config.shared({"worklist.dedup": 1})
    with pytest.raises(gs.InvalidConfig, match="no_such"):
        gs.Config.shared({"driving": "no_such"})


def test_shared_config_refuses_what_config_refuses():
    """Unhashable values, non-string keys and non-mappings get Config's own errors."""
    with pytest.raises(gs.InvalidConfig, match="must be one of"):
        gs.Config.shared({"worklist.dedup": [True]})
    with pytest.raises(gs.InvalidConfig, match="keys must be strings"):
        gs.Config.shared({1: 2, "launch": "persistent"})
    with pytest.raises(gs.InvalidConfig, match="Config.from_file"):
        gs.Config.shared("config.json")


def test_shared_configs_follow_the_loaded_plugins():
    """Reloading the plugins starts a new cache: no Config outlives its registry."""
    from gswitch.plugins import reset_registry

    before = gs.Config.shared({"launch": "persistent"})
    reset_registry()
    after = gs.Config.shared({"launch": "persistent"})
    assert after is not before and after == before


def test_validation_asks_the_default_hook_once(monkeypatch):
    """A Config reads the plugins' default configuration once, not once per key."""
    from gswitch import config as config_module

    calls = []
    real = config_module._default_values

    def counted():
        calls.append(1)
        return real()

    monkeypatch.setattr(config_module, "_default_values", counted)
    gs.Config({"launch": "persistent"})
    assert len(calls) == 1


def test_run_with_a_mapping_reuses_its_config():
    """Repeated runs with equal config mappings share one validated Config."""
    g = gs.Graph.from_edges([0, 1, 2], [1, 2, 3])
    first = gs.run("bfs", g, source=0, backend="cpu", config={"direction": "push"})
    again = gs.run("bfs", g, source=0, backend="cpu", config={"direction": "push"})
    assert again.config is first.config
    assert again.fields["depth"].tolist() == [0, 1, 2, 3]
