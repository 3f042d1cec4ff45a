//! A real HTTP receiver for webhook tests: an HTTP/1.1 server on a loopback port that records
//! every request and answers with programmable statuses, delays and headers.

#![allow(dead_code)]

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One request as received.
#[derive(Debug, Clone)]
pub struct Received {
    /// Request path.
    pub path: String,
    /// Headers, names lowercase.
    pub headers: HashMap<String, String>,
    /// The raw body.
    pub body: Vec<u8>,
    /// When it arrived.
    pub at: Instant,
    /// The status it was answered with.
    pub status: u16,
}

impl Received {
    /// A header value.
    pub fn header(&self, name: &str) -> &str {
        self.headers.get(name).map(String::as_str).unwrap_or("")
    }

    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("json body")
    }
}

/// An answer.
#[derive(Debug, Clone)]
pub struct Answer {
    /// HTTP status.
    pub status: u16,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// Body.
    pub body: String,
    /// Wait before answering.
    pub delay: Duration,
}

impl Answer {
    /// A bare status.
    pub fn status(status: u16) -> Self {
        Self { status, headers: Vec::new(), body: String::new(), delay: Duration::ZERO }
    }
}

#[derive(Default)]
struct State {
    received: Vec<Received>,
    queue: VecDeque<Answer>,
    default: Option<Answer>,
    /// Beyond this many requests at once, answer with this instead (an overloaded receiver).
    over: Option<(usize, Answer)>,
}

/// The receiver; dropped, it stops accepting.
#[derive(Clone)]
pub struct Receiver {
    /// `http://127.0.0.1:PORT`
    pub base: String,
    state: Arc<Mutex<State>>,
    in_flight: Arc<AtomicUsize>,
    max_in_flight: Arc<AtomicUsize>,
}

impl Receiver {
    /// Starts a receiver answering 204 by default.
    pub async fn start() -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind receiver");
        let base = format!("http://127.0.0.1:{}", listener.local_addr().expect("addr").port());
        let r = Receiver {
            base,
            state: Arc::new(Mutex::new(State { default: Some(Answer::status(204)), ..State::default() })),
            in_flight: Arc::new(AtomicUsize::new(0)),
            max_in_flight: Arc::new(AtomicUsize::new(0)),
        };
        let r2 = r.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(r2.clone().serve(stream));
            }
        });
        r
    }

    /// The URL of `path` on the receiver.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Answers the next requests with these, in order, then with the default.
    pub fn answer_next(&self, answers: impl IntoIterator<Item = Answer>) {
        self.state.lock().expect("lock").queue.extend(answers);
    }

    /// The answer after the queued ones.
    pub fn answer_always(&self, answer: Answer) {
        self.state.lock().expect("lock").default = Some(answer);
    }

    /// Beyond `n` requests being answered at once, answers `refusal` at once (a receiver that
    /// takes `n` at a time).
    pub fn limit_concurrency(&self, n: usize, refusal: Answer) {
        self.state.lock().expect("lock").over = Some((n, refusal));
    }

    /// Every request so far.
    pub fn received(&self) -> Vec<Received> {
        self.state.lock().expect("lock").received.clone()
    }

    /// The most requests that were being answered at the same time.
    pub fn max_concurrent(&self) -> usize {
        self.max_in_flight.load(Ordering::SeqCst)
    }

    /// Forgets the peak so far: [`Receiver::max_concurrent`] then counts from the requests being
    /// answered now.
    pub fn reset_max_concurrent(&self) {
        self.max_in_flight.store(self.in_flight.load(Ordering::SeqCst), Ordering::SeqCst);
    }

    /// Waits until at least `n` requests arrived (or panics after `patience`).
    pub async fn wait_for(&self, n: usize, patience: Duration) -> Vec<Received> {
        let deadline = Instant::now() + patience;
        loop {
            let got = self.received();
            if got.len() >= n {
                return got;
            }
            assert!(Instant::now() < deadline, "expected {n} requests, got {} after {patience:?}", got.len());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn serve(self, mut stream: TcpStream) {
        let mut buf: Vec<u8> = Vec::new();
        loop {
            // Headers.
            let header_end = loop {
                if let Some(i) = find(&buf, b"\r\n\r\n") {
                    break i;
                }
                let mut chunk = [0u8; 8192];
                match stream.read(&mut chunk).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                }
            };
            let head = String::from_utf8_lossy(&buf[..header_end]).into_owned();
            let mut lines = head.split("\r\n");
            let path = lines.next().and_then(|l| l.split(' ').nth(1)).unwrap_or("/").to_owned();
            let headers: HashMap<String, String> = lines
                .filter_map(|l| l.split_once(':'))
                .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
                .collect();
            let len: usize = headers.get("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
            let start = header_end + 4;
            while buf.len() < start + len {
                let mut chunk = [0u8; 8192];
                match stream.read(&mut chunk).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                }
            }
            let body = buf[start..start + len].to_vec();
            buf.drain(..start + len);

            let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            self.max_in_flight.fetch_max(now, Ordering::SeqCst);
            let answer = {
                let mut s = self.state.lock().expect("lock");
                let answer = match &s.over {
                    Some((limit, refusal)) if now > *limit => refusal.clone(),
                    _ => s.queue.pop_front().or_else(|| s.default.clone()).unwrap_or_else(|| Answer::status(204)),
                };
                s.received.push(Received { path, headers, body, at: Instant::now(), status: answer.status });
                answer
            };
            if !answer.delay.is_zero() {
                tokio::time::sleep(answer.delay).await;
            }
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
            let mut out = format!("HTTP/1.1 {} X\r\ncontent-length: {}\r\n", answer.status, answer.body.len());
            for (k, v) in &answer.headers {
                out.push_str(&format!("{k}: {v}\r\n"));
            }
            out.push_str("\r\n");
            out.push_str(&answer.body);
            if stream.write_all(out.as_bytes()).await.is_err() {
                return;
            }
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}
