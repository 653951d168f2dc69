"""Scripts that run on the Sparks (copied over, not imported by the toolkit)."""
