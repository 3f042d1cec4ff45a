//! `GET /v1/audit-events`: the workspace's audit log (`decisions.md`, "Audit log").

pub mod list;
