"""Ways to send a large host array to the device, timed on this host: the upload of a
first call on a large graph (the column indices and weights of its edges).

For one array of ``--mb`` MiB (default 130, the column indices of a 32M-edge graph),
median of ``--reps``, every copy checked against the host array:

- pageable: ``cupy.asarray`` (the driver copies through its own staging, one thread);
- the engine's upload (:class:`gswitch.engine.upload.Uploader`): host threads fill
  page-locked slots and queue each slot's transfer as soon as it is filled, at 2, 4 and
  8 threads where the host has the cores;
- and, as floors, the transfer from page-locked memory alone and a one-thread copy into
  page-locked memory.

Usage::

    python benchmarks/experiments/upload_floor.py [--mb 130] [--reps 7]
"""

from __future__ import annotations

import pathlib
import sys

# the maintained benchmarks' helpers live one folder up
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import argparse
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from _common import interleaved_rates, require_gpu, write_json


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=int, default=130)
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args()
    require_gpu("upload_floor.py")
    import cupy as cp

    from gswitch.engine.gpu import GpuEngine
    from gswitch.engine.upload import Uploader

    engine = GpuEngine.instance()
    stream = engine.stream
    host = np.random.default_rng(0).integers(0, 1 << 30, args.mb << 18).astype(np.int32)
    pinned = np.frombuffer(cp.cuda.alloc_pinned_memory(host.nbytes), np.int32, host.size)
    pinned[...] = host
    target = cp.empty(host.shape, dtype=np.int32)

    def pageable():
        with stream:
            dev = cp.asarray(host)
        stream.synchronize()
        return dev

    def transfer():
        target.set(pinned, stream=stream)
        stream.synchronize()

    def into_pinned():
        np.copyto(pinned, host)

    ways = {"pageable cupy.asarray": pageable, "page-locked transfer only": transfer,
            "host copy into page-locked, one thread": into_pinned}
    cores = os.cpu_count() or 1
    pools = []
    for threads in (2, 4, 8):
        if threads > cores:
            continue
        up = Uploader(cp, stream, engine.device_id, threads)
        pool = ThreadPoolExecutor(threads)
        pools.append(pool)

        def upload(up=up, pool=pool):
            with stream:
                dev = up.to_device(host, pool)
            stream.synchronize()
            return dev

        ways[f"upload, {threads} threads"] = upload
    out = {"device": engine.device_name, "mb": args.mb, "cores": cores, "ms": {}}
    print(f"{args.mb} MiB to the device on {out['device']} ({cores} host cores), "
          f"median of {args.reps}")

    def check(name, got):
        assert np.array_equal(got.get(), host), name

    out["ms"] = interleaved_rates(ways, args.reps, args.mb, check)
    write_json("upload_floor", out)


if __name__ == "__main__":
    main()
