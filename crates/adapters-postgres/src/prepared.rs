//! Hand-written SQL that PostgreSQL keeps prepared on each connection.
//!
//! `diesel::sql_query` marks its statement as never to be cached, so diesel-async prepares it
//! anew on every call: one round trip to parse and plan, another to run. The statements of a hot
//! path whose text is fixed (or one of a few fixed variants) are wrapped in [`Prepared`]: the
//! connection's statement cache keys them by their text and bind types, so each is parsed once
//! per connection and then runs in one round trip, PostgreSQL reusing its plan. Only for text
//! built from constants: text made from values would fill the cache.
//! (PgBouncer keeps such statements in transaction pooling from 1.21 on, with
//! `max_prepared_statements`, as it does for diesel's own query builder statements.)

use diesel::pg::Pg;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::QueryResult;

/// A statement run as a cached prepared statement ([module docs](self)).
#[derive(Debug, Clone)]
pub struct Prepared<Q>(pub Q);

impl<Q: QueryFragment<Pg>> QueryFragment<Pg> for Prepared<Q> {
    fn walk_ast<'b>(&'b self, pass: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        self.0.walk_ast(pass)
    }

    fn is_safe_to_cache_prepared(&self, _backend: &Pg) -> QueryResult<bool> {
        Ok(true)
    }
}

// No static id: the cache keys the statement by its text and bind types.
impl<Q> QueryId for Prepared<Q> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Q: Query> Query for Prepared<Q> {
    type SqlType = Q::SqlType;
}
