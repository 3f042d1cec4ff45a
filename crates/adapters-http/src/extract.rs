//! Extractor configuration: malformed bodies, paths and queries become problem responses. And
//! [`extract`], which composes extractors into one (`handlers::input`).

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::error::{JsonPayloadError, PathError, QueryPayloadError};
use actix_web::{web, FromRequest, HttpRequest};

use crate::error::ApiError;

/// The future of a composed extractor.
pub type Extracted<T> = Pin<Box<dyn Future<Output = Result<T, actix_web::Error>>>>;

/// Extracts the tuple `P` and builds `T` from it: the parts are read as a handler's arguments
/// are, and the first of them to fail (in order) answers.
pub fn extract<P: FromRequest + 'static, T>(
    req: &HttpRequest,
    payload: &mut Payload,
    build: impl FnOnce(P) -> Result<T, actix_web::Error> + 'static,
) -> Extracted<T> {
    let parts = P::from_request(req, payload);
    Box::pin(async move { build(parts.await.map_err(Into::into)?) })
}

/// The largest JSON body accepted anywhere.
pub const MAX_JSON_BYTES: usize = 256 * 1024;

/// A raw body of at most [`MAX_JSON_BYTES`], for handlers that parse their own: past the limit
/// 413 `payload_too_large` as a problem (actix's own answer would be plain text), unreadable 400.
#[derive(Debug)]
pub struct RawBody(pub web::Bytes);

impl FromRequest for RawBody {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let bytes = web::Bytes::from_request(req, payload);
        Box::pin(async move { bytes.await.map(RawBody).map_err(body_error) })
    }
}

/// The problem for a body that could not be read within [`MAX_JSON_BYTES`] (actix's default
/// payload limit, which is the same figure).
pub fn body_error(e: actix_web::Error) -> ApiError {
    if e.as_response_error().status_code() == actix_web::http::StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::PayloadTooLarge { limit: MAX_JSON_BYTES }
    } else {
        ApiError::BadRequest(format!("cannot read the body: {e}"))
    }
}

/// JSON bodies: 415 for another content type, 413 over the limit, 400 for broken JSON and 422
/// for JSON of the wrong shape, naming the field when serde can tell.
pub fn json_config() -> web::JsonConfig {
    web::JsonConfig::default().limit(MAX_JSON_BYTES).error_handler(|err, _req| json_error(err).into())
}

fn json_error(err: JsonPayloadError) -> ApiError {
    match err {
        JsonPayloadError::ContentType => ApiError::UnsupportedMediaType,
        JsonPayloadError::Overflow { limit } | JsonPayloadError::OverflowKnownLength { limit, .. } => {
            ApiError::PayloadTooLarge { limit }
        }
        JsonPayloadError::Deserialize(e) if e.is_data() => ApiError::field(
            field_of(&e.to_string()).unwrap_or_else(|| "body".to_owned()),
            strip_position(&e.to_string()),
        ),
        JsonPayloadError::Deserialize(e) => ApiError::BadRequest(format!("the body is not valid JSON: {e}")),
        other => ApiError::BadRequest(other.to_string()),
    }
}

/// The field a serde message names (`unknown field `x``, `missing field `y``).
fn field_of(msg: &str) -> Option<String> {
    let start = msg.find('`')? + 1;
    let len = msg[start..].find('`')?;
    (msg.contains("field")).then(|| msg[start..start + len].to_owned())
}

fn strip_position(msg: &str) -> String {
    msg.split(" at line ").next().unwrap_or(msg).to_owned()
}

/// Path segments that do not parse (a non-integer id) are simply not found.
pub fn path_config() -> web::PathConfig {
    web::PathConfig::default()
        .error_handler(|err: PathError, _req| ApiError::NotFound(format!("no such resource ({err})")).into())
}

/// Query strings that do not parse are validation failures naming the parameter when possible.
pub fn query_config() -> web::QueryConfig {
    web::QueryConfig::default().error_handler(|err: QueryPayloadError, _req| {
        let msg = err.to_string();
        ApiError::field(field_of(&msg).unwrap_or_else(|| "query".to_owned()), strip_position(&msg)).into()
    })
}

#[cfg(test)]
mod tests {
    use super::field_of;

    #[test]
    fn finds_the_field_in_serde_messages() {
        assert_eq!(field_of("unknown field `nme`, expected `name`").as_deref(), Some("nme"));
        assert_eq!(field_of("missing field `content` at line 1 column 2").as_deref(), Some("content"));
        assert_eq!(field_of("invalid type: string \"x\", expected i64"), None);
    }
}
