"""iptables FORWARD policy reader (``iptables -S FORWARD`` or ``iptables -L FORWARD``).

Installing Docker sets the FORWARD policy to DROP, which breaks traffic forwarded through a
ring node; the collector needs the policy and whether any rule exists.
"""

from __future__ import annotations

from fabric.errors import ParseError
from fabric.parsers.kind import Kind
from fabric.parsers.records import IptablesChain, Record
from fabric.parsers.text import blank_shell_echo, find_line, opt, text, texts
from fabric.parsers.textfsm_runner import run_template


def read_iptables_forward(kind: str, raw: str) -> list[Record]:
    """One IptablesChain; a listing without a policy line is a ParseError."""
    rows = run_template(kind, blank_shell_echo(raw, ["iptables", "iptables-legacy"]))
    records: list[Record] = []
    for r in rows:
        policy = opt(r, "POLICY")
        if policy is None:
            line_no, line = find_line(raw, "-A")
            raise ParseError(kind, line_no, line, "rules without a policy (-P) line")
        records.append(IptablesChain(text(r, "CHAIN"), policy, len(texts(r, "RULES"))))
    return records


KINDS = (Kind("iptables_forward", "linux", read_iptables_forward, "iptables -S|-L FORWARD"),)
