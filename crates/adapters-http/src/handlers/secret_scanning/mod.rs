//! `POST /secret-scanning/github`: GitHub's secret-scanning partner alerts
//! (`docs/secret-scanning.md`).

pub mod github;
