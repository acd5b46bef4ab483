"""Where ``measure``'s CPU goes: cProfile of one ``flarespec measure`` (``FLARESPEC_JOBS=1``),
grouped by room, plus the top functions by cumulative and by own time.

The run is the whole command line in one child process (start-up, spec cache, both packets,
the pair, the receipt), as ``benchmarks/run.py``'s ``measure JOBS=1`` column measures it,
under cProfile (which roughly doubles the time of pure-Python code: read the shares, not
the seconds). Rooms are entered from outside (the time of every call into a room's code
from code outside it, callees included):

* loading: ``flarespec/loaders/*`` (reading, hashing, parsing: the floor's work and the
  strict checks on top of it);
* shapes: ``engine/shapes.py``, the generated shape verdicts and ``_has_shape`` (of
  the document store, or of ``Evaluation`` in an older revision);
* receipt: ``adapter/receipt.py`` (building and writing the receipt);
* start-up: imports and the compiled-spec cache (``compiler/*``), everything before the first
  packet is evaluated;
* rules: the rest of the evaluation (``engine/*``, ``hooks/*``): ``Evaluation.run`` minus
  the loading and shapes inside it; hooks are also shown on their own.

First the rooms' CPU without the profiler (their entry points wrapped in counters: loaders
and FileStore reads, ``DocumentStore._has_shape``, ``Evaluation.run``, the receipt's
functions; medians of ``--runs``), then the profile. The rules' rows are each rule's own CPU
(loading and shapes inside it taken out): a rule run one by one under its id, the rules of a
pass (engine/passes.py) under the pass (its first rule, how many more, its iteration);
``--split-passes`` makes every rule a pass of its own, so each row is one rule with all its
reads (a fused pass reads a shared value once for all its rules, so split rows add up to
more than the fused run).

    python benchmarks/profile_measure.py --repetitions 20             # writes an R=20 pair
    python benchmarks/profile_measure.py --pair DIR --src /tmp/base/src --top 25
    python benchmarks/profile_measure.py --repetitions 20 --split-passes --top 20
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from run import source_env

HERE = Path(__file__).resolve().parent
SPEC_ID = "flare/bce032c0"
CHAIN_SHARE = 0.6


def room_of(function: tuple) -> str | None:
    file, _, name = function
    file = file.replace(os.sep, "/")
    if file.endswith("flarespec/loaders/limits.py") and name == "paused":
        return None  # gc_paused's wrapper: around a loader, and around a whole evaluation
    if "/flarespec/loaders/" in file:
        return "loading"
    if file.endswith("flarespec/engine/shapes.py") or file == "<shape verdict>" \
            or (name == "_has_shape" and "/flarespec/engine/" in file):
        return "shapes"
    if file.endswith("flarespec/adapter/receipt.py"):
        return "receipt"
    if "/flarespec/hooks/" in file:
        return "hooks"
    return None


def _is_wrapper(function: tuple) -> bool:
    return function[0].replace(os.sep, "/").endswith("flarespec/loaders/limits.py") \
        and function[2] == "paused"


def entered(stats: pstats.Stats, room: str) -> float:
    """Cumulative time of the calls into ``room`` from flarespec code outside it. A call from
    the standard library (the JSON parser calling the strict loader's hooks) is inside a
    call that was counted already, and so is a call through ``gc_paused``'s wrapper when
    the room's own code calls the wrapper (the loaders registry does)."""
    wrapper_inside = any(room_of(caller) == room for function, value in stats.stats.items()
                         if _is_wrapper(function) for caller in value[4])
    total = 0.0
    for function, (_, _, _, _, callers) in stats.stats.items():
        if room_of(function) != room:
            continue
        for caller, edge in callers.items():
            if room_of(caller) == room or "/flarespec/" not in caller[0].replace(os.sep, "/"):
                continue
            if _is_wrapper(caller) and wrapper_inside:
                continue
            total += edge[3]
    return total


def cumulative_of(stats: pstats.Stats, file_end: str, name: str) -> float:
    return sum(value[3] for function, value in stats.stats.items()
               if function[2] == name and function[0].replace(os.sep, "/").endswith(file_end))


def rooms(stats: pstats.Stats) -> dict[str, float]:
    total = stats.total_tt
    run = cumulative_of(stats, "engine/evaluate.py", "run")
    inside = {room: entered(stats, room) for room in ("loading", "shapes", "receipt", "hooks")}
    found = {
        "loading": inside["loading"],
        "shapes": inside["shapes"],
        "rules (engine, hooks included)": max(0.0, run - inside["loading"] - inside["shapes"]),
        "  of which hooks": inside["hooks"],
        "receipt": inside["receipt"],
    }
    counted = found["loading"] + found["shapes"] + found["rules (engine, hooks included)"] \
        + found["receipt"]
    found["start-up, pair checks and the rest"] = max(0.0, total - counted)
    found["total"] = total
    return found


def shown(function: tuple) -> str:
    file, line, name = function
    if "/flarespec/" in file:
        file = "flarespec/" + file.split("/flarespec/", 1)[1]
    elif file.startswith("~"):
        return name
    else:
        file = Path(file).name
    return f"{file}:{line}({name})"


def report(profile: Path, top: int) -> str:
    stats = pstats.Stats(str(profile))
    found = rooms(stats)
    lines = [f"cProfile of measure (FLARESPEC_JOBS=1): {found['total']:.2f} s in all",
             "by room (entered from outside, callees included):"]
    for room, seconds in found.items():
        if room != "total":
            lines.append(f"  {room:<36} {seconds:7.3f} s  {100 * seconds / found['total']:5.1f}%")
    for key, title in (("cumulative", f"cumulative (below {CHAIN_SHARE:.0%} of the total: "
                                      f"the chain main ... Evaluation._apply left out)"),
                       ("tottime", "own time")):
        lines.append(f"top {top} by {title}:")
        ordered = sorted(stats.stats.items(), key=lambda item: item[1][3 if key == "cumulative" else 2],
                         reverse=True)
        if key == "cumulative":  # not the chain of calls every run goes through (main ... _apply)
            ordered = [item for item in ordered if item[1][3] < CHAIN_SHARE * stats.total_tt]
        for function, (_, calls, own, cumulative, _) in ordered[:top]:
            lines.append(f"  {cumulative:7.3f} cum {own:7.3f} own {calls:>9} calls  "
                         f"[{room_of(function) or '-':<7}] {shown(function)}")
    return "\n".join(lines)


def timed_child(packet: str, peer: str, out: str, result: str, split: str) -> None:
    """The rooms' CPU time without cProfile's overhead: the rooms' entry points wrapped in
    ``time.process_time`` counters (a few thousand calls: next to nothing added); ``split``
    (``split`` or ``fused``): every rule in a pass of its own, or the engine's passes."""
    import resource
    import time

    clock = time.process_time
    spent = {"loading": 0.0, "shapes": 0.0, "receipt": 0.0, "evaluation": 0.0}
    first = []
    by_rule: dict[str, float] = {}  # rule id -> its own time (loading and shapes taken out)
    inside = []  # the rule being applied, if any

    def counted(room, function):
        def wrapper(*args, **kwargs):
            if room == "evaluation" and not first:
                first.append(clock())
            start = clock()
            try:
                return function(*args, **kwargs)
            finally:
                spent[room] += clock() - start
        return wrapper

    def per_rule(function, label):
        def wrapper(evaluation, rule, *args, **kwargs):
            if inside:  # nested: counted in the outer rule
                return function(evaluation, rule, *args, **kwargs)
            rule_id = label(evaluation, rule)
            inside.append(rule_id)
            start, taken = clock(), spent["loading"] + spent["shapes"]
            try:
                return function(evaluation, rule, *args, **kwargs)
            finally:
                inside.pop()
                own = clock() - start - (spent["loading"] + spent["shapes"] - taken)
                by_rule[rule_id] = by_rule.get(rule_id, 0.0) + own
        return wrapper

    import flarespec.loaders as loaders
    from flarespec.adapter import receipt as receipts
    from flarespec.engine.evaluate import Evaluation
    from flarespec.loaders.files import FileStore

    for name, loader in list(loaders.LOADERS.items()):
        loaders.LOADERS[name] = counted("loading", loader)
    try:  # where a document's bytes are parsed (since the loader registry: by its Format)
        from flarespec.engine import documents
        documents.load_document = counted("loading", documents.load_document)
    except (ImportError, AttributeError):
        pass
    for method in ("read_bytes", "sha256", "resolve", "size", "read_head"):
        setattr(FileStore, method, counted("loading", getattr(FileStore, method)))
    try:  # where a document's shape is checked (a revision before 326f7a7: the evaluation)
        from flarespec.engine.documents import DocumentStore as shape_owner
    except ImportError:
        shape_owner = Evaluation
    shape_owner._has_shape = counted("shapes", shape_owner._has_shape)
    Evaluation.run = counted("evaluation", Evaluation.run)
    if hasattr(Evaluation, "_apply"):  # one rule over all its bindings
        Evaluation._apply = per_rule(Evaluation._apply, lambda evaluation, rule: getattr(rule, "id", str(rule)))
    if hasattr(Evaluation, "_run_pass"):  # the rules of one pass together (engine/passes.py)
        if split == "split":
            from flarespec.engine.passes import Passes
            split_passes(Passes)
        Evaluation._run_pass = per_rule(Evaluation._run_pass, pass_label)
    for name in ("measure_receipt", "write_atomically", "refuse_inputs"):
        if hasattr(receipts, name):
            setattr(receipts, name, counted("receipt", getattr(receipts, name)))
    from flarespec.cli import main

    try:
        main.main(args=["measure", "--packet", packet, "--peer", peer, "--output", out, "--quiet"],
                  prog_name="flarespec", standalone_mode=True)
    except SystemExit as exit_:
        if exit_.code:
            sys.exit(2)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    total = usage.ru_utime + usage.ru_stime
    Path(result).write_text(json.dumps({**spent, "total": total, "start": first[0] if first else 0.0,
                                        "rules": by_rule}))


def split_passes(passes_class) -> None:
    """Make every fusable rule a pass of its own (engine/passes.py's ``_program``, one rule
    at a time), so each rule's row holds all its reads, shared ones too (a fused pass
    reads a value once for all its rules: split rows add up to more than the fused run)."""
    def program(self, numbers):
        rules, found = self._evaluation.spec.rules, {}
        for number in numbers:
            rule = rules[number]
            if self.fusable(rule):
                group = self._group(rule.for_each, (number,), self.element_form(rule))
                if group is not None:
                    found[number] = group
        return found
    passes_class._program = program


def pass_label(evaluation, group) -> str:
    """A pass's row: its one rule, or its first rule and how many more run with it."""
    ids = [evaluation.spec.rules[number].id for number in group.numbers]
    form = ", element form" if group.element else ""
    more = f" and {len(ids) - 1} more" if len(ids) > 1 else ""
    return f"{ids[0]}{more} (pass over {group.iteration or 'the packet'}{form})"


def timed_report(result: dict, top: int = 15) -> str:
    rules = result["evaluation"] - result["loading"] - result["shapes"]
    rest = result["total"] - result["evaluation"] - result["receipt"]
    rows = [("loading (read, hash, parse)", result["loading"]), ("shapes", result["shapes"]),
            ("rules (engine and hooks)", rules), ("receipt", result["receipt"]),
            ("start-up (imports, spec cache) and the rest", rest)]
    lines = [f"CPU of measure (FLARESPEC_JOBS=1), no profiler: {result['total']:.2f} s "
             f"(start-up before the first packet: {result['start']:.2f} s)"]
    lines += [f"  {name:<44} {seconds:6.3f} s  {100 * seconds / result['total']:5.1f}%"
              for name, seconds in rows]
    rules_timed = sorted(result.get("rules", {}).items(), key=lambda item: -item[1])
    if rules_timed:
        lines.append(f"the rules' own CPU (both packets; loading and shapes inside a rule taken "
                     f"out), top {top} of {len(rules_timed)}:")
        lines += [f"  {seconds:6.3f} s  {100 * seconds / result['total']:5.1f}%  {rule}"
                  for rule, seconds in rules_timed[:top]]
        rest = sum(seconds for _, seconds in rules_timed[top:])
        lines.append(f"  {rest:6.3f} s  {100 * rest / result['total']:5.1f}%  the other "
                     f"{max(0, len(rules_timed) - top)} rules")
    return "\n".join(lines)


def child(packet: str, peer: str, out: str, profile: str) -> None:
    import cProfile

    profiler = cProfile.Profile()
    profiler.enable()
    try:
        from flarespec.cli import main

        main.main(args=["measure", "--packet", packet, "--peer", peer, "--output", out, "--quiet"],
                  prog_name="flarespec", standalone_mode=True)
    except SystemExit as exit_:
        if exit_.code:
            profiler.disable()
            print(f"measure exited {exit_.code}: not the validation to profile", file=sys.stderr)
            sys.exit(2)
    finally:
        profiler.disable()
        profiler.dump_stats(profile)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repetitions", type=int, default=20)
    parser.add_argument("--pair", type=Path, metavar="DIR",
                        help="Use the pair already written in DIR (baseline/, candidate/).")
    parser.add_argument("--src", type=Path, metavar="DIR",
                        help="Profile the flarespec of this source directory (PYTHONPATH).")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--save", type=Path, metavar="FILE", help="Keep the .prof file.")
    parser.add_argument("--runs", type=int, default=3,
                        help="Runs of the timed (unprofiled) rooms; medians (default 3).")
    parser.add_argument("--split-passes", action="store_true",
                        help="Time every rule in a pass of its own (default: the engine's "
                             "passes, one row a pass).")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--timed-child", nargs=5, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        return child(*options.child)
    if options.timed_child:
        return timed_child(*options.timed_child)
    with tempfile.TemporaryDirectory(prefix="flarespec-profile-") as scratch:
        env = source_env(options.src, Path(scratch), FLARESPEC_JOBS="1")  # bytecode kept
        pair = options.pair
        if pair is None:
            pair = Path(scratch) / "pair"
            order = json.dumps({"full_prompts": True,
                                "sizes": [{"repetitions": options.repetitions, "package_mib": 0}]})
            subprocess.run([sys.executable, str(HERE / "run.py"), "--write", str(pair), order],
                           env=env, check=True)
            pair = pair / f"r{options.repetitions}"
        profile = options.save or Path(scratch) / "measure.prof"
        for _ in range(2):  # the first run may compile the spec into the cache: profile the second
            ran = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child",
                                  str(pair / "baseline" / "packet.json"),
                                  str(pair / "candidate" / "packet.json"),
                                  str(Path(scratch) / "receipt.json"), str(profile)], env=env)
            if ran.returncode:
                sys.exit(2)
        timed = []
        for _ in range(options.runs):
            result = Path(scratch) / "timed.json"
            ran = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--timed-child",
                                  str(pair / "baseline" / "packet.json"),
                                  str(pair / "candidate" / "packet.json"),
                                  str(Path(scratch) / "receipt.json"), str(result),
                                  "split" if options.split_passes else "fused"], env=env)
            if ran.returncode:
                sys.exit(2)
            timed.append(json.loads(result.read_text()))
        medians = {key: statistics.median(run[key] for run in timed)
                   for key in timed[0] if key != "rules"}
        medians["rules"] = {rule: statistics.median(run["rules"].get(rule, 0.0) for run in timed)
                            for rule in timed[0]["rules"]}
        print(timed_report(medians, options.top))
        print(report(profile, options.top))


if __name__ == "__main__":
    main()
