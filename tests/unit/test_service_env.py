"""The environment a service process starts with: its settings, and glibc's malloc told to
hand freed memory back (set alike by the launcher and the image)."""

from pathlib import Path

import pytest

from shared.infra.settings import Settings
from sheetflow.runtime import MALLOC_ENV, settings_env

DOCKERFILE = Path(__file__).resolve().parents[2] / "Dockerfile"


def test_a_service_gets_the_malloc_settings_unless_the_environment_has_its_own(
    monkeypatch: pytest.MonkeyPatch,
):
    for key in MALLOC_ENV:
        monkeypatch.delenv(key, raising=False)
    env = settings_env(Settings(_env_file=None))
    assert {key: env[key] for key in MALLOC_ENV} == MALLOC_ENV
    monkeypatch.setenv("MALLOC_ARENA_MAX", "8")
    assert settings_env(Settings(_env_file=None))["MALLOC_ARENA_MAX"] == "8"


def test_the_image_sets_what_the_launcher_sets():
    text = DOCKERFILE.read_text()
    for key, value in MALLOC_ENV.items():
        assert f"{key}={value}" in text, key
