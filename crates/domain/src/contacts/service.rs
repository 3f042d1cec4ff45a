//! Contact use cases: list, get, create, update and erase.

use std::sync::Arc;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use sha2::{Digest, Sha256};

use super::model::{
    Contact, ContactChange, ContactField, ContactFilter, CountryCode, E164Phone, LanguageTag, NewContact,
};
use super::ports::{
    ChangeContactError, ContactRepository, EraseContactStoreError, InsertContactError, ListContactsStoreError,
};
use crate::audit::AuditContext;
use crate::common::error::{FieldError, RepoError, ValidationErrors};
use crate::common::page::{Page, PageRequest};
use crate::common::text::bounded;
use crate::users::Email;
use crate::workspace::WorkspaceId;

/// Longest name, as the database allows.
pub const NAME_MAX: usize = 200;
/// Longest note.
pub const NOTE_MAX: usize = 5000;

/// Raw query of a contact listing.
#[derive(Debug, Clone, Default)]
pub struct ListContactsInput {
    /// Exact e-mail (compared lowercase).
    pub email: Option<String>,
    /// Phone, normalised to E.164 as the assistant's contact lookup does.
    pub phone: Option<String>,
    /// Name prefix, case-insensitive.
    pub q: Option<String>,
    /// Label name.
    pub label: Option<String>,
    /// RFC 3339 instant.
    pub updated_since: Option<String>,
    /// Page size.
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page of the same listing.
    pub cursor: Option<String>,
}

/// Raw body of a new contact.
#[derive(Debug, Clone, Default)]
pub struct ContactInput {
    /// Name.
    pub name: String,
    /// Phone in any common notation with its country prefix.
    pub phone: Option<String>,
    /// E-mail.
    pub email: Option<String>,
    /// Two-letter country code.
    pub country: Option<String>,
    /// Language tag.
    pub language: Option<String>,
    /// Note.
    pub note: Option<String>,
}

/// Raw body of a change: `None` keeps a field, `Some(None)` (JSON null) clears it.
#[derive(Debug, Clone, Default)]
pub struct ContactChangeInput {
    /// New name (null is refused: a name is cleared only by erasure).
    pub name: Option<Option<String>>,
    /// New phone or null.
    pub phone: Option<Option<String>>,
    /// New e-mail or null.
    pub email: Option<Option<String>>,
    /// New country or null.
    pub country: Option<Option<String>>,
    /// New language or null.
    pub language: Option<Option<String>>,
    /// New note or null.
    pub note: Option<Option<String>>,
}

/// Why contacts could not be listed.
#[derive(Debug, thiserror::Error)]
pub enum ListContactsError {
    /// A filter, the limit or the cursor is invalid (an unknown label is named `label`).
    #[error(transparent)]
    Invalid(ValidationErrors),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why a contact could not be read.
#[derive(Debug, thiserror::Error)]
pub enum GetContactError {
    /// Not a live contact of this workspace.
    #[error("contact {0} not found")]
    NotFound(i64),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why a contact could not be created.
#[derive(Debug, thiserror::Error)]
pub enum CreateContactError {
    /// Invalid fields, or neither phone nor e-mail.
    #[error(transparent)]
    Invalid(ValidationErrors),
    /// The phone or e-mail belongs to another contact of the workspace.
    #[error("a contact with this {} already exists", .0.as_str())]
    Conflict(ContactField),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why a contact could not be changed.
#[derive(Debug, thiserror::Error)]
pub enum UpdateContactError {
    /// Invalid fields, an empty change, or a change that leaves neither phone nor e-mail.
    #[error(transparent)]
    Invalid(ValidationErrors),
    /// Not a live contact of this workspace.
    #[error("contact {0} not found")]
    NotFound(i64),
    /// The phone or e-mail belongs to another contact of the workspace.
    #[error("a contact with this {} already exists", .0.as_str())]
    Conflict(ContactField),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// Why a contact could not be erased.
#[derive(Debug, thiserror::Error)]
pub enum EraseContactError {
    /// Not a live contact of this workspace (or erased already).
    #[error("contact {0} not found")]
    NotFound(i64),
    /// Infrastructure failure.
    #[error(transparent)]
    Unknown(#[from] RepoError),
}

/// The contacts of a workspace, for integrators.
#[derive(Clone)]
pub struct ContactsService {
    repo: Arc<dyn ContactRepository>,
}

impl std::fmt::Debug for ContactsService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContactsService").finish_non_exhaustive()
    }
}

impl ContactsService {
    /// The service over its storage.
    pub fn new(repo: Arc<dyn ContactRepository>) -> Self {
        Self { repo }
    }

    /// One page of the contacts matching the filters, by id. The cursor is bound to the filters
    /// it was issued for: another listing's cursor is refused rather than silently misread.
    ///
    /// # Errors
    /// [`ListContactsError`].
    pub async fn list(&self, ws: WorkspaceId, input: ListContactsInput) -> Result<Page<Contact>, ListContactsError> {
        let mut errors = ValidationErrors::default();
        let filter = validate_filter(&mut errors, &input);
        let page = match PageRequest::new(input.limit, None) {
            Ok(p) => p,
            Err(e) => {
                errors.0.extend(e);
                PageRequest { limit: crate::common::page::DEFAULT_LIMIT, after: None, filters: None }
            }
        };
        let fp = fingerprint(&filter);
        let after =
            match input.cursor.as_deref().filter(|c| !c.is_empty()) {
                None => None,
                Some(c) => errors.check(decode_cursor(c, &fp).ok_or_else(|| {
                    FieldError::new("cursor", "is not a cursor returned by this API for the same filters")
                })),
            };
        errors.into_result().map_err(ListContactsError::Invalid)?;
        let rows = self.repo.list(ws, &filter, after, page.fetch()).await.map_err(|e| match e {
            ListContactsStoreError::UnknownLabel(name) => ListContactsError::Invalid(ValidationErrors::one(
                "label",
                format!("no label named `{name}` in this workspace"),
            )),
            ListContactsStoreError::Unknown(e) => ListContactsError::Unknown(e),
        })?;
        let mut page = Page::from_rows(rows, page, |c| c.id);
        if page.next_cursor.is_some() {
            page.next_cursor = page.data.last().map(|c| encode_cursor(c.id, &fp));
        }
        Ok(page)
    }

    /// One live contact.
    ///
    /// # Errors
    /// [`GetContactError`].
    pub async fn get(&self, ws: WorkspaceId, id: i64) -> Result<Contact, GetContactError> {
        self.repo.find(ws, id).await?.ok_or(GetContactError::NotFound(id))
    }

    /// Creates a contact (`contact.created`).
    ///
    /// # Errors
    /// [`CreateContactError`].
    pub async fn create(&self, ws: WorkspaceId, input: ContactInput) -> Result<Contact, CreateContactError> {
        let new = validate_new(&input).map_err(CreateContactError::Invalid)?;
        self.repo.insert(ws, &new).await.map_err(|e| match e {
            InsertContactError::Duplicate(f) => CreateContactError::Conflict(f),
            InsertContactError::Unknown(e) => CreateContactError::Unknown(e),
        })
    }

    /// Changes a contact (`contact.updated`).
    ///
    /// # Errors
    /// [`UpdateContactError`].
    pub async fn update(
        &self,
        ws: WorkspaceId,
        id: i64,
        input: ContactChangeInput,
    ) -> Result<Contact, UpdateContactError> {
        let change = validate_change(&input).map_err(UpdateContactError::Invalid)?;
        let current = self.repo.find(ws, id).await?.ok_or(UpdateContactError::NotFound(id))?;
        let had_address = current.phone.is_some() || current.email.is_some();
        let phone_after = change.phone.as_ref().map_or(current.phone.is_some(), Option::is_some);
        let email_after = change.email.as_ref().map_or(current.email.is_some(), Option::is_some);
        if had_address && !phone_after && !email_after {
            let field = if change.phone == Some(None) { "phone" } else { "email" };
            return Err(UpdateContactError::Invalid(ValidationErrors::one(
                field,
                "a contact keeps a phone or an e-mail; set the other one first",
            )));
        }
        self.repo.change(ws, id, &change).await.map_err(|e| match e {
            ChangeContactError::NotFound(id) => UpdateContactError::NotFound(id),
            ChangeContactError::Duplicate(f) => UpdateContactError::Conflict(f),
            ChangeContactError::Unknown(e) => UpdateContactError::Unknown(e),
        })
    }

    /// Erases the person (GDPR art. 17), recorded as `contact.erased` by `audit`'s actor: see
    /// [`ContactRepository::erase`].
    ///
    /// # Errors
    /// [`EraseContactError`].
    pub async fn erase(&self, ws: WorkspaceId, audit: &AuditContext, id: i64) -> Result<(), EraseContactError> {
        self.repo.erase(ws, id, audit).await.map_err(|e| match e {
            EraseContactStoreError::NotFound(id) => EraseContactError::NotFound(id),
            EraseContactStoreError::Unknown(e) => EraseContactError::Unknown(e),
        })
    }
}

fn non_blank(field: &str, raw: &str, max: usize) -> Result<String, FieldError> {
    bounded(field, raw, 1, max)
}

fn validate_filter(errors: &mut ValidationErrors, q: &ListContactsInput) -> ContactFilter {
    ContactFilter {
        email: q.email.as_deref().and_then(|e| errors.check(Email::new("email", e))).map(|e| e.as_str().to_owned()),
        phone: q.phone.as_deref().and_then(|p| errors.check(E164Phone::new("phone", p))).map(|p| p.as_str().to_owned()),
        // As given: the store compares both sides with its own `lower()`, as it does for labels.
        name_prefix: q.q.as_deref().and_then(|s| errors.check(non_blank("q", s, NAME_MAX))),
        label: q.label.as_deref().and_then(|s| errors.check(non_blank("label", s, 50))),
        updated_since: q.updated_since.as_deref().and_then(|s| {
            errors.check(
                crate::common::instant::parse_rfc3339(s)
                    .ok_or_else(|| FieldError::new("updated_since", crate::common::instant::EXPECTED)),
            )
        }),
    }
}

fn validate_new(input: &ContactInput) -> Result<NewContact, ValidationErrors> {
    let mut errors = ValidationErrors::default();
    let name = errors.check(non_blank("name", &input.name, NAME_MAX));
    let phone = input.phone.as_deref().and_then(|p| errors.check(E164Phone::new("phone", p)));
    let email = input.email.as_deref().and_then(|e| errors.check(Email::new("email", e)));
    let country = input.country.as_deref().and_then(|c| errors.check(CountryCode::new("country", c)));
    let language = input.language.as_deref().and_then(|l| errors.check(LanguageTag::new("language", l)));
    let note = input.note.as_deref().and_then(|n| errors.check(bounded("note", n, 0, NOTE_MAX)));
    if input.phone.is_none() && input.email.is_none() {
        errors.0.push(FieldError::new("phone", "give a phone or an e-mail"));
    }
    errors.clone().into_result()?;
    let name = name.ok_or(errors)?;
    Ok(NewContact { name, phone, email, country, language, note: note.filter(|n| !n.is_empty()) })
}

fn validate_change(input: &ContactChangeInput) -> Result<ContactChange, ValidationErrors> {
    let mut errors = ValidationErrors::default();
    let name = match &input.name {
        None => None,
        Some(None) => {
            errors.0.push(FieldError::new("name", "must not be null"));
            None
        }
        Some(Some(n)) => errors.check(non_blank("name", n, NAME_MAX)),
    };
    fn opt<T>(
        errors: &mut ValidationErrors,
        v: &Option<Option<String>>,
        f: impl Fn(&str) -> Result<T, FieldError>,
    ) -> Option<Option<T>> {
        match v {
            None => None,
            Some(None) => Some(None),
            Some(Some(s)) => errors.check(f(s)).map(Some),
        }
    }
    let change = ContactChange {
        name,
        phone: opt(&mut errors, &input.phone, |p| E164Phone::new("phone", p)),
        email: opt(&mut errors, &input.email, |e| Email::new("email", e)),
        country: opt(&mut errors, &input.country, |c| CountryCode::new("country", c)),
        language: opt(&mut errors, &input.language, |l| LanguageTag::new("language", l)),
        note: opt(&mut errors, &input.note, |n| bounded("note", n, 0, NOTE_MAX))
            .map(|n| n.filter(|n: &String| !n.is_empty())),
    };
    errors.into_result()?;
    if change == ContactChange::default() {
        return Err(ValidationErrors::one("body", "give at least one of name, phone, email, country, language, note"));
    }
    Ok(change)
}

const CURSOR_PREFIX: &str = "ct1.";

/// A short digest of the filters, so that a cursor is only accepted by the listing it came from.
fn fingerprint(f: &ContactFilter) -> String {
    let canonical = format!(
        "e={:?}\np={:?}\nq={:?}\nl={:?}\nu={:?}",
        f.email,
        f.phone,
        f.name_prefix.as_deref().map(str::to_lowercase),
        f.label.as_deref().map(str::to_lowercase),
        f.updated_since.map(|t| t.unix_timestamp_nanos())
    );
    let digest = Sha256::digest(canonical.as_bytes());
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

fn encode_cursor(id: i64, fp: &str) -> String {
    URL_SAFE_NO_PAD.encode(format!("{CURSOR_PREFIX}{id}.{fp}"))
}

fn decode_cursor(c: &str, fp: &str) -> Option<i64> {
    let raw = URL_SAFE_NO_PAD.decode(c).ok()?;
    let s = std::str::from_utf8(&raw).ok()?;
    let (id, got) = s.strip_prefix(CURSOR_PREFIX)?.split_once('.')?;
    (got == fp).then_some(())?;
    id.parse::<i64>().ok().filter(|id| *id > 0)
}

#[cfg(test)]
#[path = "service_tests.rs"]
mod tests;
