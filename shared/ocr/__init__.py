"""Optical character recognition on page images, for the services that read pages (extract)
and that check them (verify)."""
