//! `application/x-www-form-urlencoded` bodies with repeated fields (event checkboxes), which
//! `web::Form` cannot express.

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::http::header::CONTENT_TYPE;
use actix_web::{web, FromRequest, HttpRequest};

use super::PageError;

/// The largest form body accepted.
const LIMIT: usize = 64 * 1024;

/// A submitted form, fields in order.
#[derive(Debug, Clone, Default)]
pub struct FormData(pub Vec<(String, String)>);

impl FormData {
    /// Parses a body.
    pub fn parse(body: &[u8]) -> Self {
        Self(form_urlencoded::parse(body).into_owned().collect())
    }

    /// The first value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// The first value of `name`, trimmed, or `""`.
    pub fn text(&self, name: &str) -> String {
        self.get(name).unwrap_or("").trim().to_owned()
    }

    /// Every value of `name`.
    pub fn all(&self, name: &str) -> Vec<String> {
        self.0.iter().filter(|(k, _)| k == name).map(|(_, v)| v.clone()).collect()
    }
}

impl FromRequest for FormData {
    type Error = PageError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let is_form = req
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("application/x-www-form-urlencoded"));
        let body = web::Bytes::from_request(req, payload);
        Box::pin(async move {
            if !is_form {
                return Err(PageError::BadRequest("send the form as application/x-www-form-urlencoded".into()));
            }
            let bytes = body.await.map_err(|_| PageError::BadRequest("the form could not be read".into()))?;
            if bytes.len() > LIMIT {
                return Err(PageError::BadRequest("the form is too large".into()));
            }
            let form = FormData::parse(&bytes);
            // No field of any form has a use for it, and PostgreSQL cannot store it.
            if form.0.iter().any(|(k, v)| k.contains('\0') || v.contains('\0')) {
                return Err(PageError::BadRequest("the form must not contain the NUL character".into()));
            }
            Ok(form)
        })
    }
}
