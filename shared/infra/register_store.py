"""Where a project's register is kept, read and made current (its models:
``shared.contracts.register``).

Each job applied makes a new register document in the bucket
(``projects/{project}/register/{sequence}-{job}.json``, never overwritten), and the job state
store's ``register.{project}`` names the current one, moved by compare-and-set so that two
jobs of one project finishing at once both land. The job state store forgets what is older
than the retention; the register does not: without its head the newest document is current.
"""

from pydantic import BaseModel

from shared.contracts.interfaces import Bucket, StateStore
from shared.contracts.register import Register, SheetVersion
from shared.infra.storage import Keys
from shared.sheet.reading import SheetReading


class RegisterHead(BaseModel):
    """``register.{project}`` in the job state store: the current register document."""

    sequence: int
    key: str


def head_key(project: str) -> str:
    return f"register.{project}"


async def read_register(
    bucket: Bucket, state: StateStore, project: str
) -> tuple[Register, int | None]:
    """The project's current register (empty when it has none) and the revision of its head
    in the state store (None: no head, as when retention dropped it). A document newer than
    the head (one brought into the bucket from the data dir, written by a `sheetflow run`
    while this deployment was stopped) is current: the head's revision still guards the next
    write."""
    found = await state.get(head_key(project))
    kept = await bucket.list_keys(Keys.register_snapshots(project))
    newest = kept[-1] if kept else None
    if found is not None:
        head = RegisterHead.model_validate(found[0])
        key = newest if newest and _sequence(newest) > head.sequence else head.key
        return await bucket.get_model(key, Register), found[1]
    if newest is None:
        return Register(project=project), None
    return await bucket.get_model(newest, Register), None


def _sequence(snapshot_key: str) -> int:
    """A register document's sequence, from its key (``{sequence:08d}-{applied}.json``)."""
    name = snapshot_key.rsplit("/", 1)[-1]
    return int(name.split("-", 1)[0])


async def commit_register(
    bucket: Bucket, state: StateStore, register: Register, *, revision: int | None, applied: str
) -> str | None:
    """Store ``register`` (``applied`` names the change: a job's id, a review record's) and
    make it current unless another writer moved the head since ``revision`` was read; its
    key, or None when it lost (what it stored is removed)."""
    key = Keys.register_snapshot(register.project, register.sequence, applied)
    await bucket.put_json(key, register)
    head = RegisterHead(sequence=register.sequence, key=key)
    if await state.put_if(head_key(register.project), head, revision=revision):
        return key
    await bucket.delete_prefix(key)
    return None


async def kept_reading(bucket: Bucket, version: SheetVersion) -> SheetReading | None:
    """A version's kept reading of its identity; None for one kept without it."""
    if version.reading_key is None:
        return None
    return await bucket.get_model(version.reading_key, SheetReading)
