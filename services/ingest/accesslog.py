"""Access log lines without query strings: a token or other secret sent in a URL must never
reach a log file."""

import copy
import logging
from typing import Any

from uvicorn.config import LOGGING_CONFIG

PATH_ARG = 2  # uvicorn logs (client, method, path with query, http version, status)


class DropQueryStrings(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        path = args[PATH_ARG] if isinstance(args, tuple) and len(args) > PATH_ARG else None
        if isinstance(args, tuple) and isinstance(path, str):
            record.args = (*args[:PATH_ARG], path.split("?", 1)[0], *args[PATH_ARG + 1 :])
        return True


def log_config() -> dict[str, Any]:
    """uvicorn's own logging configuration with the access log's query strings dropped."""
    config = copy.deepcopy(LOGGING_CONFIG)
    config.setdefault("filters", {})["drop_query_strings"] = {"()": DropQueryStrings}
    config["handlers"]["access"]["filters"] = ["drop_query_strings"]
    return config
