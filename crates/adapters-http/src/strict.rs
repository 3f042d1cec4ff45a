//! Strict request extractors for the REST API: the body must be `application/json`, at most
//! 256 KiB, well-formed (else 400), and of the right shape with no unknown fields (else 422 naming
//! the field, with its path for nested values). Queries likewise name the offending parameter.

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::http::header::CONTENT_TYPE;
use actix_web::{web, FromRequest, HttpRequest};
use serde::de::DeserializeOwned;

use crate::error::ApiError;
use crate::extract::{body_error, MAX_JSON_BYTES};

/// A JSON body of type `T`, validated strictly.
#[derive(Debug)]
pub struct StrictJson<T>(pub T);

impl<T: DeserializeOwned + 'static> FromRequest for StrictJson<T> {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let is_json = req
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .map(|m| {
                let m = m.trim().to_ascii_lowercase();
                m == "application/json" || (m.starts_with("application/") && m.ends_with("+json"))
            })
            .unwrap_or(false);
        let too_large = req
            .headers()
            .get(actix_web::http::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<usize>().ok())
            .is_some_and(|n| n > MAX_JSON_BYTES);
        let bytes = web::Bytes::from_request(req, payload);
        Box::pin(async move {
            if too_large {
                return Err(ApiError::PayloadTooLarge { limit: MAX_JSON_BYTES });
            }
            if !is_json {
                return Err(ApiError::UnsupportedMediaType);
            }
            let body = bytes.await.map_err(body_error)?;
            parse_json(&body).map(StrictJson)
        })
    }
}

/// Parses a JSON body: 400 for malformed JSON, 422 naming the field for the wrong shape.
///
/// # Errors
/// [`ApiError::BadRequest`] or [`ApiError::Validation`].
pub fn parse_json<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    // Syntax first, so a broken document is always 400 whatever its shape.
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| ApiError::BadRequest(format!("the body is not valid JSON: {e}")))?;
    // serde would read a struct from an array too (`[1, "x"]`); the API takes objects only.
    if !value.is_object() {
        return Err(ApiError::field("body", "must be a JSON object"));
    }
    if let Some(field) = nul_in(&value, "") {
        return Err(ApiError::field(if field.is_empty() { "body".to_owned() } else { field }, NUL_REFUSED));
    }
    let mut value = value;
    integral_numbers(&mut value);
    serde_path_to_error::deserialize::<_, T>(value).map_err(|e| {
        let message = e.inner().to_string();
        ApiError::field(field_name(&e.path().to_string(), &message), clean(&message))
    })
}

/// The query string as `T`.
#[derive(Debug)]
pub struct StrictQuery<T>(pub T);

impl<T: DeserializeOwned + 'static> FromRequest for StrictQuery<T> {
    type Error = ApiError;
    type Future = std::future::Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _payload: &mut Payload) -> Self::Future {
        let pairs = form_urlencoded::parse(req.query_string().as_bytes());
        if let Some((name, _)) = pairs.into_iter().find(|(k, v)| k.contains('\0') || v.contains('\0')) {
            let name = if name.contains('\0') { "query".to_owned() } else { name.into_owned() };
            return std::future::ready(Err(ApiError::field(name, NUL_REFUSED)));
        }
        let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(req.query_string().as_bytes()));
        std::future::ready(serde_path_to_error::deserialize::<_, T>(de).map(StrictQuery).map_err(|e| {
            let message = e.inner().to_string();
            ApiError::field(field_name(&e.path().to_string(), &message), clean(&message))
        }))
    }
}

/// Why a text with the NUL character is refused: PostgreSQL cannot store it, and no field of the
/// API has a use for it.
pub const NUL_REFUSED: &str = "must not contain the NUL character (\\u0000)";

/// Writes each number of `value` that is a whole number written with a fraction or an exponent
/// (`145909.0`, `1e3`) as the integer it is: JSON Schema (and so the document) counts it as an
/// `integer`, while serde reads an `i64` only from integer notation. Only below 2^53, where every
/// integer has its own `f64`: a larger one written so may have been rounded when it was read
/// (how depends on serde_json's features), and stays a float (refused where an integer is
/// expected) rather than become a neighbouring id.
pub fn integral_numbers(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Number(n) if !n.is_i64() && !n.is_u64() => {
            if let Some(f) = n.as_f64() {
                // 2^53 itself is also what 2^53 + 1 rounds to, so it stays out.
                const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
                if f.fract() == 0.0 && f.abs() < EXACT {
                    #[allow(clippy::cast_possible_truncation)]
                    let whole = f as i64;
                    *value = Value::from(whole);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_numbers),
        Value::Object(members) => members.values_mut().for_each(integral_numbers),
        _ => {}
    }
}

/// The path (`template.parameters[0]`, serde's spelling) of the first string or member name in
/// `value` that holds the NUL character; `""` for the document itself.
pub fn nul_in(value: &serde_json::Value, at: &str) -> Option<String> {
    use serde_json::Value;
    match value {
        Value::String(s) => s.contains('\0').then(|| at.to_owned()),
        Value::Array(items) => items.iter().enumerate().find_map(|(i, v)| nul_in(v, &format!("{at}[{i}]"))),
        Value::Object(members) => members.iter().find_map(|(k, v)| {
            let here = if at.is_empty() { k.clone() } else { format!("{at}.{k}") };
            if k.contains('\0') {
                return Some(if at.is_empty() { "body".to_owned() } else { at.to_owned() });
            }
            nul_in(v, &here)
        }),
        _ => None,
    }
}

/// The path serde reports, or the field its message names, or `body`.
fn field_name(path: &str, message: &str) -> String {
    if path != "." && !path.is_empty() {
        return path.to_owned();
    }
    let quoted = message.find('`').and_then(|s| message[s + 1..].find('`').map(|len| &message[s + 1..s + 1 + len]));
    match quoted {
        Some(f) if message.contains("field") => f.to_owned(),
        _ => "body".to_owned(),
    }
}

fn clean(message: &str) -> String {
    message.split(" at line ").next().unwrap_or(message).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Body {
        channel_id: i64,
        content: String,
    }

    fn field(r: Result<Body, ApiError>) -> (u16, String) {
        use actix_web::ResponseError;
        match r {
            Err(e) => {
                let p = e.problem();
                (
                    e.status_code().as_u16(),
                    p.errors.and_then(|v| v.first().map(|f| f.field.clone())).unwrap_or_default(),
                )
            }
            Ok(_) => (200, String::new()),
        }
    }

    #[test]
    fn whole_numbers_in_any_notation_are_integers() {
        for raw in [
            &br#"{"channel_id":7.0,"content":"a"}"#[..],
            br#"{"channel_id":7e0,"content":"a"}"#,
            br#"{"channel_id":0.7e1,"content":"a"}"#,
        ] {
            let body: Body = parse_json(raw).expect("a whole number");
            assert_eq!(body.channel_id, 7);
        }
        assert_eq!(field(parse_json(br#"{"channel_id":7.5,"content":"a"}"#)), (422, "channel_id".into()));
        assert_eq!(field(parse_json(br#"{"channel_id":1e19,"content":"a"}"#)), (422, "channel_id".into()));
        let rounded = br#"{"channel_id":9007199254740993.0,"content":"a"}"#;
        assert_eq!(field(parse_json(rounded)), (422, "channel_id".into()), "not the id next to it");
        let mut nested = serde_json::json!({"a": [1.0, 2.5, {"b": -3e2}], "c": 9_223_372_036_854_775_807_i64});
        integral_numbers(&mut nested);
        assert_eq!(nested, serde_json::json!({"a": [1, 2.5, {"b": -300}], "c": 9_223_372_036_854_775_807_i64}));
    }

    #[test]
    fn shape_errors_name_the_field() {
        assert_eq!(field(parse_json(br#"{"channel_id":"x","content":"a"}"#)), (422, "channel_id".into()));
        assert_eq!(field(parse_json(br#"{"channel_id":1}"#)), (422, "content".into()));
        assert_eq!(field(parse_json(br#"{"channel_id":1,"content":"a","extra":1}"#)), (422, "extra".into()));
        assert_eq!(field(parse_json(br#"[1,2]"#)), (422, "body".into()));
    }

    #[test]
    fn the_nul_character_is_refused_where_it_is() {
        assert_eq!(field(parse_json(br#"{"channel_id":1,"content":"a\u0000b"}"#)), (422, "content".into()));
        let nested = br#"{"channel_id":1,"content":"a","t":{"parameters":["x","\u0000"]}}"#;
        assert_eq!(nul_in(&serde_json::from_slice(nested).expect("json"), ""), Some("t.parameters[1]".into()));
        let key = br#"{"attributes":{"a\u0000":1}}"#;
        assert_eq!(nul_in(&serde_json::from_slice(key).expect("json"), ""), Some("attributes".into()));
        assert_eq!(nul_in(&serde_json::json!({"a": ["b", {"c": 1}]}), ""), None);
    }

    #[test]
    fn malformed_json_is_400() {
        assert_eq!(field(parse_json(br#"{"channel_id":1,"#)).0, 400);
        assert_eq!(field(parse_json(b"")).0, 400);
    }
}
