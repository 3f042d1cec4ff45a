//! Login tokens (`wmsu_`): `POST /v1/auth/login` issues one, `POST /v1/auth/logout` revokes it.

pub mod login;
pub mod logout;
pub mod password_reset;
