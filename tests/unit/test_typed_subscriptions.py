"""A subscription is typed by its subject: mypy refuses a handler of another event than the
subject carries (checked here by running mypy on a service's registration, as `.ci/run`
runs it on the code)."""

import textwrap
from pathlib import Path

import pytest
from mypy import api

ROOT = Path(__file__).resolve().parents[2]

REGISTRATION = """
from faststream.nats.annotations import NatsMessage

from shared.contracts import subjects
from shared.contracts.messages import PageCovered, PageExtracted
from shared.infra.service import Subscriptions


def register(subscriptions: Subscriptions) -> None:
    @subscriptions.page_subscriber(subjects.PAGE_COVERED, durable="verify")
    async def on_page_covered(event: PageCovered, msg: NatsMessage) -> None: ...

    @subscriptions.page_subscriber(subjects.PAGE_COVERED, durable="verify-too")
    async def on_page_extracted(event: PageExtracted, msg: NatsMessage) -> None: ...
"""


@pytest.fixture
def checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, int]:
    """mypy's report on the registration above, with this checkout's code and settings."""
    module = tmp_path / "registration.py"
    module.write_text(textwrap.dedent(REGISTRATION))
    monkeypatch.setenv("MYPYPATH", str(ROOT))
    config = ["--config-file", str(ROOT / "pyproject.toml")]
    # The checkout's own cache (`mypy` before the tests fills it): the project is not
    # checked afresh for one small module.
    cache = ["--cache-dir", str(ROOT / ".mypy_cache")]
    report, errors, status = api.run([*config, *cache, str(module)])
    return report + errors, status


def test_a_handler_of_another_event_than_its_subject_carries_is_a_type_error(checked):
    """The handler of page.covered that takes PageExtracted is refused: a handler of
    PageCovered expected; the one that takes PageCovered passes."""
    report, status = checked
    errors = [line for line in report.splitlines() if ": error:" in line]
    assert status == 1 and len(errors) == 1, report
    [error] = errors
    lines = textwrap.dedent(REGISTRATION).splitlines()
    wrong = 1 + next(i for i, line in enumerate(lines) if "verify-too" in line)
    assert f"registration.py:{wrong}:" in error
    assert "incompatible type" in error and 'expected "Callable[[PageCovered' in error
