from __future__ import annotations

import pytest

from fabric.intent.model import Intent
from fabric.report.model import Report
from tests.report.sample import failing_report
from tests.validators import builder


@pytest.fixture(scope="session")
def star4() -> Intent:
    return builder.intent("star4")


@pytest.fixture(scope="session")
def report(star4: Intent) -> Report:
    return failing_report(star4)
