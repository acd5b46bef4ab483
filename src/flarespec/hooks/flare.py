"""Flare hooks: what the Flare specs need that YAML should not spell.

Only arithmetic lives here: the delivery-TTFT median and the counter, delta and conservation
sums over idle /metrics snapshots. Which documents, fields, counters and numbers they apply to
comes from the spec's arguments; every check a general assertion kind can express is in YAML.

A failure names the argument its value came from (``source``) and the place inside that
argument's value (``location``, ``$`` being the argument itself); the engine turns that into
the file the argument was read from (the before or after snapshot …) and its line.
"""

from __future__ import annotations

import statistics
from typing import Iterator

from flarespec.engine.hooks import Failure, MetricResult, check_hook, metric_hook
from flarespec.engine.values import member_at
from flarespec.loaders.locations import child_location


# the snapshot an argument holds, in words ("the snapshot snapshot" was the conservation's)
_SNAPSHOT_WORDS = {"snapshot": "the snapshot",
                   "previous_after": "the previous group's after snapshot"}


def _sample(values, name: str, source: str) -> tuple[int | None, Failure | None]:
    """The single unlabelled value of ``name`` in a loaded snapshot's ``unlabelled`` map
    (the argument ``source``), as an exact int; or, failing closed, the Failure saying what
    was found instead: no sample, several, or a value that is not a finite integer.

    The Prometheus loader gives integral values as ints (``12.0`` and ``1.2e1`` are 12), so
    the arithmetic on them is exact at any size; a float here is NaN or ±Inf (or came from
    some other loader) and is used only when integral, converted exactly."""
    location = child_location("$", name)
    snapshot = _SNAPSHOT_WORDS.get(source, f"the {source} snapshot")
    if not isinstance(values, dict):
        return None, Failure(f"{name}: the {source} argument is {type(values).__name__}, not a "
                             "snapshot's map of unlabelled samples", "unlabelled samples",
                             type(values).__name__, source=source)
    found = values.get(name)
    if not isinstance(found, list) or not found:
        return None, Failure(f"{name}: no unlabelled sample in {snapshot}",
                             "one unlabelled sample", "missing", location=location, source=source)
    if len(found) != 1:
        return None, Failure(f"{name}: {len(found)} unlabelled samples in {snapshot}, "
                             "expected exactly one", "one unlabelled sample",
                             f"{len(found)} samples", location=location, source=source)
    value = found[0]
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # exact: a float that is an integer converts without rounding
    if isinstance(value, bool) or not isinstance(value, int):
        return None, Failure(f"{name} is {value}, not a finite integer, in {snapshot}",
                             "finite integer", value, location=f"{location}[0]", source=source)
    return value, None


@metric_hook("flare.delivery_ttft_median",
             args={"time_field": "string", "tokens_field": "string"})
def delivery_ttft_median(ctx, samples, args) -> MetricResult:
    """Median over requests of the arrival time of the first event carrying token ids.

    Each sample is one request's event list (raw client observations, never a summary).
    An event with several token ids is one arrival: its single timestamp is used as is.
    """
    time_field, tokens_field = args["time_field"], args["tokens_field"]
    per_request = []
    for label, values in samples:
        events = values[0] if len(values) == 1 and isinstance(values[0], list) else None
        if events is None:
            raise ValueError(f"{label}: no event list")
        first = next((e for e in events if isinstance(e, dict) and e.get(tokens_field)), None)
        if first is None:
            raise ValueError(f"{label}: no event carries {tokens_field}")
        arrival = first.get(time_field)
        if isinstance(arrival, bool) or not isinstance(arrival, int):
            raise ValueError(f"{label}: {time_field} is not an integer")
        per_request.append({"request": label, "seq": first.get("seq"), time_field: arrival})
    value = statistics.median(entry[time_field] for entry in per_request)
    return MetricResult(value, per_request, {"requests": len(per_request),
                                             "statistic": "statistics.median"})


@check_hook("flare.counter_delta",
            args={"before": "any", "after": "any", "counter": "string",
                  "per_request": "integer?", "requests": "list?",
                  "sum_field": "string?", "observations": "list?"},
            one_of=(("per_request", "requests"), ("sum_field", "observations")),
            names_in={"counter": "after"})
def counter_delta(ctx, args) -> Iterator[Failure]:
    """A counter moves from the before- to the after-snapshot by exactly the expected amount.

    Expected: ``per_request`` times the number of ``requests``, or the sum of ``sum_field``
    (a dotted path) over ``observations``.
    """
    counter = args["counter"]
    (before, missing_before), (after, missing_after) = (_sample(args["before"], counter, "before"),
                                                        _sample(args["after"], counter, "after"))
    if before is None or after is None:  # fail closed: a counter not there never passes
        yield from (failure for failure in (missing_before, missing_after) if failure)
        return
    if "sum_field" in args:
        expected = 0
        for index, observation in enumerate(args["observations"] or []):
            _, value = member_at(observation, args["sum_field"].split("."), digits_index=True)
            if isinstance(value, bool) or not isinstance(value, int):
                yield Failure(f"cannot sum {args['sum_field']}: {value!r} is not an integer",
                              "integer", value, location=f"$[{index}].{args['sum_field']}",
                              source="observations")
                return
            expected += value
    else:
        expected = args["per_request"] * len(args["requests"] or [])
    if after - before != expected:
        yield Failure(f"{counter} moved by {after - before} ({before} -> {after}), "
                      f"expected {expected}", expected, after - before,
                      location=child_location("$", counter), source="after")


@check_hook("flare.counters_monotonic",
            args={"before": "any", "after": "any", "counters": "list"},
            names_in={"counters": "after"})
def counters_monotonic(ctx, args) -> Iterator[Failure]:
    """No counter decreases from a group's before-snapshot to its after-snapshot."""
    for counter in args["counters"]:
        (before, missing_before), (after, missing_after) = (_sample(args["before"], counter, "before"),
                                                            _sample(args["after"], counter, "after"))
        if before is None or after is None:  # fail closed
            yield from (failure for failure in (missing_before, missing_after) if failure)
        elif after < before:
            yield Failure(f"{counter} decreased from {before} to {after}", f">= {before}",
                          after, location=child_location("$", counter), source="after")


@check_hook("flare.conservation",
            args={"snapshot": "any", "parts": "list", "total": "any"},
            names_in={"parts": "snapshot"})
def conservation(ctx, args) -> Iterator[Failure]:
    """The named gauges of one snapshot add up to a prepared total."""
    found = [_sample(args["snapshot"], name, "snapshot") for name in args["parts"]]
    total = args["total"]
    missing = [failure for _, failure in found if failure]
    if missing:  # fail closed: a part not there never adds up
        yield from missing
        return
    parts = [value for value, _ in found]
    if isinstance(total, bool) or not isinstance(total, (int, float)):
        yield Failure(f"the prepared total is {total!r}, not a number", "number", total)
        return
    if sum(parts) != total:  # ints, compared exactly (also with a float total)
        values = " + ".join(str(part) for part in parts)
        yield Failure(f"{' + '.join(args['parts'])} = {values} = {sum(parts)}, expected the "
                      f"prepared total {total}", total, sum(parts),
                      location=child_location("$", args["parts"][0]), source="snapshot")


@check_hook("flare.counter_continuity",
            args={"before": "any", "previous_after": "any", "counters": "list"},
            names_in={"counters": "before"})
def counter_continuity(ctx, args) -> Iterator[Failure]:
    """A group's before-counters equal the previous group's after-counters (a warning)."""
    for counter in args["counters"]:
        (was, missing_was), (now, missing_now) = (_sample(args["previous_after"], counter, "previous_after"),
                                                  _sample(args["before"], counter, "before"))
        if was is None or now is None:  # fail closed (a warning, as the rule's severity says)
            yield from (failure for failure in (missing_was, missing_now) if failure)
        elif was != now:
            yield Failure(f"{counter} is {now} here but {was} at the end of the previous "
                          f"group", was, now, location=child_location("$", counter),
                          source="before")


@check_hook("flare.coalesced_groups",
            args={"recorded": "any", "events": "any", "tokens_field": "string",
                  "seq_field": "string"})
def coalesced_groups(ctx, args) -> Iterator[Failure]:
    """A recorded grouping summary equals the one recomputed from the raw events.

    Recomputed: ``{"seq", "tokens"}`` for every event carrying more than one token id, in
    order. Only the grouping is checked; other summary numbers are never inputs.
    """
    recorded = args["recorded"]  # an absent summary list is the rule's `when`, never here
    tokens_field, seq_field = args["tokens_field"], args["seq_field"]
    recomputed = [{"seq": event.get(seq_field), "tokens": len(tokens)}
                  for event in args["events"] or []
                  if isinstance(event, dict) and isinstance(tokens := event.get(tokens_field), list)
                  and len(tokens) > 1]
    from flarespec.engine.values import strict_equal_large

    if not strict_equal_large(recorded, recomputed):
        yield Failure("the recorded coalesced groups differ from the ones recomputed from the "
                      "events", recomputed, recorded, source="recorded")
