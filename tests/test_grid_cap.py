"""The persistent launch's grid cap (``launch.max_blocks``): valid values, the tuner's
searched ones, and on the GPU the reference answer with at most that many blocks (marked
``gpu``, skipped without a device).
"""

import pytest

import gswitch as gs
from gswitch.errors import InvalidConfig
from gswitch.generators import road
from gswitch.plugins import get_registry
from gswitch.testing.reference import compare, reference


def test_the_cap_is_a_launch_parameter_with_searched_values():
    cls = get_registry().strategies["launch"]["persistent"]
    cap = cls.params["max_blocks"]
    assert cap.default == 0 and cap.searched == (0, 16, 32, 64)
    assert gs.Config({"launch": "persistent", "launch.max_blocks": 24})[
        "launch.max_blocks"] == 24
    with pytest.raises(InvalidConfig, match="max_blocks must be in"):
        gs.Config({"launch": "persistent", "launch.max_blocks": -1})


def test_the_gpu_search_draws_only_the_searched_caps():
    import optuna
    from gswitch.tuner.space import build_space, moves

    space = build_space(get_registry().algorithm("bfs"), road(8, 8), "gpu")
    axis, choices = space.axis_choices("launch", space.default_variant)
    assert "persistent" in choices
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=5))
    drawn = set()
    for _ in range(40):
        study.enqueue_trial({axis: "persistent"})
        trial = study.ask()
        drawn.add(space.suggest(trial)["launch.max_blocks"])
        study.tell(trial, 1.0)
    assert drawn == {0, 16, 32, 64}
    cap = get_registry().strategies["launch"]["persistent"].params["max_blocks"]
    assert moves(cap, 32) == [64, 16]
    # a configuration's own cap enqueues as the nearest searched one
    params = space.trial_params({"launch": "persistent", "launch.max_blocks": 20})
    assert 16 in params.values()


@pytest.mark.gpu
@pytest.mark.skipif(not gs.gpu_available(), reason="needs CuPy and an NVIDIA GPU")
@pytest.mark.parametrize("cap", [1, 3, 16, 0])
@pytest.mark.parametrize("alg,cfg", [
    ("bfs", {"load_balance": "virtual_warp", "load_balance.size": 4}),
    ("sssp", {"variant": "delta_stepping", "driving": "priority"}),
    ("cc", {}),
])
def test_gpu_capped_grids_give_the_reference(alg, cfg, cap):
    g = road(48, 40, seed=3)
    kw = {} if alg == "cc" else {"source": 5}
    r = gs.run(alg, g, backend="gpu", config={"launch": "persistent",
                                              "launch.max_blocks": cap, **cfg}, **kw)
    field = {"bfs": "depth", "sssp": "dist", "cc": "comp"}[alg]
    assert compare(alg, r.fields[field], reference(alg, g, **kw)) is None
    blocks = r.stats["grid_blocks"]
    assert blocks >= 1 and (cap == 0 or blocks <= cap)
    if cap == 0:  # uncapped: at least a block per multiprocessor where there is work
        import cupy

        sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
        assert blocks >= min(sms, 16)
