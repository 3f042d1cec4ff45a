//! A stand-in embeddings (`/v1/embeddings`) and rerank (`/rerank`) provider on a loopback port,
//! whose behaviour a test switches to exercise every fallback.

use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{web, App, HttpResponse, HttpServer};
use serde_json::{json, Value};

/// How the stand-in answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    /// Correct answers.
    Normal,
    /// 500 on embeddings.
    Status500,
    /// Embeddings answer after a second.
    Slow,
    /// Embeddings answer 200 with a broken body.
    BadJson,
    /// Embeddings of 17 dimensions instead of 16.
    WrongDimension,
    /// Embeddings fine, rerank answers 500.
    RerankStatus500,
}

/// The running stand-in.
pub struct StandIn {
    /// `http://127.0.0.1:PORT`
    pub url: String,
    behaviour: Arc<Mutex<Behaviour>>,
    calls: Arc<AtomicUsize>,
}

/// Words that mean the same thing share a dimension, so vectors find pages by meaning.
const CONCEPTS: &[&[&str]] = &[
    &["car", "cars", "automobile", "vehicle", "parking", "park"],
    &["webhook", "webhooks", "hook", "callback"],
    &["key", "keys", "token", "credential"],
    &["garage"],
    &["bicycle", "shed", "cycling"],
];
const DIMENSION: usize = 16;

fn embed(text: &str, dimension: usize) -> Vec<f32> {
    let mut v = vec![0.0f32; dimension];
    for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() > 2).map(str::to_lowercase) {
        let slot = CONCEPTS.iter().position(|c| c.contains(&word.as_str())).unwrap_or_else(|| {
            // Other words spread thinly over the remaining dimensions.
            CONCEPTS.len() + word.bytes().map(usize::from).sum::<usize>() % (DIMENSION - CONCEPTS.len())
        });
        v[slot] += if slot < CONCEPTS.len() { 1.0 } else { 0.1 };
    }
    v
}

async fn embeddings(
    state: web::Data<Arc<Mutex<Behaviour>>>,
    calls: web::Data<Arc<AtomicUsize>>,
    body: web::Json<Value>,
) -> HttpResponse {
    calls.fetch_add(1, Ordering::SeqCst);
    let behaviour = *state.lock().expect("lock");
    let inputs: Vec<String> = match &body["input"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a.iter().map(|v| v.as_str().unwrap_or_default().to_owned()).collect(),
        _ => return HttpResponse::BadRequest().finish(),
    };
    let dimension = if behaviour == Behaviour::WrongDimension { DIMENSION + 1 } else { DIMENSION };
    match behaviour {
        Behaviour::Status500 => return HttpResponse::InternalServerError().body("boom"),
        Behaviour::BadJson => return HttpResponse::Ok().content_type("application/json").body("{\"data\": [oops"),
        Behaviour::Slow => tokio::time::sleep(Duration::from_secs(1)).await,
        _ => {}
    }
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, t)| json!({"object": "embedding", "index": i, "embedding": embed(t, dimension)}))
        .collect();
    HttpResponse::Ok().json(json!({"object": "list", "data": data, "model": body["model"]}))
}

/// Documents mentioning "webhook" first, the rest in the order sent.
async fn rerank(
    state: web::Data<Arc<Mutex<Behaviour>>>,
    calls: web::Data<Arc<AtomicUsize>>,
    body: web::Json<Value>,
) -> HttpResponse {
    calls.fetch_add(1, Ordering::SeqCst);
    if *state.lock().expect("lock") == Behaviour::RerankStatus500 {
        return HttpResponse::InternalServerError().finish();
    }
    let docs = body["documents"].as_array().cloned().unwrap_or_default();
    let mut results: Vec<(usize, f64)> = docs
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let webhook = d.as_str().unwrap_or_default().to_lowercase().contains("webhook");
            (i, if webhook { 0.99 } else { 0.5 - i as f64 * 0.01 })
        })
        .collect();
    results.sort_by(|a, b| b.1.total_cmp(&a.1));
    let results: Vec<Value> = results.iter().map(|(i, s)| json!({"index": i, "relevance_score": s})).collect();
    HttpResponse::Ok().json(json!({ "results": results }))
}

impl StandIn {
    /// Starts it on a free loopback port, answering correctly.
    pub async fn start() -> StandIn {
        let behaviour = Arc::new(Mutex::new(Behaviour::Normal));
        let data = web::Data::new(behaviour.clone());
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = web::Data::new(calls.clone());
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .app_data(counted.clone())
                .route("/v1/embeddings", web::post().to(embeddings))
                .route("/rerank", web::post().to(rerank))
        })
        .workers(1)
        .listen(listener)
        .expect("listen")
        .run();
        tokio::spawn(server);
        StandIn { url, behaviour, calls }
    }

    /// Switches how it answers from now on.
    pub fn set(&self, behaviour: Behaviour) {
        *self.behaviour.lock().expect("lock") = behaviour;
    }

    /// How many embeddings and rerank requests it has answered.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    /// A loopback address where nothing listens.
    pub fn closed_port() -> String {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").to_string()
    }
}
