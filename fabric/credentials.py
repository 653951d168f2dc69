"""Credentials come from the environment (or a lab's private secrets), never from files in
the repository, and never appear in output: `repr` hides them."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Credentials:
    """How to log in to the Sparks (SSH) and the switch (RouterOS API and SSH)."""

    ssh_user: str | None = None
    ssh_password: str | None = field(default=None, repr=False)
    ssh_key: Path | None = None
    known_hosts: Path | None = None
    strict_host_keys: bool = True
    routeros_user: str | None = None
    routeros_password: str | None = field(default=None, repr=False)
    routeros_port: int = 8728
    routeros_tls: bool = False  # api-ssl (8729), certificate and host name verified
    routeros_ca: Path | None = None

    def secrets(self) -> list[str]:
        """The secret values, for scrubbing them out of any text we print or save."""
        return [s for s in (self.ssh_password, self.routeros_password) if s]

    def scrub(self, text: str) -> str:
        for secret in self.secrets():
            text = text.replace(secret, "********")
        return text


def from_environment() -> Credentials:
    """FABRIC_SSH_USER/_PASSWORD/_KEY, FABRIC_KNOWN_HOSTS, FABRIC_ROUTEROS_USER/_PASSWORD.

    Host keys are verified against FABRIC_KNOWN_HOSTS (default ~/.ssh/known_hosts) unless
    FABRIC_INSECURE_NO_HOST_KEY_CHECK=1 is set explicitly. FABRIC_ROUTEROS_TLS=1 uses api-ssl
    (port 8729 unless FABRIC_ROUTEROS_PORT says otherwise), verified against the system CAs
    or FABRIC_ROUTEROS_CA; plain 8728 sends the RouterOS password in the clear.
    """
    env = os.environ.get
    key = env("FABRIC_SSH_KEY")
    tls = env("FABRIC_ROUTEROS_TLS") == "1"
    ca = env("FABRIC_ROUTEROS_CA")
    known = env("FABRIC_KNOWN_HOSTS") or str(Path.home() / ".ssh" / "known_hosts")
    return Credentials(
        ssh_user=env("FABRIC_SSH_USER"),
        ssh_password=env("FABRIC_SSH_PASSWORD"),
        ssh_key=Path(key) if key else None,
        known_hosts=Path(known),
        strict_host_keys=env("FABRIC_INSECURE_NO_HOST_KEY_CHECK") != "1",
        routeros_user=env("FABRIC_ROUTEROS_USER"),
        routeros_password=env("FABRIC_ROUTEROS_PASSWORD"),
        routeros_port=int(env("FABRIC_ROUTEROS_PORT") or (8729 if tls else 8728)),
        routeros_tls=tls,
        routeros_ca=Path(ca) if ca else None,
    )
