"""The read-only snapshot of the switch a push needs beyond its Facts: the rows of every
RouterOS menu it touches, `/export terse`, the addresses and this API session's own."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class SwitchSnapshot:
    """Rows of every RouterOS menu a push touches, keyed by menu path; `export` is text."""

    host: str
    rows: dict[str, list[dict[str, str]]]
    export: str | None = None
    export_error: str | None = None
    connected_interface: str | None = None  # the interface holding the address we came in on
    addresses: list[dict[str, str]] = field(default_factory=list)  # /ip/address rows
    session_address: str | None = None  # the switch address this API session is connected to
    qos_error: str | None = None  # why the QoS menus could not be read (None: read, or not asked)

    def addresses_on(self, interface: str) -> list[str]:
        """The IP addresses (a.b.c.d/len) configured on `interface`."""
        return [a.get("address", "") for a in self.addresses
                if interface in (a.get("interface"), a.get("actual-interface"))
                and a.get("disabled") not in ("true", "yes")]

    def row(self, path: str, **match: str) -> dict[str, str] | None:
        for r in self.rows.get(path, []):
            if all(r.get(k) == v for k, v in match.items()):
                return r
        return None
