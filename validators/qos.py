"""qos: lossless RoCE is configured at both ends of every cable alike, or (lossy) nowhere."""

from __future__ import annotations

from typing import Any

from fabric.facts import Facts, QosFact, SwitchQosFact
from fabric.intent.model import Intent, InterfaceIntent
from fabric.intent.platforms import RoceQos, roce_qos
from validators.judge import Findings, reference, where
from validators.registry import check, needs

#: trust-l3 values of a switch port that trust the DSCP field
TRUSTED = ("trust", "keep")


#: What qos judges: the twins' and the switch's QoS (PFC, ECN, trust).
NEEDS = needs("qos", spark=True, switch=True)


@check("qos.consistent")
def check_consistent(intent: Intent, facts: Facts, out: Findings) -> None:
    """Lossless topology: judges that each switch lane and each twin on it agree on DSCP
    trust, PFC priorities and where DSCP 26 lands (and the switch's offload, ECN, CNP class
    and LLDP DCBX); lossy: skipped, unless twins carry trust/PFC, then judged alike."""
    if intent.lossless:
        _lossless(intent, facts, out)
        return
    _lossy(intent, facts, out)


# --- lossless: both ends of each cable -----------------------------------------------------


def _lossless(intent: Intent, facts: Facts, out: Findings) -> None:
    r = roce_qos()
    sw_intended = intent.switch
    assert sw_intended is not None  # a lossless topology has a switch (static check)
    sw = out.switch(sw_intended.host)
    q = sw.qos if sw is not None else None
    if sw is not None and q is None:
        out.fail(f"{sw_intended.host}: its QoS was not collected, so the switch end of no cable "
                 "can be judged", host=sw_intended.host,
                 hint="collect the switch's QoS menus (/interface/ethernet/switch/qos/...) "
                 "with the facts")
    elif q is not None and q.error is not None:
        out.fail(f"{sw_intended.host}: QoS menus unreadable: {q.error}", host=sw_intended.host,
                 hint="lossless RoCE needs RouterOS 7.15+ (7.17 recommended) on the switch")
        q = None
    if q is not None:
        _switch_wide(sw_intended.host, q, r, out)
    lanes = {lp.link_id: lp.name for lp in sw_intended.lanes if lp.link_id}
    for intended, sf in out.twins(intent):
        lane = lanes.get(intended.link_id)
        if lane is None:
            continue
        _cable(sw_intended.host, lane, intended, q, sf.qos.get(intended.netdev), sf.missing, r, out)


def _switch_wide(host: str, q: SwitchQosFact, r: RoceQos, out: Findings) -> None:
    """The settings every lane shares: offload, ECN on the RoCE queue, the CNP class, DCBX."""
    wrong = []
    if not q.offloaded:
        wrong.append("qos-hw-offloading=no (no QoS setting is in effect)")
    if r.priority not in q.ecn_classes:
        wrong.append(f"no ECN marking on traffic class {r.priority}")
    cnp = q.traffic_class_of(r.cnp_dscp)
    if cnp not in q.strict_classes:
        wrong.append(f"CNPs (DSCP {r.cnp_dscp}) land in traffic class {cnp}, not a strict one")
    if not q.lldp_dcbx:
        wrong.append("lldp-dcbx is off (the NICs do not hear the switch's PFC settings)")
    want = {"qos-hw-offloading": True, "ecn": [r.priority], "cnp_strict": True,
            "lldp-dcbx": True}
    actual = {"qos-hw-offloading": q.offloaded, "ecn": list(q.ecn_classes),
              "cnp_strict": cnp in q.strict_classes, "lldp-dcbx": q.lldp_dcbx}
    if wrong:
        out.fail(f"{host}: {'; '.join(wrong)}", host=host, expected=want, actual=actual,
                 hint="run `fabric push --apply`: it sets the switch's lossless profile")
    else:
        out.ok(f"{host}: QoS offloaded, ECN on traffic class {r.priority}, CNPs strict "
               f"(traffic class {cnp}), LLDP DCBX on", host=host, expected=want, actual=actual)


def _switch_end(lane: str, q: SwitchQosFact | None, r: RoceQos) -> dict[str, Any] | None:
    port = q.ports.get(lane) if q is not None else None
    if q is None or port is None:
        return None
    trusted = bool(q.offloaded) and port.trust_l3 in TRUSTED
    return {"trust": "dscp" if trusted else "none", "pfc": list(port.pfc_classes),
            f"dscp{r.dscp}": q.traffic_class_of(r.dscp) if trusted else None,
            "trust-l3": port.trust_l3, "pfc_profile": port.pfc}


def _twin_end(qf: QosFact | None, r: RoceQos) -> dict[str, Any] | None:
    if qf is None:
        return None
    prio = next((p for p, ds in qf.dscp2prio if r.dscp in ds), None)
    if qf.trust == "dscp" and not qf.dscp2prio:
        prio = r.dscp >> 3  # not collected: the ConnectX default map (DSCP 24-31 -> 3)
    return {"trust": qf.trust or "none", "pfc": sorted(qf.pfc_enabled),
            f"dscp{r.dscp}": prio if qf.trust == "dscp" else None}


def _cable(host: str, lane: str, intended: InterfaceIntent, q: SwitchQosFact | None,
           qf: QosFact | None, missing: tuple[str, ...], r: RoceQos, out: Findings) -> None:
    """One twin and the lane it rides: both ends must trust DSCP, run PFC on the RoCE
    priority alone, and put DSCP 26 into it."""
    key = f"dscp{r.dscp}"
    want = {"trust": "dscp", "pfc": [r.priority], key: r.priority}
    sw_end, twin_end = _switch_end(lane, q, r), _twin_end(qf, r)
    lane_label, twin_label = f"{host} {lane}", where(intended)
    actual = {"switch": sw_end, "twin": twin_end}
    if twin_end is None:
        why = ("mlnx_qos is not installed" if "mlnx_qos" in missing
               else "its mlnx_qos settings were not read")
        out.fail(f"{twin_label}: {why}, so the twin's end of {lane_label} cannot be judged",
                 host=intended.host, link=intended.link_id, expected=want, actual=actual,
                 hint="install mlnx_qos (NVIDIA mlnx-tools), then `fabric push --apply`")
        return
    if sw_end is None:
        return  # the switch end was reported once above (not collected / unreadable)
    sw_ok = {k: sw_end[k] for k in want} == want
    twin_ok = {k: twin_end[k] for k in want} == want
    if sw_ok and twin_ok:
        out.ok(f"{lane_label} and {twin_label} agree: trust DSCP, PFC on priority "
               f"{r.priority}, DSCP {r.dscp} -> {r.priority}", host=intended.host,
               link=intended.link_id, expected=want, actual=actual)
        return
    diff = [k for k in want if sw_end[k] != twin_end[k]]
    ends = (f"{lane_label} (trust-l3 {sw_end['trust-l3']}, PFC {sw_end['pfc']}, DSCP "
            f"{r.dscp} -> {_tc(sw_end[key])}) and {twin_label} (trust {twin_end['trust']}, PFC "
            f"{twin_end['pfc']}, DSCP {r.dscp} -> {_tc(twin_end[key])})")
    what = (f"disagree on {', '.join(_name(k, r) for k in diff)}" if diff
            else "agree, but not on the lossless class")
    fix_lane = (f"/interface/ethernet/switch/qos/port set {lane} trust-l3={r.trust_l3} "
                f"pfc={r.pfc_profile}")
    fix_twin = f"mlnx_qos -i {intended.netdev} --trust dscp --pfc {r.pfc_bits}"
    hint = " ; ".join(f for ok, f in ((sw_ok, fix_lane), (twin_ok, fix_twin)) if not ok)
    out.fail(f"{ends} {what}: half a lossless class is worse than none",
             host=host if not sw_ok else intended.host, link=intended.link_id, expected=want,
             actual=actual, hint=f"{hint} (or `fabric push --apply`)")


def _tc(value: object) -> str:
    return "unclassified" if value is None else str(value)


def _name(key: str, r: RoceQos) -> str:
    return {"trust": "DSCP trust", "pfc": "PFC priorities"}.get(key, f"where DSCP {r.dscp} lands")


# --- lossy: nothing to judge unless twins carry lossless settings --------------------------


#: A twin and the (trust, PFC priorities) it runs.
_Seen = tuple[InterfaceIntent, tuple[str | None, tuple[int, ...]]]


def _lossy_star(intent: Intent, seen: list[_Seen], out: Findings) -> None:
    """A lossy star leaves the switch's lanes as they are (a factory CRS804 runs no PFC) and
    does not read their QoS: a twin running PFC is half a lossless class (PFC on the NIC
    replaces global pause), so it fails; a twin without PFC passes, whatever it trusts."""
    for intended, (trust, pfc) in seen:
        actual = {"trust": trust, "pfc": list(pfc)}
        if not pfc:
            out.ok(f"{intended.host} {intended.netdev}: trust {trust}, no PFC (the topology is "
                   "qos: lossy)", host=intended.host, link=intended.link_id,
                   expected={"pfc": []}, actual=actual)
            continue
        out.fail(f"{intended.host} {intended.netdev}: PFC on priorities {list(pfc)} while the "
                 f"topology {intent.name} is qos: lossy, so its switch lanes are not kept "
                 "lossless: half a lossless class is worse than none (PFC on the NIC replaces "
                 "global pause)", host=intended.host, link=intended.link_id, expected={"pfc": []},
                 actual=actual,
                 hint=f"mlnx_qos -i {intended.netdev} --pfc 0,0,0,0,0,0,0,0, or set `qos: "
                 "lossless` in the topology and `fabric push --apply` (both ends)")


def _lossy(intent: Intent, facts: Facts, out: Findings) -> None:
    seen = []
    for intended in intent.interfaces():
        sf = facts.sparks.get(intended.host)
        q = sf.qos.get(intended.netdev) if sf else None
        if q is not None:
            seen.append((intended, (q.trust, tuple(sorted(q.pfc_enabled)))))
    if not any(trust == "dscp" or pfc for _, (trust, pfc) in seen):
        out.skip(f"topology {intent.name} is qos: lossy: the NICs' and the switch's QoS "
                 "defaults are left as they are, nothing to judge (set `qos: lossless` for "
                 "RoCE in a lossless class at both ends)")
        return
    if intent.switch is not None:
        _lossy_star(intent, seen, out)
        return
    ref = reference((p.host, v) for p, v in seen)
    want = {"trust": ref[0], "pfc": list(ref[1])}
    have = {(p.host, p.netdev) for p, _ in seen}
    for intended in intent.interfaces():
        if (intended.host, intended.netdev) not in have and intended.host in facts.sparks:
            out.fail(f"{intended.host} {intended.netdev}: no QoS settings while other twins use "
                     f"trust {ref[0]} PFC {list(ref[1])}", host=intended.host,
                     link=intended.link_id,
                     expected=want, actual=None,
                     hint=f"mlnx_qos -i {intended.netdev} --trust {ref[0]} --pfc "
                     + ",".join("1" if i in ref[1] else "0" for i in range(8)))
    for intended, value in seen:
        actual = {"trust": value[0], "pfc": list(value[1])}
        if value == ref:
            out.ok(f"{intended.host} {intended.netdev}: trust {value[0]} PFC {list(value[1])} (the "
                   f"topology is qos: lossy; these twins carry lossless settings alike)",
                   host=intended.host, link=intended.link_id, expected=want, actual=actual)
        else:
            out.fail(f"{intended.host} {intended.netdev}: trust {value[0]} PFC {list(value[1])}, "
                     f"other twins use trust {ref[0]} PFC {list(ref[1])}", host=intended.host,
                     link=intended.link_id, expected=want, actual=actual,
                     hint=f"mlnx_qos -i {intended.netdev} --trust {ref[0]} --pfc "
                     + ",".join("1" if i in ref[1] else "0" for i in range(8)))
