"""Check families: pure functions of intent and facts, registered by name."""
