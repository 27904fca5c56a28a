"""Stage-store garbage collection: artifacts no document's current record names, removed once
they are older than a grace period.

Every edit, profile or model change leaves the artifacts of the version before it behind (raw
bytes, parsed text, chunks, vectors), and nothing else removes them: a store whose documents
change grows without end. An artifact is garbage when no current record of any stage names it
(``REFERENCES``: the records ``core.pipeline`` writes) and it was written more than
``older_than_seconds`` ago. The grace period is what makes collecting safe beside running
ingests: a stage writes its artifact a moment before the record that names it, so a young
artifact is never removed. Should an old artifact become current again in the moment between
the records being read and it being removed (an edit undone, a profile switched back), the
stage that needs it finds it missing and the document is retried, as for any damaged entry.

What is removed costs only recomputation: parses and chunks are redone from the raw bytes, and
vectors come back from the embedding cache (or the model). The source sensor's newest listing
is kept, its older ones go after an hour (``NEWEST_KEPT``), and anything the store does not
know is left alone.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

from rag_assets.core.store import Blobs, Listed, StageStore

# Artifact stage -> the (record stage, field) pairs whose values are its keys.
REFERENCES: dict[str, tuple[tuple[str, str], ...]] = {
    "raw": (("raw", "key"),),
    "parsed": (("parsed", "key"),),
    "chunks": (("chunks", "key"), ("embeddings", "key"), ("index", "key")),
    "vectors": (("embeddings", "vectors"),),
}
# Artifact stages whose newest blob is kept whatever its age, and the rest once an hour old (or
# the grace, if shorter): the source sensor's listings, a whole corpus' records each (4.4 MB for
# 40,000 documents), one per tick that saw a change (a tick a minute by default). A sensor reads
# only the listing its cursor names, almost always the newest; one it misses it rebuilds from
# the raw records.
NEWEST_KEPT = ("listing",)
LISTING_GRACE_SECONDS = 3600.0
POINTER_STAGES = tuple(sorted({stage for refs in REFERENCES.values() for stage, _ in refs}))


@dataclass
class StageGarbage:
    """One artifact stage before and after collection."""

    artifacts: int = 0
    bytes: int = 0
    referenced: int = 0
    recent: int = 0  # named by no record, but younger than the grace period: kept
    removed: int = 0
    removed_bytes: int = 0


@dataclass
class GarbageReport:
    """What ``collect_garbage`` found and removed (or, in a dry run, would remove)."""

    older_than_seconds: float
    dry_run: bool
    stages: dict[str, StageGarbage] = field(default_factory=dict)
    temporary_removed: int = 0  # writers' temporary files (of a killed writer)

    @property
    def removed(self) -> int:
        return sum(s.removed for s in self.stages.values()) + self.temporary_removed

    @property
    def removed_bytes(self) -> int:
        return sum(s.removed_bytes for s in self.stages.values())

    def to_dict(self) -> dict:
        return {**asdict(self), "removed": self.removed, "removed_bytes": self.removed_bytes}


def referenced_keys(store: StageStore, pointers: list[Listed]) -> dict[str, set[str]]:
    """Per artifact stage, the keys some current record names (``pointers``: the store's
    ``current/`` as ``listing`` shows it)."""
    by_stage: dict[str, list[Listed]] = {}
    for pointer in pointers:  # current/<stage>/<hash>.json
        by_stage.setdefault(pointer.name.split("/")[1], []).append(pointer)
    records = {stage: store.read_records(by_stage.get(stage, [])) for stage in POINTER_STAGES}
    return {artifact: {record[name] for stage, name in refs for record in records[stage]
                       if isinstance(record.get(name), str)}
            for artifact, refs in REFERENCES.items()}


def collect_garbage(store: StageStore, older_than_seconds: float, now: float | None = None,
                    dry_run: bool = False) -> GarbageReport:
    """Remove the artifacts of ``store`` that no current record names and that were written more
    than ``older_than_seconds`` before ``now`` (default: the clock), and writers' temporary files
    as old; with ``dry_run`` only count them. Records are read before anything is listed, so an
    artifact written after that is younger than the grace period and kept."""
    if older_than_seconds < 0:
        raise ValueError(f"older_than_seconds {older_than_seconds}: must be 0 or more")
    now = time.time() if now is None else now
    cutoff = now - older_than_seconds
    pointers, temporary = store.listing("current/")
    referenced = referenced_keys(store, pointers)
    report = GarbageReport(older_than_seconds, dry_run)
    garbage: list[str] = []
    for stage in (*REFERENCES, *NEWEST_KEPT):
        tally = report.stages[stage] = StageGarbage()
        artifacts, left = store.listing(f"{stage}/")
        temporary += left
        keep, oldest = referenced.get(stage, set()), cutoff
        if stage in NEWEST_KEPT and artifacts:
            keep = {store.key_of(max(artifacts, key=lambda blob: blob.modified))}
            oldest = now - min(older_than_seconds, LISTING_GRACE_SECONDS)
        for blob in artifacts:
            tally.artifacts += 1
            tally.bytes += blob.size
            if store.key_of(blob) in keep:
                tally.referenced += 1
            elif blob.modified > oldest:
                tally.recent += 1
            else:
                tally.removed += 1
                tally.removed_bytes += blob.size
                garbage.append(blob.name)
    for blob in temporary:
        if blob.modified <= cutoff:
            report.temporary_removed += 1
            garbage.append(blob.name)
    if not dry_run:
        store.blobs.remove_many(garbage)
    return report


@dataclass
class UndeclaredStore:
    """The stage store of a corpus the project no longer declares, under the data dir's stages."""

    corpus: str
    files: int
    bytes: int
    dropped: bool = False


def undeclared_stores(stages: Blobs, declared: set[str]) -> list[UndeclaredStore]:
    """The corpus stage stores in ``stages`` (the data dir's ``stages`` folder) whose corpus is not
    in ``declared``: folders that hold a stage store's ``current`` records, so nothing else a
    shared folder holds is taken for one, and that hold a file (a server that keeps folders, as
    SeaweedFS's filer does, may list one emptied)."""
    out = []
    for name in stages.folders(""):
        if name not in declared and "current" in stages.folders(f"{name}/"):
            if blobs := list(stages.list(f"{name}/")):
                out.append(UndeclaredStore(name, len(blobs), sum(b.size for b in blobs)))
    return out
