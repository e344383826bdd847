"""Progress bars of ``gswitch tune``: the study's, one per worker when several share it,
and one per device lane of a batch.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

__all__ = ["TuneBars", "finished_count", "failed_count", "fmt_s"]


def fmt_s(x: float | None) -> str:
    """A time for people: ms below a second."""
    if x is None:
        return "-"
    return f"{x * 1e3:.3f} ms" if x < 1 else f"{x:.3f} s"


def finished_count(counts: dict[str, int]) -> int:
    """Trials that count towards ``--trials`` (cancelled: asked ahead, never run)."""
    return sum(v for k, v in counts.items()
               if k not in ("running", "waiting", "failed", "cancelled"))


def failed_count(counts: dict[str, int]) -> int:
    """Trials that gave no time: refused, crashed, wrong, failed."""
    return sum(v for k, v in counts.items()
               if k not in ("ok", "pruned", "running", "waiting", "cancelled"))


class TuneBars:
    """tqdm bars fed by the tuner's progress callbacks (:meth:`study` for one study,
    :meth:`batch` for a batch). Callbacks come from several threads.

    Parameters
    ----------
    trials : int
        Trials each study should have.
    label : str
        The main bar's title.
    graphs : int, optional
        Graphs of a batch (its main bar counts graphs instead of trials).

    """

    def __init__(self, trials: int, label: str, graphs: int | None = None) -> None:
        from tqdm import tqdm

        self._tqdm = tqdm
        self.trials = trials
        self.lock = threading.Lock()
        self.main = tqdm(total=graphs if graphs is not None else trials, desc=label,
                         unit="graph" if graphs is not None else "trial", leave=False)
        self.lines: dict[str, Any] = {}

    def _line(self, key: str, desc: str) -> Any:
        bar = self.lines.get(key)
        if bar is None:
            bar = self.lines[key] = self._tqdm(total=self.trials, desc=desc, unit="trial",
                                               leave=False, position=len(self.lines) + 1)
        return bar

    def study(self, info: dict[str, Any]) -> None:
        """Progress of one study: the main bar, and a line per worker when several."""
        c = info["counts"]
        with self.lock:
            self.main.n = min(finished_count(c), self.trials)
            self.main.set_postfix(failed=failed_count(c), pruned=c.get("pruned", 0),
                                  best=fmt_s(info["best_s"]), refresh=False)
            self.main.refresh()
            workers = info.get("workers") or {}
            if len(workers) > 1 or any(k != "worker" for k in workers):
                for label, mine in sorted(workers.items()):
                    bar = self._line(label, f"  {label}")
                    bar.n = mine["trials"]
                    bar.set_postfix(last=mine["last"], refresh=False)
                    bar.refresh()

    def batch(self, info: dict[str, Any]) -> None:
        """Progress of a batch: graphs done, and per device lane its graph's study."""
        lane = info["lane"]
        desc = f"  gpu {lane}" if lane != "default" else "  graph"
        with self.lock:
            bar = self._line(lane, desc)
            name = Path(info["graph"]).name
            if info["event"] == "start":
                bar.reset(total=self.trials)
                bar.set_description(f"{desc}: {name}")
            elif info["event"] == "trial":
                c = info["counts"]
                bar.n = min(finished_count(c), self.trials)
                bar.set_postfix(best=fmt_s(info["best_s"]), failed=failed_count(c),
                                refresh=False)
                bar.refresh()
            else:
                self.main.update(1)

    def close(self) -> None:
        """Close every bar."""
        for bar in self.lines.values():
            bar.close()
        self.main.close()
