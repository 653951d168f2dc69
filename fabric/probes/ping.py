"""Ping matrix: twins that share a subnet, both directions, jumbo and small; on a switch's
rails each twin pings its two neighbours on a cycle (`ping_probes`), between Sparks every pair.

A jumbo ``ping -M do -s MTU-28`` that is lost while the small one gets through is a silent
black hole (a smaller MTU somewhere on the same L2); both lost is an unreachable peer.
PingFact.size is the ICMP payload (the ``-s`` value): MTU - 28 for the jumbo probe.

One echo decides: each probe sends ONE packet and returns as soon as its reply arrives (or
after `FIRST_WAIT_S`). Only a probe that got no reply is tried again, at once, one echo at a
time, up to `RETRIES` more (each waiting `WAIT_S`, so a lost probe has been judged on three
packets: a single transient loss must never fail a path); a healthy matrix waits for
nothing. PingFact.sent and .received count every packet of every try.

The small probe of a pair only tells a black hole from a dead path, which matters only where
the jumbo was lost: it is sent when its pair's first jumbo echo got no reply (beside the
jumbo's retries), and a pair whose jumbo got through has no small PingFact. A healthy
matrix is one jumbo echo per pair and direction.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from fabric.errors import ParseError
from fabric.facts import PingFact
from fabric.intent.model import Intent, InterfaceIntent
from fabric.intent.wire import IP_ICMP_HEADERS
from fabric.parsers import parse
from fabric.parsers.records import PingResult
from fabric.remote.batch import REMOVE_TEMP, begin_marker, end_marker, split_batch, temp_dir

SMALL_PAYLOAD = 56
COUNT = 1
#: How long the first echo waits for its reply. A fabric answers in microseconds and a cold
#: ARP entry resolves in one round trip; a slower answer only costs the retry.
FIRST_WAIT_S = 0.25
#: Echoes sent one after the other after a failed first one, each only if the previous was
#: lost too.
RETRIES = 2
#: How long each retry waits for its reply (a lost ARP request is resent after 1 s).
WAIT_S = 1
#: Printed before each retry's output (`ping_fact` reads every try).
RETRY_MARK = "@@fabric-ping-retry"
#: The longest a pair's probes can take: the jumbo's first echo, then the small probe's first
#: echo and retries (the jumbo's retries run beside them and take no longer).
PROBE_MAX_S = 2 * FIRST_WAIT_S + RETRIES * WAIT_S

_PING_MSG = re.compile(r"^ping:\s+(?P<msg>.*\S)\s*$")
_PARSED_MSG = re.compile(r"^local error: message too long")


@dataclass(frozen=True)
class PingProbe:
    """One planned ping: from a twin (bound with -I) to a twin's address, DF set."""

    src_host: str
    src_netdev: str
    dst_host: str
    dst_netdev: str
    dst_addr: str
    payload: int
    link_id: str | None

    def ping(self, wait_s: float) -> str:
        """One `ping` run of this probe: ONE DF echo, waiting `wait_s` for its reply."""
        return (f"ping -n -M do -s {self.payload} -c {COUNT} -W {wait_s:g} "
                f"-I {self.src_netdev} {self.dst_addr}")

    def retries(self) -> str:
        """The retries after a lost first echo: one echo at a time, each only if the previous
        was lost, each after `RETRY_MARK`."""
        one = f"{{ echo {RETRY_MARK}; {self.ping(WAIT_S)}; }}"
        return " || ".join([one] * RETRIES)


def ping_probes(intent: Intent, sources: Iterable[str] | None = None,
                small: int = SMALL_PAYLOAD,
                targets: Iterable[str] | None = None) -> list[PingProbe]:
    """Probes between twins that share a subnet (from `sources` only and to `targets` only,
    if given): between Sparks cabled directly every pair; on a switch's rails each twin's two
    neighbours on a cycle over the rail's twins in node order, so the probes grow with the
    cables, not with the pairs. Every lane then carries four echo paths, two to each of two
    different partners, and a lane that drops jumbo frames is the only one on no working path
    (`validators.mtu` names it), as with the whole matrix."""
    wanted = None if sources is None else set(sources)
    peers = None if targets is None else set(targets)
    by_subnet: dict[str, list[InterfaceIntent]] = defaultdict(list)
    for iface in intent.interfaces():
        if peers is None or iface.host in peers or (wanted and iface.host in wanted):
            by_subnet[str(iface.address.network)].append(iface)
    sizes = sorted({intent.mtu - IP_ICMP_HEADERS, small}, reverse=True)
    probes: list[PingProbe] = []
    for subnet in sorted(by_subnet):
        members = by_subnet[subnet]
        if intent.switch is not None:
            members = sorted(members, key=lambda i: (intent.hosts[i.host].node_id or 0, i.host))
        for n, src in enumerate(members):
            if wanted is not None and src.host not in wanted:
                continue
            for dst in _partners(members, n, cycle=intent.switch is not None):
                if dst.host == src.host or (peers is not None and dst.host not in peers):
                    continue
                link = src.link_id if src.link_id == dst.link_id else None
                probes.extend(PingProbe(src.host, src.netdev, dst.host, dst.netdev,
                                        str(dst.address.ip), size, link) for size in sizes)
    return probes


def _partners(members: Sequence[InterfaceIntent], n: int, cycle: bool
              ) -> list[InterfaceIntent]:
    """Whom member `n` pings: its two cycle neighbours (`cycle`, more than three members),
    else every other member."""
    if not cycle or len(members) <= 3:
        return [m for i, m in enumerate(members) if i != n]
    return [members[(n - 1) % len(members)], members[(n + 1) % len(members)]]


def probes_by_host(probes: Iterable[PingProbe]) -> dict[str, list[PingProbe]]:
    out: dict[str, list[PingProbe]] = defaultdict(list)
    for p in probes:
        out[p.src_host].append(p)
    return dict(out)


def leads(probes: Sequence[PingProbe]) -> list[int | None]:
    """For each probe, the index of the probe it waits on: None for the largest probe of its
    pair (same source twin and destination address), else that largest probe's index (a
    smaller probe is sent only when it was lost)."""
    def pair(p: PingProbe) -> tuple[str, str, str, str]:
        return p.src_host, p.src_netdev, p.dst_host, p.dst_addr

    largest: dict[tuple[str, str, str, str], int] = {}
    for i, p in enumerate(probes):
        j = largest.get(pair(p))
        if j is None or p.payload > probes[j].payload:
            largest[pair(p)] = i
    return [None if largest[pair(p)] == i else largest[pair(p)] for i, p in enumerate(probes)]


def burst_script(probes: Sequence[PingProbe]) -> str:
    """One host's probes as ONE script: every pair's first jumbo echo at once; then, at
    once, the retries of each jumbo whose echo failed and that pair's small probe (its own
    first echo and retries); each probe's output delimited as `batch_script` does (so
    `split_batch` reads it; a small probe that was not needed prints nothing). One process
    per echo: no subshell per probe."""
    lead = leads(probes)
    lines = [temp_dir("fabric-ping")]
    for i, p in enumerate(probes):
        if lead[i] is None:
            lines.append(f'{begin_marker(i)} >"$d"{i}; '
                         f'{p.ping(FIRST_WAIT_S)} >>"$d"{i} 2>&1 </dev/null & p{i}=$!')
    for i in range(len(probes)):
        if lead[i] is None:
            lines.append(f"wait $p{i}; r{i}=$?")
    for i, p in enumerate(probes):
        if lead[i] is None:
            lines.append(f'q{i}=; if [ $r{i} != 0 ]; then {{ {p.retries()}; }} >>"$d"{i} '
                         f'2>&1 </dev/null & q{i}=$!; fi')
        else:
            lines.append(f'q{i}=; if [ $r{lead[i]} != 0 ]; then {begin_marker(i)} >"$d"{i}; '
                         f'{{ {p.ping(FIRST_WAIT_S)} || {p.retries()}; }} >>"$d"{i} 2>&1 '
                         f'</dev/null & q{i}=$!; fi')
    for i in range(len(probes)):
        if lead[i] is None:
            lines.append(f'[ -z "$q{i}" ] || {{ wait $q{i}; r{i}=$?; }}; '
                         f'{end_marker(i, f"$r{i}")} >>"$d"{i}')
        else:
            lines.append(f'[ -z "$q{i}" ] || {{ wait $q{i}; r{i}=$?; '
                         f'{end_marker(i, f"$r{i}")} >>"$d"{i}; }}')
    if probes:
        lines.append("cat " + " ".join(f'"$d"{i}' for i in range(len(probes))) + " 2>/dev/null")
    lines.append(REMOVE_TEMP)
    return "\n".join(lines) + "\n"


def read_burst(probes: Sequence[PingProbe], output: str) -> list[PingFact]:
    """The PingFacts of a `burst_script` run in probe order: one per probe, except a small
    probe left out because its pair's jumbo got through."""
    jobs = split_batch(output, len(probes))
    facts = [ping_fact(p, job.text, job.exit_code)
             for p, job in zip(probes, jobs, strict=True)]
    return [fact for fact, job, i in zip(facts, jobs, leads(probes), strict=True)
            if i is None or not _left_out(job.exit_code, jobs[i].exit_code, facts[i])]


def _left_out(exit_code: int | None, lead_exit: int | None, lead: PingFact) -> bool:
    """Whether a small probe was not sent: its jumbo got a reply (or exited 0, which the
    script took for one), and the small one printed nothing."""
    return lead.received > 0 or (exit_code is None and lead_exit == 0)


def ping_fact(probe: PingProbe, output: str, exit_code: int | None) -> PingFact:
    """The PingFact of one probe from its raw output, a first try and, where it failed, the
    retry after `RETRY_MARK` (errors become `error`, never raise). Packets of both tries
    count; messages of both are kept."""
    if exit_code is None:
        return _fact(probe, 0, 0, "no output came back")
    tries = output.split(f"{RETRY_MARK}\n")
    sent = received = 0
    messages: list[str] = []
    for i, text in enumerate(tries):
        rc = exit_code if i == len(tries) - 1 else 1
        got_sent, got_received, why = _one_try(text, rc)
        sent, received = sent + got_sent, received + got_received
        messages.extend(why)
    error = "; ".join(dict.fromkeys(messages)) or None
    return _fact(probe, sent, received, error)


def _one_try(output: str, exit_code: int) -> tuple[int, int, list[str]]:
    """(sent, received, messages) of one `ping` run's output."""
    messages, kept = [], []
    for line in output.splitlines():
        msg = _PING_MSG.match(line)
        if msg and not _PARSED_MSG.match(msg.group("msg")):
            if "Warning" not in msg.group("msg"):
                messages.append(msg.group("msg"))
            continue
        kept.append(line)
    result: PingResult | None = None
    try:
        records = parse("ping", "\n".join(kept) + "\n") if any(
            ln.startswith("PING") for ln in kept) else []
        result = next((r for r in records if isinstance(r, PingResult)), None)
    except ParseError as exc:
        messages.append(str(exc))
    if result is None:
        return 0, 0, messages or [f"ping exited {exit_code}"]
    if result.local_mtu is not None:
        messages.insert(0, f"local error: message too long, mtu={result.local_mtu}")
    if result.path_mtu is not None:
        messages.insert(0, f"frag needed and DF set (mtu = {result.path_mtu})")
    return result.transmitted or 0, result.received or 0, messages


def _fact(probe: PingProbe, sent: int, received: int, error: str | None) -> PingFact:
    return PingFact(src_host=probe.src_host, src_netdev=probe.src_netdev,
                    dst_host=probe.dst_host, dst_netdev=probe.dst_netdev,
                    dst_addr=probe.dst_addr, size=probe.payload, sent=sent, received=received,
                    error=error, link_id=probe.link_id)
