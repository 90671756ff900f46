"""sheetflow, the product: the ``sheetflow`` command and the launcher that runs the services
(``services/``) with embedded NATS and S3 servers. No service imports it."""
