"""Trials to within a fraction of the best, per study of a tuner journal, counted in the
order the trials finished (the journals of ``bench_tuner.py --storage``).

    python benchmarks/experiments/recount_journal.py results/h100_s8_tuner200_eight_cases.journal.gz
        [--mark-from OTHER.journal.gz] [--fraction 0.05]

``--mark-from`` measures against the better of each study's own best and the best of the
study of the same name in another journal (a longer study of the same graph, say).
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import statistics
import tempfile
from pathlib import Path

import optuna
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend


def load(path: str) -> dict[str, list]:
    tmp = Path(tempfile.mkdtemp()) / "studies.journal"
    if path.endswith(".gz"):
        with gzip.open(path, "rb") as src, open(tmp, "wb") as dst:
            shutil.copyfileobj(src, dst)
    else:
        shutil.copy(path, tmp)
    storage = JournalStorage(JournalFileBackend(str(tmp)))
    out = {}
    for summary in optuna.get_all_study_summaries(storage):
        study = optuna.load_study(study_name=summary.study_name, storage=storage)
        done = [t for t in study.get_trials(deepcopy=False)
                if t.state.name in ("COMPLETE", "PRUNED")]
        out[summary.study_name] = sorted(done, key=lambda t: (t.datetime_complete, t.number))
    return out


def best(trials: list) -> float:
    return min(t.value for t in trials if t.user_attrs.get("outcome") == "ok")


def first_within(trials: list, mark: float, fraction: float) -> int | None:
    for k, t in enumerate(trials, 1):
        if t.user_attrs.get("outcome") == "ok" and t.value <= mark * (1 + fraction):
            return k
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("journal")
    ap.add_argument("--mark-from")
    ap.add_argument("--fraction", type=float, default=0.05)
    args = ap.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    studies = load(args.journal)
    other = load(args.mark_from) if args.mark_from else {}
    counts = []
    for name, trials in studies.items():
        mark = best(trials)
        if name in other:
            mark = min(mark, best(other[name]))
        k = first_within(trials, mark, args.fraction)
        counts.append(k)
        print(f"{name}: {len(trials)} trials, mark {mark:.4g} s, within "
              f"{args.fraction:.0%} at trial {k}")
    found = [k for k in counts if k is not None]
    if found:
        print(f"median {statistics.median(found)}")


if __name__ == "__main__":
    main()
