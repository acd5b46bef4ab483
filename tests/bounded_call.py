"""A call that must finish: the spec tests guard against loads that block (a FIFO) or never
end (an alias bomb), which would otherwise hang the test run instead of failing it."""

from __future__ import annotations

import threading


def finishes_within(seconds: float, function, *args):
    """``function(*args)``, failing the test when it has not returned after ``seconds``.
    A blocked call is left behind in a daemon thread; its exception is re-raised here."""
    outcome: dict = {}

    def run():
        try:
            outcome["value"] = function(*args)
        except BaseException as error:  # noqa: BLE001 - handed to the test's thread
            outcome["error"] = error

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"{function.__name__} did not finish within {seconds} s"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
