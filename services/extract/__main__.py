"""`python -m services.extract [--concurrency N]`: one extract worker; start more to scale."""

import argparse

from services.extract.app import create_app
from shared.infra.service import run_service


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m services.extract")
    parser.add_argument(
        "--concurrency", type=int, default=None, help="pages in flight in this worker"
    )
    args = parser.parse_args()
    run_service(create_app(concurrency=args.concurrency))


if __name__ == "__main__":
    main()
