"""host: PCIe width/speed of each twin's function, NetworkManager profiles, RemoveIPC, memory."""

from __future__ import annotations

import dataclasses

from fabric.facts import Facts, ImageFact, PcieFact
from fabric.intent.model import Intent
from tests.validators import builder
from tests.validators.helpers import failures
from validators import run_checks
from validators.host import nccl_buffer_bytes


def _host(facts: Facts, host: str, **changes: object) -> Facts:
    state = dataclasses.replace(facts.sparks[host].host_state, **changes)  # type: ignore[arg-type]
    return builder.replace_spark(facts, host, host_state=state)


def _twin(intent: Intent, host: str, n: int = 0) -> tuple[str, str]:
    plan = intent.interfaces(host)[n]
    return plan.netdev, plan.link_id


def test_healthy_hosts_pass(star4: Intent, star_facts: Facts) -> None:
    results = run_checks(star4, star_facts, {"host"})
    assert {r.check for r in results} == {"host.pcie", "host.nm", "host.ipc", "host.memory",
                                          "host.image"}
    assert {r.status for r in results} == {"pass"}
    assert sum(r.check == "host.pcie" for r in results) == len(star4.interfaces())


def test_second_nic_at_x2_fails_naming_twin_slot_and_bios(star4: Intent,
                                                          star_facts: Facts) -> None:
    netdev, link = _twin(star4, "spark02", 1)
    pcie = dict(star_facts.sparks["spark02"].host_state.pcie)
    pcie[netdev] = PcieFact(netdev, 32.0, 2, 32.0, 4, "0002:01:00.0")
    (r,) = failures(star4, _host(star_facts, "spark02", pcie=pcie),
                    ("host.pcie", "spark02", link))
    assert netdev in r.message and "0002:01:00.0" in r.message and "Gen5 x2" in r.message
    assert "BIOS before 2026-04" in r.hint and "5.36_0ACUM018" in r.hint
    assert (r.expected, r.actual) == ("Gen5 x4", "Gen5 x2")


def test_link_trained_below_gen5_fails_with_power_drain(star4: Intent,
                                                        star_facts: Facts) -> None:
    netdev, link = _twin(star4, "spark01")
    pcie = dict(star_facts.sparks["spark01"].host_state.pcie)
    pcie[netdev] = PcieFact(netdev, 16.0, 4, 32.0, 4)
    (r,) = failures(star4, _host(star_facts, "spark01", pcie=pcie),
                    ("host.pcie", "spark01", link))
    assert r.actual == "Gen4 x4" and "drain power" in r.hint


def test_unread_pcie_skips_with_the_reason(star4: Intent, star_facts: Facts) -> None:
    facts = _host(star_facts, "spark03", pcie={})
    skips = [r for r in run_checks(star4, facts, {"host.pcie"}) if r.status == "skip"]
    assert skips and all(r.host == "spark03" and "no PCIe function read" in r.message
                         for r in skips)


def test_veth_profile_has_no_pcie_but_a_function_is_judged_by_its_own_max(
        star_facts: Facts) -> None:
    intent = builder.intent("tests/fixtures/validators/star4-veth.yaml")
    facts = builder.healthy(intent)
    results = run_checks(intent, facts, {"host.pcie"})
    assert {r.status for r in results} == {"skip"} and all("veth" in r.message for r in results)
    netdev, link = _twin(intent, "spark01", 1)
    faulted = _host(facts, "spark01", pcie={netdev: PcieFact(netdev, 32.0, 2, 32.0, 4)})
    (r,) = [r for r in run_checks(intent, faulted, {"host.pcie"}) if r.status == "fail"]
    assert (r.host, r.link, r.expected, r.actual) == ("spark01", link, "Gen5 x4", "Gen5 x2")


def test_wired_connection_on_a_twin_fails_netplan_profile_passes(star4: Intent,
                                                                 star_facts: Facts) -> None:
    netdev, link = _twin(star4, "spark04")
    profiles = (("Wired connection 1", netdev), (f"netplan-{netdev}", netdev),
                ("netplan-enP7s7", "enP7s7"), ("Wired connection 2", None))
    (r,) = failures(star4, _host(star_facts, "spark04", nm_profiles=profiles),
                    ("host.nm", "spark04", link))
    assert '"Wired connection 1"' in r.message and netdev in r.message
    assert 'nmcli connection delete "Wired connection 1"' in r.hint


def test_no_nmcli_passes_unreadable_skips(star4: Intent, star_facts: Facts) -> None:
    facts = _host(star_facts, "spark01", nm_profiles=None)
    facts = builder.replace_spark(facts, "spark01", missing=("nmcli",))
    facts = _host(facts, "spark02", nm_profiles=None)
    by_host = {r.host: r.status for r in run_checks(star4, facts, {"host.nm"})}
    assert (by_host["spark01"], by_host["spark02"], by_host["spark03"]) == (
        "pass", "skip", "pass")


def test_remove_ipc_yes_fails_with_the_fix(star4: Intent, star_facts: Facts) -> None:
    facts = _host(star_facts, "spark03", remove_ipc=True, remove_ipc_file=None)
    (r,) = failures(star4, facts, ("host.ipc", "spark03", None))
    assert "systemd's default" in r.message
    assert r.hint.startswith("set RemoveIPC=no in /etc/systemd/logind.conf")
    assert "restart systemd-logind" in r.hint


def test_memory_for_nccl_buffers(star4: Intent, star_facts: Facts) -> None:
    assert nccl_buffer_bytes("-b 512M -e 4G -f 2") == 8 * 2**30
    assert nccl_buffer_bytes("-b 1M -e 16G") == 32 * 2**30
    short = _host(star_facts, "spark02", mem_available_kib=6 * 2**20)
    (r,) = failures(star4, short, ("host.memory", "spark02", None))
    assert r.status == "fail" and "runs out of memory" in r.message
    tight = _host(star_facts, "spark01", mem_available_kib=10 * 2**20)
    (w,) = failures(star4, tight, ("host.memory", "spark01", None))
    assert w.status == "warn"


def test_bios_differs_on_one_spark_fails_version(star4: Intent, star_facts: Facts) -> None:
    facts = star_facts
    for host in ("spark01", "spark02", "spark03", "spark04"):
        bios = "5.30_0ACUM012 (11/02/2025)" if host == "spark04" else "5.36_0ACUM018 (03/12/2026)"
        versions = dataclasses.replace(facts.sparks[host].versions, bios=bios)
        facts = builder.replace_spark(facts, host, versions=versions)
    (r,) = failures(star4, facts, ("version.consistent", "spark04", None))
    assert "BIOS 5.30_0ACUM012" in r.message and r.expected == "5.36_0ACUM018 (03/12/2026)"


def _rdma_slow(intent: Intent, facts: Facts, link: str, twin: int, gbps: float) -> Facts:
    bw = tuple(dataclasses.replace(b, gbps=gbps)
               if (b.link_id, b.tool, b.twin) == (link, "ib_write_bw", twin) else b
               for b in facts.bandwidth)
    return dataclasses.replace(facts, bandwidth=bw)


def test_degraded_init_hint_names_rail_and_cold_power_drain(ring4: Intent,
                                                            ring_facts: Facts) -> None:
    link = ring4.links[2]
    facts = _rdma_slow(ring4, ring_facts, link.id, 1, 13.0)
    rs = [r for r in run_checks(ring4, facts, {"bw"}) if r.status == "fail"]
    (r,) = [r for r in rs if "twin B" in r.message and "both" not in r.message]
    assert f"rail twin B of {link.id}" in r.hint and "cold power drain" in r.hint
    assert all(h in r.hint for h in (link.a.host, link.b.host))


def test_no_degraded_init_hint_where_pcie_explains_it(ring4: Intent, ring_facts: Facts) -> None:
    link = ring4.links[2]
    host = link.a.host
    netdev = ring4.hosts[host].ports[link.a.port][1].netdev
    pcie = dict(ring_facts.sparks[host].host_state.pcie)
    pcie[netdev] = PcieFact(netdev, 32.0, 2, 32.0, 4)
    facts = _rdma_slow(ring4, _host(ring_facts, host, pcie=pcie), link.id, 1, 13.0)
    rs = [r for r in run_checks(ring4, facts, {"bw"}) if r.status == "fail"]
    assert rs and not any("cold power drain" in r.hint for r in rs)


def _images(facts: Facts, host: str, *images: ImageFact) -> Facts:
    return _host(facts, host, images=images)


def test_one_spark_with_another_build_of_the_engine_image_fails_naming_it(
        star4: Intent, star_facts: Facts) -> None:
    other = ImageFact("sha256:" + "7" * 64, (builder.VLLM_IMAGE,), "2.26.2")
    rows = failures(star4, _images(star_facts, "spark03", other), ("host.image", "spark03", None))
    (r,) = [r for r in rows if r.status == "fail"]
    assert "777777777777" in r.message and "555555555555" in r.message
    assert "NCCL 2.26.2" in r.message
    # its NCCL is not the hosts' either: said beside it, as a warning
    assert [w.status for w in rows if w is not r] == ["warn"]
    assert f"docker pull {builder.VLLM_IMAGE}` on spark03" in r.hint


def test_an_image_whose_nccl_is_not_the_hosts_warns_with_the_fix(star4: Intent,
                                                                star_facts: Facts) -> None:
    facts = star_facts
    newer = ImageFact(builder.VLLM_IMAGE_ID, (builder.VLLM_IMAGE,), "2.28.9")
    for host in facts.sparks:
        facts = _images(facts, host, newer)
    results = [r for r in run_checks(star4, facts, {"host"}) if r.check == "host.image"]
    warned = [r for r in results if r.status == "warn"]
    assert len(warned) == 1, results
    assert "on spark01, spark02, spark03, spark04) carries NCCL 2.28.9; the hosts run NCCL " \
        "2.27.7" in warned[0].message
    assert "nccl-tests inside" in warned[0].hint and "install NCCL 2.28.9" in warned[0].hint
    assert [r.status for r in results if r.status != "warn"] == ["pass"]  # one image


def test_images_unread_or_silent_about_nccl_are_skipped_not_passed(star4: Intent,
                                                                   star_facts: Facts) -> None:
    silent = ImageFact(builder.VLLM_IMAGE_ID, (builder.VLLM_IMAGE,), None)
    facts = star_facts
    for host in facts.sparks:
        facts = _images(facts, host, silent, ImageFact("sha256:" + "1" * 64, ("debian:12",)))
    facts = _host(facts, "spark04", images=None)
    results = [r for r in run_checks(star4, facts, {"host"}) if r.check == "host.image"]
    skipped = {r.message for r in results if r.status == "skip"}
    assert any(m.startswith("spark04: container images not read") for m in skipped), skipped
    assert any("declares no NCCL_VERSION" in m for m in skipped), skipped
    assert not any("debian" in r.message for r in results)  # not an engine image


def test_no_engine_image_anywhere_is_one_skip(star4: Intent, star_facts: Facts) -> None:
    facts = star_facts
    for host in facts.sparks:
        facts = _images(facts, host)
    results = [r for r in run_checks(star4, facts, {"host"}) if r.check == "host.image"]
    assert [(r.status, r.message) for r in results] == [
        ("skip", "no engine image (vllm, sglang, tensorrt-llm) on any Spark")]
