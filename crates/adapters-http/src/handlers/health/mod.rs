//! Liveness and readiness probes.

mod healthz;
mod readyz;

pub use healthz::healthz;
pub use readyz::readyz;
