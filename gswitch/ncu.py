"""Irregularity metrics of a run's kernels from Nsight Compute (``ncu``).

Burtscher, Nasre & Pingali ("A quantitative study of irregular programs on GPUs", IISWC
2012) measure two properties of a kernel: *control-flow irregularity*, divergent branches
per executed instruction, and *memory-access irregularity*, replayed per issued memory
instruction. On Hopper (sm_90) the counters are:

- ``smsp__sass_branch_targets_threads_divergent.sum``: branch targets that diverged;
- ``smsp__sass_inst_executed.sum``: warp-level SASS instructions executed;
- ``smsp__sass_inst_executed_op_global.sum``: global memory instructions executed;
- ``smsp__sass_l1tex_tags_mem_global.sum``: L1 tag lookups (one per 128-byte line a warp
  instruction touches). Since Volta a memory instruction is not re-issued; the L1TEX unit
  looks up one more line where Fermi/Kepler replayed it, so the replays are the lookups
  beyond one per instruction and the issued memory instructions are the lookups.

The profiled command runs in a subprocess under ``ncu --csv --log-file``; its CSV (one row
per kernel launch and metric, ``ncu --page details``) is parsed by :func:`parse_csv`.
"""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["METRICS", "parse_csv", "irregularity", "run_under_ncu", "find_ncu"]

#: what each counter is, by the name ncu reports it under
METRICS = {
    "divergent_branches": "smsp__sass_branch_targets_threads_divergent.sum",
    "instructions": "smsp__sass_inst_executed.sum",
    "memory_instructions": "smsp__sass_inst_executed_op_global.sum",
    "memory_lines": "smsp__sass_l1tex_tags_mem_global.sum",
}
#: kernel launches profiled at most (ncu replays every launch once per counter pass)
LAUNCH_COUNT = 500


def find_ncu() -> str | None:
    """The path of ``ncu`` on ``PATH``, or ``None``."""
    return shutil.which("ncu")


def _number(text: str) -> float | None:
    text = text.strip().replace(",", "")
    try:
        return float(text)
    except ValueError:  # "n/a", empty
        return None


def parse_csv(text: str) -> dict[str, dict[str, float]]:
    """Sum each metric over the launches of each kernel in ncu's CSV output.

    Parameters
    ----------
    text : str
        What ``ncu --csv`` wrote: lines other than CSV (``==PROF==`` notes, the program's
        output) are skipped; the header must have ``Kernel Name``, ``Metric Name`` and
        ``Metric Value`` columns (values may carry thousands separators).

    Returns
    -------
    dict
        Kernel name -> metric name -> the sum over its launches, plus ``"launches"``.

    """
    rows = [ln for ln in text.splitlines() if ln.startswith('"')]
    out: dict[str, dict[str, float]] = {}
    if not rows:
        return out
    reader = csv.DictReader(io.StringIO("\n".join(rows)))
    need = {"Kernel Name", "Metric Name", "Metric Value"}
    if not need <= set(reader.fieldnames or ()):
        return out
    seen: dict[str, set[str]] = {}
    for row in reader:
        kernel = row["Kernel Name"]
        value = _number(row["Metric Value"])
        if value is None:
            continue
        per = out.setdefault(kernel, {"launches": 0.0})
        per[row["Metric Name"]] = per.get(row["Metric Name"], 0.0) + value
        ids = seen.setdefault(kernel, set())
        launch = row.get("ID", "")
        if launch not in ids:
            ids.add(launch)
            per["launches"] += 1
    return out


def irregularity(counters: dict[str, float]) -> dict[str, float | None]:
    """Control-flow and memory-access irregularity from one set of summed counters."""
    get = {k: counters.get(m) for k, m in METRICS.items()}
    inst, div = get["instructions"], get["divergent_branches"]
    lines, mem = get["memory_lines"], get["memory_instructions"]
    return {
        "control_flow": div / inst if inst and div is not None else None,
        "memory_access": max(0.0, lines - mem) / lines if lines and mem is not None else None,
        "instructions": inst,
        "divergent_branches": div,
        "memory_instructions": mem,
        "memory_lines": lines,
    }


def run_under_ncu(command: Sequence[str], ncu: str, timeout_s: float = 600.0
                  ) -> dict[str, Any]:
    """Run ``command`` under ``ncu`` with :data:`METRICS`; the irregularity of each kernel
    and of all together, or a ``note`` saying why there is none.
    """
    with tempfile.TemporaryDirectory(prefix="gswitch-ncu-") as tmp:
        log = Path(tmp) / "ncu.csv"
        argv = [ncu, "--csv", "--print-units", "base", "--target-processes", "all",
                "--launch-count", str(LAUNCH_COUNT), "--metrics", ",".join(METRICS.values()),
                "--log-file", str(log), *command]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s,
                                  check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return {"available": False, "note": f"ncu did not finish: {exc}"}
        text = log.read_text(errors="replace") if log.exists() else ""
    kernels = parse_csv(text)
    if not kernels:
        tail = (done.stderr or done.stdout or "").strip().splitlines()
        why = tail[-1] if tail else f"exit status {done.returncode}"
        return {"available": False, "note": f"ncu reported no metrics ({why})"}
    total: dict[str, float] = {}
    for per in kernels.values():
        for k, v in per.items():
            total[k] = total.get(k, 0.0) + v
    return {"available": True, "note": f"Nsight Compute, first {LAUNCH_COUNT} launches at most",
            **irregularity(total), "launches": int(total.get("launches", 0)),
            "kernels": {k: {**irregularity(v), "launches": int(v["launches"])}
                        for k, v in kernels.items()}}
