"""Flare plug-ins outside the generic rooms: the synthetic packet writer (``writer``),
registered under the ``flarespec.writers`` entry point."""
