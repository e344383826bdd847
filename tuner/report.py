"""``gswitch report``: plots and a markdown summary of one tuning study.

Plots use ``optuna.visualization.matplotlib`` (optimization history, parameter
importances) plus one bar chart of the best time per option of each axis. They are
drawn from the correct trials only: infeasible trials carry a penalty value that
would flatten every plot. Without matplotlib the markdown summary is still written.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

from gswitch.errors import InvalidInput

from .space import TunerError, space_version
from .storage import (
    default_storage_url,
    device_key,
    open_storage,
    redact_url,
    storage_exists,
    study_name,
)
from .study import _default_time, _optuna, best_feasible

__all__ = ["write_report", "find_study"]


def find_study(store: Any, *, algorithm: str | None, graph: Any, study: str | None,
               backend: str, objective: str = "call") -> tuple[str, str | None]:
    """Name of the study to report, and a note when it is not of the current space."""
    names = {s.study_name: s for s in store.get_all_studies()}
    if study:
        if study not in names:
            listed = ", ".join(sorted(names)[:5]) or "none"
            raise TunerError(f"no study named {study!r} in this storage (studies: {listed})")
        return study, None
    from gswitch.plugins import get_registry
    from gswitch.runner import resolve_backend

    spec = get_registry().algorithm(str(algorithm))
    device = device_key(resolve_backend(backend))
    version = space_version()
    name = study_name(spec.name, graph.fingerprint, device, version, objective)
    if name in names:
        return name, None
    same = [s for s in names.values() if s.user_attrs.get("fingerprint") == graph.fingerprint
            and s.user_attrs.get("algorithm") == spec.name
            and s.user_attrs.get("device") == device
            and s.user_attrs.get("objective_key", "device") == objective]
    if not same:
        raise TunerError(f"no {spec.name} study for this graph (fingerprint "
                         f"{graph.fingerprint[:16]}) on {device}; run `gswitch tune` first")
    newest = max(same, key=lambda s: s._study_id)
    return newest.study_name, (f"study {newest.study_name!r} was made with space version "
                               f"{newest.user_attrs.get('space_version')}; the installed "
                               f"plugins give {version}")


def _axis_table(trials: list[Any], space: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per axis and option: trials, correct ones, the best time."""
    out: dict[str, dict[str, Any]] = {}
    for axis in space.get("axes", {}):
        rows: dict[str, Any] = {}
        for option in space["axes"][axis]:
            mine = [t for t in trials if (t.user_attrs.get("config") or {}).get(axis) == option]
            ok = [t.value for t in mine if t.user_attrs.get("outcome") == "ok"
                  and t.state.name == "COMPLETE"]
            rows[option] = {"trials": len(mine), "correct": len(ok),
                            "best_s": min(ok) if ok else None}
        out[axis] = rows
    return out


def _source_table(trials: list[Any]) -> dict[str, dict[str, Any]]:
    """Trials, correct trials and best time per source: the default, a similar graph's
    best, a plugin's suggestion, the local search (``refine``), the sampler, a retry.
    """
    out: dict[str, dict[str, Any]] = {}
    for t in trials:
        if t.state.name not in ("COMPLETE", "PRUNED"):
            continue
        kind = str(t.user_attrs.get("source", "sampler")).split(":", 1)[0]
        row = out.setdefault(kind, {"trials": 0, "correct": 0, "best_s": None})
        row["trials"] += 1
        if t.state.name == "COMPLETE" and t.user_attrs.get("outcome") == "ok":
            row["correct"] += 1
            if row["best_s"] is None or t.value < row["best_s"]:
                row["best_s"] = t.value
    return out


def _plots(out: Path, feasible: list[Any], axes: dict[str, dict[str, Any]],
           notes: list[str]) -> list[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        notes.append("matplotlib is not installed, so no plots were drawn; "
                     "pip install 'gswitch[report]'")
        return []
    optuna = _optuna()
    from optuna.visualization import matplotlib as ovm

    files = []
    mem = optuna.create_study(direction="minimize")
    mem.add_trials(feasible)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # optuna marks the matplotlib plots experimental
        for fname, draw in (("history.png", ovm.plot_optimization_history),
                            ("importances.png", ovm.plot_param_importances)):
            try:
                ax = draw(mem)
            except (ValueError, RuntimeError, ZeroDivisionError) as exc:
                notes.append(f"{fname} not drawn: {exc}")
                continue
            fig = ax.figure if hasattr(ax, "figure") else ax.flat[0].figure
            fig.set_size_inches(8, 4.5)
            fig.tight_layout()
            fig.savefig(out / fname, dpi=100)
            plt.close(fig)
            files.append(str(out / fname))
    if axes:
        fig, subs = plt.subplots(1, len(axes), figsize=(4 * len(axes), 3.5), squeeze=False)
        for ax, (axis, rows) in zip(subs[0], axes.items()):
            names = [o for o, r in rows.items() if r["best_s"] is not None]
            ax.bar(names, [rows[o]["best_s"] * 1e3 for o in names])
            ax.set_title(axis)
            ax.set_ylabel("best time (ms)")
            ax.tick_params(axis="x", rotation=30)
        fig.tight_layout()
        fig.savefig(out / "axes.png", dpi=100)
        plt.close(fig)
        files.append(str(out / "axes.png"))
    return files


def write_report(out: Path, *, algorithm: str | None = None, graph: Any = None,
                 study: str | None = None, storage: str | None = None,
                 backend: str = "auto", objective: str = "call") -> dict[str, Any]:
    """Write ``summary.md``, ``summary.json`` and PNG plots of a study into ``out``.

    Parameters
    ----------
    out : pathlib.Path
        Output folder (created; its parent must exist).
    algorithm, graph : optional
        Name the study by algorithm and graph (current device and space version)...
    study : str, optional
        ...or by its name.
    storage : str, optional
        Optuna storage URL (default ``$GSWITCH_STORAGE`` or the cache's journal file).
    backend : str
        Device of the study when named by graph.

    Returns
    -------
    dict
        ``study_name``, ``files``, ``notes``, ``best``, ``counts`` and ``axes``.

    Raises
    ------
    TunerError
        No such study.
    InvalidInput
        ``out``'s parent does not exist, or ``out`` is a file.

    """
    if not out.parent.is_dir():
        raise InvalidInput(f"--out {out}: directory {out.parent} does not exist; create it "
                           "first")
    if out.exists() and not out.is_dir():
        raise InvalidInput(f"--out {out} is a file; give a folder for the report (it is "
                           "created when missing)")
    from .worker import load_extra_plugins

    load_extra_plugins()
    url = storage or default_storage_url()
    if not storage_exists(url):
        raise TunerError(f"no study to report: storage {redact_url(url)!r} does not exist; check "
                         "--storage, or run `gswitch tune` first")
    store = open_storage(storage)
    name, note = find_study(store, algorithm=algorithm, graph=graph, study=study,
                            backend=backend, objective=objective)
    optuna = _optuna()
    st = optuna.load_study(study_name=name, storage=store)
    trials = st.get_trials(deepcopy=False)
    attrs = st.user_attrs
    notes = [note] if note else []
    out.mkdir(exist_ok=True)
    counts: dict[str, int] = {}
    reasons: dict[str, int] = {}
    for t in trials:
        key = t.user_attrs.get("outcome", t.state.name.lower())
        if t.state.name == "FAIL" and key != "cancelled":
            key = "failed (retried)"
        counts[key] = counts.get(key, 0) + 1
        if key not in ("ok", "pruned", "cancelled") and t.user_attrs.get("reason"):
            r = f"{key}: {t.user_attrs['reason']}"[:200]
            reasons[r] = reasons.get(r, 0) + 1
    feasible = [t for t in trials if t.state.name == "COMPLETE"
                and t.user_attrs.get("outcome") == "ok"]
    best = best_feasible(trials)
    default_s = _default_time(trials)
    axes = _axis_table(trials, attrs.get("space", {}))
    sources = _source_table(trials)
    files = _plots(out, feasible, axes, notes)
    ms = (lambda x: "-" if x is None else f"{x * 1e3:.3f}")  # noqa: E731
    lines = [f"# Tuning report: {name}", "",
             f"- storage: `{redact_url(url)}`",
             f"- algorithm: {attrs.get('algorithm')}, graph: {attrs.get('graph_name') or '-'} "
             f"({attrs.get('n_nodes')} nodes, {attrs.get('n_edges')} edges, fingerprint "
             f"`{str(attrs.get('fingerprint'))[:16]}`)",
             f"- device: {attrs.get('device')}, objective: {attrs.get('objective')}",
             f"- answers checked against: {attrs.get('reference')}",
             f"- space version: {attrs.get('space_version')}",
             "- trials: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())), ""]
    if best is not None:
        speed = f" ({default_s / best.value:.2f}x over the default)" if default_s else ""
        both = best.user_attrs
        times = (f"call {ms(both['call_s'])} ms, device {ms(both['device_s'])} ms"
                 if both.get("call_s") is not None and both.get("device_s") is not None
                 else "")
        lines += [f"## Best configuration: trial {best.number}, {ms(best.value)} ms{speed}", "",
                  *([f"Median {times}.", ""] if times else []),
                  "```json", json.dumps(best.user_attrs.get("config"), indent=2,
                                        sort_keys=True), "```", ""]
    else:
        lines += ["## No correct configuration yet", ""]
    lines += [f"Default configuration: {ms(default_s)} ms", ""]
    for axis, rows in axes.items():
        lines += [f"## {axis}: best time per option", "", "| option | trials | correct | "
                  "best (ms) |", "|---|---|---|---|"]
        lines += [f"| {o} | {r['trials']} | {r['correct']} | {ms(r['best_s'])} |"
                  for o, r in rows.items()]
        lines.append("")
    lines += ["## Where trials came from", "", "| source | trials | correct | best (ms) |",
              "|---|---|---|---|"]
    lines += [f"| {o} | {r['trials']} | {r['correct']} | {ms(r['best_s'])} |"
              for o, r in sources.items()]
    lines.append("")
    if reasons:
        lines += ["## Why trials did not count", ""]
        lines += [f"- {n} x {r}" for r, n in sorted(reasons.items(), key=lambda x: -x[1])]
        lines.append("")
    if files:
        lines += ["## Plots", ""] + [f"![{Path(f).stem}]({Path(f).name})" for f in files] + [""]
    for n in notes:
        lines.append(f"> {n}")
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    summary = {"study_name": name, "storage": redact_url(url), "counts": counts, "axes": axes,
               "sources": sources,
               "best": None if best is None else {"trial": best.number, "time_s": best.value,
                                                   "call_s": best.user_attrs.get("call_s"),
                                                   "device_s": best.user_attrs.get("device_s"),
                                                   "config": best.user_attrs.get("config")},
               "default_time_s": default_s, "notes": notes,
               "files": [str(out / "summary.md"), str(out / "summary.json")] + files}
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
    return summary
