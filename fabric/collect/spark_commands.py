"""Moved to `fabric.devices.spark.commands`. This name stays only for `fabric.validate`'s
import of FINGERPRINT (another change owns that module); point it there, then delete this."""

from __future__ import annotations

from fabric.devices.spark.commands import FINGERPRINT

__all__ = ["FINGERPRINT"]
