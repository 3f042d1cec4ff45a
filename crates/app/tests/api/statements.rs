//! Counts the statements a server sends to PostgreSQL: a loopback proxy in front of the test
//! database that reads the client side of the wire protocol. Exact and immediate, unlike the
//! statistics views (flushed late, and `pg_stat_statements` may not be loaded).

#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A running proxy and its count.
pub struct StatementCounter {
    /// The database URL that goes through the proxy.
    pub url: String,
    count: Arc<AtomicUsize>,
}

impl StatementCounter {
    /// A proxy for `database_url` (`postgres://user@host:port/db`).
    pub async fn start(database_url: &str) -> StatementCounter {
        let (scheme_user, rest) = database_url.split_once('@').expect("user@host in the URL");
        let (upstream, db) = rest.split_once('/').expect("a database in the URL");
        let upstream = upstream.to_owned();
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("{scheme_user}@{}/{db}", listener.local_addr().expect("addr"));
        let count = Arc::new(AtomicUsize::new(0));
        let counted = count.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = TcpStream::connect(&upstream).await else { continue };
                tokio::spawn(relay(client, server, counted.clone()));
            }
        });
        StatementCounter { url, count }
    }

    /// Statements sent so far: simple queries (`Q`) and executions of prepared ones (`E`).
    pub fn statements(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }
}

async fn relay(client: TcpStream, server: TcpStream, count: Arc<AtomicUsize>) {
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    tokio::spawn(async move {
        let _ = tokio::io::copy(&mut server_read, &mut client_write).await;
    });
    // The first messages (startup, or an SSL/GSS request before it) have no type byte.
    let mut typed = false;
    loop {
        let mut kind = [0u8; 1];
        if typed && client_read.read_exact(&mut kind).await.is_err() {
            return;
        }
        let mut len = [0u8; 4];
        if client_read.read_exact(&mut len).await.is_err() {
            return;
        }
        let n = usize::try_from(u32::from_be_bytes(len)).unwrap_or(0).saturating_sub(4);
        let mut payload = vec![0u8; n];
        if client_read.read_exact(&mut payload).await.is_err() {
            return;
        }
        if typed {
            if kind[0] == b'Q' || kind[0] == b'E' {
                count.fetch_add(1, Ordering::SeqCst);
            }
            if server_write.write_all(&kind).await.is_err() {
                return;
            }
        } else {
            // Protocol 3.0 is the startup message proper; anything else (80877103 and
            // friends) is a request answered before it.
            typed = payload.get(..4) == Some(&[0, 3, 0, 0]);
        }
        if server_write.write_all(&len).await.is_err() || server_write.write_all(&payload).await.is_err() {
            return;
        }
    }
}
