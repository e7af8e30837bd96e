//! The PostgreSQL schema as numbered migrations, recorded in
//! `tm_schema(version)`; each runs in its own transaction under an advisory
//! lock, so several processes starting at once migrate once. A migration, once
//! released, is never edited: a change is a new migration.
//!
//! The same tables as the SQLite engine, with the same guarantees enforced
//! by the database (triggers refuse any UPDATE, DELETE or TRUNCATE of
//! episodes, annotations, map snapshots and the night's log; a belief row
//! only ever gets its `superseded_by` set, once; a file version's content is
//! fixed). The two pointers forward in time (a file version's
//! `replaced_by`, a belief's `superseded_by`) are checked at commit, so a
//! copy can insert rows in id order. Text that is sorted on is `COLLATE "C"` (byte order, as SQLite
//! sorts), whatever the database's own collation. Full text is a terms table with per-subject statistics (see
//! `fts.rs`); vectors are `bytea` (little-endian f32), searched exactly in
//! the brain's cache.

/// Migration `i` brings the schema from version `i` to `i + 1`.
pub const MIGRATIONS: &[&str] = &[
    r#"
CREATE FUNCTION tm_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION '%', TG_ARGV[0]; END $$;

CREATE TABLE tenants (
    id          BIGSERIAL PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    created_at  BIGINT NOT NULL
);
CREATE TABLE api_keys (
    id          BIGSERIAL PRIMARY KEY,
    tenant_id   BIGINT NOT NULL REFERENCES tenants(id),
    prefix      TEXT NOT NULL UNIQUE,
    sha256      TEXT NOT NULL,
    admin       BOOLEAN NOT NULL,
    created_at  BIGINT NOT NULL,
    revoked_at  BIGINT
);
CREATE TABLE learners (
    id          BIGSERIAL PRIMARY KEY,
    slug        TEXT NOT NULL UNIQUE,
    created_at  BIGINT NOT NULL,
    tenant_id   BIGINT REFERENCES tenants(id)
);
CREATE INDEX learners_by_tenant ON learners (tenant_id);
CREATE TABLE subjects (
    id          BIGSERIAL PRIMARY KEY,
    learner_id  BIGINT NOT NULL REFERENCES learners(id),
    slug        TEXT NOT NULL,
    key         TEXT COLLATE "C" NOT NULL UNIQUE,
    title       BYTEA NOT NULL,
    language    TEXT,
    timezone    TEXT,
    created_at  BIGINT NOT NULL,
    UNIQUE (learner_id, slug)
);
CREATE TABLE files (
    id          BIGSERIAL PRIMARY KEY,
    subject_id  BIGINT NOT NULL REFERENCES subjects(id),
    name        TEXT COLLATE "C" NOT NULL,
    UNIQUE (subject_id, name)
);
CREATE TABLE file_versions (
    id           BIGSERIAL PRIMARY KEY,
    file_id      BIGINT NOT NULL REFERENCES files(id),
    version      BIGINT NOT NULL,
    sha256       TEXT NOT NULL,
    bytes        BYTEA NOT NULL,
    format       TEXT NOT NULL,
    added_at     BIGINT NOT NULL,
    replaced_at  BIGINT,
    replaced_by  BIGINT REFERENCES file_versions(id) DEFERRABLE INITIALLY DEFERRED,
    removed_at   BIGINT,
    UNIQUE (file_id, version)
);
CREATE FUNCTION tm_file_version_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF (NEW.file_id, NEW.version, NEW.sha256, NEW.bytes, NEW.format, NEW.added_at)
     IS DISTINCT FROM (OLD.file_id, OLD.version, OLD.sha256, OLD.bytes, OLD.format, OLD.added_at) THEN
    RAISE EXCEPTION 'file versions are immutable: only their replaced/removed status changes';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER file_versions_content_fixed BEFORE UPDATE ON file_versions
  FOR EACH ROW EXECUTE FUNCTION tm_file_version_fixed();
CREATE TRIGGER file_versions_no_delete BEFORE DELETE ON file_versions
  FOR EACH ROW EXECUTE FUNCTION tm_refuse('file versions are never deleted: mark them removed');
CREATE TABLE file_pages (
    version_id  BIGINT NOT NULL REFERENCES file_versions(id),
    page        BIGINT NOT NULL,
    text        TEXT NOT NULL,
    PRIMARY KEY (version_id, page)
);

CREATE TABLE episodes (
    id           BIGSERIAL PRIMARY KEY,
    subject_id   BIGINT NOT NULL REFERENCES subjects(id),
    seq          BIGINT NOT NULL,
    kind         TEXT COLLATE "C" NOT NULL,
    at           BIGINT NOT NULL,
    salience     DOUBLE PRECISION NOT NULL,
    summary      BYTEA NOT NULL,
    text         BYTEA NOT NULL,
    concepts     TEXT NOT NULL,
    evidence     TEXT NOT NULL,
    data         TEXT NOT NULL,
    external_id  BYTEA,
    prev_hash    BYTEA NOT NULL,
    hash         BYTEA NOT NULL,
    import_key   BYTEA,
    -- Read out of `data` at append (a check's topic and verdict): derived,
    -- not hashed; the hash covers `data` exactly as stored. Free text
    -- (title, summary, text, external_id, topic) is BYTEA holding UTF-8:
    -- a learner's text may hold NUL, which TEXT refuses.
    topic        BYTEA,
    verdict      TEXT COLLATE "C",
    UNIQUE (subject_id, seq),
    UNIQUE (subject_id, external_id),
    UNIQUE (subject_id, import_key)
);
CREATE INDEX episodes_by_time ON episodes (subject_id, at, seq);
CREATE INDEX episodes_by_kind ON episodes (subject_id, kind, seq);
CREATE INDEX episodes_by_hash ON episodes (subject_id, hash);
CREATE TRIGGER episodes_no_update BEFORE UPDATE ON episodes
  FOR EACH ROW EXECUTE FUNCTION tm_refuse('episodes are append-only: UPDATE refused');
CREATE TRIGGER episodes_no_delete BEFORE DELETE ON episodes
  FOR EACH ROW EXECUTE FUNCTION tm_refuse('episodes are append-only: DELETE refused');
CREATE TRIGGER episodes_no_truncate BEFORE TRUNCATE ON episodes
  FOR EACH STATEMENT EXECUTE FUNCTION tm_refuse('episodes are append-only: TRUNCATE refused');

CREATE TABLE annotations (
    id          BIGSERIAL PRIMARY KEY,
    episode_id  BIGINT NOT NULL REFERENCES episodes(id),
    kind        TEXT NOT NULL,
    at          BIGINT NOT NULL,
    data        TEXT NOT NULL
);
CREATE INDEX annotations_by_episode ON annotations (episode_id, kind, at);
CREATE TRIGGER annotations_no_update BEFORE UPDATE ON annotations
  FOR EACH ROW EXECUTE FUNCTION tm_refuse('annotations are append-only: a newer one supersedes');
CREATE TRIGGER annotations_no_delete BEFORE DELETE ON annotations
  FOR EACH ROW EXECUTE FUNCTION tm_refuse('annotations are append-only: DELETE refused');
CREATE TRIGGER annotations_no_truncate BEFORE TRUNCATE ON annotations
  FOR EACH STATEMENT EXECUTE FUNCTION tm_refuse('annotations are append-only: TRUNCATE refused');

CREATE TABLE imports (
    id          BIGSERIAL PRIMARY KEY,
    subject_id  BIGINT NOT NULL REFERENCES subjects(id),
    sha256      TEXT NOT NULL,
    source      TEXT NOT NULL,
    at          BIGINT NOT NULL,
    events      BIGINT NOT NULL,
    appended    BIGINT NOT NULL
);
CREATE INDEX imports_by_subject ON imports (subject_id, sha256);

-- Full text: postings with term frequencies, and per-subject statistics
-- (documents, tokens) for Okapi BM25 (`fts.rs`); a term's document count
-- is its postings' count.
-- kind: 'e' episodes, 'p' passages.
CREATE TABLE fts_postings (
    kind        TEXT NOT NULL,
    subject_id  BIGINT NOT NULL REFERENCES subjects(id),
    term        TEXT NOT NULL,
    doc_id      BIGINT NOT NULL,
    tf          INT NOT NULL,
    PRIMARY KEY (kind, subject_id, term, doc_id)
);
CREATE TABLE fts_stats (
    kind        TEXT NOT NULL,
    subject_id  BIGINT NOT NULL REFERENCES subjects(id),
    docs        BIGINT NOT NULL,
    tokens      BIGINT NOT NULL,
    PRIMARY KEY (kind, subject_id)
);

CREATE TABLE episode_concepts (
    subject_id  BIGINT NOT NULL REFERENCES subjects(id),
    concept     TEXT COLLATE "C" NOT NULL,
    episode_id  BIGINT NOT NULL REFERENCES episodes(id),
    PRIMARY KEY (subject_id, concept, episode_id)
);
CREATE TABLE episode_vectors (
    episode_id  BIGINT PRIMARY KEY REFERENCES episodes(id),
    subject_id  BIGINT NOT NULL REFERENCES subjects(id),
    model       TEXT COLLATE "C" NOT NULL,
    vector      BYTEA NOT NULL
);
CREATE INDEX episode_vectors_by_subject ON episode_vectors (subject_id, model, episode_id);
-- Per subject and model: vectors written so far and the highest episode id,
-- the stamp a cache of the subject's vectors compares (one row, not a count).
CREATE TABLE vector_stats (
    subject_id  BIGINT NOT NULL REFERENCES subjects(id),
    model       TEXT COLLATE "C" NOT NULL,
    writes      BIGINT NOT NULL,
    max_id      BIGINT NOT NULL,
    PRIMARY KEY (subject_id, model)
);

CREATE TABLE concept_maps (
    id          BIGSERIAL PRIMARY KEY,
    subject_id  BIGINT NOT NULL REFERENCES subjects(id),
    at          BIGINT NOT NULL,
    reason      TEXT NOT NULL,
    map         TEXT NOT NULL
);
CREATE INDEX concept_maps_by_subject ON concept_maps (subject_id, id);
CREATE TRIGGER concept_maps_no_update BEFORE UPDATE OR DELETE ON concept_maps
  FOR EACH ROW EXECUTE FUNCTION tm_refuse('concept map snapshots are append-only');

CREATE TABLE beliefs (
    id             BIGSERIAL PRIMARY KEY,
    subject_id     BIGINT NOT NULL REFERENCES subjects(id),
    about          TEXT COLLATE "C" NOT NULL,
    concept        TEXT,
    unmapped       BOOLEAN NOT NULL,
    claim          TEXT NOT NULL,
    confidence     DOUBLE PRECISION NOT NULL,
    alpha          DOUBLE PRECISION NOT NULL,
    beta           DOUBLE PRECISION NOT NULL,
    support        TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    reason         TEXT NOT NULL,
    flagged        BOOLEAN NOT NULL,
    superseded_by  BIGINT REFERENCES beliefs(id) DEFERRABLE INITIALLY DEFERRED
);
CREATE INDEX beliefs_by_about ON beliefs (subject_id, about, id);
CREATE FUNCTION tm_belief_pointer_once() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF (NEW.id, NEW.subject_id, NEW.about, NEW.concept, NEW.unmapped, NEW.claim, NEW.confidence,
      NEW.alpha, NEW.beta, NEW.support, NEW.created_at, NEW.reason, NEW.flagged)
     IS DISTINCT FROM (OLD.id, OLD.subject_id, OLD.about, OLD.concept, OLD.unmapped, OLD.claim,
      OLD.confidence, OLD.alpha, OLD.beta, OLD.support, OLD.created_at, OLD.reason, OLD.flagged) THEN
    RAISE EXCEPTION 'beliefs are never updated in place: insert a new row and point the old one at it';
  END IF;
  IF OLD.superseded_by IS NOT NULL THEN
    RAISE EXCEPTION 'a belief is superseded once';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER beliefs_fixed BEFORE UPDATE ON beliefs
  FOR EACH ROW EXECUTE FUNCTION tm_belief_pointer_once();
CREATE TRIGGER beliefs_no_delete BEFORE DELETE ON beliefs
  FOR EACH ROW EXECUTE FUNCTION tm_refuse('beliefs are never deleted: retire them');

CREATE TABLE nightly_runs (
    subject_id  BIGINT NOT NULL REFERENCES subjects(id),
    day         TEXT NOT NULL,
    at          BIGINT NOT NULL,
    summary     TEXT NOT NULL,
    PRIMARY KEY (subject_id, day)
);
CREATE TRIGGER nightly_runs_no_update BEFORE UPDATE OR DELETE ON nightly_runs
  FOR EACH ROW EXECUTE FUNCTION tm_refuse('nightly runs are a log: UPDATE and DELETE refused');
CREATE TABLE citation_checks (
    episode_id  BIGINT PRIMARY KEY REFERENCES episodes(id),
    subject_id  BIGINT NOT NULL REFERENCES subjects(id),
    checked_at  BIGINT NOT NULL,
    status      TEXT NOT NULL,
    label       TEXT NOT NULL
);
CREATE INDEX citation_checks_by_age ON citation_checks (subject_id, checked_at);
CREATE INDEX citation_checks_by_status ON citation_checks (subject_id, status);
CREATE TABLE working_sets (
    subject_id  BIGINT PRIMARY KEY REFERENCES subjects(id),
    at          BIGINT NOT NULL,
    data        TEXT NOT NULL
);
CREATE TABLE self_models (
    subject_id  BIGINT PRIMARY KEY REFERENCES subjects(id),
    at          BIGINT NOT NULL,
    data        TEXT NOT NULL
);

CREATE TABLE passages (
    id          BIGSERIAL PRIMARY KEY,
    subject_id  BIGINT NOT NULL REFERENCES subjects(id),
    version_id  BIGINT NOT NULL REFERENCES file_versions(id),
    page        BIGINT NOT NULL,
    line        BIGINT NOT NULL,
    text        TEXT NOT NULL,
    UNIQUE (version_id, page, line)
);
CREATE INDEX passages_by_subject ON passages (subject_id, version_id);
CREATE TABLE passage_vectors (
    passage_id  BIGINT PRIMARY KEY REFERENCES passages(id),
    model       TEXT NOT NULL,
    vector      BYTEA NOT NULL
);
"#,
    // 2: chain encoding v2, as SQLite's migration 8: a row says its encoding;
    //    a v2 row keeps its salt and content digest (what the hash covers).
    r#"
ALTER TABLE episodes ADD COLUMN enc BIGINT NOT NULL DEFAULT 1;
ALTER TABLE episodes ADD COLUMN salt BYTEA;
ALTER TABLE episodes ADD COLUMN digest BYTEA;
"#,
    // 3: erasure on request, as SQLite's migration 9. While a subject is
    //    listed in `erasing` (only inside the erase transaction) an episode's
    //    content may be cleared once and the subject's derived rows deleted;
    //    every other UPDATE or DELETE is still refused.
    r#"
CREATE TABLE erasures (
    id          BIGSERIAL PRIMARY KEY,
    at          BIGINT NOT NULL,
    scope       TEXT NOT NULL,
    target      TEXT NOT NULL,
    reference   TEXT NOT NULL,
    subjects    BIGINT NOT NULL,
    episodes    BIGINT NOT NULL
);
CREATE TRIGGER erasures_no_change BEFORE UPDATE OR DELETE ON erasures
  FOR EACH ROW EXECUTE FUNCTION tm_refuse('erasures are a log: UPDATE and DELETE refused');
CREATE TABLE erasing (subject_id BIGINT PRIMARY KEY);
ALTER TABLE episodes ADD COLUMN erased_by BIGINT REFERENCES erasures(id);

CREATE FUNCTION tm_erasing(sid BIGINT) RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT EXISTS (SELECT 1 FROM erasing WHERE subject_id = sid) $$;
CREATE FUNCTION tm_episode_erase() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.erased_by IS NULL AND NEW.erased_by IS NOT NULL AND tm_erasing(OLD.subject_id)
     AND NEW.id = OLD.id AND NEW.subject_id = OLD.subject_id AND NEW.seq = OLD.seq
     AND NEW.kind = OLD.kind AND NEW.at = OLD.at AND NEW.salience = OLD.salience
     AND NEW.prev_hash = OLD.prev_hash AND NEW.hash = OLD.hash AND NEW.enc = OLD.enc
     AND NEW.digest IS NOT DISTINCT FROM OLD.digest
     AND NEW.summary = ''::bytea AND NEW.text = ''::bytea AND NEW.concepts = '[]'
     AND NEW.evidence = '[]' AND NEW.data = '{}' AND NEW.external_id IS NULL
     AND NEW.import_key IS NULL AND NEW.salt IS NULL AND NEW.topic IS NULL AND NEW.verdict IS NULL THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'episodes are append-only: UPDATE refused (only an erasure clears content)';
END $$;
DROP TRIGGER episodes_no_update ON episodes;
CREATE TRIGGER episodes_no_update BEFORE UPDATE ON episodes
  FOR EACH ROW EXECUTE FUNCTION tm_episode_erase();

CREATE FUNCTION tm_refuse_unless_erasing() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE sid BIGINT;
BEGIN
  IF TG_TABLE_NAME = 'annotations' THEN
    SELECT subject_id INTO sid FROM episodes WHERE id = OLD.episode_id;
  ELSIF TG_TABLE_NAME = 'file_versions' THEN
    SELECT subject_id INTO sid FROM files WHERE id = OLD.file_id;
  ELSE
    sid := OLD.subject_id;
  END IF;
  IF TG_OP = 'DELETE' AND tm_erasing(sid) THEN RETURN OLD; END IF;
  RAISE EXCEPTION '%', TG_ARGV[0];
END $$;
DROP TRIGGER annotations_no_delete ON annotations;
CREATE TRIGGER annotations_no_delete BEFORE DELETE ON annotations
  FOR EACH ROW EXECUTE FUNCTION tm_refuse_unless_erasing('annotations are append-only: DELETE refused');
DROP TRIGGER concept_maps_no_update ON concept_maps;
CREATE TRIGGER concept_maps_no_update BEFORE UPDATE ON concept_maps
  FOR EACH ROW EXECUTE FUNCTION tm_refuse('concept map snapshots are append-only');
CREATE TRIGGER concept_maps_no_delete BEFORE DELETE ON concept_maps
  FOR EACH ROW EXECUTE FUNCTION tm_refuse_unless_erasing('concept map snapshots are append-only');
DROP TRIGGER beliefs_no_delete ON beliefs;
CREATE TRIGGER beliefs_no_delete BEFORE DELETE ON beliefs
  FOR EACH ROW EXECUTE FUNCTION tm_refuse_unless_erasing('beliefs are never deleted: retire them');
DROP TRIGGER nightly_runs_no_update ON nightly_runs;
CREATE TRIGGER nightly_runs_no_update BEFORE UPDATE ON nightly_runs
  FOR EACH ROW EXECUTE FUNCTION tm_refuse('nightly runs are a log: UPDATE refused');
CREATE TRIGGER nightly_runs_no_delete BEFORE DELETE ON nightly_runs
  FOR EACH ROW EXECUTE FUNCTION tm_refuse_unless_erasing('nightly runs are a log: DELETE refused');
DROP TRIGGER file_versions_no_delete ON file_versions;
CREATE TRIGGER file_versions_no_delete BEFORE DELETE ON file_versions
  FOR EACH ROW EXECUTE FUNCTION tm_refuse_unless_erasing('file versions are never deleted: mark them removed');
"#,
    // 4: an erasure of single episodes says why (`reason`; scope `episode`);
    //    an exported event is recognised by its episode's salt.
    r#"
ALTER TABLE erasures ADD COLUMN reason TEXT NOT NULL DEFAULT '';
CREATE INDEX episodes_by_salt ON episodes (subject_id, salt) WHERE salt IS NOT NULL;
"#,
    // 5: index words compare in byte order, as FTS5 orders its terms, so the
    //    words that start with a prefix are one range of the primary key
    //    (recall's search for a word's other forms).
    r#"
ALTER TABLE fts_postings ALTER COLUMN term TYPE TEXT COLLATE "C";
"#,
    // 6: a compaction owed, as SQLite's migration 13: recorded in the
    //    erasure's own transaction, cleared once the VACUUM of the touched
    //    tables has finished; any process opening the store finishes it first.
    r#"
CREATE TABLE compaction_owed (erasure_id BIGINT PRIMARY KEY REFERENCES erasures(id));
"#,
    // 7: learner names are per owner and a subject erased whole is retired,
    //    as SQLite's migration 14.
    r#"
ALTER TABLE learners DROP CONSTRAINT learners_slug_key;
CREATE UNIQUE INDEX learners_by_name ON learners ((COALESCE(tenant_id, 0)), slug);
ALTER TABLE subjects DROP CONSTRAINT subjects_key_key;
ALTER TABLE subjects DROP CONSTRAINT subjects_learner_id_slug_key;
ALTER TABLE subjects ADD COLUMN retired_by BIGINT REFERENCES erasures(id);
CREATE INDEX subjects_by_key ON subjects (key);
CREATE UNIQUE INDEX subjects_live_by_name ON subjects (learner_id, slug) WHERE retired_by IS NULL;
UPDATE subjects SET retired_by = (
    SELECT MAX(e.erased_by) FROM episodes e JOIN erasures r ON r.id = e.erased_by
    WHERE e.subject_id = subjects.id AND r.scope <> 'episode')
WHERE title = ''::bytea
  AND NOT EXISTS (SELECT 1 FROM episodes e WHERE e.subject_id = subjects.id AND e.erased_by IS NULL)
  AND EXISTS (SELECT 1 FROM episodes e JOIN erasures r ON r.id = e.erased_by
              WHERE e.subject_id = subjects.id AND r.scope <> 'episode');
"#,
];
