"""bw: profile floors and stragglers against the median of peer links."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from fabric.facts import Facts
from fabric.intent.model import Intent
from tests.validators import builder
from tests.validators.helpers import failures, link_id
from validators.bw import check_link

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "validators"


def test_straggler_above_the_floor_still_fails(star4: Intent, star_facts: Facts) -> None:
    """spark03's TCP at 60 Gb/s clears the 50 Gb/s floor but is < 70% of its peers' 98."""
    link = link_id(star4, "spark03")
    bw = tuple(dataclasses.replace(b, gbps=60.0) if (b.link_id, b.tool) == (link, "iperf3")
               else b for b in star_facts.bandwidth)
    facts = dataclasses.replace(star_facts, bandwidth=bw)
    [r] = failures(star4, facts, ("bw.link", None, link))
    assert "straggler" in r.message and "floor" not in r.message and r.status == "fail"
    assert r.expected["peer_median_gbps"] == 98.0


def test_straggler_in_the_lab_profile_without_floors() -> None:
    """veth has no floors at all: only the peers' median can catch a slow link."""
    it = builder.intent(str(FIXTURES / "ring4-veth.yaml"))
    facts = builder.healthy(it)
    assert failures(it, facts) == []
    assert not any(b.tool == "ib_write_bw" for b in facts.bandwidth)
    link = it.links[3].id
    bw = tuple(dataclasses.replace(b, gbps=3.0) if b.link_id == link else b
               for b in facts.bandwidth)
    [r] = failures(it, dataclasses.replace(facts, bandwidth=bw), ("bw.link", None, link))
    assert r.expected["min_gbps"] is None and "straggler" in r.message


def test_tcp_below_floor_alone_is_a_warning(ring4: Intent, ring_facts: Facts) -> None:
    """TCP is a secondary signal on RDMA hardware: 45 Gb/s (peers at ~49) only warns."""
    bw = tuple(dataclasses.replace(b, gbps=45.0 + i % 4) if b.tool == "iperf3" else b
               for i, b in enumerate(ring_facts.bandwidth))
    results = check_link(ring4, dataclasses.replace(ring_facts, bandwidth=bw))
    assert {r.status for r in results if r.expected and r.actual and r.actual < 50} == {"warn"}


def test_rdma_twin_below_floor(ring4: Intent, ring_facts: Facts) -> None:
    link = ring4.links[2].id
    bw = tuple(dataclasses.replace(b, gbps=70.0)
               if (b.link_id, b.tool, b.twin) == (link, "ib_write_bw", 1) else b
               for b in ring_facts.bandwidth)
    [r] = failures(ring4, dataclasses.replace(ring_facts, bandwidth=bw), ("bw.link", None, link))
    assert "80 Gb/s floor" in r.message and "twin B" in r.message


def test_degraded_link_after_recabling(ring4: Intent, ring_facts: Facts) -> None:
    """The post-recable 8-25 Gb/s state: every measurement on one link is low."""
    link = ring4.links[1].id
    bw = tuple(dataclasses.replace(b, gbps=12.0) if b.link_id == link else b
               for b in ring_facts.bandwidth)
    rs = failures(ring4, dataclasses.replace(ring_facts, bandwidth=bw), ("bw.link", None, link))
    assert len(rs) == 4  # twin A, twin B, both twins, TCP
    assert any("reboot" in r.hint for r in rs)


def test_failed_measurement(ring4: Intent, ring_facts: Facts) -> None:
    link = ring4.links[0].id
    bw = tuple(dataclasses.replace(b, gbps=None, error="ibv_modify_qp failed (110)")
               if (b.link_id, b.tool, b.twin) == (link, "ib_write_bw", 0) else b
               for b in ring_facts.bandwidth)
    [r] = failures(ring4, dataclasses.replace(ring_facts, bandwidth=bw), ("bw.link", None, link))
    assert "110" in r.message


def test_no_probes_is_a_skip(ring4: Intent, ring_facts: Facts) -> None:
    [r] = check_link(ring4, dataclasses.replace(ring_facts, bandwidth=()))
    assert r.status == "skip" and "no bandwidth" in r.message
