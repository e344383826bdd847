"""Fuzz campaign for the graph loaders and generator specs, under an address-space limit.

Feeds :func:`gswitch.load_graph` random bytes and mutated valid files of every format
(Matrix Market, edge list, DIMACS, METIS, npz, gzip-compressed text), and
:func:`gswitch.generators.parse_generator_spec` random specs, with inputs drawn by
hypothesis. The only allowed outcomes are a Graph, GraphFormatError and InvalidInput;
anything else (another exception, MemoryError included) is recorded with its input.

The process limits its own address space with ``resource.setrlimit(RLIMIT_AS)`` (1 GiB by
default) before importing anything large, so an input that makes a loader allocate by a
header or an id fails here instead of eating the machine.

Run by ``tests/test_fuzz.py`` with a small fixed budget. A longer local campaign::

    python tests/fuzz_loaders.py --examples 20000 --random --out fuzz.json

prints the counts as JSON (``--out`` writes them too) and exits 1 when any input had an
outcome outside the allowed ones.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys


def _limit_memory(limit_bytes: int) -> None:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))


def _seed_files(tmp: str) -> dict[str, tuple[str, bytes]]:
    """Valid files of every format: name -> (extension, bytes)."""
    import gzip
    from pathlib import Path

    from gswitch.generators import rmat
    from gswitch.io import save_graph

    g = rmat(4, 2, seed=1, weighted=True)
    und = rmat(3, 2, seed=2).symmetrize()
    seeds: dict[str, tuple[str, bytes]] = {}
    for name, graph, ext in (("mtx_general", g, ".mtx"), ("mtx_symmetric", und, ".mtx"),
                             ("edgelist_weighted", g, ".txt"), ("edgelist_plain", und, ".el"),
                             ("dimacs", g, ".gr"), ("npz", g, ".npz"),
                             ("npz_undirected", und, ".npz")):
        path = Path(tmp) / f"seed_{name}{ext}"
        save_graph(graph, path)
        seeds[name] = (ext, path.read_bytes())
    seeds["edgelist_csv"] = (".csv", b"# src,dst\n0,1\n1,2\n2,0\n5,3\n")
    seeds["metis"] = (".graph", b"% triangle plus tail\n4 4\n2 3\n1 3\n1 2 4\n3\n")
    seeds["metis_weighted"] = (".graph", b"3 2 011\n1 2 5\n1 1 5 3 7\n1 2 7\n")
    seeds["mtx_gz"] = (".mtx.gz", gzip.compress(seeds["mtx_general"][1], mtime=0))
    seeds["edgelist_gz"] = (".txt.gz", gzip.compress(seeds["edgelist_weighted"][1], mtime=0))
    return seeds


#: Tokens that break parsers that trust numbers: huge ids and counts, signs, floats.
HOSTILE = [b"2147483646", b"2147483647", b"2000000000", b"1000000000000", b"99999999999",
           b"30000000", b"-1", b"0", b"nan", b"inf", b"-inf", b"1e308", b"0.5", b"1e-300",
           b"99999999999999999999999", b"\x00", b"%", b"#", b"p sp", b"a", b"c", b"\n", b"",
           b"pattern", b"array", b"skew-symmetric", b"complex", b"hermitian", b"1_0", b"+3"]

EXTENSIONS = [".mtx", ".txt", ".gr", ".graph", ".npz", ".csv", ".mtx.gz", ".txt.gz"]


def _mutate(data: bytes, mutations: list[tuple]) -> bytes:
    import re

    buf = bytearray(data)
    for op, pos, arg in mutations:
        n = len(buf)
        if op == "flip" and n:
            buf[pos % n] = arg % 256
        elif op == "insert":
            i = pos % (n + 1)
            buf[i:i] = arg
        elif op == "delete" and n:
            i = pos % n
            del buf[i:i + arg]
        elif op == "number":
            spans = [m.span() for m in re.finditer(rb"-?\d+(?:\.\d+)?", bytes(buf))]
            if spans:
                a, b = spans[pos % len(spans)]
                buf[a:b] = arg
        elif op == "truncate":
            del buf[pos % (n + 1):]
        elif op == "dupline":
            lines = bytes(buf).split(b"\n")
            i = pos % len(lines)
            lines[i:i] = [lines[i]] * (1 + arg % 3)
            buf = bytearray(b"\n".join(lines))
    return bytes(buf)


def run_campaign(examples: int, spec_examples: int, randomize: bool,
                 journal: str | None = None) -> dict:
    """Run both campaigns; return the counts and the offending inputs."""
    import tempfile
    import traceback
    from collections import Counter
    from pathlib import Path

    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import strategies as st

    from gswitch.errors import GraphFormatError, InvalidInput
    from gswitch.generators import GENERATORS, parse_generator_spec
    from gswitch.graph import Graph
    from gswitch.io import load_graph

    counts: Counter[str] = Counter()
    spec_counts: Counter[str] = Counter()
    others: list[dict] = []
    tmp = tempfile.mkdtemp(prefix="gswitch-fuzz-")
    seeds = _seed_files(tmp)
    seed_names = sorted(seeds)
    common = dict(database=None, deadline=None, derandomize=not randomize,
                  suppress_health_check=list(HealthCheck), phases=[Phase.generate])

    def classify(make, label: str, payload: object, counter: Counter) -> None:
        try:
            out = make()
        except GraphFormatError:
            counter["GraphFormatError"] += 1
            return
        except InvalidInput:
            counter["InvalidInput"] += 1
            return
        except BaseException as exc:  # noqa: BLE001 - anything else is the finding
            if isinstance(exc, KeyboardInterrupt):
                raise
            counter["other"] += 1
            others.append({"case": label, "input": repr(payload)[:400],
                           "error": f"{type(exc).__name__}: {exc}"[:400],
                           "where": traceback.format_exc().splitlines()[-3:]})
            return
        if isinstance(out, Graph):
            counter["Graph"] += 1
        else:
            counter["other"] += 1
            others.append({"case": label, "input": repr(payload)[:400],
                           "error": f"returned {type(out).__name__}"})

    mutation = st.one_of(
        st.tuples(st.just("flip"), st.integers(0, 1 << 20), st.integers(0, 255)),
        st.tuples(st.just("insert"), st.integers(0, 1 << 20), st.one_of(
            st.binary(max_size=16), st.sampled_from(HOSTILE))),
        st.tuples(st.just("delete"), st.integers(0, 1 << 20), st.integers(1, 64)),
        st.tuples(st.just("number"), st.integers(0, 1 << 20), st.sampled_from(HOSTILE)),
        st.tuples(st.just("truncate"), st.integers(0, 1 << 20), st.just(0)),
        st.tuples(st.just("dupline"), st.integers(0, 1 << 20), st.integers(0, 2)),
    )
    case = st.one_of(
        st.tuples(st.just("random"), st.sampled_from(EXTENSIONS), st.binary(max_size=600),
                  st.just([])),
        st.tuples(st.just("mutated"), st.sampled_from(seed_names), st.just(b""),
                  st.lists(mutation, min_size=1, max_size=5)),
    )
    counter_box = {"i": 0}

    @settings(max_examples=examples, **common)
    @given(case)
    def loaders(c: tuple) -> None:
        kind, which, raw, mutations = c
        if kind == "random":
            ext, data = which, raw
        else:
            ext, seed = seeds[which]
            data = _mutate(seed, mutations)
        counter_box["i"] += 1
        path = Path(tmp) / f"in{counter_box['i'] % 8}{ext}"
        path.write_bytes(data)
        if journal:
            # the last input survives a crash of the whole process
            Path(journal).write_bytes(ext.encode() + b"\n" + data)
        classify(lambda: load_graph(path), f"{kind}:{which}", data, counts)

    number = st.one_of(st.sampled_from(["0", "1", "2", "7", "64", "1000", "100000",
                                        "2147483647", "1000000000", "1000000000000", "-1",
                                        "x", "", "1.5", "1e9"]),
                       st.integers(0, 40).map(str))
    option = st.sampled_from(["", ",seed=3", ",weighted", ",undirected", ",directed=no",
                              ",drop=2", ",a=0.9,b=0.9", ",permute=maybe", ",seed=", ",zz=1"])
    spec = st.one_of(
        st.builds(lambda name, sep, args, opt: f"{name}:{sep.join(args)}{opt}",
                  st.sampled_from(GENERATORS), st.sampled_from([":", "x"]),
                  st.lists(number, min_size=0, max_size=3), option),
        st.text(max_size=40),
    )

    @settings(max_examples=spec_examples, **common)
    @given(spec)
    def specs(text: str) -> None:
        classify(lambda: parse_generator_spec(text), "spec", text, spec_counts)

    loaders()
    specs()
    return {"loader_inputs": sum(counts.values()), "loader_outcomes": dict(counts),
            "spec_inputs": sum(spec_counts.values()), "spec_outcomes": dict(spec_counts),
            "others": others[:20], "n_others": counts["other"] + spec_counts["other"],
            "memory_limit_bytes": resource.getrlimit(resource.RLIMIT_AS)[0]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=400, help="loader inputs to try")
    ap.add_argument("--spec-examples", type=int, default=150, help="generator specs to try")
    ap.add_argument("--memory", type=int, default=1 << 30, help="address-space limit, bytes")
    ap.add_argument("--random", action="store_true",
                    help="draw new inputs each run (default: the same inputs every run)")
    ap.add_argument("--out", help="also write the counts to this JSON file")
    ap.add_argument("--journal", help="write each input here before trying it (to find the "
                    "input after a crash)")
    args = ap.parse_args(argv)
    _limit_memory(args.memory)
    report = run_campaign(args.examples, args.spec_examples, args.random, args.journal)
    text = json.dumps(report, indent=2)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    print(text)
    return 1 if report["n_others"] else 0


if __name__ == "__main__":
    sys.exit(main())
