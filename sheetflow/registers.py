"""A project's drawing register kept on this machine: one per data dir, whether ``sheetflow
run`` or ``sheetflow up`` wrote it.

Each run's embedded S3 is removed when the run ends, with the job's own artifacts; the
project's keys (``projects/{project}/``: its register documents and every version's kept
page, delta and overlay, its review records) are copied out to the data dir
(``projects/{project}/``) once the job's report is written, and back into the next run's S3
before its upload, so two runs of one project compare as two uploads to one ``sheetflow
up`` do. A ``sheetflow up`` with its embedded S3 brings every project the data dir keeps into
its S3 when it starts (a register a run moved on since is then current: ``read_register``
takes the newest document) and copies every project out when it stops; a run while an up
is running from the same data dir sends its file to that up.
"""

import asyncio
from pathlib import Path

from shared.infra.settings import Settings
from shared.infra.storage import Keys, ObjectStore

PROJECTS_DIR = "projects"


def project_dir(data_dir: Path, project: str) -> Path:
    return data_dir / PROJECTS_DIR / project


def restore_project(live: Settings, data_dir: Path, project: str) -> int:
    """Put the project's kept keys into the running S3; how many."""
    directory = project_dir(data_dir, project)
    files = [f for f in sorted(directory.rglob("*")) if f.is_file()] if directory.is_dir() else []
    asyncio.run(_put(ObjectStore(live), directory, files, Keys.project(project)))
    return len(files)


def keep_project(live: Settings, data_dir: Path, project: str) -> int:
    """Copy the project's keys out of the running S3 into the data dir; how many."""
    root = project_dir(data_dir, project).resolve()
    return asyncio.run(_get(ObjectStore(live), root, Keys.project(project)))


async def _put(store: ObjectStore, directory: Path, files: list[Path], prefix: str) -> None:
    """Each file, one at a time (a project's pages add up)."""
    if files:
        await store.ensure_bucket()
    for file in files:
        key = prefix + file.relative_to(directory).as_posix()
        data = await asyncio.to_thread(file.read_bytes)
        await store.put_bytes(key, data, _content_type(file))


async def _get(store: ObjectStore, root: Path, prefix: str) -> int:
    keys = await store.list_keys(prefix)
    for key in keys:
        data = await store.get_bytes(key)
        await asyncio.to_thread(_write, root, key.removeprefix(prefix), data)
    return len(keys)


def _write(root: Path, relative: str, data: bytes) -> None:
    path = (root / relative).resolve()
    if not path.is_relative_to(root):
        return  # never a key the register writes (Keys makes every segment safe)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _content_type(file: Path) -> str:
    return {".json": "application/json", ".png": "image/png"}.get(
        file.suffix, "application/octet-stream"
    )


def restore_projects(live: Settings, data_dir: Path) -> int:
    """Every project the data dir keeps, into the running S3; how many files."""
    root = data_dir / PROJECTS_DIR
    projects = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    return sum(restore_project(live, data_dir, project) for project in projects)


def keep_projects(live: Settings, data_dir: Path) -> int:
    """Every project the running S3 holds, out into the data dir; how many files."""
    projects = asyncio.run(_projects(ObjectStore(live)))
    return sum(keep_project(live, data_dir, project) for project in projects)


async def _projects(store: ObjectStore) -> list[str]:
    keys = await store.list_keys(PROJECTS_DIR + "/")
    return sorted({key.split("/", 2)[1] for key in keys if key.count("/") >= 2})
