//! A client (a connection or a transaction) with its connection's prepared
//! statements: each SQL text is parsed by the server once per connection,
//! then only bound and executed (one round trip a statement, not two).

use crate::Result;
use postgres::types::ToSql;
use postgres::{GenericClient, Row, Statement};
use std::collections::HashMap;

/// The statements a connection has prepared, by SQL text. Prepared
/// statements are the session's, not a transaction's: they outlive the
/// transaction they were made in, committed or not.
pub(crate) type Prepared = HashMap<String, Statement>;

pub(crate) struct Db<'a, C> {
    c: &'a mut C,
    stmts: &'a mut Prepared,
}

type Params<'p> = &'p [&'p (dyn ToSql + Sync)];

impl<'a, C: GenericClient> Db<'a, C> {
    pub(crate) fn new(c: &'a mut C, stmts: &'a mut Prepared) -> Db<'a, C> {
        Db { c, stmts }
    }

    fn stmt(&mut self, sql: &str) -> Result<Statement> {
        if let Some(s) = self.stmts.get(sql) {
            return Ok(s.clone());
        }
        let s = self.c.prepare(sql)?;
        self.stmts.insert(sql.to_string(), s.clone());
        Ok(s)
    }

    pub(crate) fn query(&mut self, sql: &str, params: Params<'_>) -> Result<Vec<Row>> {
        let s = self.stmt(sql)?;
        Ok(self.c.query(&s, params)?)
    }

    pub(crate) fn query_one(&mut self, sql: &str, params: Params<'_>) -> Result<Row> {
        let s = self.stmt(sql)?;
        Ok(self.c.query_one(&s, params)?)
    }

    pub(crate) fn query_opt(&mut self, sql: &str, params: Params<'_>) -> Result<Option<Row>> {
        let s = self.stmt(sql)?;
        Ok(self.c.query_opt(&s, params)?)
    }

    pub(crate) fn execute(&mut self, sql: &str, params: Params<'_>) -> Result<u64> {
        let s = self.stmt(sql)?;
        Ok(self.c.execute(&s, params)?)
    }
}
