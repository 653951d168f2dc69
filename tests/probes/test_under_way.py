"""The facts read behind the bandwidth rounds start once every client of the first round has
started (`fabric.probes.bandwidth._AllStarted`), once, also where a client never ran."""

from __future__ import annotations

from fabric.probes.bandwidth import _AllStarted


def test_then_runs_once_when_every_host_started() -> None:
    ran: list[int] = []
    latch = _AllStarted(["spark01", "spark03"], lambda: ran.append(1))
    latch.started("spark01")
    latch.started("spark01")  # a host saying it twice is still one host
    assert ran == []
    latch.started("spark03")
    assert ran == [1]
    latch.started("spark03")
    latch.release()
    assert ran == [1]


def test_release_runs_it_for_a_client_that_never_said() -> None:
    ran: list[int] = []
    latch = _AllStarted(["spark01", "spark03"], lambda: ran.append(1))
    latch.started("spark01")
    latch.release()
    assert ran == [1]
    _AllStarted(["spark01"], None).started("spark01")  # nothing to run: a later round
