"""Built-in strategy plugins, one module per strategy, registered like any third-party plugin."""

BUILTIN_MODULES = (
    "gswitch.strategies.defaults",
    "gswitch.strategies.worklist.atomic",
    "gswitch.strategies.worklist.warp_aggregated",
    "gswitch.strategies.worklist.bitmap",
    "gswitch.strategies.load_balance.thread",
    "gswitch.strategies.load_balance.virtual_warp",
    "gswitch.strategies.load_balance.twc",
    "gswitch.strategies.driving.data",
    "gswitch.strategies.driving.topology",
    "gswitch.strategies.driving.temporal",
    "gswitch.strategies.driving.priority",
    "gswitch.strategies.driving.subset",
    "gswitch.strategies.driving.spatial",
    "gswitch.strategies.direction.push",
    "gswitch.strategies.direction.pull",
    "gswitch.strategies.direction.direction_optimizing",
    "gswitch.strategies.launch.host_loop",
    "gswitch.strategies.launch.persistent",
    "gswitch.strategies.launch.cuda_graph",
)
