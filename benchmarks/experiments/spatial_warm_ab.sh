#!/usr/bin/env bash
# Same-run A/B of how a staged spatial partition warms its rows and edge ids before its
# passes: the working tree (prefetch.global.L1 hints), real loads through the
# non-coherent path that stay in L1 (v2), and no warming at all (v3), with .ab_old as the
# unstaged baseline. BFS on the 1M-node chain of 32-node cliques. Run from the repository
# root on a GPU machine after benchmarks/device_env.sh.
set -euo pipefail
source benchmarks/experiments/stage_ab.sh
python3 - <<'PY'
import pathlib, shutil
base = pathlib.Path("/tmp/st-new")
f = "gswitch/strategies/driving/cuda/spatial.cuh"
src = (base / f).read_text()
start = src.index("__device__ __forceinline__ void gs_spatial_warm(")
end = src.index("__device__ __forceinline__ void gs_phase_spatial_run(")
v2 = '''__device__ __forceinline__ void gs_spatial_warm(gs_vid lo, unsigned len) {
  const gs_eid first = __ldg(gs.row + lo), last = __ldg(gs.row + lo + len);
  const unsigned row_step = 128u / sizeof(gs_eid), col_step = 128u / sizeof(gs_vid);
  unsigned long long acc = 0;
  for (unsigned i = threadIdx.x * row_step; i <= len; i += blockDim.x * row_step)
    acc += (unsigned long long)__ldg(gs.row + lo + i);
  for (gs_eid e = first + (gs_eid)threadIdx.x * col_step; e < last;
       e += (gs_eid)blockDim.x * col_step)
    acc += (unsigned long long)__ldg(gs.col + e);
  asm volatile("" :: "l"(acc));
}

'''
v3 = '''__device__ __forceinline__ void gs_spatial_warm(gs_vid lo, unsigned len) {
  (void)lo; (void)len;
}

'''
for name, body in (("v2", v2), ("v3", v3)):
    d = pathlib.Path(f"/tmp/st-{name}")
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(base, d)
    (d / f).write_text(src[:start] + body + src[end:])
PY
for d in old new v2 v3; do
  echo "=== tree $d"
  python3 benchmarks/experiments/ab_tree.py /tmp/st-$d benchmarks/bench_spatial.py \
    --backend gpu --cliques 32768 --graphs chain --algs ${ALGS:-bfs} --no-networkx \
    --repeats 2 --only ${ONLY:-sp1024-b1024,sp4096-b1024-persistent} \
    --extra @benchmarks/configs/chain_spatial_stage.json --tag $d 2>&1 | grep -v Warning
done
