//! The audit log (`docs/contract.md`, "Audit log"): who did what to which record, from where. A
//! privileged write takes an [`AuditContext`] (built once per request by the HTTP adapter, or by
//! the CLI and the workers) and hands the repository the [`AuditEntry`] it must store **in the
//! same transaction as the change**, so a refused or rolled-back change leaves no record.

mod model;
mod ports;
mod service;

pub use model::{
    ActorType, AuditAction, AuditActor, AuditContext, AuditEntry, AuditEvent, AuditFilter, AuditTarget,
    DEFAULT_RETENTION_DAYS,
};
pub use ports::AuditRepository;
#[cfg(any(test, feature = "mocks"))]
pub use ports::MockAuditRepository;
pub use service::AuditService;
