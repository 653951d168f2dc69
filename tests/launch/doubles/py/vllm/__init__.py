"""TEST DOUBLE of the `vllm` Python package: importable (what `launch --apply` looks for in an
image), nothing more; `bin/vllm` stands in for `vllm serve`."""
