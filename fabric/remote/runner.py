"""The one way a feature runs a Nornir task on its hosts: `run(nr, task) -> (ok, errors)`.

`ok` holds each host's result. `errors` holds a one-line reason for each host whose task
raised (`describe_failure`: why it could not be reached or read) or did not run at all. A
task that fails without raising (`Result(failed=True)`) has reported its problem in its
result, which is in `ok`: a verification's problem list, a command's output and exit status.
Nornir's own log of each failed host's traceback is silenced: the reason is the report.
"""

from __future__ import annotations

import errno
import logging
import socket
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from nornir.core import Nornir
from nornir.core.inventory import Host
from paramiko.ssh_exception import AuthenticationException, BadHostKeyException

from fabric.remote.batch import TranscriptError
from fabric.remote.exec import ScriptTimeout
from fabric.remote.routeros_api import RouterOsConnectError
from fabric.remote.transport import AuthFailed, ConnectFailed

E = TypeVar("E")
#: (the exception that failed a host, where it failed: "ssh ADDRESS:PORT") -> what to report.
Describe = Callable[[BaseException, str], E]
#: What a host that the run did not reach at all is reported as.
NOT_RUN = "not in the inventory"


def _causes(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        cur = todo.pop(0)
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        yield cur
        todo += [c for c in (cur.__cause__, cur.__context__) if c is not None]
        todo += [e for e in getattr(cur, "errors", {}).values() if isinstance(e, BaseException)]


def _kinds() -> tuple[tuple[type[BaseException], ...], ...]:
    """(authentication, TCP connection, read timeout) error classes: the Spark sessions'
    own, and Netmiko's where Netmiko is loaded (the switch's CLI; none of its errors can be
    raised before it is)."""
    auth: tuple[type[BaseException], ...] = (AuthFailed, AuthenticationException)
    tcp: tuple[type[BaseException], ...] = (ConnectFailed,)
    read: tuple[type[BaseException], ...] = (ScriptTimeout,)
    netmiko = sys.modules.get("netmiko.exceptions")
    if netmiko is not None:
        auth += (netmiko.NetmikoAuthenticationException,)
        tcp += (netmiko.NetmikoTimeoutException,)
        read += (netmiko.ReadTimeout,)
    return auth, tcp, read


def describe_failure(exc: BaseException, where: str = "ssh") -> str:
    """One short line saying why a host could not be read (`where`: "ssh ADDRESS:PORT")."""
    text = str(exc)
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), type(exc).__name__)
    if isinstance(exc, RouterOsConnectError):
        return first
    causes = list(_causes(exc))

    def seen(*kinds: type[BaseException]) -> bool:
        return any(isinstance(c, kinds) for c in causes)

    auth, tcp, read = _kinds()

    for cause in causes:
        if isinstance(cause, ConnectionRefusedError) or (
                isinstance(cause, OSError) and cause.errno == errno.ECONNREFUSED):
            return f"{where}: connection refused (is sshd running?)"
        if isinstance(cause, socket.timeout | TimeoutError) and not seen(*read):
            return f"{where}: no answer within the connect timeout"
    if seen(BadHostKeyException) or "does not match" in text:
        return f"{where}: host key mismatch (the server's key is not the one in known_hosts)"
    if "not found in known_hosts" in text:
        return f"{where}: unknown host key (the server is not in known_hosts)"
    if seen(*auth):
        return f"{where}: authentication failed (key or user rejected)"
    if seen(*tcp):
        return f"{where}: TCP connection failed (no route, refused or timed out)"
    if seen(*read):
        return f"{where}: the command batch did not finish in time"
    if isinstance(exc, TranscriptError):
        return f"{where}: broken transcript: {exc}"
    return f"{type(exc).__name__}: {first}"[:300]


def address(host: Host) -> str:
    """Where a host is reached, for a reason: "routeros-api ADDRESS" or "ssh ADDRESS:PORT"."""
    if host.get("role") == "switch":
        return f"routeros-api {host.hostname}"
    return f"ssh {host.hostname}:{host.port or 22}"


def run(nr: Nornir, task: Callable[..., Any], *, hosts: Iterable[str] | None = None,
        name: str | None = None, on_failed: bool = False, addressed: bool = False,
        scrub: Callable[[str], str] = str, **kwargs: Any
        ) -> tuple[dict[str, Any], dict[str, str]]:
    """Run `task` (with `kwargs`) on `nr`'s hosts at once; (host -> result, host -> reason).

    `hosts`: the hosts expected to answer (default: `nr`'s); one `nr` lacks is an error.
    `addressed`: reasons name the host's address (`address`), else just "ssh". `scrub`
    takes secrets out of each reason. `on_failed`: run on hosts an earlier task failed too.
    """
    def reason(exc: BaseException, where: str) -> str:
        return scrub(describe_failure(exc, where))

    return run_described(nr, task, reason, hosts=hosts, name=name, on_failed=on_failed,
                         addressed=addressed, not_run=scrub(NOT_RUN), **kwargs)


def run_described(nr: Nornir, task: Callable[..., Any], describe: Describe[E], *,
                  not_run: E, hosts: Iterable[str] | None = None, name: str | None = None,
                  on_failed: bool = False, addressed: bool = False, **kwargs: Any
                  ) -> tuple[dict[str, Any], dict[str, E]]:
    """`run`, each failure reported as `describe(exception, where)` makes it (`not_run`: a
    host that did not run)."""
    logging.getLogger("nornir").addHandler(logging.NullHandler())
    agg = nr.run(task=task, name=name or getattr(task, "__name__", "task"),
                 raise_on_error=False, on_failed=on_failed, **kwargs)
    ok: dict[str, Any] = {}
    errors: dict[str, E] = {}
    for host in list(hosts) if hosts is not None else list(nr.inventory.hosts):
        multi = agg.get(host)
        if multi is None:
            errors[host] = not_run
            continue
        exc = next((r.exception for r in multi if r.exception is not None), None)
        if exc is None:
            ok[host] = multi[0].result
            continue
        where = address(nr.inventory.hosts[host]) if addressed else "ssh"
        errors[host] = describe(exc, where)
    return ok, errors
