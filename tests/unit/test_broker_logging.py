"""The service log keeps what a person needs: a line per handler at start, every error."""

import logging

import pytest

from shared.infra.broker import faststream_logger


class _Keeping(logging.Handler):
    def __init__(self, records: list[logging.LogRecord]) -> None:
        super().__init__()
        self.records = records

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def captured():
    logger = faststream_logger("logtest")
    records: list[logging.LogRecord] = []
    handler = _Keeping(records)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield logger, records
    logger.removeHandler(handler)


def test_each_handler_says_it_is_waiting_once(captured):
    """Eight pull loops of one handler announce it once; another handler still shows."""
    logger, records = captured
    for _ in range(8):
        logger.info("`OnPageExtracted` waiting for messages")
    logger.info("`OnPageStructured` waiting for messages")
    logger.info("`OnPageExtracted` waiting for messages")
    assert [r.getMessage() for r in records] == [
        "`OnPageExtracted` waiting for messages",
        "`OnPageStructured` waiting for messages",
    ]


def test_errors_pass(captured):
    """The filter drops nothing but the repeats: a task's error keeps its traceback."""
    logger, records = captured
    try:
        raise RuntimeError("the broker went away")
    except RuntimeError:
        logger.exception("Task-7 raised an exception, retrying...")
    assert [r.exc_info[0] for r in records] == [RuntimeError]
