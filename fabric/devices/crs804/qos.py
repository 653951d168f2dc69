"""Lossless RoCE, the switch's half (topology `qos: lossless`): the CRS804's QoS as API calls
(the switch QoS read back as a fact: `fabric.devices.crs804.read_switch_qos`; the Sparks' half:
`fabric.devices.spark.qos`).

The recipe is data (platforms.yaml `roce_qos`): RoCE data is DSCP 26, trusted on the
Spark-facing lanes, in the switch's traffic class 3 = the NICs' PFC priority 3, with ECN
marking on that queue; CNPs (DSCP 48) get a strict class. The switch side follows MikroTik's
manual "Quality of Service" (Marvell Prestera) for the version the switch reports:

- below 7.15: refused (no PFC/ECN menus);
- 7.15 to 7.22: `qos/profile`, `qos/map/ip` (DSCP -> profile), `qos/tx-manager/queue`,
  `qos/priority-flow-control`, `qos/port` (trust-l3, pfc, egress-rate-queue3);
- 7.23 and later: the same profiles with `automap` (no map rows) and the lossless traffic class
  in `qos/settings` (`lossless-traffic-class`);

then `qos-hw-offloading=yes` on the switch chip and `lldp-dcbx=yes` in neighbor discovery.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from fabric.devices.crs804.model import ApiCall, Attr
from fabric.devices.crs804.platform import (
    DISCOVERY,
    MAP_IP,
    PFC,
    PORT,
    PROFILE,
    QUEUE,
    SETTINGS,
    SWITCH,
)
from fabric.devices.crs804.read_switch_qos import dscp_values, qos_classes
from fabric.intent.model import Intent
from fabric.intent.platforms import (
    SwitchModel,
    at_least,
    roce_qos,
    routeros_properties,
    switch_model,
)

_RATE = re.compile(r"^(\d+(?:\.\d+)?)([kKMG]?)(?:bps)?$")
_UNITS = {"": 1, "k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9}


def rate_bps(text: str | None) -> int | None:
    """A RouterOS bit rate (`100G`, `10.0Gbps`, `0`) in bit/s; None when unset or unreadable."""
    m = _RATE.match((text or "").strip())
    return int(float(m.group(1)) * _UNITS[m.group(2)]) if m else None


def yes_no(value: str | None) -> str | None:
    """API booleans (`true`/`false`) as the values push writes (`yes`/`no`)."""
    return {"true": "yes", "false": "no"}.get(value or "", value)


def egress_rate(model: SwitchModel, gbps: int, version: str) -> str:
    """`egress-rate-queueN` of a lane: its line rate (PFC receive needs a rate to time pauses),
    0 (no shaping) where the line rate is above what the chip's queue shaper takes on that
    RouterOS version (platforms.yaml `qos_egress_caps`, with its evidence)."""
    return "0" if gbps > model.qos_max_egress_gbps(version) else f"{gbps}G"


def qos_refusal(intent: Intent, version: str) -> str | None:
    """Why the switch cannot carry the lossless profile (None: it can)."""
    sw = intent.switch
    assert sw is not None
    minimum = switch_model(sw.model).qos_min_version
    if at_least(version, minimum):
        return None
    return (f"qos: lossless needs RouterOS {minimum} or newer on {sw.host} (the QoS, PFC and "
            f"ECN menus of its switch chip; 7.17 recommended) and it reports {version or '?'}: "
            "upgrade RouterOS, or set `qos: lossy` in the topology. Nothing is changed on any "
            "host: half a lossless configuration is worse than none")


class _Rows:
    """The snapshot's rows of the QoS menus (absent menu: no rows)."""

    def __init__(self, rows: Mapping[str, list[dict[str, str]]]) -> None:
        self.rows = rows

    def find(self, path: str, **match: str) -> dict[str, str] | None:
        return next((r for r in self.rows.get(path, [])
                     if all(r.get(k) == v for k, v in match.items())), None)


def _id(row: Mapping[str, str]) -> str | None:
    return row.get("id") or row.get(".id")


def _set_or_add(rows: _Rows, path: str, key: dict[str, str], want: dict[str, str]
                ) -> list[ApiCall]:
    """`add` the item `key` + `want` where no item matches `key`, else `set` what differs."""
    row = rows.find(path, **key)
    if row is None:
        return [ApiCall(path, "add", None, tuple(Attr(k, None, v)
                                                 for k, v in {**key, **want}.items()))]
    attrs = tuple(Attr(k, yes_no(row.get(k)), v) for k, v in want.items()
                  if _differs(row.get(k), v))
    return [ApiCall(path, "set", _id(row) or key.get("name"), attrs)] if attrs else []


def _differs(have: str | None, want: str) -> bool:
    """True when `have` differs from `want` (booleans and rates compared by meaning)."""
    if yes_no(have) == want:
        return False
    if want[:1].isdigit() and rate_bps(have) is not None:
        return rate_bps(have) != rate_bps(want)
    return True


def switch_qos_calls(intent: Intent, version: str, rows: Mapping[str, list[dict[str, str]]],
                     lanes: Iterable[str], absent: list[str] | None = None) -> list[ApiCall]:
    """The API calls that give the switch the lossless profile for the RouterOS `version`,
    with port QoS on `lanes` (the Spark-facing lanes whose Spark takes its half too). A
    wanted queue property that the switch's own row of that queue does not show is not sent;
    it is listed in `absent` (`menu traffic-class=N: property`)."""
    sw = intent.switch
    assert sw is not None
    model, r = switch_model(sw.model), roce_qos()
    have = _Rows(rows)
    lossless_tc = at_least(version, model.qos_lossless_tc_version)
    auto = {"automap": "yes"} if lossless_tc else {}
    calls: list[ApiCall] = []
    for name, dscp, tc in ((r.profile, r.dscp, r.priority),
                           (r.cnp_profile, r.cnp_dscp, r.cnp_traffic_class)):
        calls += _set_or_add(have, PROFILE, {"name": name},
                             {"dscp": str(dscp), "traffic-class": str(tc), **auto})
    if not lossless_tc:  # 7.23+ maps trusted DSCPs to profiles by itself (automap)
        for name, dscp in ((r.profile, r.dscp), (r.cnp_profile, r.cnp_dscp)):
            calls += _map_call(have, name, dscp)
    for tc, attrs in sorted(r.queues.items()):
        row = have.find(QUEUE, **{"tx-manager": "default", "traffic-class": str(tc)})
        if row is not None:
            # read before written: a property this chip's queue row lacks is never sent
            # (MikroTik's CLI reference: prestera-cpss has no use-shared-buffers)
            if absent is not None:
                absent += [f"{QUEUE} traffic-class={tc}: {k}" for k in attrs if k not in row]
            changed = tuple(Attr(k, yes_no(row.get(k)), v) for k, v in attrs.items()
                            if k in row and _differs(row.get(k), v))
            if changed:
                calls.append(ApiCall(QUEUE, "set", _id(row), changed))
    calls += _set_or_add(have, PFC, {"name": r.pfc_profile},
                         {"traffic-class": str(r.priority), "rx": "yes", "tx": "yes"})
    gbps = {lp.name: lp.gbps for lp in sw.lanes}
    for lane in sorted(set(lanes)):
        row = have.find(PORT, name=lane) or {"name": lane}
        want = {"trust-l3": r.trust_l3, "pfc": r.pfc_profile,
                f"egress-rate-queue{r.priority}": egress_rate(model, gbps.get(lane, 0), version)}
        port = tuple(Attr(k, row.get(k), v) for k, v in want.items() if _differs(row.get(k), v))
        if port:
            calls.append(ApiCall(PORT, "set", lane, port))
    if lossless_tc:
        settings = have.find(SETTINGS) or {}
        if qos_classes(settings.get("lossless-traffic-class")) != (r.priority,):
            calls.append(ApiCall(SETTINGS, "set", None, (Attr(
                "lossless-traffic-class", settings.get("lossless-traffic-class"),
                str(r.priority)),)))
    chip = have.find(SWITCH, name=model.qos_switch) or {}
    if yes_no(chip.get("qos-hw-offloading")) != "yes":
        calls.append(ApiCall(SWITCH, "set", model.qos_switch, (Attr(
            "qos-hw-offloading", yes_no(chip.get("qos-hw-offloading")), "yes"),)))
    disc = have.find(DISCOVERY) or {}
    if yes_no(disc.get("lldp-dcbx")) != "yes":
        calls.append(ApiCall(DISCOVERY, "set", None,
                             (Attr("lldp-dcbx", yes_no(disc.get("lldp-dcbx")), "yes"),)))
    return calls


def table_refusals(calls: Iterable[ApiCall]) -> list[str]:
    """What the planned QoS calls would send that the shared property table
    (platforms.yaml `routeros_properties`, which the emulator enforces too) says the switch
    refuses: `menu key=value (wants ...)`. Properties the table does not hold pass."""
    table = routeros_properties()
    found: list[str] = []
    for call in calls:
        for attr in call.attrs if call.path in table.menus else ():
            try:
                why = table.prop(call.path, attr.key).refuses(attr.new)
            except KeyError:
                continue
            if why is not None:
                found.append(f"{call.path} {attr.key}={attr.new} (wants {why})")
    return found


def qos_script(intent: Intent, version: str) -> list[str]:
    """The lossless profile as RouterOS console lines (desired state, for review and golden
    files): what `switch_qos_calls` converges any switch to."""
    sw = intent.switch
    assert sw is not None
    model, r = switch_model(sw.model), roce_qos()
    lossless_tc = at_least(version, model.qos_lossless_tc_version)
    auto = " automap=yes" if lossless_tc else ""
    lines = [f"{PROFILE} add name={r.profile} dscp={r.dscp} traffic-class={r.priority}{auto}",
             f"{PROFILE} add name={r.cnp_profile} dscp={r.cnp_dscp} "
             f"traffic-class={r.cnp_traffic_class}{auto}"]
    if not lossless_tc:
        lines += [f"{MAP_IP} add dscp={r.dscp} profile={r.profile}",
                  f"{MAP_IP} add dscp={r.cnp_dscp} profile={r.cnp_profile}"]
    for tc, attrs in sorted(r.queues.items()):
        words = " ".join(f"{k}={v}" for k, v in attrs.items())
        lines.append(f"{QUEUE} set [ find tx-manager=default traffic-class={tc} ] {words}")
    lines.append(f"{PFC} add name={r.pfc_profile} traffic-class={r.priority} rx=yes tx=yes")
    for lane in (lp for lp in sw.lanes if lp.cabled_to):
        lines.append(f"{PORT} set {lane.name} trust-l3={r.trust_l3} pfc={r.pfc_profile} "
                     f"egress-rate-queue{r.priority}={egress_rate(model, lane.gbps, version)}")
    if lossless_tc:
        lines.append(f"{SETTINGS} set lossless-traffic-class={r.priority}")
    lines.append(f"{SWITCH} set {model.qos_switch} qos-hw-offloading=yes")
    lines.append(f"{DISCOVERY} set lldp-dcbx=yes")
    return lines


def _map_call(have: _Rows, profile: str, dscp: int) -> list[ApiCall]:
    """A DSCP -> profile row in the default map, unless one already maps `dscp` there; a row
    that maps exactly `dscp` elsewhere is pointed at `profile` instead of shadowed."""
    rows = [r for r in have.rows.get(MAP_IP, []) if not r.get("map") or r["map"] == "default"]
    if any(r.get("profile") == profile and dscp in dscp_values(r.get("dscp", ""))
           and yes_no(r.get("disabled")) != "yes" for r in rows):
        return []
    exact = next((r for r in rows if r.get("dscp") == str(dscp)), None)
    if exact is not None:
        return [ApiCall(MAP_IP, "set", _id(exact), (Attr("profile", exact.get("profile"),
                                                         profile),))]
    return [ApiCall(MAP_IP, "add", None, (Attr("dscp", None, str(dscp)),
                                          Attr("profile", None, profile)))]
