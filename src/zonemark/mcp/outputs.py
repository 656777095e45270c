"""What each MCP tool returns, as typed dictionaries: their JSON Schema is the tool's ``outputSchema``.

The SDK builds every tool's output schema from its return type and validates each answer against it
before the answer's ``structuredContent`` leaves the server, so the schema cannot drift from what the
tool gives (ruling W79).  Every dictionary here is closed (``additionalProperties: false``) and strict
(no value is converted), so the structured content is exactly the JSON of the text content; a key a
tool adds without declaring it here is an internal error in the tests, not a silent difference.
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, with_config
from typing_extensions import NotRequired, TypedDict

#: Every answer's dictionaries: closed, and checked without conversion.
_CLOSED = ConfigDict(extra="forbid", strict=True)

ZoneName = Literal["P1", "P2", "P3", "P4", "P5"]


# -- layer_status (the `zonemark status --json` form) ----------------------------------------------------

@with_config(_CLOSED)
class StatusFile(TypedDict):
    file: str
    type: str | None
    merged: bool


@with_config(_CLOSED)
class StatusModule(TypedDict):
    id: str | None
    temporary: bool
    name: str
    file: str
    line: int
    declaredState: str | None
    effectiveState: str | None
    stateSource: str | None
    permanent: bool
    nuclei: list[int]
    ignored: bool


@with_config(_CLOSED)
class StatusNucleus(TypedDict):
    id: int
    name: str
    file: str
    line: int
    modules: list[str | None]


@with_config(_CLOSED)
class StatusTopic(TypedDict):
    name: str | None
    keyword: str
    id: str | None
    line: int
    entries: int
    children: list[StatusTopic]


@with_config(_CLOSED)
class StatusMemory(TypedDict):
    file: str
    title: str | None
    entries: int
    topics: list[StatusTopic]  # the first 1,000, depth first (the status is a summary)
    topicsLeftOut: int  # topics and sub-topics past them: list_containers pages through every one


@with_config(_CLOSED)
class Counts(TypedDict):
    errors: int
    warnings: int


@with_config(_CLOSED)
class LayerStatusOutput(TypedDict):
    """The layer's status: files, modules and their effective states, nuclei, memories, finding counts."""
    layer: str
    root: str
    reminder: str | None
    files: list[StatusFile]
    modules: list[StatusModule]
    nuclei: list[StatusNucleus]
    memories: list[StatusMemory]
    diagnostics: Counts


# -- containers and their entries ------------------------------------------------------------------------

@with_config(_CLOSED)
class ContainerOutput(TypedDict):
    address: str
    kind: str
    keyword: str | None
    id: str | None
    name: str
    level: int
    line: int
    zone: ZoneName | None
    parent: str | None
    entries: int
    last_entry_date: str | None
    ignored: bool


@with_config(_CLOSED)
class Journal(TypedDict):
    zone: ZoneName | None
    line: int


class ListedContainer(ContainerOutput):
    journal: Journal | None
    ai_may: str


@with_config(_CLOSED)
class FileContainers(TypedDict):
    file: str
    type: str | None
    containers: list[ListedContainer]


@with_config(_CLOSED)
class ListContainersOutput(TypedDict):
    """One page of the containers of the layer's files, file by file; ``next_cursor`` continues it."""

    files: list[FileContainers]
    next_cursor: str | None


@with_config(_CLOSED)
class EntryOutput(TypedDict):
    line: int
    date: str | None
    title: str | None
    heading: str
    body: str
    zone: ZoneName | None
    body_from: NotRequired[int]  # only when ``body`` is part of the body: where it starts in it (characters)
    body_chars: NotRequired[int]  # and how many characters the whole body has


@with_config(_CLOSED)
class ReadContainerOutput(TypedDict):
    """One page of a container's entries, oldest first; ``next_cursor`` gives the older ones."""

    file: str
    container: ContainerOutput
    entries: list[EntryOutput]
    shown: int
    matching: int
    total: int
    next_cursor: str | None


# -- zones ---------------------------------------------------------------------------------------------------

@with_config(_CLOSED)
class ZoneOutput(TypedDict):
    line: int
    close_line: int | None
    zone: ZoneName | None
    ai_may: str
    inline: bool
    owner: str | None
    hash: str


@with_config(_CLOSED)
class ListZonesOutput(TypedDict):
    file: str
    zones: list[ZoneOutput]


@with_config(_CLOSED)
class ReadZoneOutput(TypedDict):
    file: str
    line: int
    close_line: int | None
    zone: ZoneName | None
    ai_may: str
    hash: str
    content: str


# -- check and search ------------------------------------------------------------------------------------------

@with_config(_CLOSED)
class DiagnosticOutput(TypedDict):
    file: str | None
    line: int
    column: int
    code: str
    severity: str
    message: str


@with_config(_CLOSED)
class CheckOutput(TypedDict):
    errors: int
    warnings: int
    diagnostics: list[DiagnosticOutput]
    truncated: bool


@with_config(_CLOSED)
class HitOutput(TypedDict):
    file: str
    line: int
    kind: str
    container: str
    zone: ZoneName | None
    date: str | None
    title: str | None
    snippet: str
    score: float


@with_config(_CLOSED)
class SearchOutput(TypedDict):
    """One page of hits, best first; ``next_cursor`` gives the next best."""

    query: str
    hits: list[HitOutput]
    more: bool
    files: int
    ranked_window: int | None
    next_cursor: str | None


# -- the context export ---------------------------------------------------------------------------------------

@with_config(_CLOSED)
class ContextFileOutput(TypedDict):
    path: str
    fileType: str | None
    included: bool
    reason: str | None
    tokens: int
    entriesLeftOut: int


@with_config(_CLOSED)
class LeftOut(TypedDict):
    modules: list[str]
    entries: int


@with_config(_CLOSED)
class ContextOutput(TypedDict):
    standardVersion: str
    layer: str
    tokens: int
    budget: int | None
    estimate: str
    files: list[ContextFileOutput]
    leftOut: LeftOut
    text: str


# -- traces ---------------------------------------------------------------------------------------------------

@with_config(_CLOSED)
class NoticeOutput(TypedDict):
    code: str
    message: str
    line: int


@with_config(_CLOSED)
class TraceModuleOutput(TypedDict):
    id: str
    name: str | None
    state: str | None


@with_config(_CLOSED)
class TraceLogOutput(TypedDict):
    module: str
    date: str
    action: str | None
    text: str


@with_config(_CLOSED)
class TraceMemoryOutput(TypedDict):
    id: str
    ref: str | None
    action: str | None


@with_config(_CLOSED)
class TraceContentOutput(TypedDict):
    nuclei: list[int]
    modules: list[TraceModuleOutput]
    logs: list[TraceLogOutput]
    memories: list[TraceMemoryOutput]


@with_config(_CLOSED)
class TraceBlockOutput(TypedDict):
    openLine: int
    closeLine: int | None
    form: str
    marker: str
    version: str | None
    rejected: bool
    reason: str | None
    parsed: TraceContentOutput | None


@with_config(_CLOSED)
class DroppedOutput(TypedDict):
    line: int
    entry: str
    kind: str
    id: str | int
    reason: str


@with_config(_CLOSED)
class UnknownIdentifier(TypedDict):
    kind: str
    id: str | int


@with_config(_CLOSED)
class TraceOutput(TypedDict):
    blocks: list[TraceBlockOutput]
    enabled: bool
    result: TraceContentOutput
    dropped: list[DroppedOutput]
    unknownIdentifiers: list[UnknownIdentifier]
    warnings: list[NoticeOutput]
    illuminated: bool


# -- writes ----------------------------------------------------------------------------------------------------

@with_config(_CLOSED)
class AppendOutput(TypedDict):
    file: str
    container: str
    address: str | None
    line: int | None
    zone_line: int | None
    history_id: str | None
    escaped: list[str]


@with_config(_CLOSED)
class StatesOutput(TypedDict):
    file: str
    changed: bool
    history_id: str | None
    active: list[str]
    inactive: list[str]


@with_config(_CLOSED)
class EditOutput(TypedDict):
    file: str
    zone_line: int | None
    changed: bool
    history_id: str | None
    hash: str | None
    escaped: list[str]


@with_config(_CLOSED)
class ProposalOutput(TypedDict):
    file: str
    proposal: str
    zone_line: int
    zone: ZoneName | None
    would_add: list[str]
    diff: str
    escaped: list[str]


@with_config(_CLOSED)
class IngestItemOutput(TypedDict):
    headerLine: int
    date: str | None
    title: str
    status: Literal["filed", "would_file", "duplicate", "refused"]
    reason: str | None
    code: str | None
    line: int | None
    changes: list[str]
    instead: NotRequired[str]


@with_config(_CLOSED)
class IngestOutput(TypedDict):
    file: str
    container: str
    dryRun: bool
    found: int
    filed: int
    wouldFile: int
    duplicates: int
    refused: int
    items: list[IngestItemOutput]
    warnings: list[NoticeOutput]
