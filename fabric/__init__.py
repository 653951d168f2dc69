"""fabric: DGX Spark fabrics on a MikroTik CRS804, from cables to a model launch you can trust."""

__version__ = "0.1.0"

# Before any dataclass is made (the toolkit's, or rich's, pydantic's, typer's): their methods'
# code comes from the cache beside the bytecode instead of being compiled again
# (`dataclasses` brings `inspect` and `typing`: loaded with the collector paused).
from fabric.collector import collector_paused as _collector_paused

with _collector_paused():
    from fabric.dataclass_cache import install as _install_dataclass_cache

    _install_dataclass_cache()
