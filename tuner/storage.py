"""Where studies live, what they are called, and finding tuned graphs again.

A study is named ``<algorithm>@<fingerprint> on <device> (space <version>)`` so that
``optuna study-names`` and optuna-dashboard show something a person can read; the
details (graph name and features, backend, space, best configuration) are study user
attributes. Storage is any Optuna storage URL; the default is a journal file in the
user's cache directory, which several processes on one machine can share safely.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from gswitch.errors import InvalidInput

__all__ = ["cache_dir", "default_storage_url", "open_storage", "storage_exists", "study_name",
           "device_key", "redact_url",
           "graph_features", "feature_distance", "tuned_studies", "STORAGE_ENV"]

#: Environment variable naming the storage URL when ``--storage`` is not given.
STORAGE_ENV = "GSWITCH_STORAGE"

#: Seconds after which a journal file's lock counts as left behind by a killed process.
JOURNAL_LOCK_GRACE_S = 5

#: Attempts at opening a database storage whose schema another process is creating.
SCHEMA_ATTEMPTS = 6

#: Prefix of every study name the tuner creates (other studies in a shared storage are
#: left alone).
_NAME_FORMAT = "{algorithm}@{fingerprint} on {device} (space {version})"


def cache_dir() -> Path:
    """The gswitch cache directory: ``$GSWITCH_CACHE_DIR``, else ``$XDG_CACHE_HOME/gswitch``,
    else ``~/.cache/gswitch`` (not created).
    """
    env = os.environ.get("GSWITCH_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME")
    root = Path(base).expanduser() if base else Path.home() / ".cache"
    return root / "gswitch"


def default_storage_url() -> str:
    """``$GSWITCH_STORAGE`` if set, else a journal file in :func:`cache_dir`."""
    env = os.environ.get(STORAGE_ENV)
    if env:
        return env
    return f"journal://{(cache_dir() / 'tuner' / 'studies.journal').resolve()}"


_HELP = ("use sqlite:///FILE.db, postgresql://USER@HOST/DB, mysql://USER@HOST/DB, "
         "journal:///FILE.journal (or a path ending in .journal or .log)")


_USERINFO = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^/@:]*):(?P<password>.*)@"
                       r"(?P<rest>[^@]*)$", re.DOTALL)
_QUERY_PASSWORD = re.compile(r"([?&]password=)[^&#]*", re.IGNORECASE)


def _password(url: str) -> str | None:
    m = _USERINFO.match(url)
    if m and m["password"]:
        return m["password"]
    q = re.search(r"[?&]password=([^&#]*)", url, re.IGNORECASE)
    return q.group(1) if q and q.group(1) else None


def redact_url(url: str) -> str:
    """The URL with its password replaced by ``***``, for messages and logs.

    ``postgresql://user:secret@host/db`` becomes ``postgresql://user:***@host/db``; a
    ``password=`` query parameter is hidden too. URLs without a password come back as
    they are.
    """
    m = _USERINFO.match(url)
    if m and m["password"]:
        url = f"{m['scheme']}{m['user']}:***@{m['rest']}"
    return _QUERY_PASSWORD.sub(r"\1***", url)


def _scrub(text: str, url: str) -> str:
    """``text`` (a driver's error message) with the URL's password, as written and decoded,
    replaced by ``***``.
    """
    from urllib.parse import unquote

    password = _password(url)
    if password:
        for secret in sorted({password, unquote(password)}, key=len, reverse=True):
            text = text.replace(secret, "***")
    return text.replace(url, redact_url(url))


def _check_userinfo(url: str) -> None:
    """Refuse a password with a bare ``@``: drivers split the URL at its first ``@`` and
    would report the rest of the password as the host name in their errors.
    """
    password = _password(url)
    if password and "@" in password:
        raise InvalidInput(f"the password of storage {redact_url(url)!r} contains '@'; "
                           "percent-encode it as %40 (and ':' as %3A, '/' as %2F)")


def _with_driver(url: str, scheme: str) -> str:
    """A ``postgresql://`` URL with no driver named gets psycopg (v3), which SQLAlchemy 2.1
    takes by default and gswitch's ``postgres`` extra installs; psycopg2 when only that is
    installed. Refused in one line when neither is.
    """
    head = url.split("://", 1)[0]
    if scheme not in ("postgresql", "postgres") or "+" in head:
        return url
    import importlib.util

    rest = url.split("://", 1)[1]
    if importlib.util.find_spec("psycopg") is not None:
        return f"postgresql+psycopg://{rest}"
    if importlib.util.find_spec("psycopg2") is not None:
        return f"postgresql+psycopg2://{rest}"
    raise InvalidInput(f"storage {redact_url(url)!r} needs the PostgreSQL driver psycopg, "
                       'which is not installed; pip install "gswitch[postgres]" (or pip '
                       'install "psycopg[binary]")')


def _schema_race(exc: BaseException) -> bool:
    """Whether an error opening a database storage is another process creating the same
    tables at the same moment (PostgreSQL: a duplicate key in its catalogue, a table that
    already exists, a deadlock).
    """
    text = f"{type(exc).__name__} {exc}".lower()
    return any(k in text for k in ("integrityerror", "duplicate key", "already exists",
                                   "deadlock", "uniqueviolation"))


def _journal_path(url: str) -> Path | None:
    if url.startswith("journal://"):
        rest = url[len("journal://"):]
        return Path(rest[1:] if rest.startswith("//") else rest).expanduser()
    if "://" not in url and url.endswith((".journal", ".log")):
        return Path(url).expanduser()
    return None


def _sqlite_path(url: str) -> Path | None:
    """The database file of a ``sqlite:///FILE`` URL; ``None`` for other URLs and memory."""
    if url.split("://", 1)[0].split("+", 1)[0].lower() != "sqlite" or ":///" not in url:
        return None
    rest = url.split(":///", 1)[1]
    return Path(rest).expanduser() if rest and rest != ":memory:" else None


def storage_exists(url: str | None = None) -> bool:
    """Whether a storage can hold studies already: ``False`` only for a journal or SQLite
    file that does not exist (opening one creates it, which a command that only reads
    studies must not do).

    Parameters
    ----------
    url : str, optional
        Storage URL as :func:`open_storage` takes it (default: :func:`default_storage_url`).

    Returns
    -------
    bool

    """
    url = url or default_storage_url()
    path = _journal_path(url) or _sqlite_path(url)
    return path is None or path.exists()


def _folder(url: str, path: Path, create: bool) -> None:
    """Make the folder of a storage file, or refuse a missing one when not ``create``."""
    if create:
        path.parent.mkdir(parents=True, exist_ok=True)
    elif not path.parent.is_dir():
        raise InvalidInput(f"storage {redact_url(url)!r}: directory {path.parent} does not exist; "
                           "create it or choose another --storage")


def open_storage(url: str | None = None, *, create: bool | None = None) -> Any:
    """Open an Optuna storage from a URL.

    Parameters
    ----------
    url : str, optional
        ``sqlite:///...``, ``postgresql://...``, ``mysql://...`` (any SQLAlchemy URL
        Optuna's ``RDBStorage`` accepts), ``journal:///PATH`` or a plain path ending in
        ``.journal`` / ``.log`` (Optuna's ``JournalStorage`` on a file). Default:
        :func:`default_storage_url`. A ``postgresql://`` URL naming no driver gets psycopg
        (v3). Processes opening a fresh database together all succeed: one creates the
        tables, the others retry until they find them.
    create : bool, optional
        Create the directory of a file-based storage when missing; by default only for
        the default storage (a mistyped explicit path should fail, not make folders).

    Returns
    -------
    optuna.storages.BaseStorage

    Raises
    ------
    InvalidInput
        An unknown scheme, a database that cannot be opened, a missing driver, or a
        missing directory; messages show the URL without its password.

    """
    import optuna

    if create is None:
        create = not url and not os.environ.get(STORAGE_ENV)
    url = url or default_storage_url()
    _check_userinfo(url)
    journal = _journal_path(url)
    if journal is not None:
        _folder(url, journal, create)
        from optuna.storages import JournalStorage

        try:
            from optuna.storages.journal import JournalFileBackend, JournalFileSymlinkLock
        except ImportError:  # optuna < 4
            from optuna.storages import JournalFileStorage as JournalFileBackend
            from optuna.storages import JournalFileSymlinkLock

        try:
            # a write holds the lock for milliseconds; one older than this was left by a
            # killed process (Optuna's default waits 30 s before breaking it)
            lock = JournalFileSymlinkLock(str(journal), grace_period=JOURNAL_LOCK_GRACE_S)
            return JournalStorage(JournalFileBackend(str(journal), lock_obj=lock))
        except (OSError, ValueError) as exc:
            raise InvalidInput(f"cannot open journal storage {redact_url(url)!r}: {exc}") from None
    scheme = url.split("://", 1)[0].split("+", 1)[0].lower() if "://" in url else ""
    if scheme not in ("sqlite", "postgresql", "postgres", "mysql", "oracle", "mssql"):
        raise InvalidInput(f"unknown storage URL {redact_url(url)!r}; {_HELP}")
    database = _sqlite_path(url)
    if database is not None:
        _folder(url, database, create)
    engine_url = _with_driver(url, scheme)
    connect_args = ({"timeout": 60} if scheme == "sqlite"
                    else {"connect_timeout": 10} if scheme in ("postgresql", "postgres")
                    else None)
    for attempt in range(SCHEMA_ATTEMPTS):
        try:
            return optuna.storages.RDBStorage(
                engine_url,
                engine_kwargs={"connect_args": connect_args} if connect_args else None)
        except Exception as exc:  # SQLAlchemy and driver errors have no common base
            if _schema_race(exc) and attempt + 1 < SCHEMA_ATTEMPTS:
                # another process is creating the tables: wait a little, then find them
                time.sleep(0.05 * 2 ** attempt * (1 + random.random()))
                continue
            text = _scrub(str(exc).strip(), url)
            first = text.splitlines()[0] if text else type(exc).__name__
            raise InvalidInput(f"cannot open storage {redact_url(url)!r}: {first}; "
                               "check the URL and that the database server is running and "
                               f"reachable ({_HELP})") from None
    raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises


def device_key(backend: str, devices: list[int] | None = None) -> str:
    """``cpu``, or ``gpu:<device name>`` of the listed (or current) GPUs.

    Raises
    ------
    InvalidInput
        A listed GPU that this machine does not have, or listed GPUs of different
        models (a study holds the times of one kind of device).
    """
    if backend != "gpu":
        return "cpu"
    import cupy

    rt = cupy.cuda.runtime
    count = rt.getDeviceCount()
    indices = devices or [rt.getDevice()]
    missing = [d for d in indices if d >= count]
    if missing:
        raise InvalidInput(f"--devices names GPU {missing[0]} but this machine has {count} "
                           f"(0 to {count - 1}); list GPUs that exist, e.g. --devices 0")
    names = []
    for d in indices:
        name = rt.getDeviceProperties(d)["name"]
        names.append(name.decode() if isinstance(name, bytes) else name)
    if len(set(names)) > 1:
        models = ", ".join(sorted(set(names)))
        raise InvalidInput(f"--devices lists GPUs of different models ({models}); a study "
                           "times one model: tune each model with its own --devices")
    return f"gpu:{names[0]}"


def study_name(algorithm: str, fingerprint: str, device: str, version: str,
               objective: str = "device") -> str:
    """The readable study key: algorithm, graph fingerprint, device and space version,
    and `` [call]`` for studies that time whole calls (``--objective call``).
    """
    name = _NAME_FORMAT.format(algorithm=algorithm, fingerprint=fingerprint[:16],
                               device=device, version=version)
    return name if objective == "device" else f"{name} [{objective}]"


#: Graph features used for similarity, from :func:`gswitch.analysis.graph_info`.
FEATURES = ("n_nodes", "n_edges", "degree_mean", "degree_max_over_mean", "diameter_estimate")


def graph_features(graph: Any) -> dict[str, float]:
    """Size, mean degree, degree skew and estimated diameter (what ``gswitch info`` shows).

    The diameter estimate takes BFS sweeps (seconds on RMAT-22), so the features are kept
    in :func:`cache_dir` under the graph's fingerprint and read back on the next call.
    """
    from gswitch.analysis import graph_info

    path = cache_dir() / "tuner" / "features" / f"{graph.fingerprint}.json"
    try:
        cached = json.loads(path.read_text())
        if set(cached) == set(FEATURES):
            return {k: float(cached[k]) for k in FEATURES}
    except (OSError, ValueError):
        pass  # absent or damaged: compute again
    info = graph_info(graph)
    features = {k: float(info[k]) for k in FEATURES}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".json")
        with os.fdopen(fd, "w") as fh:
            json.dump(features, fh)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache only costs the recomputation
    return features


def feature_distance(a: dict[str, float], b: dict[str, float]) -> float:
    """Distance between two graphs' features: Euclidean on ``log2(1 + x)`` of each.

    Logarithms make a graph twice as large as far as one half as large, and keep the
    diameter (thousands on road networks, tens on power-law graphs) from drowning the
    degree skew.
    """
    total = 0.0
    for key in FEATURES:
        x = math.log2(1.0 + max(float(a.get(key, 0.0)), 0.0))
        y = math.log2(1.0 + max(float(b.get(key, 0.0)), 0.0))
        total += (x - y) ** 2
    return math.sqrt(total)


def tuned_studies(storage: Any, algorithm: str | None = None,
                  device: str | None = None) -> list[dict[str, Any]]:
    """Studies made by the tuner that have a best (correct) configuration.

    Parameters
    ----------
    storage : optuna.storages.BaseStorage
        Opened storage.
    algorithm, device : str, optional
        Keep only studies of this algorithm / device key.

    Returns
    -------
    list of dict
        ``study_name``, ``fingerprint``, ``graph``, ``features``, ``space_version``,
        ``best_config``, ``best_time_s`` and ``device`` of each.

    """
    out = []
    for study in storage.get_all_studies():
        attrs = study.user_attrs
        if attrs.get("gswitch_tuner") != 1 or not attrs.get("best_config"):
            continue
        if algorithm is not None and attrs.get("algorithm") != algorithm:
            continue
        if device is not None and attrs.get("device") != device:
            continue
        out.append({"study_name": study.study_name, "fingerprint": attrs.get("fingerprint"),
                    "graph": attrs.get("graph_name"), "features": attrs.get("features", {}),
                    "space_version": attrs.get("space_version"),
                    "best_config": attrs["best_config"], "best_time_s": attrs.get("best_time_s"),
                    "device": attrs.get("device"), "algorithm": attrs.get("algorithm")})
    return out
