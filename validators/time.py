"""time: every Spark's clock is synchronised within the profile's offset."""

from __future__ import annotations

from fabric.facts import Facts
from fabric.intent.model import Intent
from validators.judge import Findings
from validators.registry import check, needs

#: What time judges: each Spark's clock synchronisation (chronyc, timedatectl).
NEEDS = needs("time", spark=True)


@check("time.offset")
def check_offset(intent: Intent, facts: Facts, out: Findings) -> None:
    """Judges each Spark's clock: synchronised, |offset| <= profile.time_offset_max_s."""
    limit = intent.profile.time_offset_max_s
    hint = "enable chrony (or systemd-timesyncd) against the site NTP server; `chronyc tracking`"
    for host, sf in out.sparks(intent):
        t = sf.time
        if t is None:
            gone = [m for m in sf.missing if m in ("chronyc", "timedatectl")]
            out.warn(f"{host} reported no time source"
                     + (f" ({', '.join(gone)} missing)" if gone else ""), host=host,
                     expected=limit, hint=hint)
        elif t.synced is False:
            out.fail(f"{host}: clock not synchronised ({t.source})", host=host,
                     expected=limit, actual=t.offset_s, hint=hint)
        elif t.offset_s is None:
            out.warn(f"{host}: {t.source} gave no offset", host=host, expected=limit,
                     hint=hint)
        elif abs(t.offset_s) > limit:
            out.fail(f"{host}: clock offset {t.offset_s:+.4f} s exceeds {limit} s "
                     f"({t.source})", host=host, expected=limit, actual=t.offset_s, hint=hint)
        else:
            out.ok(f"{host}: offset {t.offset_s:+.4f} s ({t.source})", host=host,
                   expected=limit, actual=t.offset_s)
