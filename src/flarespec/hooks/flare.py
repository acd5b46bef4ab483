"""Flare hooks: what the Flare specs need that YAML should not spell.

Only arithmetic lives here: the delivery-TTFT median and the counter, delta and conservation
sums over idle /metrics snapshots. Which documents, fields, counters and numbers they apply to
comes from the spec's arguments; every check a general assertion kind can express is in YAML.

A failure names the argument its value came from (``source``) and the place inside that
argument's value (``location``, ``$`` being the argument itself); the engine turns that into
the file the argument was read from (the before or after snapshot …) and its line.
"""

from __future__ import annotations

import math
import statistics
from typing import Iterator

from flarespec.engine.hooks import Failure, MetricResult, check_hook, metric_hook
from flarespec.engine.paths import child_location


def _sample(values: dict | None, name: str):
    """The single unlabelled value of ``name`` in a loaded snapshot's ``unlabelled`` map."""
    found = (values or {}).get(name)
    if not isinstance(found, list) or len(found) != 1:
        return None
    value = found[0]
    return value if isinstance(value, (int, float)) and math.isfinite(value) else None


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
            one_of=(("per_request", "requests"), ("sum_field", "observations")))
def counter_delta(ctx, args) -> Iterator[Failure]:
    """A counter moves from the before- to the after-snapshot by exactly the expected amount.

    Expected: ``per_request`` times the number of ``requests``, or the sum of ``sum_field``
    (a dotted path) over ``observations``.
    """
    counter = args["counter"]
    before, after = _sample(args["before"], counter), _sample(args["after"], counter)
    if before is None or after is None:
        return  # a missing or malformed sample is the snapshot rules' violation, not this one
    if "sum_field" in args:
        expected = 0
        for index, observation in enumerate(args["observations"] or []):
            value = observation
            for part in args["sum_field"].split("."):
                value = value.get(part) if isinstance(value, dict) else None
            if isinstance(value, bool) or not isinstance(value, int):
                yield Failure(f"cannot sum {args['sum_field']}: {value!r} is not an integer",
                              "integer", value, location=f"$[{index}].{args['sum_field']}",
                              source="observations")
                return
            expected += value
    else:
        expected = args["per_request"] * len(args["requests"] or [])
    if after - before != expected:
        yield Failure(f"{counter} moved by {after - before:g} ({before:g} -> {after:g}), "
                      f"expected {expected}", expected, after - before,
                      location=child_location("$", counter), source="after")


@check_hook("flare.counters_monotonic",
            args={"before": "any", "after": "any", "counters": "list"})
def counters_monotonic(ctx, args) -> Iterator[Failure]:
    """No counter decreases from a group's before-snapshot to its after-snapshot."""
    for counter in args["counters"]:
        before, after = _sample(args["before"], counter), _sample(args["after"], counter)
        if before is not None and after is not None and after < before:
            yield Failure(f"{counter} decreased from {before:g} to {after:g}", f">= {before:g}",
                          after, location=child_location("$", counter), source="after")


@check_hook("flare.conservation",
            args={"snapshot": "any", "parts": "list", "total": "any"})
def conservation(ctx, args) -> Iterator[Failure]:
    """The named gauges of one snapshot add up to a prepared total."""
    parts = [_sample(args["snapshot"], name) for name in args["parts"]]
    total = args["total"]
    if any(part is None for part in parts):
        return  # reported by the snapshot sample rules
    if isinstance(total, bool) or not isinstance(total, (int, float)):
        yield Failure(f"the prepared total is {total!r}, not a number", "number", total)
        return
    if sum(parts) != total:
        values = " + ".join(f"{part:g}" for part in parts)
        yield Failure(f"{' + '.join(args['parts'])} = {values} = {sum(parts):g}, expected the "
                      f"prepared total {total}", total, sum(parts),
                      location=child_location("$", args["parts"][0]), source="snapshot")


@check_hook("flare.counter_continuity",
            args={"before": "any", "previous_after": "any", "counters": "list"})
def counter_continuity(ctx, args) -> Iterator[Failure]:
    """A group's before-counters equal the previous group's after-counters (a warning)."""
    for counter in args["counters"]:
        was, now = _sample(args["previous_after"], counter), _sample(args["before"], counter)
        if was is not None and now is not None and was != now:
            yield Failure(f"{counter} is {now:g} here but {was:g} at the end of the previous "
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
    recomputed = [{"seq": event.get(seq_field), "tokens": len(event[tokens_field])}
                  for event in args["events"] or []
                  if isinstance(event, dict) and isinstance(event.get(tokens_field), list)
                  and len(event[tokens_field]) > 1]
    from flarespec.engine.kinds import strict_equal

    if not strict_equal(recorded, recomputed):
        yield Failure("the recorded coalesced groups differ from the ones recomputed from the "
                      "events", recomputed, recorded, source="recorded")
