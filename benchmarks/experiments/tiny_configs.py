"""The 4-node BFS call under several configurations, alternating batches in one process,
and where their host time differs (cProfile's own time per function, per call).

Usage::

    python benchmarks/experiments/tiny_configs.py [--calls 3000] [--batch 100] [--profile 2000]

Configurations: the plain call (the selector's pick), the selector's pick passed as a
``Config``, the default with a persistent launch, and the selector's pick with each of
its keys put back to the default in turn (which key costs the host time).
"""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import argparse
import cProfile
import pstats
import time

from _common import TINY_EDGES, require_gpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=3000)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--profile", type=int, default=2000, help="profiled calls per config")
    args = ap.parse_args()
    require_gpu("tiny_configs.py")
    import gswitch as gs
    from gswitch import selector

    tiny = gs.Graph.from_edges(*TINY_EDGES)
    pick = dict(selector.select("bfs", tiny).config)
    confs: dict[str, object] = {"plain": None, "pick-as-Config": gs.Config(pick),
                                "default-persistent": gs.Config({"launch": "persistent"})}
    base = gs.Config({"launch": "persistent"})
    for k in pick:
        if k == "launch":
            continue
        one = {kk: v for kk, v in pick.items() if kk != k and not kk.startswith(k + ".")}
        try:
            confs[f"pick-without-{k}"] = gs.Config(one)
        except Exception as exc:  # noqa: BLE001 - a key another needs
            print(f"skip pick-without-{k}: {exc}")
    print("pick:", pick, "default keys differing:",
          {k: base[k] for k in pick if k in base.keys() and base[k] != pick[k]})

    def call(conf: object) -> None:
        r = gs.run("bfs", tiny, source=0, backend="gpu", config=conf)
        assert r.fields["depth"].tolist() == [0, 1, 2, 3]

    for c in confs.values():
        for _ in range(50):
            call(c)
    times: dict[str, list[float]] = {k: [] for k in confs}
    for _ in range(max(1, args.calls // args.batch)):
        for name, c in confs.items():
            for _ in range(args.batch):
                t = time.perf_counter()
                call(c)
                times[name].append(time.perf_counter() - t)
    for name, ts in times.items():
        ts.sort()
        print(f"{name:40s} median {ts[len(ts) // 2] * 1e6:7.1f} us  p90 "
              f"{ts[int(len(ts) * 0.9)] * 1e6:7.1f} us")
    if not args.profile:
        return
    own: dict[str, dict[str, float]] = {}
    for name in ("plain", "default-persistent"):
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(args.profile):
            call(confs[name])
        prof.disable()
        st = pstats.Stats(prof).stats  # type: ignore[attr-defined]
        own[name] = {f"{pathlib.Path(f).name}:{ln}({fn})": tt / args.profile * 1e6
                     for (f, ln, fn), (_cc, _nc, tt, _ct, _cl) in st.items()}
    a, b = own["plain"], own["default-persistent"]
    diff = sorted(((a.get(k, 0.0) - b.get(k, 0.0), k) for k in set(a) | set(b)), reverse=True)
    print("own time per call, plain minus default-persistent (us), largest first:")
    for d, k in diff[:25]:
        print(f"  {d:+7.2f}  plain {a.get(k, 0.0):6.2f}  persistent {b.get(k, 0.0):6.2f}  {k}")


if __name__ == "__main__":
    main()
