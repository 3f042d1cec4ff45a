//! [`CallbackWork`] on tokio's blocking pool: a callback's parsing and its HMACs never run on the
//! threads that answer requests, and at most half the cores (at least one) do such work at once,
//! so that a flood of large forged bodies leaves the other routes a core of their own.

use std::sync::Arc;

use async_trait::async_trait;
use domain::channels::ChannelType;
use domain::connectors::templates::TemplateStatusChange;
use domain::connectors::{signer_of, CallbackWork, PlatformEvents};
use tokio::sync::Semaphore;

/// The field of WhatsApp's template status changes.
const FIELD: &[u8] = b"message_template_status_update";

/// Parses and hashes callbacks off the request threads.
#[derive(Debug, Clone)]
pub struct OffThreadCallbackWork {
    permits: Arc<Semaphore>,
}

impl Default for OffThreadCallbackWork {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
        Self { permits: Arc::new(Semaphore::new((cores / 2).max(1))) }
    }
}

impl OffThreadCallbackWork {
    /// Runs `job` on the blocking pool once a permit is free; `fallback` if the job cannot run.
    async fn run<T: Send + 'static>(&self, fallback: T, job: impl FnOnce() -> T + Send + 'static) -> T {
        // The semaphore is never closed, so acquiring only waits.
        let Ok(permit) = self.permits.clone().acquire_owned().await else { return fallback };
        tokio::task::spawn_blocking(move || {
            // Held until the work is done, even if the request that asked is gone.
            let _permit = permit;
            job()
        })
        .await
        .unwrap_or(fallback)
    }
}

#[async_trait]
impl CallbackWork for OffThreadCallbackWork {
    async fn accounts(&self, platform: ChannelType, body: Arc<[u8]>) -> Vec<(String, PlatformEvents)> {
        self.run(Vec::new(), move || {
            serde_json::from_slice::<serde_json::Value>(&body)
                .map(|mut json| {
                    super::payload::without_nul(&mut json);
                    super::payload::parse(platform, &json)
                })
                .unwrap_or_default()
        })
        .await
    }

    async fn signer(&self, body: Arc<[u8]>, mac: Vec<u8>, secrets: Vec<Vec<u8>>) -> Option<usize> {
        self.run(None, move || signer_of(&secrets, &body, &mac)).await
    }

    async fn template_updates(&self, body: Arc<[u8]>) -> Vec<(String, Vec<TemplateStatusChange>)> {
        // Only a body that mentions the field is parsed (again) for it.
        self.run(Vec::new(), move || {
            if !body.windows(FIELD.len()).any(|w| w == FIELD) {
                return Vec::new();
            }
            serde_json::from_slice::<serde_json::Value>(&body)
                .map(|mut json| {
                    super::payload::without_nul(&mut json);
                    super::template_payload::template_updates(&json)
                })
                .unwrap_or_default()
        })
        .await
    }
}
