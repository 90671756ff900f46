"""The one list of sheetflow's services. The launcher (``sheetflow.runtime``), the host that
runs several in one process (``sheetflow.host``) and the command line take it from here;
``compose.yaml`` and the Kubernetes manifests (``deploy/k8s/base``) are checked against it
by ``tests/unit/test_service_list.py``. README, "Adding a service", lists every place a new
one goes."""

# In the order a page passes through them; each runs as ``python -m services.<name>``.
PIPELINE = ("ingest", "extract", "coverage", "verify", "report")
# Every service: the pipeline, and webhooks, which no page passes through (it delivers what
# the pipeline announces to other systems).
SERVICES = (*PIPELINE, "webhooks")
