"""Writing a spec: what only matters while editing one, on top of what the compiler refuses.

``lint`` reports every issue of a spec file at once (it still compiles a file whose shape is
broken, to find more), with the checks that are no compiler error: ``shape_lint`` (every
member read is declared), ``names_lint`` (a name a hook reads is required where it reads it),
``placeholders`` (a binding placeholder that cannot be filled), ``literals`` (a literal that
repeats a constant); ``scaffold`` drafts a child spec for a new revision (``spec new``).
Authoring reads specs through :mod:`flarespec.compiler`; nothing below it imports it.
"""
