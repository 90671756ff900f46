"""The model rungs: the vision pass (rung 1 with a model), text-only structuring (rung 2),
their prompts, tiles and calls."""
