"""Reviewing a spec change: what it does to the accepted inputs, before it is merged.

``diff`` compares two resolved specs section by section and classes every change
(tightening, loosening, review, neutral) with the comparators each kind registers
(engine/kinds.py, engine/directions.py); ``shapes`` compares documents' expanded shapes;
``locations`` places each change at the line of the file that made it (a child's constant,
member or drop entry), the parent's place as its context; ``sides`` lints both sides first;
``git`` runs the diff over a working tree against a revision; ``render`` writes its formats
and gate; ``impact`` replays a change over stored inputs; ``show`` prints a resolved spec as a
reviewer reads it. Review reads specs through :mod:`flarespec.compiler` and never changes them;
nothing below it (spec, engine, loaders) imports it.
"""
