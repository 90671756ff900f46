"""The review screen: server-rendered pages under ``/app/`` for the people who check a set."""
