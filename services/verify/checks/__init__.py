"""Verification checks as plug-ins: one module per basis, ordered and settled in ``registry``."""
