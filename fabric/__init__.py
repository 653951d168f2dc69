"""fabric: DGX Spark fabrics on a MikroTik CRS804, from cables to a model launch you can trust."""

__version__ = "0.1.0"

# Before any dataclass is made (the toolkit's, or rich's, pydantic's, typer's): their methods'
# code comes from the cache beside the bytecode instead of being compiled again. Loaded with
# the cyclic collector paused, as the CLI's own imports are (`fabric.cli`): `dataclasses`
# brings `inspect` and `typing`, long-lived objects the collector would only rescan.
import gc as _gc

_collecting = _gc.isenabled()
_gc.disable()
try:
    from fabric.dataclass_cache import install as _install_dataclass_cache

    _install_dataclass_cache()
finally:
    if _collecting:
        _gc.enable()
