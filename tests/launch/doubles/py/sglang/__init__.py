"""TEST DOUBLE of SGLang (fabric launch tests)."""
