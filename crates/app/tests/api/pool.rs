//! The database pools: a thread that adopted a pool of its own (an HTTP worker) borrows from it;
//! every other thread from the shared pool.

use std::time::Duration;

use adapters_postgres::pool::PoolError;
use adapters_postgres::Db;
use test_db::TestDatabase;

/// Borrows a connection on a new thread with a runtime of its own, as an HTTP worker does,
/// after adopting a pool of `adopt` connections when given.
fn borrow_on_another_thread(db: &Db, adopt: Option<usize>) -> Result<(), PoolError> {
    let db = db.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        rt.block_on(async move {
            if let Some(size) = adopt {
                db.adopt_thread(size)?;
            }
            let conn = db.conn().await?;
            drop(conn);
            Ok(())
        })
    })
    .join()
    .expect("thread")
}

#[tokio::test]
async fn a_thread_that_adopted_a_pool_does_not_compete_for_the_shared_one() {
    let database = TestDatabase::new().await.expect("test database");
    let db = Db::new(&database.url, 1, Duration::from_millis(300)).expect("pool");
    let held = db.conn().await.expect("the shared pool's only connection");

    let shared = borrow_on_another_thread(&db, None);
    assert!(matches!(shared, Err(PoolError::Unavailable(_))), "the shared pool is exhausted: {shared:?}");
    borrow_on_another_thread(&db, Some(1)).expect("a worker's own pool has room");

    drop(held);
    drop(db.conn().await.expect("the shared pool again"));
    assert!(db.ping().await);
}
