//! `POST /v1/auth/login` and `POST /v1/auth/logout`.

pub mod login;
pub mod logout;
