"""Draw a fabric with Graphviz: hosts coloured by UPS group (or by check status), links
labelled with speed and switch lane. Used by `topo show`, the HTML report and the planner."""

from __future__ import annotations

import math
import shutil
import subprocess
from collections.abc import Mapping, Sequence

from fabric.errors import FabricError
from fabric.intent.model import Intent, Link

UPS_COLOURS = {"UPS-A": "#cfe2ff", "UPS-B": "#ffe5b4", "UPS-C": "#d9f2d9"}
UPS_BORDER = {"UPS-A": "#1f5fbf", "UPS-B": "#c77700", "UPS-C": "#2e8b57"}
STATUS_COLOURS = {"pass": "#2e8b57", "warn": "#d4a017", "fail": "#d62728", "error": "#8b0000",
                  "skip": "#9e9e9e"}
STATUS_FILL = {"pass": "#d9f2d9", "warn": "#fff3c4", "fail": "#ffd6d6", "error": "#f4b6b6",
               "skip": "#eeeeee"}


def _q(text: str) -> str:
    return '"' + text.replace('"', '\\"') + '"'


def to_dot(intent: Intent, host_status: Mapping[str, str] | None = None,
           link_status: Mapping[str, str] | None = None,
           highlight: set[str] | None = None, title: str | None = None,
           link_ways: Mapping[str, Sequence[tuple[str, str]]] | None = None) -> str:
    """DOT text for the fabric. Status maps, when given, colour hosts and links by result;
    `link_ways` (link id -> (sender, receiver) of each failing direction) puts an arrowhead on
    the end a failing direction flows toward and names the direction in the label."""
    host_status = host_status or {}
    link_status = link_status or {}
    link_ways = link_ways or {}
    highlight = highlight or set()
    star = intent.switch is not None
    lines = [f"graph {_q(intent.name)} {{",
             f'  graph [label={_q(title or _title(intent))}, labelloc=t, fontsize=18, '
             'fontname="Helvetica", pad=0.4, nodesep=0.5, ranksep=1.6, splines=true];',
             '  node [fontname="Helvetica", fontsize=12, style="filled,rounded", shape=box, '
             'penwidth=2];',
             '  edge [fontname="Helvetica", fontsize=10, penwidth=2.5];']
    sparks = intent.sparks
    if star:
        lines += _switch_node(intent, host_status)
        lines += [f"  {_node(intent, h.name, host_status)}" for h in sparks]
        lines.append("  { rank=same; " + " ".join(_q(h.name) for h in sparks) + " }")
    else:
        n = len(sparks)
        radius = max(2.2, n * 0.7)
        for i, h in enumerate(sparks):
            angle = math.pi / 2 - 2 * math.pi * i / max(n, 1) + (math.pi / 4 if n == 4 else 0)
            pos = f"{radius * math.cos(angle):.2f},{radius * math.sin(angle):.2f}!"
            lines.append(f"  {_node(intent, h.name, host_status, pos=pos)}")
    for link in intent.links:
        lines.append("  " + _edge(link, star, link_status, highlight,
                                  link_ways.get(link.id, ())))
    legend_pos = None if star else f"{radius + 1.8:.2f},{radius:.2f}!"
    lines.append("  " + _legend(intent, bool(host_status or link_status), legend_pos))
    lines.append("}")
    return "\n".join(lines) + "\n"


def _title(intent: Intent) -> str:
    return (f"{intent.name}: {intent.description}\\nMTU {intent.mtu} · profile "
            f"{intent.profile.name} · intent {intent.intent_hash}")


def _node(intent: Intent, name: str, host_status: Mapping[str, str],
          pos: str | None = None) -> str:
    h = intent.hosts[name]
    status = host_status.get(name)
    fill = STATUS_FILL[status] if status else UPS_COLOURS.get(h.ups or "", "#f0f0f0")
    border = STATUS_COLOURS[status] if status else UPS_BORDER.get(h.ups or "", "#555555")
    addrs = [str(i.address) for i in intent.interfaces(name)]
    label = f"{name}\\n{h.ups or ''}" + (f" · {status.upper()}" if status else "")
    if h.status == "planned":
        label += "\\n(planned)"
    tip = f"{name}: " + ", ".join(addrs)
    attrs = [f"label={_q(label)}", f"fillcolor={_q(fill)}", f"color={_q(border)}",
             f"tooltip={_q(tip)}", f"id={_q('host-' + name)}"]
    if pos:
        attrs.append(f"pos={_q(pos)}")
    if h.status == "planned":
        attrs.append('style="filled,rounded,dashed"')
    return f"{_q(name)} [{', '.join(attrs)}];"


def _switch_node(intent: Intent, host_status: Mapping[str, str]) -> list[str]:
    sw = intent.switch
    assert sw is not None
    status = host_status.get(sw.host)
    fields = []
    for port, mode in sorted(sw.port_modes.items()):
        lanes = [lane for lane in sw.lanes if lane.port == port]
        sub = "|".join(f"<{lane.name}> {lane.name.rsplit('-', 2)[-2]}-"
                       f"{lane.name.rsplit('-', 1)[-1]}" for lane in lanes)
        fields.append(f"{{{port} · {mode}|{{{sub}}}}}")
    ups = intent.hosts[sw.host].ups or ""
    label = f"{{{sw.host} · {ups} · bridge {sw.bridge} · l2mtu {sw.l2mtu}|{{{'|'.join(fields)}}}}}"
    fill = STATUS_FILL[status] if status else UPS_COLOURS.get(ups, "#f0f0f0")
    border = STATUS_COLOURS[status] if status else UPS_BORDER.get(ups, "#555555")
    return [f"  {_q(sw.host)} [shape=record, style=filled, label={_q(label)}, "
            f"fillcolor={_q(fill)}, color={_q(border)}, id={_q('host-' + sw.host)}];"]


def _edge(link: Link, star: bool, link_status: Mapping[str, str], highlight: set[str],
          ways: Sequence[tuple[str, str]] = ()) -> str:
    status = link_status.get(link.id)
    colour = STATUS_COLOURS[status] if status else ("#d62728" if link.id in highlight
                                                    else "#444444")
    a, b = link.a, link.b
    if star and link.switch_lane:
        sw_end, sp_end = (a, b) if a.port == link.switch_lane else (b, a)
        ends = f"{_q(sw_end.host)}:{_q(link.switch_lane)}:s -- {_q(sp_end.host)}:n"
        label = f"{link.speed_gbps}G {sp_end.port}"
        extra = ""
        head = sp_end.host
    else:
        ends = f"{_q(a.host)} -- {_q(b.host)}"
        label = f"{link.speed_gbps}G"
        extra = f", taillabel={_q(a.port)}, headlabel={_q(b.port)}, labeldistance=2.2"
        head = b.host
    if status:
        label += f"\\n{status.upper()}"
    arrows = _direction(ways, head)
    for src, dst in ways:
        label += f"\\n{src}→{dst}"
    if arrows:
        extra += f", dir={arrows}, arrowhead=normal, arrowtail=normal, arrowsize=1.3"
    width = 4.5 if (status in ("fail", "error") or link.id in highlight) else 2.5
    style = "dashed" if link.id in highlight and not status else "solid"
    return (f"{ends} [label={_q(label)}, color={_q(colour)}, fontcolor={_q(colour)}, "
            f"penwidth={width}, style={style}, id={_q('link-' + link.id)}, "
            f"tooltip={_q(link.id)}{extra}];")


def _direction(ways: Sequence[tuple[str, str]], head: str) -> str | None:
    """DOT `dir` for arrowheads on the ends the `ways` flow toward (`head`: the edge's head)."""
    toward_head = any(dst == head for _, dst in ways)
    toward_tail = any(dst != head for _, dst in ways)
    if toward_head and toward_tail:
        return "both"
    if toward_head:
        return "forward"
    return "back" if toward_tail else None


def _legend(intent: Intent, by_status: bool, pos: str | None) -> str:
    if by_status:
        rows = "".join(f'<TR><TD BGCOLOR="{STATUS_FILL[s]}">{s}</TD></TR>'
                       for s in ("pass", "warn", "fail", "error", "skip"))
        head = "result"
    else:
        used = sorted({h.ups for h in intent.hosts.values() if h.ups and h.name in intent.cabled})
        rows = "".join(f'<TR><TD BGCOLOR="{UPS_COLOURS.get(u, "#f0f0f0")}">{u}</TD></TR>'
                       for u in used)
        head = "power group"
    at = f"pos={_q(pos)}, " if pos else ""
    return (f'legend [{at}shape=plaintext, style="", label=<<TABLE BORDER="0" CELLBORDER="1" '
            f'CELLSPACING="0"><TR><TD><B>{head}</B></TD></TR>{rows}</TABLE>>];')


def draw(intent: Intent, fmt: str, **kwargs: object) -> bytes:
    """Render to `svg`, `png` or `dot` (text). Needs Graphviz (`dot`/`neato`) for images."""
    dot = to_dot(intent, **kwargs)  # type: ignore[arg-type]
    if fmt == "dot":
        return dot.encode()
    engine = "dot" if intent.switch is not None else "neato"
    exe = shutil.which(engine)
    if exe is None:
        raise FabricError(f"Graphviz `{engine}` is not installed (apt-get install graphviz; "
                          "`make setup` does it)")
    args = [exe, f"-T{fmt}"]
    if fmt == "png":
        args.append("-Gdpi=110")
    proc = subprocess.run(args, input=dot.encode(), capture_output=True, check=False)
    if proc.returncode != 0:
        raise FabricError(f"{engine} failed: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout
