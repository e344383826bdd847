import gswitch as gs


@gs.hookimpl
def gswitch_algorithms():
    return []
