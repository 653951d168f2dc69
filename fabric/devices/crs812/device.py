"""The CRS812 behind the device contract: the CRS804's implementation, unchanged, under its
own platform key (what that assumes: `fabric.devices.crs812`)."""

from __future__ import annotations

from fabric.devices.crs804.device import Crs804
from fabric.devices.crs812.platform import MODEL


class Crs812(Crs804):
    """A CRS812-8DS-2DQ-2DDQ-RM: RouterOS 7 on the CRS804's chip family."""

    platform = MODEL
