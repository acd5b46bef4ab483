"""Packet validation as a product: spec selection, pair matching, receipts.

Generic over specs: it knows entry files, identities, pair rules and metric keys, never a
particular upstream. The CLI is a thin layer over :mod:`flarespec.adapter.commands`.
"""
