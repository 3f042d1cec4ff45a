//! The answer of `POST /v1/auth/login`.

use serde::Serialize;
use time::OffsetDateTime;
use utoipa::ToSchema;

/// The signed-in user.
#[derive(Debug, Serialize, ToSchema)]
pub struct LoginUserDto {
    /// User id.
    pub id: i64,
    /// E-mail.
    pub email: String,
    /// Display name.
    pub name: String,
    /// Role in the token's workspace: `admin` or `agent`.
    pub role: &'static str,
}

/// A new login token. Shown once; send it as `Authorization: Bearer <token>`.
#[derive(Debug, Serialize, ToSchema)]
pub struct LoginResponse {
    /// The token (`wmsu_…`).
    pub token: String,
    /// Always `Bearer`.
    pub token_type: &'static str,
    /// When the token stops working.
    #[serde(with = "time::serde::rfc3339")]
    pub expires_at: OffsetDateTime,
    /// The workspace the token acts in.
    pub workspace_id: i64,
    /// Who signed in.
    pub user: LoginUserDto,
}
