"""The ``sheetflow`` command line (``sheetflow = "sheetflow.cli:app"``): its commands in
:mod:`sheetflow.cli.commands`."""

from sheetflow.cli.commands import app

__all__ = ["app"]
