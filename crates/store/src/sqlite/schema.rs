//! The SQLite schema as numbered migrations. `PRAGMA user_version` holds the
//! number of migrations applied; each runs in its own transaction. A migration,
//! once released, is never edited: a change is a new migration.

/// Migration `i` brings the schema from version `i` to `i + 1`.
pub const MIGRATIONS: &[&str] = &[
    // 1: learners, subjects, files with versions and pages, the episode log,
    //    annotations, and the record of imports.
    r#"
CREATE TABLE learners (
    id          INTEGER PRIMARY KEY,
    slug        TEXT NOT NULL UNIQUE,
    created_at  INTEGER NOT NULL
);
CREATE TABLE subjects (
    id          INTEGER PRIMARY KEY,
    learner_id  INTEGER NOT NULL REFERENCES learners(id),
    slug        TEXT NOT NULL,
    key         TEXT NOT NULL UNIQUE,          -- learner/subject, hashed into every episode
    title       TEXT NOT NULL,
    language    TEXT,
    timezone    TEXT,
    created_at  INTEGER NOT NULL,
    UNIQUE (learner_id, slug)
);
CREATE TABLE files (
    id          INTEGER PRIMARY KEY,
    subject_id  INTEGER NOT NULL REFERENCES subjects(id),
    name        TEXT NOT NULL,
    UNIQUE (subject_id, name)
);
CREATE TABLE file_versions (
    id           INTEGER PRIMARY KEY,
    file_id      INTEGER NOT NULL REFERENCES files(id),
    version      INTEGER NOT NULL,             -- 1, 2, … per file name
    sha256       TEXT NOT NULL,
    bytes        BLOB NOT NULL,
    format       TEXT NOT NULL,                -- markdown | text | pdf
    added_at     INTEGER NOT NULL,
    replaced_at  INTEGER,                      -- set when a newer version arrives
    replaced_by  INTEGER REFERENCES file_versions(id),
    removed_at   INTEGER,                      -- set when the file is removed
    UNIQUE (file_id, version)
);
-- A version's content is what its checksum says, for ever.
CREATE TRIGGER file_versions_content_fixed BEFORE UPDATE OF file_id, version, sha256, bytes, format, added_at ON file_versions
BEGIN SELECT RAISE(ABORT, 'file versions are immutable: only their replaced/removed status changes'); END;
CREATE TRIGGER file_versions_no_delete BEFORE DELETE ON file_versions
BEGIN SELECT RAISE(ABORT, 'file versions are never deleted: mark them removed'); END;
CREATE TABLE file_pages (
    version_id  INTEGER NOT NULL REFERENCES file_versions(id),
    page        INTEGER NOT NULL,              -- 1-based
    text        TEXT NOT NULL,
    PRIMARY KEY (version_id, page)
);
CREATE TABLE episodes (
    id           INTEGER PRIMARY KEY,
    subject_id   INTEGER NOT NULL REFERENCES subjects(id),
    seq          INTEGER NOT NULL,             -- 1, 2, … per subject: the chain position
    kind         TEXT NOT NULL,
    at           INTEGER NOT NULL,             -- ms since the Unix epoch, UTC
    salience     REAL NOT NULL,
    summary      TEXT NOT NULL,
    text         TEXT NOT NULL,
    concepts     TEXT NOT NULL,                -- JSON array of names
    evidence     TEXT NOT NULL,                -- JSON array of {file, version, page, sha256}
    data         TEXT NOT NULL,                -- JSON object: kind-specific facts
    external_id  TEXT,
    prev_hash    BLOB NOT NULL,
    hash         BLOB NOT NULL,
    import_key   BLOB,                         -- SHA-256 of the imported event, for idempotent re-import
    UNIQUE (subject_id, seq),
    UNIQUE (subject_id, external_id),
    UNIQUE (subject_id, import_key)
);
CREATE INDEX episodes_by_time ON episodes (subject_id, at);
CREATE INDEX episodes_by_hash ON episodes (subject_id, hash);
CREATE TRIGGER episodes_no_update BEFORE UPDATE ON episodes
BEGIN SELECT RAISE(ABORT, 'episodes are append-only: UPDATE refused'); END;
CREATE TRIGGER episodes_no_delete BEFORE DELETE ON episodes
BEGIN SELECT RAISE(ABORT, 'episodes are append-only: DELETE refused'); END;
CREATE TABLE annotations (
    id          INTEGER PRIMARY KEY,
    episode_id  INTEGER NOT NULL REFERENCES episodes(id),
    kind        TEXT NOT NULL,                 -- stance | recalled | citation | …
    at          INTEGER NOT NULL,
    data        TEXT NOT NULL                  -- JSON
);
CREATE INDEX annotations_by_episode ON annotations (episode_id, kind, at);
CREATE TRIGGER annotations_no_update BEFORE UPDATE ON annotations
BEGIN SELECT RAISE(ABORT, 'annotations are append-only: a newer one supersedes'); END;
CREATE TRIGGER annotations_no_delete BEFORE DELETE ON annotations
BEGIN SELECT RAISE(ABORT, 'annotations are append-only: DELETE refused'); END;
CREATE TABLE imports (
    id          INTEGER PRIMARY KEY,
    subject_id  INTEGER NOT NULL REFERENCES subjects(id),
    sha256      TEXT NOT NULL,                 -- of the history file's bytes
    source      TEXT NOT NULL,
    at          INTEGER NOT NULL,              -- when it was imported (wall clock, for people)
    events      INTEGER NOT NULL,
    appended    INTEGER NOT NULL
);
"#,
    // 2: derived indexes for recall. None of these is part of the chain: they
    //    are rebuilt from the episodes (the full-text terms are backfilled by
    //    code right after this runs, see `SqliteStore::migrate`).
    r#"
-- Contentless full-text index, rowid = episodes.id. Terms come from
-- tm_model::recall::index_text, already folded and space-separated, plus one
-- token naming the subject (`s<id>`) so a query never leaves its subject.
CREATE VIRTUAL TABLE episode_fts USING fts5(terms, tokenize = 'ascii', content = '', columnsize = 0);
CREATE TABLE episode_concepts (
    subject_id  INTEGER NOT NULL REFERENCES subjects(id),
    concept     TEXT NOT NULL,                 -- canonical key
    episode_id  INTEGER NOT NULL REFERENCES episodes(id),
    PRIMARY KEY (subject_id, concept, episode_id)
) WITHOUT ROWID;
CREATE TABLE episode_vectors (
    episode_id  INTEGER PRIMARY KEY REFERENCES episodes(id),
    subject_id  INTEGER NOT NULL REFERENCES subjects(id),
    model       TEXT NOT NULL,                 -- the embedder's name: a change is detected
    vector      BLOB NOT NULL                  -- little-endian f32, L2-normalised
);
CREATE INDEX episode_vectors_by_subject ON episode_vectors (subject_id, model);
"#,
    // 3: the concept map, one full snapshot per change. Snapshots are never
    //    edited or deleted; the newest is the current map, the older ones say
    //    how it grew.
    r#"
CREATE TABLE concept_maps (
    id          INTEGER PRIMARY KEY,
    subject_id  INTEGER NOT NULL REFERENCES subjects(id),
    at          INTEGER NOT NULL,              -- the event time that changed it
    reason      TEXT NOT NULL,
    map         TEXT NOT NULL                  -- JSON of tm_model::map::ConceptMap
);
CREATE INDEX concept_maps_by_subject ON concept_maps (subject_id, id);
CREATE TRIGGER concept_maps_no_update BEFORE UPDATE ON concept_maps
BEGIN SELECT RAISE(ABORT, 'concept map snapshots are append-only'); END;
CREATE TRIGGER concept_maps_no_delete BEFORE DELETE ON concept_maps
BEGIN SELECT RAISE(ABORT, 'concept map snapshots are append-only'); END;
"#,
    // 4: beliefs. A row is never changed into another claim: a change is a
    //    new row, and the old one's `superseded_by` is set once to point at it.
    r#"
CREATE TABLE beliefs (
    id             INTEGER PRIMARY KEY,
    subject_id     INTEGER NOT NULL REFERENCES subjects(id),
    about          TEXT NOT NULL,              -- canonical key of the concept or unmapped topic
    concept        TEXT,                       -- display name
    unmapped       INTEGER NOT NULL,
    claim          TEXT NOT NULL,              -- understands | still learning | struggles with | retired
    confidence     REAL NOT NULL,
    alpha          REAL NOT NULL,
    beta           REAL NOT NULL,
    support        TEXT NOT NULL,              -- JSON array of episode ids
    created_at     INTEGER NOT NULL,
    reason         TEXT NOT NULL,
    flagged        INTEGER NOT NULL,
    superseded_by  INTEGER REFERENCES beliefs(id)
);
CREATE INDEX beliefs_by_about ON beliefs (subject_id, about, id);
CREATE TRIGGER beliefs_fixed BEFORE UPDATE OF id, subject_id, about, concept, unmapped, claim, confidence, alpha, beta,
    support, created_at, reason, flagged ON beliefs
BEGIN SELECT RAISE(ABORT, 'beliefs are never updated in place: insert a new row and point the old one at it'); END;
CREATE TRIGGER beliefs_pointer_once BEFORE UPDATE OF superseded_by ON beliefs WHEN OLD.superseded_by IS NOT NULL
BEGIN SELECT RAISE(ABORT, 'a belief is superseded once'); END;
CREATE TRIGGER beliefs_no_delete BEFORE DELETE ON beliefs
BEGIN SELECT RAISE(ABORT, 'beliefs are never deleted: retire them'); END;
"#,
    // 5: the nightly loop. `nightly_runs` records each (subject, day) run so a
    //    second run for the same day writes nothing; it is a log (append-only).
    //    `citation_checks` is the latest verification of each episode's
    //    citation (the results themselves are annotations); `working_sets` and
    //    `self_models` are derived caches, replaced on every run, never history.
    r#"
CREATE TABLE nightly_runs (
    subject_id  INTEGER NOT NULL REFERENCES subjects(id),
    day         TEXT NOT NULL,                 -- YYYY-MM-DD (UTC) of the 24 h consolidated
    at          INTEGER NOT NULL,              -- the run's instant T
    summary     TEXT NOT NULL,                 -- JSON: what the run did
    PRIMARY KEY (subject_id, day)
) WITHOUT ROWID;
CREATE TRIGGER nightly_runs_no_update BEFORE UPDATE ON nightly_runs
BEGIN SELECT RAISE(ABORT, 'nightly runs are a log: UPDATE refused'); END;
CREATE TRIGGER nightly_runs_no_delete BEFORE DELETE ON nightly_runs
BEGIN SELECT RAISE(ABORT, 'nightly runs are a log: DELETE refused'); END;
CREATE TABLE citation_checks (
    episode_id  INTEGER PRIMARY KEY REFERENCES episodes(id),
    subject_id  INTEGER NOT NULL REFERENCES subjects(id),
    checked_at  INTEGER NOT NULL,
    status      TEXT NOT NULL,                 -- holds | changed | unverifiable
    label       TEXT NOT NULL                  -- e.g. "changed: replaced by notes.md v2"
);
CREATE INDEX citation_checks_by_age ON citation_checks (subject_id, checked_at);
CREATE INDEX citation_checks_by_status ON citation_checks (subject_id, status);
CREATE TABLE working_sets (
    subject_id  INTEGER PRIMARY KEY REFERENCES subjects(id),
    at          INTEGER NOT NULL,
    data        TEXT NOT NULL                  -- JSON of tm_model::nightly::WorkingSet
);
CREATE TABLE self_models (
    subject_id  INTEGER PRIMARY KEY REFERENCES subjects(id),
    at          INTEGER NOT NULL,
    data        TEXT NOT NULL                  -- JSON of tm_model::nightly::SelfModel
);
"#,
    // 6: passages of file pages for material retrieval (derived from
    //    file_pages, outside the chain; backfilled by code right after this
    //    runs, see `SqliteStore::migrate` and PASSAGES_VERSION).
    r#"
CREATE TABLE passages (
    id          INTEGER PRIMARY KEY,
    subject_id  INTEGER NOT NULL REFERENCES subjects(id),
    version_id  INTEGER NOT NULL REFERENCES file_versions(id),
    page        INTEGER NOT NULL,              -- 1-based
    line        INTEGER NOT NULL,              -- 1-based first line on the page
    text        TEXT NOT NULL,
    UNIQUE (version_id, page, line)
);
CREATE INDEX passages_by_subject ON passages (subject_id, version_id);
-- Same tokenisation as episode_fts: terms from tm_model::recall::index_text
-- plus the subject's token `s<id>`.
CREATE VIRTUAL TABLE passage_fts USING fts5(terms, tokenize = 'ascii', content = '', columnsize = 0);
CREATE TABLE passage_vectors (
    passage_id  INTEGER PRIMARY KEY REFERENCES passages(id),
    model       TEXT NOT NULL,
    vector      BLOB NOT NULL                  -- little-endian f32, L2-normalised
);
"#,
    // 7: tenants (platforms) and their API keys. A key is kept only as the
    //    SHA-256 of its secret, found by its public prefix; a learner belongs
    //    to at most one tenant (NULL: created outside the service, by the CLI).
    r#"
CREATE TABLE tenants (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    created_at  INTEGER NOT NULL
);
CREATE TABLE api_keys (
    id          INTEGER PRIMARY KEY,
    tenant_id   INTEGER NOT NULL REFERENCES tenants(id),
    prefix      TEXT NOT NULL UNIQUE,          -- public part of the key, shown in listings
    sha256      TEXT NOT NULL,                 -- hex SHA-256 of the whole key
    admin       INTEGER NOT NULL,              -- may run the nightly loop for every subject
    created_at  INTEGER NOT NULL,
    revoked_at  INTEGER
);
ALTER TABLE learners ADD COLUMN tenant_id INTEGER REFERENCES tenants(id);
CREATE INDEX learners_by_tenant ON learners (tenant_id);
"#,
    // 8: chain encoding v2 (tm_model::episodes): a row says its encoding; a
    //    v2 row keeps its random salt and its content digest, which is what
    //    the chain hash covers, so the content can be erased and the chain
    //    still verifies. Rows written before keep encoding 1.
    r#"
ALTER TABLE episodes ADD COLUMN enc INTEGER NOT NULL DEFAULT 1;
ALTER TABLE episodes ADD COLUMN salt BLOB;
ALTER TABLE episodes ADD COLUMN digest BLOB;
"#,
    // 9: erasure on request. `erasures` is the log of requests (never edited
    //    or deleted); an erased episode keeps its skeleton (seq, kind, at,
    //    salience, links, encoding, digest) and points at its erasure. The
    //    append-only triggers let exactly an erasure through: while the
    //    subject is listed in `erasing` (only inside the erase transaction),
    //    an episode's content may be cleared once, and the subject's derived
    //    rows may be deleted.
    r#"
CREATE TABLE erasures (
    id          INTEGER PRIMARY KEY,
    at          INTEGER NOT NULL,
    scope       TEXT NOT NULL,                 -- tenant | learner | subject
    target      TEXT NOT NULL,                 -- the tenant, learner slug or subject key
    reference   TEXT NOT NULL,                 -- the caller's request reference
    subjects    INTEGER NOT NULL,
    episodes    INTEGER NOT NULL
);
CREATE TRIGGER erasures_no_update BEFORE UPDATE ON erasures
BEGIN SELECT RAISE(ABORT, 'erasures are a log: UPDATE refused'); END;
CREATE TRIGGER erasures_no_delete BEFORE DELETE ON erasures
BEGIN SELECT RAISE(ABORT, 'erasures are a log: DELETE refused'); END;
CREATE TABLE erasing (subject_id INTEGER PRIMARY KEY);
ALTER TABLE episodes ADD COLUMN erased_by INTEGER REFERENCES erasures(id);
DROP TRIGGER episodes_no_update;
CREATE TRIGGER episodes_no_update BEFORE UPDATE ON episodes
WHEN NOT (OLD.erased_by IS NULL AND NEW.erased_by IS NOT NULL
    AND EXISTS (SELECT 1 FROM erasing WHERE subject_id = OLD.subject_id)
    AND NEW.id IS OLD.id AND NEW.subject_id IS OLD.subject_id AND NEW.seq IS OLD.seq
    AND NEW.kind IS OLD.kind AND NEW.at IS OLD.at AND NEW.salience IS OLD.salience
    AND NEW.prev_hash IS OLD.prev_hash AND NEW.hash IS OLD.hash AND NEW.enc IS OLD.enc
    AND NEW.digest IS OLD.digest
    AND NEW.summary = '' AND NEW.text = '' AND NEW.concepts = '[]' AND NEW.evidence = '[]'
    AND NEW.data = '{}' AND NEW.external_id IS NULL AND NEW.import_key IS NULL AND NEW.salt IS NULL)
BEGIN SELECT RAISE(ABORT, 'episodes are append-only: UPDATE refused (only an erasure clears content)'); END;
DROP TRIGGER annotations_no_delete;
CREATE TRIGGER annotations_no_delete BEFORE DELETE ON annotations
WHEN NOT EXISTS (SELECT 1 FROM episodes p JOIN erasing e ON e.subject_id = p.subject_id WHERE p.id = OLD.episode_id)
BEGIN SELECT RAISE(ABORT, 'annotations are append-only: DELETE refused'); END;
DROP TRIGGER concept_maps_no_delete;
CREATE TRIGGER concept_maps_no_delete BEFORE DELETE ON concept_maps
WHEN NOT EXISTS (SELECT 1 FROM erasing WHERE subject_id = OLD.subject_id)
BEGIN SELECT RAISE(ABORT, 'concept map snapshots are append-only'); END;
DROP TRIGGER beliefs_no_delete;
CREATE TRIGGER beliefs_no_delete BEFORE DELETE ON beliefs
WHEN NOT EXISTS (SELECT 1 FROM erasing WHERE subject_id = OLD.subject_id)
BEGIN SELECT RAISE(ABORT, 'beliefs are never deleted: retire them'); END;
DROP TRIGGER nightly_runs_no_delete;
CREATE TRIGGER nightly_runs_no_delete BEFORE DELETE ON nightly_runs
WHEN NOT EXISTS (SELECT 1 FROM erasing WHERE subject_id = OLD.subject_id)
BEGIN SELECT RAISE(ABORT, 'nightly runs are a log: DELETE refused'); END;
DROP TRIGGER file_versions_no_delete;
CREATE TRIGGER file_versions_no_delete BEFORE DELETE ON file_versions
WHEN NOT EXISTS (SELECT 1 FROM files f JOIN erasing e ON e.subject_id = f.subject_id WHERE f.id = OLD.file_id)
BEGIN SELECT RAISE(ABORT, 'file versions are never deleted: mark them removed'); END;
"#,
    // 10: an erasure of single episodes says why (`reason`; scope `episode`);
    //     an exported event is recognised by its episode's salt.
    r#"
ALTER TABLE erasures ADD COLUMN reason TEXT NOT NULL DEFAULT '';
CREATE INDEX episodes_by_salt ON episodes (subject_id, salt) WHERE salt IS NOT NULL;
"#,
    // 11: the vector stamp kept by triggers, one row per (subject, model), as
    //     PostgreSQL's `vector_stats`: counting a subject's vectors on every turn
    //     was ~6 % of a block at 10,000 episodes. `writes` moves with every
    //     insert, update and delete; `max_id` is the largest episode id written.
    r#"
CREATE TABLE vector_stats (
    subject_id  INTEGER NOT NULL,
    model       TEXT NOT NULL,
    writes      INTEGER NOT NULL,
    max_id      INTEGER NOT NULL,
    PRIMARY KEY (subject_id, model)
);
INSERT INTO vector_stats (subject_id, model, writes, max_id)
    SELECT subject_id, model, COUNT(*), MAX(episode_id) FROM episode_vectors GROUP BY subject_id, model;
CREATE TRIGGER episode_vectors_stats_insert AFTER INSERT ON episode_vectors
BEGIN
    INSERT INTO vector_stats (subject_id, model, writes, max_id) VALUES (NEW.subject_id, NEW.model, 1, NEW.episode_id)
    ON CONFLICT (subject_id, model) DO UPDATE SET writes = writes + 1, max_id = MAX(max_id, excluded.max_id);
END;
CREATE TRIGGER episode_vectors_stats_update AFTER UPDATE ON episode_vectors
BEGIN
    UPDATE vector_stats SET writes = writes + 1 WHERE subject_id = OLD.subject_id AND model = OLD.model;
    INSERT INTO vector_stats (subject_id, model, writes, max_id) VALUES (NEW.subject_id, NEW.model, 1, NEW.episode_id)
    ON CONFLICT (subject_id, model) DO UPDATE SET writes = writes + 1, max_id = MAX(max_id, excluded.max_id);
END;
CREATE TRIGGER episode_vectors_stats_delete AFTER DELETE ON episode_vectors
BEGIN
    UPDATE vector_stats SET writes = writes + 1 WHERE subject_id = OLD.subject_id AND model = OLD.model;
END;
"#,
    // 12: a turn's recent and window pools read the live episodes newest
    //     first from this index alone: through `episodes_by_time` each of the
    //     500 rows cost a read of its (wide) row for `erased_by` and the order
    //     by `seq` a sort, 6 % of a loaded server's CPU at 10,000 episodes.
    r#"
CREATE INDEX episodes_live_by_time ON episodes (subject_id, at, seq, erased_by) WHERE erased_by IS NULL;
"#,
    // 13: a compaction owed. An erasure's own transaction records that the
    //     file may still hold the erased bytes (free pages, the log, old
    //     full-text segments); the row goes once a compaction has finished.
    //     Any process that opens the store finishes an owed one first.
    r#"
CREATE TABLE compaction_owed (erasure_id INTEGER PRIMARY KEY REFERENCES erasures(id));
"#,
    // 14: learner names are per owner (each tenant, and the operator), and a
    //     subject erased whole is retired: its chain and name stay (the name
    //     is hashed into the chain) but the name is free for a new subject.
    //     Both tables are rebuilt without their old UNIQUE constraints (the
    //     runner turns foreign keys off around a migration and checks them
    //     before it commits); ids and rows are kept. Subjects erased whole
    //     before are retired here.
    r#"
CREATE TABLE learners_new (
    id          INTEGER PRIMARY KEY,
    slug        TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    tenant_id   INTEGER REFERENCES tenants(id)
);
INSERT INTO learners_new (id, slug, created_at, tenant_id)
    SELECT id, slug, created_at, tenant_id FROM learners;
DROP TABLE learners;
ALTER TABLE learners_new RENAME TO learners;
CREATE INDEX learners_by_tenant ON learners (tenant_id);
CREATE UNIQUE INDEX learners_by_name ON learners (IFNULL(tenant_id, 0), slug);
CREATE TABLE subjects_new (
    id          INTEGER PRIMARY KEY,
    learner_id  INTEGER NOT NULL REFERENCES learners(id),
    slug        TEXT NOT NULL,
    key         TEXT NOT NULL,                 -- learner/subject, hashed into every episode
    title       TEXT NOT NULL,
    language    TEXT,
    timezone    TEXT,
    created_at  INTEGER NOT NULL,
    retired_by  INTEGER REFERENCES erasures(id) -- erased whole: the name is free again
);
INSERT INTO subjects_new (id, learner_id, slug, key, title, language, timezone, created_at)
    SELECT id, learner_id, slug, key, title, language, timezone, created_at FROM subjects;
DROP TABLE subjects;
ALTER TABLE subjects_new RENAME TO subjects;
CREATE INDEX subjects_by_key ON subjects (key);
CREATE UNIQUE INDEX subjects_live_by_name ON subjects (learner_id, slug) WHERE retired_by IS NULL;
UPDATE subjects SET retired_by = (
    SELECT MAX(e.erased_by) FROM episodes e JOIN erasures r ON r.id = e.erased_by
    WHERE e.subject_id = subjects.id AND r.scope <> 'episode')
WHERE title = ''
  AND NOT EXISTS (SELECT 1 FROM episodes e WHERE e.subject_id = subjects.id AND e.erased_by IS NULL)
  AND EXISTS (SELECT 1 FROM episodes e JOIN erasures r ON r.id = e.erased_by
              WHERE e.subject_id = subjects.id AND r.scope <> 'episode');
"#,
];

/// The schema version the passage migration brings the database to; its
/// backfill runs right after it.
pub const PASSAGES_VERSION: i64 = 6;
