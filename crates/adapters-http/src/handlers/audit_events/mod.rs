//! `GET /v1/audit-events`: the workspace's audit log (`docs/contract.md`, "Audit log").

pub mod list;
