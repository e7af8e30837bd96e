//! A SQLite store copied into an empty PostgreSQL database: every row with
//! its id, every hash as stored, in one transaction (a failure leaves the
//! target empty). The full-text postings are rebuilt from the episodes and
//! passages (the SQLite index is FTS5's own); the sequences are moved past
//! the copied ids. Afterwards every subject's chain is verified on the
//! target and its head compared with the source's.

use super::fts;
use crate::prelude::*;
use crate::{Error, Result, verify};
use postgres::Transaction;
use postgres::types::ToSql;
use rusqlite::types::ValueRef;
use std::collections::BTreeMap;
use std::path::Path;
use tm_model::episodes::ChainState;
use tm_model::recall::{episode_index_text, index_text};

/// How a SQLite column becomes a PostgreSQL one.
#[derive(Clone, Copy)]
enum Col {
    /// INTEGER → BIGINT.
    Int,
    /// REAL → DOUBLE PRECISION.
    Real,
    /// TEXT → TEXT.
    Text,
    /// TEXT → BYTEA (free text, which may hold NUL).
    Free,
    /// BLOB → BYTEA.
    Blob,
    /// INTEGER 0/1 → BOOLEAN.
    Bool,
}

use Col::*;

/// The tables in an order that satisfies every foreign key, with their
/// columns as the PostgreSQL schema names them.
const TABLES: &[(&str, &[(&str, Col)])] = &[
    (
        "tenants",
        &[("id", Int), ("name", Text), ("created_at", Int)],
    ),
    (
        "api_keys",
        &[
            ("id", Int),
            ("tenant_id", Int),
            ("prefix", Text),
            ("sha256", Text),
            ("admin", Bool),
            ("created_at", Int),
            ("revoked_at", Int),
        ],
    ),
    (
        "learners",
        &[
            ("id", Int),
            ("slug", Text),
            ("created_at", Int),
            ("tenant_id", Int),
        ],
    ),
    (
        "subjects",
        &[
            ("id", Int),
            ("learner_id", Int),
            ("slug", Text),
            ("key", Text),
            ("title", Free),
            ("language", Text),
            ("timezone", Text),
            ("created_at", Int),
            ("retired_by", Int),
        ],
    ),
    ("files", &[("id", Int), ("subject_id", Int), ("name", Text)]),
    (
        "file_versions",
        &[
            ("id", Int),
            ("file_id", Int),
            ("version", Int),
            ("sha256", Text),
            ("bytes", Blob),
            ("format", Text),
            ("added_at", Int),
            ("replaced_at", Int),
            ("replaced_by", Int),
            ("removed_at", Int),
        ],
    ),
    (
        "file_pages",
        &[("version_id", Int), ("page", Int), ("text", Text)],
    ),
    (
        "erasures",
        &[
            ("id", Int),
            ("at", Int),
            ("scope", Text),
            ("target", Text),
            ("reference", Text),
            ("reason", Text),
            ("subjects", Int),
            ("episodes", Int),
        ],
    ),
    (
        "episodes",
        &[
            ("id", Int),
            ("subject_id", Int),
            ("seq", Int),
            ("kind", Text),
            ("at", Int),
            ("salience", Real),
            ("summary", Free),
            ("text", Free),
            ("concepts", Text),
            ("evidence", Text),
            ("data", Text),
            ("external_id", Free),
            ("prev_hash", Blob),
            ("hash", Blob),
            ("import_key", Blob),
            ("enc", Int),
            ("salt", Blob),
            ("digest", Blob),
            ("erased_by", Int),
        ],
    ),
    (
        "annotations",
        &[
            ("id", Int),
            ("episode_id", Int),
            ("kind", Text),
            ("at", Int),
            ("data", Text),
        ],
    ),
    (
        "imports",
        &[
            ("id", Int),
            ("subject_id", Int),
            ("sha256", Text),
            ("source", Text),
            ("at", Int),
            ("events", Int),
            ("appended", Int),
        ],
    ),
    (
        "episode_concepts",
        &[("subject_id", Int), ("concept", Text), ("episode_id", Int)],
    ),
    (
        "episode_vectors",
        &[
            ("episode_id", Int),
            ("subject_id", Int),
            ("model", Text),
            ("vector", Blob),
        ],
    ),
    (
        "concept_maps",
        &[
            ("id", Int),
            ("subject_id", Int),
            ("at", Int),
            ("reason", Text),
            ("map", Text),
        ],
    ),
    (
        "beliefs",
        &[
            ("id", Int),
            ("subject_id", Int),
            ("about", Text),
            ("concept", Text),
            ("unmapped", Bool),
            ("claim", Text),
            ("confidence", Real),
            ("alpha", Real),
            ("beta", Real),
            ("support", Text),
            ("created_at", Int),
            ("reason", Text),
            ("flagged", Bool),
            ("superseded_by", Int),
        ],
    ),
    (
        "nightly_runs",
        &[
            ("subject_id", Int),
            ("day", Text),
            ("at", Int),
            ("summary", Text),
        ],
    ),
    (
        "citation_checks",
        &[
            ("episode_id", Int),
            ("subject_id", Int),
            ("checked_at", Int),
            ("status", Text),
            ("label", Text),
        ],
    ),
    (
        "working_sets",
        &[("subject_id", Int), ("at", Int), ("data", Text)],
    ),
    (
        "self_models",
        &[("subject_id", Int), ("at", Int), ("data", Text)],
    ),
    (
        "passages",
        &[
            ("id", Int),
            ("subject_id", Int),
            ("version_id", Int),
            ("page", Int),
            ("line", Int),
            ("text", Text),
        ],
    ),
    (
        "passage_vectors",
        &[("passage_id", Int), ("model", Text), ("vector", Blob)],
    ),
];

/// Tables whose `id` is a sequence to move past the copied rows.
const SERIAL: &[&str] = &[
    "tenants",
    "api_keys",
    "learners",
    "subjects",
    "files",
    "file_versions",
    "erasures",
    "episodes",
    "annotations",
    "imports",
    "concept_maps",
    "beliefs",
    "passages",
];

/// What a copy did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Copied {
    /// Rows copied per table.
    pub rows: BTreeMap<String, u64>,
    /// Subjects whose chain verified on the target with the source's head.
    pub subjects_verified: usize,
}

/// One column's values, typed for PostgreSQL.
enum Values {
    Int(Vec<Option<i64>>),
    Real(Vec<Option<f64>>),
    Text(Vec<Option<String>>),
    Bytes(Vec<Option<Vec<u8>>>),
    Bool(Vec<Option<bool>>),
}

impl Values {
    fn new(col: Col) -> Values {
        match col {
            Int => Values::Int(Vec::new()),
            Real => Values::Real(Vec::new()),
            Text => Values::Text(Vec::new()),
            Free | Blob => Values::Bytes(Vec::new()),
            Bool => Values::Bool(Vec::new()),
        }
    }

    fn pg_type(col: Col) -> &'static str {
        match col {
            Int => "bigint[]",
            Real => "double precision[]",
            Text => "text[]",
            Free | Blob => "bytea[]",
            Bool => "boolean[]",
        }
    }

    fn push(&mut self, v: ValueRef<'_>, what: &str) -> Result<()> {
        let bad = || Error::Corrupt(format!("{what}: unexpected {:?}", v.data_type()));
        match (self, v) {
            (Values::Int(c), ValueRef::Null) => c.push(None),
            (Values::Int(c), ValueRef::Integer(i)) => c.push(Some(i)),
            (Values::Real(c), ValueRef::Null) => c.push(None),
            (Values::Real(c), ValueRef::Real(f)) => c.push(Some(f)),
            (Values::Real(c), ValueRef::Integer(i)) => c.push(Some(i as f64)),
            (Values::Text(c), ValueRef::Null) => c.push(None),
            (Values::Text(c), ValueRef::Text(t)) => {
                c.push(Some(String::from_utf8(t.to_vec()).map_err(|_| bad())?))
            }
            (Values::Bytes(c), ValueRef::Null) => c.push(None),
            (Values::Bytes(c), ValueRef::Text(t) | ValueRef::Blob(t)) => c.push(Some(t.to_vec())),
            (Values::Bool(c), ValueRef::Null) => c.push(None),
            (Values::Bool(c), ValueRef::Integer(i)) => c.push(Some(i != 0)),
            _ => return Err(bad()),
        }
        Ok(())
    }

    fn sql(&self) -> &(dyn ToSql + Sync) {
        match self {
            Values::Int(v) => v,
            Values::Real(v) => v,
            Values::Text(v) => v,
            Values::Bytes(v) => v,
            Values::Bool(v) => v,
        }
    }
}

/// Rows read and written per statement (file versions, which hold whole
/// files, a few at a time).
fn batch_rows(table: &str) -> usize {
    if table == "file_versions" { 16 } else { 2000 }
}

/// Copies the SQLite store at `from` into the empty PostgreSQL database at
/// `to` (both migrated first). `progress(table, done, total)` is told each
/// batch.
pub fn copy_sqlite(
    from: &Path,
    to: &str,
    progress: &mut dyn FnMut(&str, u64, u64),
) -> Result<Copied> {
    // Migrated to this build's schema first (as any open does).
    crate::sqlite::SqliteEngine::open(from)?;
    let source = rusqlite::Connection::open_with_flags(
        from,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| Error::Open {
        location: from.display().to_string(),
        message: e.to_string(),
    })?;
    let target_engine = super::PgEngine::open(to)?;
    let target = target_engine.connect_pg()?;
    let heads;
    let mut copied = Copied {
        rows: BTreeMap::new(),
        subjects_verified: 0,
    };
    {
        let mut client = target.raw_client();
        let mut tx = client.transaction()?;
        let held: bool = tx
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM learners) OR EXISTS (SELECT 1 FROM tenants)",
                &[],
            )?
            .get(0);
        if held {
            return Err(Error::Unsupported(format!(
                "the database at {} already holds data: copy into an empty one",
                target_engine.location
            )));
        }
        // One snapshot of the source for the whole copy.
        source.execute_batch("BEGIN")?;
        heads = source_heads(&source)?;
        for (table, cols) in TABLES {
            let n = copy_table(&source, &mut tx, table, cols, progress)?;
            copied.rows.insert(table.to_string(), n);
        }
        rebuild_full_text(&source, &mut tx, progress)?;
        tx.execute(
            "INSERT INTO vector_stats (subject_id, model, writes, max_id)
             SELECT subject_id, model, COUNT(*), MAX(episode_id) FROM episode_vectors GROUP BY subject_id, model",
            &[],
        )?;
        for table in SERIAL {
            tx.execute(
                &format!(
                    "SELECT setval(pg_get_serial_sequence('{table}', 'id'),
                                   COALESCE((SELECT MAX(id) FROM {table}), 0) + 1, false)"
                ),
                &[],
            )?;
        }
        source.execute_batch("COMMIT")?;
        tx.commit()?;
    }
    // Planner statistics for the freshly filled tables (autovacuum would
    // get there, later).
    target.raw_client().batch_execute("ANALYZE")?;
    // Every chain verifies on the target and ends where the source's did.
    let total = heads.len() as u64;
    // By id: a name may be several subjects' (per owner, or retired).
    let copies: std::collections::HashMap<i64, tm_model::subject::Subject> =
        target.subjects()?.into_iter().map(|s| (s.id, s)).collect();
    for (i, (id, key, seq, hash)) in heads.iter().enumerate() {
        progress("verifying", i as u64, total);
        let there = copies
            .get(id)
            .ok_or_else(|| Error::Corrupt(format!("{key}: subject {id} was not copied")))?;
        let report = verify(&target, there, None)?;
        if report.state != ChainState::Intact
            || report.head_seq != *seq
            || report.head_hash != *hash
        {
            return Err(Error::Corrupt(format!(
                "{key}: the copy does not verify to the source's head (seq {seq}, {hash}): {report:?}"
            )));
        }
        copied.subjects_verified += 1;
    }
    progress("verifying", total, total);
    Ok(copied)
}

/// Each subject's id, key and chain head (seq, hex hash; 0 and the genesis
/// hash for an empty chain).
fn source_heads(source: &rusqlite::Connection) -> Result<Vec<(i64, String, u64, String)>> {
    let mut stmt = source.prepare(
        "SELECT s.id, s.key, e.seq, e.hash FROM subjects s
         LEFT JOIN episodes e ON e.subject_id = s.id
              AND e.seq = (SELECT MAX(seq) FROM episodes WHERE subject_id = s.id)
         ORDER BY s.key, s.id",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, Option<i64>>(2)?,
            r.get::<_, Option<Vec<u8>>>(3)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (id, key, seq, hash) = row?;
        let hash = match hash {
            Some(h) => hex::encode(h),
            None => hex::encode(tm_model::episodes::genesis_hash(&key)),
        };
        out.push((id, key, seq.unwrap_or(0) as u64, hash));
    }
    Ok(out)
}

fn copy_table(
    source: &rusqlite::Connection,
    tx: &mut Transaction<'_>,
    table: &str,
    cols: &[(&str, Col)],
    progress: &mut dyn FnMut(&str, u64, u64),
) -> Result<u64> {
    let total: i64 =
        source.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))?;
    let names: Vec<&str> = cols.iter().map(|(n, _)| *n).collect();
    let order = if cols.iter().any(|(n, _)| *n == "id") {
        "id".to_string()
    } else {
        names.join(", ")
    };
    // Episodes gain the two columns PostgreSQL reads out of `data`.
    let episodes = table == "episodes";
    let mut insert_cols = names.clone();
    let mut types: Vec<&str> = cols.iter().map(|(_, c)| Values::pg_type(*c)).collect();
    if episodes {
        insert_cols.extend(["topic", "verdict"]);
        types.extend(["bytea[]", "text[]"]);
    }
    let placeholders: Vec<String> = types
        .iter()
        .enumerate()
        .map(|(i, t)| format!("${}::{t}", i + 1))
        .collect();
    let insert = format!(
        "INSERT INTO {table} ({}) SELECT * FROM unnest({})",
        insert_cols.join(", "),
        placeholders.join(", ")
    );
    let mut stmt = source.prepare(&format!(
        "SELECT {} FROM {table} ORDER BY {order}",
        names.join(", ")
    ))?;
    let mut rows = stmt.query([])?;
    let batch = batch_rows(table);
    let mut done = 0u64;
    progress(table, 0, total as u64);
    loop {
        let mut values: Vec<Values> = cols.iter().map(|(_, c)| Values::new(*c)).collect();
        let mut topics: Vec<Option<Vec<u8>>> = Vec::new();
        let mut verdicts: Vec<Option<String>> = Vec::new();
        let mut n = 0;
        while n < batch {
            let Some(row) = rows.next()? else { break };
            for (i, v) in values.iter_mut().enumerate() {
                v.push(row.get_ref(i)?, &format!("{table}.{}", names[i]))?;
            }
            if episodes {
                let data: String = row.get(10)?;
                let data: serde_json::Value = serde_json::from_str(&data)
                    .map_err(|e| Error::Corrupt(format!("episode data: {e}")))?;
                let field = |k: &str| data.get(k).and_then(|v| v.as_str()).map(str::to_string);
                topics.push(field("topic").map(String::into_bytes));
                verdicts.push(field("verdict"));
            }
            n += 1;
        }
        if n == 0 {
            break;
        }
        let mut args: Vec<&(dyn ToSql + Sync)> = values.iter().map(Values::sql).collect();
        if episodes {
            args.push(&topics);
            args.push(&verdicts);
        }
        tx.execute(&insert, &args)?;
        done += n as u64;
        progress(table, done, total as u64);
    }
    Ok(done)
}

/// The full-text postings of every episode and passage, per subject.
fn rebuild_full_text(
    source: &rusqlite::Connection,
    tx: &mut Transaction<'_>,
    progress: &mut dyn FnMut(&str, u64, u64),
) -> Result<()> {
    let subjects: Vec<i64> = source
        .prepare("SELECT id FROM subjects ORDER BY id")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    for (i, subject_id) in subjects.iter().enumerate() {
        progress("full text", i as u64, subjects.len() as u64);
        let mut docs = Vec::new();
        let mut stmt = source
            .prepare("SELECT id, text, concepts FROM episodes WHERE subject_id = ?1 ORDER BY id")?;
        let mut rows = stmt.query([subject_id])?;
        while let Some(r) = rows.next()? {
            let id: i64 = r.get(0)?;
            let text: String = r.get(1)?;
            let concepts: String = r.get(2)?;
            let concepts: Vec<String> = serde_json::from_str(&concepts)
                .map_err(|e| Error::Corrupt(format!("episode {id}: concepts: {e}")))?;
            docs.push((id, episode_index_text(&text, &concepts)));
        }
        let mut stmts = super::db::Prepared::new();
        let mut db = super::db::Db::new(&mut *tx, &mut stmts);
        fts::index_many(&mut db, fts::EPISODES, *subject_id, &docs)?;
        let docs: Vec<(i64, String)> = source
            .prepare("SELECT id, text FROM passages WHERE subject_id = ?1 ORDER BY id")?
            .query_map([subject_id], |r| {
                Ok((r.get::<_, i64>(0)?, index_text(&r.get::<_, String>(1)?)))
            })?
            .collect::<rusqlite::Result<_>>()?;
        fts::index_many(&mut db, fts::PASSAGES, *subject_id, &docs)?;
    }
    progress("full text", subjects.len() as u64, subjects.len() as u64);
    Ok(())
}
