"""The rungs that need no model: the offline extractor (rung 1 without one) and the
deterministic fallback stubs (rung 3)."""
