//! Longer than 400 lines because it is one self-contained load generator (server set-up, clients,
//! receiver, CPU and statement accounting) that a reader follows from top to bottom.
//!
//! Sending benchmark (run by `scripts/bench-messages`, release build): `POST /v1/messages` from
//! many concurrent clients against one `wms serve`, with a webhook destination subscribed to
//! `message.created` on a local receiver that answers 204.
//!
//! One run: a fresh database migrated by the binary under test, a workspace, an API key, a
//! WhatsApp channel (no credentials: the messages stay queued, as in the measurement) and
//! the destination; a warm-up; then MESSAGES sends from CLIENTS clients, to one new recipient
//! (`one`) or to a new recipient per message (`many`). Prints one `RESULT` line: accepted msg/s,
//! accept p50/p99, time from the last accept to the last delivery, and CPU per message of
//! PostgreSQL (every process of the cluster, from /proc) and of the wms process.
//!
//! Usage: bench_messages WMS_BINARY one|many [MESSAGES] [CLIENTS]
//! Environment: BENCH_ADMIN_URL (a superuser URL of the cluster, default
//! postgres://postgres@127.0.0.1:5432/postgres), BENCH_PGDATA (the cluster's data directory, for
//! its CPU; without it the PostgreSQL CPU is not measured), BENCH_STATEMENTS (a file: when set,
//! pg_stat_statements is reset before the load and its top statements written there after).
//! Other `WMS__*` variables are passed to the server.

use std::collections::HashSet;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use diesel::sql_types::{BigInt, Double, Text};
use diesel::QueryableByName;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde_json::{json, Value};

/// Deliveries of measured messages (distinct webhook-id), and when the last one arrived.
#[derive(Default)]
struct Receiver {
    seen: Mutex<HashSet<String>>,
    measured: AtomicUsize,
    last: Mutex<Option<Instant>>,
}

async fn receive(req: HttpRequest, body: web::Bytes, r: web::Data<Receiver>) -> HttpResponse {
    let now = Instant::now();
    let id = req.headers().get("webhook-id").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    let measured = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|v| v["data"]["content"].as_str().map(|c| c.starts_with("bench ")))
        .unwrap_or(false);
    if measured && r.seen.lock().map(|mut s| s.insert(id)).unwrap_or(false) {
        r.measured.fetch_add(1, Ordering::SeqCst);
        if let Ok(mut l) = r.last.lock() {
            *l = Some(now);
        }
    }
    HttpResponse::NoContent().finish()
}

/// utime + stime (+ reaped children's) of a process, in clock ticks.
fn ticks(pid: u32, children: bool) -> u64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return 0 };
    // Fields after the command name, which is in parentheses and may contain spaces.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<u64> = rest.split_whitespace().map(|x| x.parse().unwrap_or(0)).collect();
    // rest[0] is field 3 (state): utime is field 14, stime 15, cutime 16, cstime 17.
    let own = f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0);
    if children {
        own + f.get(13).copied().unwrap_or(0) + f.get(14).copied().unwrap_or(0)
    } else {
        own
    }
}

/// CPU of a whole PostgreSQL cluster: the postmaster with its reaped children, plus every live
/// child (backends, WAL writer, checkpointer, ...), in clock ticks.
fn cluster_ticks(pgdata: &str) -> Option<u64> {
    let pid: u32 =
        std::fs::read_to_string(format!("{pgdata}/postmaster.pid")).ok()?.lines().next()?.trim().parse().ok()?;
    let mut total = ticks(pid, true);
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(child) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).unwrap_or_default();
        let ppid =
            stat.rsplit_once(')').and_then(|(_, r)| r.split_whitespace().nth(1)).and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(pid) {
            total += ticks(child, false);
        }
    }
    Some(total)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

#[derive(QueryableByName)]
struct Commits {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

#[derive(QueryableByName)]
struct Statement {
    #[diesel(sql_type = BigInt)]
    calls: i64,
    #[diesel(sql_type = Double)]
    total_ms: f64,
    #[diesel(sql_type = BigInt)]
    rows: i64,
    #[diesel(sql_type = Text)]
    query: String,
}

async fn commits(conn: &mut AsyncPgConnection, db: &str) -> i64 {
    diesel::sql_query("SELECT (xact_commit + xact_rollback)::bigint AS n FROM pg_stat_database WHERE datname = $1")
        .bind::<Text, _>(db)
        .get_result::<Commits>(conn)
        .await
        .map(|c| c.n)
        .unwrap_or(0)
}

fn wms(bin: &str, db_url: &str, args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new(bin).args(args).env("DATABASE_URL", db_url).stderr(Stdio::inherit()).output()?;
    anyhow::ensure!(out.status.success(), "{bin} {args:?} failed");
    Ok(String::from_utf8(out.stdout)?)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let bin = args.get(1).cloned().unwrap_or_else(|| "target/release/wms".into());
    let mode = args.get(2).cloned().unwrap_or_else(|| "one".into());
    let total: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(2000);
    let clients: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(64);
    anyhow::ensure!(mode == "one" || mode == "many", "mode is one or many");
    let admin_url =
        std::env::var("BENCH_ADMIN_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into());
    let pgdata = std::env::var("BENCH_PGDATA").ok();
    let statements = std::env::var("BENCH_STATEMENTS").ok();

    let db_name = "wms_bench_messages";
    let db_url = format!("{}/{db_name}", admin_url.rsplit_once('/').map_or(admin_url.as_str(), |(base, _)| base));
    let mut admin = AsyncPgConnection::establish(&admin_url).await?;
    diesel::sql_query(format!("DROP DATABASE IF EXISTS {db_name} WITH (FORCE)")).execute(&mut admin).await?;
    diesel::sql_query(format!("CREATE DATABASE {db_name}")).execute(&mut admin).await?;
    wms(&bin, &db_url, &["migrate"])?;
    let created: Value = serde_json::from_str(&wms(
        &bin,
        &db_url,
        &[
            "workspace",
            "create",
            "--name",
            "Bench",
            "--plan",
            "advanced",
            "--admin-email",
            "bench@example.com",
            "--admin-password",
            "bench password 12345",
            "--json",
        ],
    )?)?;
    let ws = created["workspace_id"].as_i64().unwrap_or(0);

    let receiver = web::Data::new(Receiver::default());
    let data = receiver.clone();
    let hooks = HttpServer::new(move || App::new().app_data(data.clone()).default_service(web::to(receive)))
        .workers(1)
        .bind("127.0.0.1:0")?;
    let hook_port = hooks.addrs()[0].port();
    tokio::spawn(hooks.run());

    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let mut server: Child = Command::new(&bin)
        .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
        .env("DATABASE_URL", &db_url)
        .env("WMS__SECRETS__ENCRYPTION_KEY", "YmVuY2gtbWVzc2FnZXMta2V5LTMyLWJ5dGVzLWxvbmc=")
        .env("WMS__WEBHOOKS__ALLOWED_SUBNETS", "127.0.0.0/8")
        .env("WMS__RATE_LIMIT__REQUESTS_PER_HOUR", "2000000000")
        .env("WMS__LOG__LEVEL", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()?;
    let base = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::builder().pool_max_idle_per_host(clients).build()?;
    let result =
        run(&http, &base, ws, hook_port, &mode, total, clients, &receiver, server.id(), &pgdata, &db_url).await;
    let _ = Command::new("kill").args(["-TERM", &server.id().to_string()]).status();
    let _ = server.wait();
    let report = result?;
    if let Some(path) = statements {
        let mut conn = AsyncPgConnection::establish(&db_url).await?;
        let top: Vec<Statement> = diesel::sql_query(
            "SELECT calls, total_exec_time AS total_ms, rows, regexp_replace(query, '\\s+', ' ', 'g') AS query
             FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
             ORDER BY total_exec_time DESC LIMIT 40",
        )
        .load(&mut conn)
        .await?;
        let mut out = format!("# {mode}, {total} messages, {bin}\n| calls | per message | total ms | ms per message | rows | statement |\n|---|---|---|---|---|---|\n");
        for s in top {
            out.push_str(&format!(
                "| {} | {:.2} | {:.0} | {:.3} | {} | `{}` |\n",
                s.calls,
                s.calls as f64 / total as f64,
                s.total_ms,
                s.total_ms / total as f64,
                s.rows,
                s.query.chars().take(160).collect::<String>().replace('|', "\\|")
            ));
        }
        std::fs::write(path, out)?;
    }
    println!("{report}");
    diesel::sql_query(format!("DROP DATABASE IF EXISTS {db_name} WITH (FORCE)")).execute(&mut admin).await?;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
async fn run(
    http: &reqwest::Client,
    base: &str,
    ws: i64,
    hook_port: u16,
    mode: &str,
    total: usize,
    clients: usize,
    receiver: &web::Data<Receiver>,
    server_pid: u32,
    pgdata: &Option<String>,
    db_url: &str,
) -> anyhow::Result<String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !http.get(format!("{base}/healthz")).send().await.is_ok_and(|r| r.status().is_success()) {
        anyhow::ensure!(Instant::now() < deadline, "wms serve did not start");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let login: Value = http
        .post(format!("{base}/v1/auth/login"))
        .json(&json!({"email": "bench@example.com", "password": "bench password 12345"}))
        .send()
        .await?
        .json()
        .await?;
    let token = login["token"].as_str().unwrap_or_default().to_owned();
    let key: Value = http
        .post(format!("{base}/api/workspaces/{ws}/api-keys"))
        .bearer_auth(&token)
        .json(&json!({"name": "bench"}))
        .send()
        .await?
        .json()
        .await?;
    let key = key["key"].as_str().unwrap_or_default().to_owned();
    let channel: Value = http
        .post(format!("{base}/v1/channels"))
        .bearer_auth(&key)
        .json(&json!({"channel_type": "whatsapp", "display_name": "Bench", "identifier": "+14155550100"}))
        .send()
        .await?
        .json()
        .await?;
    let channel = channel["id"].as_i64().unwrap_or(0);
    // Every recipient is new, so free text would meet a closed service window (422): the bench
    // sends an approved template, put in the channel's catalogue as a sync from Meta would. A
    // binary from before the catalogue has no table for it and sends templates unchecked.
    {
        let mut conn = AsyncPgConnection::establish(db_url).await?;
        let _ = diesel::sql_query(
            "INSERT INTO whatsapp_templates (workspace_id, channel_id, name, language, category, status, parameters, body)
             SELECT workspace_id, id, 'bench_hello', 'en_US', 'UTILITY', 'approved', 0, 'Hello' FROM channels WHERE id = $1",
        )
        .bind::<BigInt, _>(channel)
        .execute(&mut conn)
        .await;
    }
    let hook = http
        .post(format!("{base}/v1/webhooks"))
        .bearer_auth(&key)
        .json(&json!({"url": format!("http://127.0.0.1:{hook_port}/hook"), "events": ["message.created"]}))
        .send()
        .await?;
    anyhow::ensure!(hook.status() == 201, "webhook destination: {}", hook.text().await?);

    // Warm-up: connections of every pool, prepared statements, the destination's first deliveries.
    let warm = send_all(http, base, &key, clients, 4 * clients, move |i| {
        json!({"channel_id": channel, "content": format!("warm {i}"), "to": format!("+1415555{:04}", 9000 + i % 16),
               "template": {"name": "bench_hello", "language": "en_US"}})
    })
    .await;
    // Not fatal: an older binary, compared against, loses some first sends to the contact race.
    if warm.errors > 0 {
        eprintln!("warm-up: {} of {} sends failed ({:?})", warm.errors, 4 * clients, warm.statuses);
    }
    tokio::time::sleep(Duration::from_secs(2)).await;

    let mut conn = AsyncPgConnection::establish(db_url).await?;
    let db_name = db_url.rsplit('/').next().unwrap_or_default().to_owned();
    if pgdata.is_some() {
        // Absent without the extension; then there is just no statement breakdown.
        let _ = diesel::sql_query("SELECT pg_stat_statements_reset()").execute(&mut conn).await;
    }
    let commits_before = commits(&mut conn, &db_name).await;
    let pg_before = pgdata.as_deref().and_then(cluster_ticks);
    let wms_before = ticks(server_pid, false);

    // The recipient of `one` is new too: the first sends race to create its contact and thread.
    let one = mode == "one";
    let load = send_all(http, base, &key, clients, total, move |i| {
        let to = if one { "+5511987650000".to_owned() } else { format!("+55119{:08}", i) };
        json!({"channel_id": channel, "content": format!("bench {i}"), "to": to,
               "template": {"name": "bench_hello", "language": "en_US"}})
    })
    .await;
    let accepted = total - load.errors;
    let deadline = Instant::now() + Duration::from_secs(120);
    while AtomicUsize::load(&receiver.measured, Ordering::SeqCst) < accepted && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let delivered = AtomicUsize::load(&receiver.measured, Ordering::SeqCst);
    let last_delivery = receiver.last.lock().ok().and_then(|l| *l);
    let pg_after = pgdata.as_deref().and_then(cluster_ticks);
    let wms_after = ticks(server_pid, false);
    let commits_after = commits(&mut conn, &db_name).await;

    // /proc/<pid>/stat counts in USER_HZ, which Linux fixes at 100 for user space.
    let hz = 100.0;
    let per_msg_ms = |t: u64| t as f64 * 1000.0 / hz / accepted.max(1) as f64;
    let pg_cpu = match (pg_before, pg_after) {
        (Some(b), Some(a)) => format!("{:.2}", per_msg_ms(a.saturating_sub(b))),
        _ => "n/a".into(),
    };
    let secs = load.last_accept.map_or(f64::NAN, |l| (l - load.start).as_secs_f64());
    let after = match (last_delivery, load.last_accept) {
        (Some(d), Some(a)) if delivered >= accepted => format!("{:.2} s", d.saturating_duration_since(a).as_secs_f64()),
        _ => format!("not all: {delivered} of {accepted} after 120 s"),
    };
    let mut lat = load.latencies_ms;
    lat.sort_by(f64::total_cmp);
    Ok(format!(
        "RESULT mode={mode} messages={total} clients={clients} accepted={accepted} errors={} statuses={:?} | \
         accepted msg/s {:.0} | accept p50 {:.1} ms p99 {:.1} ms | last delivery after last accept {after} | \
         PostgreSQL CPU {pg_cpu} ms/msg | wms CPU {:.2} ms/msg | transactions/msg {:.2}",
        load.errors,
        load.statuses,
        accepted as f64 / secs,
        percentile(&lat, 0.5),
        percentile(&lat, 0.99),
        per_msg_ms(wms_after.saturating_sub(wms_before)),
        (commits_after - commits_before) as f64 / accepted.max(1) as f64,
    ))
}

struct Load {
    start: Instant,
    last_accept: Option<Instant>,
    latencies_ms: Vec<f64>,
    errors: usize,
    statuses: Vec<u16>,
}

/// `total` sends from `clients` concurrent clients, each taking the next message number.
async fn send_all(
    http: &reqwest::Client,
    base: &str,
    key: &str,
    clients: usize,
    total: usize,
    body: impl Fn(usize) -> Value + Send + Sync + 'static,
) -> Load {
    let next = Arc::new(AtomicUsize::new(0));
    let body = Arc::new(body);
    let start = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            let (http, url, key, next, body) =
                (http.clone(), format!("{base}/v1/messages"), key.to_owned(), next.clone(), body.clone());
            tokio::spawn(async move {
                let mut out: Vec<(f64, Option<Instant>, u16)> = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= total {
                        return out;
                    }
                    let sent = Instant::now();
                    let status = match http.post(&url).bearer_auth(&key).json(&body(i)).send().await {
                        Ok(r) => {
                            let s = r.status().as_u16();
                            let _ = r.bytes().await;
                            s
                        }
                        Err(_) => 0,
                    };
                    let done = Instant::now();
                    let ok = status == 201;
                    out.push(((done - sent).as_secs_f64() * 1000.0, ok.then_some(done), status));
                }
            })
        })
        .collect();
    let mut load = Load { start, last_accept: None, latencies_ms: Vec::new(), errors: 0, statuses: Vec::new() };
    for t in tasks {
        for (ms, accepted, status) in t.await.unwrap_or_default() {
            load.latencies_ms.push(ms);
            match accepted {
                Some(at) => load.last_accept = Some(load.last_accept.map_or(at, |l: Instant| l.max(at))),
                None => {
                    load.errors += 1;
                    if !load.statuses.contains(&status) {
                        load.statuses.push(status);
                    }
                }
            }
        }
    }
    load
}
