"""A project's register, the report's to write: which uploaded sheet is a new version of
which (``matching``) and the register's next state (``register``)."""
