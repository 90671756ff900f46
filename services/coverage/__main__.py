"""`python -m services.coverage`."""

from services.coverage.app import create_app
from shared.infra.service import run_service

if __name__ == "__main__":
    run_service(create_app())
