"""Read a Chrome trace of ``call_timeline.py --trace``: per call, the device's busy time,
its operations in order, and its idle gaps with the host's CUDA calls inside them.

Usage::

    python benchmarks/experiments/timeline_gaps.py TRACE.json [--call 5] [--top 10]
"""

from __future__ import annotations

import argparse
import json

_DEVICE = ("kernel", "gpu_memcpy", "gpu_memset")
_HOST = ("cuda_runtime", "cuda_driver")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--call", type=int, default=5)
    ap.add_argument("--top", type=int, default=10)
    args = ap.parse_args()
    with open(args.trace) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    span = [e for e in events if e.get("cat") == "user_annotation"
            and e["name"] == f"call {args.call}"]
    if not span:
        raise SystemExit(f"no range 'call {args.call}' in {args.trace}")
    start, end = span[0]["ts"], span[0]["ts"] + span[0]["dur"]
    gpu = sorted((e["ts"], e["ts"] + e["dur"], e["name"]) for e in events
                 if e.get("cat") in _DEVICE and start <= e["ts"] <= end)
    api = sorted((e["ts"], e["ts"] + e["dur"], e["name"]) for e in events
                 if e.get("cat") in _HOST and start <= e["ts"] <= end)
    busy = sum(b - a for a, b, _ in gpu)
    print(f"call {args.call}: {end - start:.1f} us on the host, device busy {busy:.1f} us "
          f"in {len(gpu)} operations; {len(api)} CUDA calls seen")
    print("  device timeline (us from the call's start, duration):")
    for a, b, n in gpu:
        print(f"    {a - start:9.1f}  {b - a:8.1f}  {n[:70]}")
    t, gaps = start, []
    for a, b, n in gpu:
        if a > t:
            gaps.append((a - t, t, a, n))
        t = max(t, b)
    gaps.append((end - t, t, end, "(the call's end)"))
    print(f"  idle: {sum(g[0] for g in gaps):.1f} us; the largest gaps:")
    for d, a, b, before in sorted(gaps, reverse=True)[:args.top]:
        inside = [n for x, y, n in api if x < b and y > a]
        print(f"    {d:8.1f} us at {a - start:8.1f}, before {before[:40]}: "
              f"{len(inside)} CUDA calls {', '.join(inside[:6])}")


if __name__ == "__main__":
    main()
