"""Ordered schema migrations; the store's version lives in the ``schema_version`` table.

Each migration runs once, in its own transaction, together with the row recording it.
Append new migrations at the end; never edit one that has shipped.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime

Progress = Callable[[str, int, int], None]
Step = str | Callable[[sqlite3.Connection, Progress | None], None]

_INITIAL = """
CREATE TABLE items (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('commit', 'kernel', 'ir')),
    key TEXT NOT NULL,
    source TEXT NOT NULL,
    path TEXT,
    language TEXT,
    dedup_hash TEXT,
    provenance TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    UNIQUE (kind, key)
);
CREATE INDEX items_kind_language ON items (kind, language);
CREATE INDEX items_kind_dedup ON items (kind, dedup_hash);
CREATE INDEX items_source ON items (source);

CREATE TABLE commits (
    item_id INTEGER PRIMARY KEY REFERENCES items (id) ON DELETE CASCADE,
    repo TEXT NOT NULL,
    sha TEXT NOT NULL,
    branch TEXT,
    author_date TEXT,
    message TEXT NOT NULL,
    diff TEXT NOT NULL,
    file TEXT,
    files TEXT NOT NULL DEFAULT '[]',
    functions TEXT NOT NULL DEFAULT '[]',
    code_before TEXT,
    code_after TEXT,
    added INTEGER NOT NULL DEFAULT 0,
    deleted INTEGER NOT NULL DEFAULT 0,
    model_input TEXT NOT NULL,
    function_md5 TEXT,
    diff_hash TEXT NOT NULL
);
CREATE INDEX commits_function_md5 ON commits (function_md5);
CREATE INDEX commits_diff_hash ON commits (diff_hash);
CREATE INDEX commits_repo ON commits (repo);

CREATE TABLE duplicates (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    source TEXT NOT NULL,
    original_item_id INTEGER NOT NULL REFERENCES items (id) ON DELETE CASCADE,
    matched_on TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (kind, key, source)
);
CREATE INDEX duplicates_original ON duplicates (original_item_id);

CREATE TABLE predictions (
    id INTEGER PRIMARY KEY,
    item_id INTEGER NOT NULL REFERENCES items (id) ON DELETE CASCADE,
    labeler TEXT NOT NULL,
    label TEXT NOT NULL,
    score REAL,
    details TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL
);
CREATE INDEX predictions_item_labeler ON predictions (item_id, labeler);
CREATE INDEX predictions_labeler_label ON predictions (labeler, label);

CREATE TABLE sets (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL CHECK (kind IN ('commit', 'kernel', 'ir')),
    labels TEXT NOT NULL DEFAULT '[]',
    params TEXT NOT NULL DEFAULT '{}',
    blind INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);

CREATE TABLE set_items (
    set_id INTEGER NOT NULL REFERENCES sets (id) ON DELETE CASCADE,
    item_id INTEGER NOT NULL REFERENCES items (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    PRIMARY KEY (set_id, item_id)
);
CREATE UNIQUE INDEX set_items_position ON set_items (set_id, position);

CREATE TABLE votes (
    id INTEGER PRIMARY KEY,
    item_id INTEGER NOT NULL REFERENCES items (id) ON DELETE CASCADE,
    annotator TEXT NOT NULL,
    label TEXT,
    category TEXT,
    note TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX votes_item_annotator ON votes (item_id, annotator, id);

CREATE TABLE models (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    base TEXT NOT NULL,
    params TEXT NOT NULL DEFAULT '{}',
    metrics TEXT NOT NULL DEFAULT '{}',
    path TEXT,
    created_at TEXT NOT NULL
);

CREATE TABLE releases (
    id INTEGER PRIMARY KEY,
    version TEXT NOT NULL UNIQUE,
    filters TEXT NOT NULL DEFAULT '{}',
    counts TEXT NOT NULL DEFAULT '{}',
    checksums TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL
);

CREATE TABLE checkpoints (
    kind TEXT NOT NULL,
    source TEXT NOT NULL,
    scope TEXT NOT NULL,
    last_key TEXT,
    counters TEXT NOT NULL DEFAULT '{}',
    updated_at TEXT NOT NULL,
    PRIMARY KEY (kind, source, scope)
);
"""

_ANNOTATION = """
ALTER TABLE votes ADD COLUMN role TEXT NOT NULL DEFAULT 'annotator'
    CHECK (role IN ('annotator', 'adjudicator'));
ALTER TABLE votes ADD COLUMN undoes INTEGER REFERENCES votes (id);
ALTER TABLE votes ADD COLUMN set_id INTEGER REFERENCES sets (id) ON DELETE SET NULL;
ALTER TABLE votes ADD COLUMN origin TEXT NOT NULL DEFAULT 'cli';
CREATE INDEX votes_annotator ON votes (annotator, role, id);

CREATE TABLE live_votes (
    item_id INTEGER NOT NULL REFERENCES items (id) ON DELETE CASCADE,
    annotator TEXT NOT NULL,
    role TEXT NOT NULL,
    vote_id INTEGER NOT NULL REFERENCES votes (id),
    label TEXT NOT NULL,
    category TEXT,
    note TEXT,
    PRIMARY KEY (item_id, annotator, role)
);
CREATE INDEX live_votes_annotator ON live_votes (annotator, role, item_id);

ALTER TABLE sets ADD COLUMN purpose TEXT NOT NULL DEFAULT 'ground-truth';
ALTER TABLE sets ADD COLUMN categories TEXT NOT NULL DEFAULT '[]';
ALTER TABLE sets ADD COLUMN votes_per_item INTEGER NOT NULL DEFAULT 2;
ALTER TABLE sets ADD COLUMN description TEXT NOT NULL DEFAULT '';
CREATE INDEX set_items_item ON set_items (item_id);

INSERT INTO live_votes (item_id, annotator, role, vote_id, label, category, note)
    SELECT v.item_id, v.annotator, v.role, v.id, v.label, v.category, v.note FROM votes AS v
    WHERE v.label IS NOT NULL AND v.id = (
        SELECT MAX(w.id) FROM votes AS w
        WHERE w.item_id = v.item_id AND w.annotator = v.annotator AND w.role = v.role
    );
"""

_KERNELS = """
CREATE TABLE kernels (
    item_id INTEGER PRIMARY KEY REFERENCES items (id) ON DELETE CASCADE,
    source_file TEXT NOT NULL,
    kernel_name TEXT NOT NULL,
    origin TEXT NOT NULL,
    original_source TEXT NOT NULL,
    normalized_source TEXT,
    normalized_hash TEXT NOT NULL,
    shim_needed INTEGER NOT NULL DEFAULT 0,
    shim_names TEXT NOT NULL DEFAULT '[]',
    filter_status TEXT NOT NULL CHECK (filter_status IN ('accepted', 'rejected')),
    instructions INTEGER,
    message TEXT,
    features TEXT NOT NULL DEFAULT '{}',
    verdict TEXT CHECK (verdict IS NULL OR verdict IN ('useful', 'no-output',
        'input-insensitive', 'non-deterministic', 'timeout', 'crash', 'compile-error',
        'too-few-instructions')),
    check_details TEXT NOT NULL DEFAULT '{}',
    checked_at TEXT
);
CREATE INDEX kernels_normalized_hash ON kernels (normalized_hash);
CREATE INDEX kernels_verdict ON kernels (verdict);
CREATE INDEX kernels_unchecked ON kernels (filter_status, checked_at);
"""

_IR = """
CREATE TABLE ir_modules (
    item_id INTEGER PRIMARY KEY REFERENCES items (id) ON DELETE CASCADE,
    structural_hash TEXT NOT NULL UNIQUE,
    project TEXT NOT NULL,
    license TEXT NOT NULL,
    input_format TEXT NOT NULL CHECK (input_format IN ('ll', 'bc', 'build')),
    compile_command TEXT,
    text TEXT NOT NULL,
    bitcode BLOB NOT NULL,
    text_bytes INTEGER NOT NULL,
    bitcode_bytes INTEGER NOT NULL,
    tokens INTEGER NOT NULL,
    functions INTEGER NOT NULL,
    declarations INTEGER NOT NULL,
    globals INTEGER NOT NULL,
    basic_blocks INTEGER NOT NULL,
    instructions INTEGER NOT NULL,
    opcodes TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX ir_modules_license ON ir_modules (license);

CREATE TABLE ir_inputs (
    id INTEGER PRIMARY KEY,
    source TEXT NOT NULL,
    path TEXT NOT NULL,
    compile_command TEXT NOT NULL DEFAULT '',
    input_sha256 TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('stored', 'duplicate', 'rejected', 'filtered')),
    item_id INTEGER REFERENCES items (id) ON DELETE SET NULL,
    language TEXT,
    license TEXT,
    reason TEXT,
    message TEXT,
    text_bytes INTEGER,
    bitcode_bytes INTEGER,
    tokens INTEGER,
    updated_at TEXT NOT NULL,
    UNIQUE (source, path, compile_command, input_sha256)
);
CREATE INDEX ir_inputs_status ON ir_inputs (status, reason);
CREATE INDEX ir_inputs_item ON ir_inputs (item_id);
"""

_PROMOTIONS = """
CREATE TABLE model_promotions (
    id INTEGER PRIMARY KEY,
    family TEXT NOT NULL,
    model TEXT NOT NULL REFERENCES models (name),
    promoted_by TEXT NOT NULL,
    note TEXT,
    promoted_at TEXT NOT NULL
);
CREATE INDEX model_promotions_family ON model_promotions (family, id);
"""

_ROUTING = """
ALTER TABLE sets ADD COLUMN overlap TEXT NOT NULL DEFAULT 'all'
    CHECK (overlap IN ('routed', 'all'));
ALTER TABLE set_items ADD COLUMN votes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE set_items ADD COLUMN status TEXT NOT NULL DEFAULT 'pending';
CREATE INDEX set_items_route ON set_items (set_id, status, votes, position);

CREATE TABLE set_counters (
    set_id INTEGER PRIMARY KEY REFERENCES sets (id) ON DELETE CASCADE,
    items INTEGER NOT NULL DEFAULT 0,
    voted_items INTEGER NOT NULL DEFAULT 0,
    votes INTEGER NOT NULL DEFAULT 0,
    unanimous INTEGER NOT NULL DEFAULT 0,
    majority INTEGER NOT NULL DEFAULT 0,
    adjudicated INTEGER NOT NULL DEFAULT 0,
    conflict INTEGER NOT NULL DEFAULT 0,
    pending INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE set_annotator_counts (
    set_id INTEGER NOT NULL REFERENCES sets (id) ON DELETE CASCADE,
    annotator TEXT NOT NULL,
    votes INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (set_id, annotator)
);

CREATE TABLE claims (
    set_id INTEGER NOT NULL REFERENCES sets (id) ON DELETE CASCADE,
    item_id INTEGER NOT NULL REFERENCES items (id) ON DELETE CASCADE,
    annotator TEXT NOT NULL,
    claimed_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    PRIMARY KEY (set_id, item_id, annotator)
);
CREATE INDEX claims_annotator ON claims (set_id, annotator, expires_at);

CREATE TABLE vote_timings (
    vote_id INTEGER PRIMARY KEY REFERENCES votes (id) ON DELETE CASCADE,
    set_id INTEGER NOT NULL REFERENCES sets (id) ON DELETE CASCADE,
    annotator TEXT NOT NULL,
    seconds REAL NOT NULL
);

CREATE TABLE gold_items (
    set_id INTEGER NOT NULL REFERENCES sets (id) ON DELETE CASCADE,
    item_id INTEGER NOT NULL REFERENCES items (id) ON DELETE CASCADE,
    label TEXT NOT NULL,
    from_set TEXT NOT NULL,
    position INTEGER NOT NULL,
    PRIMARY KEY (set_id, item_id)
);
CREATE TABLE gold_answers (
    id INTEGER PRIMARY KEY,
    set_id INTEGER NOT NULL REFERENCES sets (id) ON DELETE CASCADE,
    item_id INTEGER NOT NULL REFERENCES items (id) ON DELETE CASCADE,
    annotator TEXT NOT NULL,
    label TEXT NOT NULL,
    expected TEXT NOT NULL,
    seconds REAL,
    created_at TEXT NOT NULL
);
CREATE INDEX gold_answers_annotator ON gold_answers (set_id, annotator, item_id);
"""

_KERNEL_OUT_OF_BOUNDS = """
CREATE TABLE kernels_new (
    item_id INTEGER PRIMARY KEY REFERENCES items (id) ON DELETE CASCADE,
    source_file TEXT NOT NULL,
    kernel_name TEXT NOT NULL,
    origin TEXT NOT NULL,
    original_source TEXT NOT NULL,
    normalized_source TEXT,
    normalized_hash TEXT NOT NULL,
    shim_needed INTEGER NOT NULL DEFAULT 0,
    shim_names TEXT NOT NULL DEFAULT '[]',
    filter_status TEXT NOT NULL CHECK (filter_status IN ('accepted', 'rejected')),
    instructions INTEGER,
    message TEXT,
    features TEXT NOT NULL DEFAULT '{}',
    verdict TEXT CHECK (verdict IS NULL OR verdict IN ('useful', 'no-output',
        'input-insensitive', 'non-deterministic', 'timeout', 'crash', 'out-of-bounds',
        'compile-error', 'too-few-instructions')),
    check_details TEXT NOT NULL DEFAULT '{}',
    checked_at TEXT
);
INSERT INTO kernels_new SELECT * FROM kernels;
DROP TABLE kernels;
ALTER TABLE kernels_new RENAME TO kernels;
CREATE INDEX kernels_normalized_hash ON kernels (normalized_hash);
CREATE INDEX kernels_verdict ON kernels (verdict);
CREATE INDEX kernels_unchecked ON kernels (filter_status, checked_at);
"""


_SIMULATIONS = """
CREATE TABLE IF NOT EXISTS simulations (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    pool TEXT NOT NULL,
    eval TEXT NOT NULL,
    params TEXT NOT NULL DEFAULT '{}',
    result TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS simulations_kind ON simulations (kind, id);
"""


def _search_indexes(conn: sqlite3.Connection, progress: Progress | None) -> None:
    """Migration 8, imported when it runs (most commands open a store already past it)."""
    from store.search import create_indexes

    create_indexes(conn, progress)


def _label_scoped_counters(conn: sqlite3.Connection, progress: Progress | None) -> None:
    """Migration 10: routing counted a live vote toward every set holding its item,
    whatever its label. Restate every routed set, counting only the votes whose label is
    one of the set's (or skip)."""
    from store.routing import restate_set

    sets = [r[0] for r in conn.execute("SELECT set_id FROM set_counters ORDER BY set_id")]
    for done, set_id in enumerate(sets, start=1):
        restate_set(conn, set_id)
        if progress is not None:
            progress("recounting sets", done, len(sets))


# Undo and the live-vote checks ask "was this vote undone?" of every vote they pass.
_UNDO_INDEX = "CREATE INDEX IF NOT EXISTS votes_undoes ON votes (undoes) WHERE undoes IS NOT NULL;"


def _whole_messages(conn: sqlite3.Connection, progress: Progress | None) -> None:
    """Migration 11: the stored model input (``message || diff``) once cut a message
    longer than the token budget in its middle, so the keyword rules under a trained
    model missed a match in its tail. Such rows now hold the whole message and no diff,
    as ``engines.commits.representation.model_input`` writes them since."""
    separator = "\n\n"  # representation.SEPARATOR
    # A cut row's text is shorter than its message; the check below confirms each one.
    rows = conn.execute(
        "SELECT item_id, message, model_input FROM commits"
        " WHERE length(model_input) < length(message)"
    ).fetchall()
    fixed = []
    for item_id, message, text in rows:
        whole = message.strip()
        if whole.startswith(text) and len(text) < len(whole):
            fixed.append((whole + separator, item_id))
    conn.executemany("UPDATE commits SET model_input = ? WHERE item_id = ?", fixed)
    if progress is not None:
        progress("messages kept whole", len(fixed), len(fixed))


# Every item one labeler predicted, in item order: the latest prediction per item and
# "which items has it labeled" (eval, search --disagree, set create --stratify, predict)
# read the index alone instead of each prediction row, with no sort.
_LABELER_ITEM_INDEX = (
    "CREATE INDEX IF NOT EXISTS predictions_labeler_item ON predictions (labeler, item_id);"
)


# A commit named by the first digits of its sha (``store.items.find_by_sha_prefix``: an
# imported commit's key is its external id) is a range of this index; NOCASE as a sha
# may be stored in capitals. An undone gold answer moves, with when it was undone, to
# ``gold_answers_undone``: ``gold_answers`` holds the answers in force, as
# ``live_votes`` holds the votes.
_SHA_INDEX_GOLD_UNDO = """
CREATE INDEX IF NOT EXISTS commits_sha ON commits (sha COLLATE NOCASE);
CREATE TABLE IF NOT EXISTS gold_answers_undone (
    id INTEGER PRIMARY KEY,
    answer_id INTEGER NOT NULL,
    set_id INTEGER NOT NULL REFERENCES sets (id) ON DELETE CASCADE,
    item_id INTEGER NOT NULL REFERENCES items (id) ON DELETE CASCADE,
    annotator TEXT NOT NULL,
    label TEXT NOT NULL,
    expected TEXT NOT NULL,
    seconds REAL,
    created_at TEXT NOT NULL,
    undone_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS gold_answers_undone_annotator
    ON gold_answers_undone (set_id, annotator, item_id);
"""


MIGRATIONS: list[tuple[int, str, Step]] = [
    (1, "initial schema: items, commits, predictions, votes, sets, models, releases", _INITIAL),
    (2, "annotation: vote roles and undo, live votes, set purpose and label options", _ANNOTATION),
    (3, "kernels: OpenCL kernel payload, filter result, features, check verdict", _KERNELS),
    (4, "ir: LLVM IR module payload, and every input file's fate", _IR),
    (5, "models: promotions (which version of a family is current, who chose it)", _PROMOTIONS),
    (
        6,
        "routing: set overlap, per-item state and per-set counters, claims, gold items",
        _ROUTING,
    ),
    (
        7,
        "kernels: the out-of-bounds verdict (a write past a buffer caught in its guard)",
        _KERNEL_OUT_OF_BOUNDS,
    ),
    (
        8,
        "search: FTS5 indexes over keys, messages, diffs, kernel sources, IR text, vote notes",
        _search_indexes,
    ),
    (9, "simulations: stored results of simulated runs (active-learning curves)", _SIMULATIONS),
    (
        10,
        "routing: a set counts only the votes whose label is one of its own (or skip)",
        _label_scoped_counters,
    ),
    (11, "commits: the model input holds a long message whole", _whole_messages),
    (12, "votes: an index on the vote an undo takes back", _UNDO_INDEX),
    (13, "predictions: an index on each labeler's items", _LABELER_ITEM_INDEX),
    (
        14,
        "commits: an index on the sha; gold answers: undo, the undone ones kept",
        _SHA_INDEX_GOLD_UNDO,
    ),
]

SCHEMA_VERSION = MIGRATIONS[-1][0]


class SchemaTooNewError(sqlite3.DatabaseError):
    """The database was written by a newer Curator than this one."""


def current_version(conn: sqlite3.Connection) -> int:
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    ).fetchone()
    if not exists:
        return 0
    return conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version").fetchone()[0]


def migrate(
    conn: sqlite3.Connection,
    progress: Progress | None = None,
    begin: Callable[[], object] | None = None,
) -> int:
    """Bring the database up to :data:`SCHEMA_VERSION`; return the version it started at.

    A migration is SQL text or a function of the connection and ``progress``, which it
    calls as ``progress(what, done, total)`` while it works through existing rows.
    ``begin`` takes the write lock for each migration (``BEGIN IMMEDIATE`` unless given:
    the store's own, which says when it waits for another process)."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_version ("
        " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    start = current_version(conn)
    if start > SCHEMA_VERSION:
        raise SchemaTooNewError(
            f"schema version {start} is newer than this Curator understands ({SCHEMA_VERSION})"
        )
    for version, name, sql in MIGRATIONS:
        if version <= start:
            continue
        if begin is None:
            conn.execute("BEGIN IMMEDIATE")
        else:
            begin()
        try:
            # Another process may have migrated while we waited for the lock.
            if current_version(conn) >= version:
                conn.execute("ROLLBACK")
                continue
            if callable(sql):
                sql(conn, progress)
            else:
                for statement in _statements(sql):
                    conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)",
                (version, name, datetime.now(UTC).isoformat()),
            )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    return start


def _statements(sql: str) -> list[str]:
    return [part.strip() for part in sql.split(";") if part.strip()]
