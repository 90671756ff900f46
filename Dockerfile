# One image for every sheetflow service; compose picks the service with `command`.
FROM python:3.11-slim

# opencv (pulled in by rapidocr) and onnxruntime need these shared libraries at runtime.
RUN apt-get update \
    && apt-get install -y --no-install-recommends libglib2.0-0 libgomp1 \
    && rm -rf /var/lib/apt/lists/*

# glibc's malloc as sheetflow.runtime's MALLOC_ENV sets it (memory handed back after a job).
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    MALLOC_ARENA_MAX=2 \
    MALLOC_TRIM_THRESHOLD_=131072 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY pyproject.toml README.md ./
COPY sheetflow ./sheetflow
COPY shared ./shared
COPY services ./services
RUN pip install .

RUN useradd --create-home --uid 10001 sheetflow
USER sheetflow
WORKDIR /home/sheetflow

EXPOSE 8080
CMD ["python", "-m", "services.ingest"]
