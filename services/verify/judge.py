"""The model judge: a second opinion on the claims most worth checking.

The judge sees the page's deterministic text and evidence images. Its reply is
held to the contract — a reply that does not carry a verdict per object is
unjudged, never a pass — and it cannot overturn the text oracle's refutation.
"""

import json
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from services.verify.crops import JudgeImage
from services.verify.tolerances import VerifyTolerances
from shared.contracts.interfaces import LLMError, ModelClient
from shared.contracts.models import ObjectVerification, PageObject, Usage, merge_usage
from shared.infra.llm import image_part
from shared.pagetext.units import PageUnits, cut_note

STAGE = "verify"
JudgeVerdictName = Literal["confirmed", "refuted", "uncertain"]
JUDGE_VERDICTS: frozenset[str] = frozenset({"confirmed", "refuted", "uncertain"})
# Room kept for the line saying what was left out of the page text.
CUT_NOTE_ROOM = 60
EXCERPT_GAP = "\n[…]\n"
NO_TEXT_LAYER = "(this page has no text layer: judge from the images alone)"
CUT_OFF = "the judge's reply was cut off at the token limit"
# A page the extraction found nothing on is judged as one claim: that it is empty.
BLANK_CLAIM_ID = "page"
BLANK_CLAIM = (
    "This page carries nothing to extract: no notes, tags, dimensions, schedules, "
    "title-block text or other drawing content."
)
BLANK_CONTEXT = (
    "THE EXTRACTION FOUND NOTHING ON THIS PAGE, declaring it blank, but {contradiction}. "
    f'Check that claim (object_id "{BLANK_CLAIM_ID}"): confirmed if the page truly carries '
    "nothing worth extracting, refuted (kind content_missing) if it has content the "
    "extraction missed."
)
# The extraction's unresolved items, told to the judge as the contract asks: what it saw and
# could not make an object of is where a missed claim is likeliest.
UNRESOLVED_CONTEXT = (
    "THE EXTRACTION COULD NOT RESOLVE THESE ITEMS of the page (one JSON value per line); "
    "where one is a claim the objects below miss or contradict, say so in a problem:"
)
# Asked once more when a reply holds no usable verdict: models that wander into prose or
# fences usually comply when told plainly.
JUDGE_RETRY = (
    "Your previous reply could not be used. Reply again with ONLY the JSON object described "
    'in the instructions: {"objects": [...]} with one entry per object_id and a verdict of '
    "confirmed, refuted or uncertain; no prose, no code fences, compact."
)

JUDGE_SYSTEM_PROMPT = """\
You verify data extracted from construction drawing sheets. For each object \
you are given, decide whether the sheet really says what the object claims.
- PAGE TEXT is deterministic text taken from the PDF itself, not read from an \
image: it is authoritative for numbers, tags, dimensions and note text. When a \
claim disagrees with it, quote the page's words verbatim as actual_text.
- The images (crops around the claims, or the full page) show geometry, \
symbols and linework, and where each claim sits.
- confirmed: the sheet says exactly this. refuted: the sheet says something \
else (kind content_wrong) or does not say it at all (kind unsupported). \
uncertain: you cannot tell from what you are shown.
- Answer with JSON only."""

JUDGE_USER_PROMPT = """\
PAGE TEXT (deterministic, from the PDF; one line per field, table row, note or label, after \
its id; cite the words as actual_text):
{text_layer}

OBJECTS TO CHECK (one JSON object per line):
{objects}

Reply with one JSON object and nothing else:
{{"objects": [{{"object_id": "<id from the list>", \
"verdict": "confirmed" | "refuted" | "uncertain", \
"kind": "content_wrong" | "unsupported" | null, \
"actual_text": "<the page's words, verbatim>" | null, \
"problem": "<one sentence a reviewer understands>" | null}}]}}
Give exactly one entry for every object listed ({count} objects). \
The images follow: {images}."""

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)
_PROMPT_FIELDS = (
    "object_type",
    "tag",
    "name",
    "description",
    "attributes",
    "source_text",
    "graphical_basis",
)


@dataclass(frozen=True)
class JudgeVerdict:
    """One entry of the judge's reply, normalised: a verdict label outside the vocabulary
    is ``refuted`` with that ``label`` kept, and ``kind`` is the judge's own, as named."""

    object_id: str
    verdict: JudgeVerdictName
    kind: str | None = None
    actual_text: str | None = None
    problem: str | None = None
    label: str | None = None  # the judge's verdict label when it was outside the vocabulary

    def as_dict(self) -> dict[str, Any]:
        said = {
            "verdict": self.verdict,
            "kind": self.kind,
            "actual_text": self.actual_text,
            "problem": self.problem,
        }
        return {**said, "label": self.label} if self.label else said


@dataclass
class JudgeOutcome:
    """What the judge said about a page; ``judged`` False means it said nothing usable."""

    judged: bool
    verdicts: dict[str, JudgeVerdict] = field(default_factory=dict)
    reason: str | None = None  # why the page is unjudged, or entries that were ignored
    usage: dict[str, Usage] = field(default_factory=dict)
    skipped: str | None = None  # "no_images" when the scope had nothing to show
    call_failed: bool = False  # the model call itself failed (the server, not the reply)
    # Problems the judge named that belong to no object it was asked about (a bare string,
    # an unknown id): kept on the page as sentences, never dropped.
    page_problems: list[str] = field(default_factory=list)


def _priority(obj: PageObject) -> int:
    v = obj.verification
    if v is not None and v.verdict == "refuted":
        return 0
    if obj.grounding == "vision_unverified":
        return 1
    if obj.grounding == "text_layer":
        return 2
    if _low_confidence(obj.confidence):
        return 3
    if v is None or v.verdict != "confirmed":
        return 4  # nothing has judged it yet (graphical, or a page without text)
    return 5


def _low_confidence(confidence: float | str | None) -> bool:
    if isinstance(confidence, str):
        return confidence.strip().lower() in {"low", "very low"}
    return confidence is not None and confidence < 0.5


def select_scope(objects: Sequence[PageObject], max_objects: int) -> list[PageObject]:
    """The objects most worth checking, at most ``max_objects``.

    Oracle-refuted first, then vision_unverified, rescued (grounding text_layer),
    low confidence, not yet judged, and the oracle-confirmed last; page order within each.
    """
    return sorted(objects, key=_priority)[:max_objects]


def text_excerpt(
    units: PageUnits,
    claims: Sequence[Sequence[int]],
    max_chars: int,
    context_units: int = VerifyTolerances().excerpt_context_units,
) -> str:
    """The page text for the judge, at most ``max_chars``: the page's units (the reading the
    extraction models get, one ``L17 text`` line each).

    The whole reading when it fits; otherwise the units holding the words of located claims
    (``claims``: each claim's word ids) with ``context_units`` units either side, or
    the page's first units when none is located; whole units only, and a last line saying
    how many were left out. Words the page does not show are in no unit.
    """
    everything = units.render(sys.maxsize)
    if len(everything) <= max_chars:
        return everything
    unit_of = {w: n for n, unit in enumerate(units.units) for w in unit.word_ids}
    located = sorted({unit_of[w] for ids in claims for w in ids if w in unit_of})
    if not located:
        return units.render(max_chars)
    ranges: list[list[int]] = []
    for n in located:
        lo, hi = (
            max(0, n - context_units),
            min(len(units.units), n + context_units + 1),
        )
        if ranges and lo <= ranges[-1][1]:
            ranges[-1][1] = max(ranges[-1][1], hi)  # overlapping context: one piece
        else:
            ranges.append([lo, hi])
    pieces: list[str] = []
    used = 0
    shown: set[int] = set()
    for lo, hi in ranges:
        piece = "\n".join(u.line for u in units.units[lo:hi])
        if used + len(piece) + len(EXCERPT_GAP) + CUT_NOTE_ROOM > max_chars:
            break
        pieces.append(piece)
        used += len(piece) + len(EXCERPT_GAP)
        shown.update(range(lo, hi))
    if not pieces:
        return units.render(max_chars)
    excerpt = EXCERPT_GAP.join(pieces)
    if left := [u for n, u in enumerate(units.units) if n not in shown]:
        excerpt += "\n" + cut_note(len(left), sum(len(u.line) + 1 for u in left))
    return excerpt


def _object_line(obj: PageObject) -> str:
    data: dict[str, Any] = {"object_id": obj.object_id}
    for name in _PROMPT_FIELDS:
        value = getattr(obj, name)
        if value not in (None, "", {}, []):
            data[name] = value
    return json.dumps(data, ensure_ascii=False, default=str)


def build_judge_messages(
    objects_in_scope: Sequence[PageObject],
    text_layer_excerpt: str,
    images: Sequence[JudgeImage],
    *,
    context: str | None = None,
    unresolved: Sequence[Any] = (),
) -> list[dict[str, Any]]:
    """Chat messages: the rules, then the ``context`` when given, what the extraction could
    not resolve (``unresolved``), the page text, the objects and the labelled images."""
    prompt = JUDGE_USER_PROMPT.format(
        text_layer=text_layer_excerpt.strip() or NO_TEXT_LAYER,
        objects="\n".join(_object_line(o) for o in objects_in_scope),
        count=len(objects_in_scope),
        images="; ".join(f"image {i}: {img.label}" for i, img in enumerate(images, 1)),
    )
    if unresolved:
        items = "\n".join(json.dumps(i, ensure_ascii=False, default=str) for i in unresolved)
        prompt = f"{UNRESOLVED_CONTEXT}\n{items}\n\n{prompt}"
    if context:
        prompt = f"{context}\n\n{prompt}"
    content: list[dict[str, Any]] = [{"type": "text", "text": prompt}]
    for i, img in enumerate(images, 1):
        content.append({"type": "text", "text": f"Image {i}: {img.label}"})
        content.append(image_part(img.data, img.mime))
    return [
        {"role": "system", "content": JUDGE_SYSTEM_PROMPT},
        {"role": "user", "content": content},
    ]


def _load_json(content: str) -> Any:
    text = content.strip()
    if fenced := _FENCE.search(text):
        text = fenced.group(1).strip()
    try:
        return json.loads(text)
    except ValueError:
        pass
    # A prefixed or suffixed reply: the outermost object is the answer.
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        try:
            return json.loads(text[start : end + 1])
        except ValueError:
            return None
    return None


def _text_or_none(value: Any) -> str | None:
    return (value.strip() or None) if isinstance(value, str) else None


def _entry_verdict(object_id: str, entry: dict[str, Any]) -> JudgeVerdict | None:
    """The entry's verdict, or None when it names neither a verdict nor a problem. A label
    outside the vocabulary, or a problem named without a label, is a problem the judge
    named: kept as a refutation quoting it, never dropped."""
    label = _text_or_none(entry.get("verdict"))
    kind = _text_or_none(entry.get("kind"))
    problem = _text_or_none(entry.get("problem"))
    if label is None:
        if problem is None and kind is None:
            return None
        named = "The judge named a problem without a verdict."
        return JudgeVerdict(
            object_id=object_id,
            verdict="refuted",
            kind=kind,
            actual_text=_text_or_none(entry.get("actual_text")),
            problem=f"{problem} ({named})" if problem else f"{named} Kind: {kind}.",
        )
    verdict = label.lower()
    if verdict in JUDGE_VERDICTS:
        return JudgeVerdict(
            object_id=object_id,
            verdict=cast(JudgeVerdictName, verdict),
            kind=kind if verdict == "refuted" else None,
            actual_text=_text_or_none(entry.get("actual_text")),
            problem=problem,
        )
    named = f'The judge answered "{label}", which is not one of confirmed, refuted, uncertain.'
    return JudgeVerdict(
        object_id=object_id,
        verdict="refuted",
        kind=kind,
        actual_text=_text_or_none(entry.get("actual_text")),
        problem=f"{problem} {named}" if problem else named,
        label=label,
    )


def parse_judge_reply(content: str, scope_ids: Sequence[str]) -> JudgeOutcome:
    """Hold the judge's reply to the contract.

    Valid entries carry a known ``object_id`` and a verdict label or a named problem;
    confirmed, refuted and uncertain (in any case) are taken as they are, any other label,
    or a problem (or kind) named without a label, is a refutation that quotes it. A problem
    the judge names on no object it was asked about (a bare string, an entry with an unknown
    or no id) is kept as a page problem, its text quoted; other such entries are ignored. A
    reply with neither a valid entry nor such a problem — garbage, no ``objects`` list,
    missing verdicts, unknown ids only — is unjudged.
    """
    data = _load_json(content)
    # A bare list of verdicts is the objects list.
    entries = data.get("objects") if isinstance(data, dict) else data
    if not isinstance(entries, list):
        return JudgeOutcome(judged=False, reason="the judge's reply carried no objects list")
    known = set(scope_ids)
    verdicts: dict[str, JudgeVerdict] = {}
    ignored = 0
    page_problems: list[str] = []
    for entry in entries:
        object_id = str(entry.get("object_id", "")) if isinstance(entry, dict) else ""
        judged = _entry_verdict(object_id, entry) if object_id in known else None
        if judged is not None:
            verdicts[object_id] = judged
        elif said := _unattached_problem(entry, object_id):
            page_problems.append(said)
        else:
            ignored += 1
    if not (verdicts or page_problems):
        return JudgeOutcome(
            judged=False,
            reason="the judge's reply carried no verdict for any object it was asked about",
        )
    reason = f"{ignored} judge entries ignored (unknown id or no verdict)" if ignored else None
    return JudgeOutcome(judged=True, verdicts=verdicts, reason=reason, page_problems=page_problems)


def _unattached_problem(entry: Any, object_id: str) -> str | None:
    """The sentence for a problem the judge named on no object it was asked about: a bare
    string, or an entry with a problem (or a refutation) under an unknown or no id."""
    if isinstance(entry, str):
        return f'The judge says: "{entry.strip()}"' if entry.strip() else None
    if not isinstance(entry, dict):
        return None
    problem = _text_or_none(entry.get("problem"))
    label = (_text_or_none(entry.get("verdict")) or "").lower()
    if problem is None and label in ("", "confirmed", "uncertain"):
        return None
    about = f'object "{object_id}", which it was not asked about' if object_id else "the page"
    said = problem or f"it answers {label!r}"
    return f"The judge names a problem on {about}: {said}"


async def judge_page(
    llm: ModelClient,
    model: str,
    objects_in_scope: Sequence[PageObject],
    text_layer_excerpt: str,
    images: Sequence[JudgeImage],
    *,
    context: str | None = None,
    unresolved: Sequence[Any] = (),
) -> JudgeOutcome:
    """One judge call over a page's scope, asked once more when its reply holds no usable
    verdict; unjudged (with the reason) when it still cannot be judged.

    The reply is not capped (the server decides its length): a reply cut off anyway
    (``finish_reason == "length"``) would silently lose verdicts, so it counts as
    unusable even where part of it parses. ``context`` is told to the judge before the
    page text, and ``unresolved`` (the extraction's unresolved items) with it. Never
    called with zero images: such a scope is skipped (``skipped="no_images"``). Usage is
    recorded under the ``verify`` stage.
    """
    if not objects_in_scope:
        return JudgeOutcome(judged=False, reason="no objects to judge")
    if not images:
        return JudgeOutcome(judged=False, skipped="no_images", reason="no image to show the judge")
    messages = build_judge_messages(
        objects_in_scope, text_layer_excerpt, images, context=context, unresolved=unresolved
    )
    scope_ids = [o.object_id for o in objects_in_scope]
    usage: dict[str, Usage] = {}
    for attempt in (messages, [*messages, {"role": "user", "content": JUDGE_RETRY}]):
        try:
            result = await llm.chat(model=model, messages=attempt, json_mode=True)
        except LLMError as exc:
            return JudgeOutcome(
                judged=False,
                reason=f"the judge call failed: {exc}",
                usage=merge_usage(usage, {STAGE: Usage(calls=1)}),
                call_failed=True,
            )
        usage = merge_usage(usage, {STAGE: result.usage})
        if result.finish_reason == "length":
            outcome = JudgeOutcome(judged=False, reason=CUT_OFF)
        else:
            outcome = parse_judge_reply(result.content, scope_ids)
        if outcome.judged:
            break
    outcome.usage = usage
    if not outcome.judged:
        outcome.reason = f"{outcome.reason} (asked twice)"
    return outcome


async def judge_blank_claim(
    llm: ModelClient,
    model: str,
    contradiction: str,
    text_layer_excerpt: str,
    images: Sequence[JudgeImage],
) -> JudgeOutcome:
    """Ask the judge whether a page the extraction found nothing on is really empty, stating
    what says otherwise (``contradiction``). The one claim judged is ``BLANK_CLAIM_ID``:
    confirmed means nothing is there to extract, refuted that content was missed."""
    claim = PageObject(object_id=BLANK_CLAIM_ID, object_type="page", description=BLANK_CLAIM)
    context = BLANK_CONTEXT.format(contradiction=contradiction.rstrip("."))
    return await judge_page(llm, model, [claim], text_layer_excerpt, images, context=context)


def judge_finding(
    obj: PageObject, judged: JudgeVerdict, page_reading: Callable[[str], str | None]
) -> ObjectVerification:
    """The judge's verdict on the object as a verification (basis ``judge``; a refutation is
    ``judge_refuted``, keeping the judge's own kind), located where the object's verification
    so far places it. ``page_reading`` gives the page's own words for what the judge says the
    sheet reads, or None when the text layer does not carry it: only such a reading becomes
    the object's ``actual_text``. (Whether it stands: ``services.verify.checks.registry``.)"""
    oracle = obj.verification or ObjectVerification(verdict="not_judged")
    if judged.verdict != "refuted":
        return ObjectVerification(
            verdict=judged.verdict, basis="judge", evidence_bbox=oracle.evidence_bbox
        )
    claim = obj.source_text or obj.description or obj.name or obj.tag or "its claim"
    reading = judged.actual_text
    on_page = page_reading(reading) if reading else None
    if on_page:
        says = f': the sheet says "{on_page}".'
    elif reading:
        # The judge's reading is a model's word, not the page's: named, never trusted.
        says = f'; it reads "{reading}", which the page\'s text layer does not carry.'
    else:
        says = "."
    if judged.problem:
        problem = f"Object {obj.object_id}: {judged.problem}"
        if reading and not on_page:
            problem += f" (The judge's reading \"{reading}\" is not in the page's text layer.)"
    else:
        problem = f'The judge refutes object {obj.object_id} ("{claim}"){says}'
    return ObjectVerification(
        verdict="refuted",
        basis="judge",
        kind="judge_refuted",
        judge_kind=judged.kind,
        actual_text=on_page,
        evidence_bbox=oracle.evidence_bbox,
        problem=problem,
    )
