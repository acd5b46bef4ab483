"""Helpers shared by the receipt-reading tests."""

from __future__ import annotations


def all_keys(value):
    """Every key anywhere inside a JSON value (to prove a rejection holds no metric)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from all_keys(item)
    elif isinstance(value, list):
        for item in value:
            yield from all_keys(item)
