"""Output: renderers of the one result model, and progress on stderr."""
