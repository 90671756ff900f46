"""Helpers shared by unit, flow and fault tests: tiny PDFs and a scripted model server."""
