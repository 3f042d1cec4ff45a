//! Contact values and the contact record.

use time::OffsetDateTime;

use crate::common::error::FieldError;

/// A phone number in E.164 form (`+` and 8 to 15 digits, no leading zero).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct E164Phone(String);

impl E164Phone {
    /// Normalises what people type (spaces, dashes, dots, parentheses, a `00` prefix) to E.164.
    /// A number without `+` or `00` has no country and is refused rather than guessed.
    ///
    /// # Errors
    /// A [`FieldError`] naming `field`.
    pub fn new(field: &str, raw: &str) -> Result<Self, FieldError> {
        let invalid = || FieldError::new(field, "must be a phone number in international form, such as +14155550123");
        let compact: String =
            raw.trim().chars().filter(|c| !matches!(c, ' ' | '-' | '.' | '(' | ')' | '\u{a0}')).collect();
        let digits = compact.strip_prefix('+').or_else(|| compact.strip_prefix("00")).ok_or_else(invalid)?;
        let ok =
            (8..=15).contains(&digits.len()) && digits.chars().all(|c| c.is_ascii_digit()) && !digits.starts_with('0');
        if ok {
            Ok(Self(format!("+{digits}")))
        } else {
            Err(invalid())
        }
    }

    /// The E.164 string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// An ISO 3166-1 alpha-2 country code, uppercase.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CountryCode(String);

impl CountryCode {
    /// Validates two ASCII letters.
    ///
    /// # Errors
    /// A [`FieldError`] naming `field`.
    pub fn new(field: &str, raw: &str) -> Result<Self, FieldError> {
        let t = raw.trim();
        if t.len() == 2 && t.chars().all(|c| c.is_ascii_alphabetic()) {
            Ok(Self(t.to_ascii_uppercase()))
        } else {
            Err(FieldError::new(field, "must be a two-letter ISO 3166 country code"))
        }
    }

    /// The code.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A language tag (BCP 47 shape: `pt`, `pt-BR`, `zh-Hant-TW`), at most 35 characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LanguageTag(String);

impl LanguageTag {
    /// Validates a primary subtag of 2 or 3 letters followed by `-`-separated subtags of 1 to 8
    /// letters or digits.
    ///
    /// # Errors
    /// A [`FieldError`] naming `field`.
    pub fn new(field: &str, raw: &str) -> Result<Self, FieldError> {
        let t = raw.trim();
        let mut parts = t.split('-');
        let primary = parts.next().unwrap_or_default();
        let ok = t.len() <= 35
            && (2..=3).contains(&primary.len())
            && primary.chars().all(|c| c.is_ascii_alphabetic())
            && parts.all(|p| (1..=8).contains(&p.len()) && p.chars().all(|c| c.is_ascii_alphanumeric()));
        if ok {
            Ok(Self(t.to_owned()))
        } else {
            Err(FieldError::new(field, "must be a language tag such as en, pt-BR or zh-Hant"))
        }
    }

    /// The tag.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A contact: the record the REST API returns and the `data` of `contact.created` and
/// `contact.updated` (docs/contract.md, "Events as a contract"), serialised from this one type.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = Contact))]
pub struct Contact {
    /// Id, used as `contact_id` elsewhere.
    pub id: i64,
    /// The person's name, when known.
    pub name: Option<String>,
    /// Phone number in E.164 (`+14155550123`).
    #[cfg_attr(feature = "openapi", schema(example = "+14155550123"))]
    pub phone: Option<String>,
    /// E-mail address, lowercase.
    pub email: Option<String>,
    /// ISO 3166-1 alpha-2 country code, uppercase.
    #[cfg_attr(feature = "openapi", schema(example = "BR"))]
    pub country: Option<String>,
    /// Language tag (`pt-BR`).
    pub language: Option<String>,
    /// Free-text note by the team.
    pub note: Option<String>,
    /// Creation time (RFC 3339, UTC).
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub created_at: OffsetDateTime,
    /// Last change (RFC 3339, UTC).
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub updated_at: OffsetDateTime,
    /// First message with the person.
    #[serde(with = "time::serde::rfc3339::option")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub first_contacted_at: Option<OffsetDateTime>,
    /// Latest message from the person.
    #[serde(with = "time::serde::rfc3339::option")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub last_contacted_at: Option<OffsetDateTime>,
}

impl Contact {
    /// The record as event `data`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

/// A validated new contact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewContact {
    /// 1 to 200 characters.
    pub name: String,
    /// E.164.
    pub phone: Option<E164Phone>,
    /// Lowercase address.
    pub email: Option<crate::users::Email>,
    /// Uppercase code.
    pub country: Option<CountryCode>,
    /// Tag.
    pub language: Option<LanguageTag>,
    /// Up to 5000 characters.
    pub note: Option<String>,
}

impl NewContact {
    /// The event a stored contact emits, with its record as stored.
    pub fn event(&self, contact: Contact) -> crate::webhooks::DomainEvent {
        crate::webhooks::DomainEvent::ContactCreated(contact)
    }
}

/// Whether a contact may be created with, or changed to, an e-mail address, given whether
/// another contact of the workspace already has it: one address names one contact. No unique
/// index says so (older contacts may share an address), so the repository asks, under a lock on
/// the address, and this decides.
///
/// # Errors
/// [`ContactField::Email`], the field the contact collides on, when the address is taken.
pub fn admit_email(taken_by_another: bool) -> Result<(), ContactField> {
    if taken_by_another {
        Err(ContactField::Email)
    } else {
        Ok(())
    }
}

/// A validated change: `None` keeps a field, `Some(None)` clears it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContactChange {
    /// New name (never cleared).
    pub name: Option<String>,
    /// New phone, or none.
    pub phone: Option<Option<E164Phone>>,
    /// New e-mail, or none.
    pub email: Option<Option<crate::users::Email>>,
    /// New country, or none.
    pub country: Option<Option<CountryCode>>,
    /// New language, or none.
    pub language: Option<Option<LanguageTag>>,
    /// New note, or none.
    pub note: Option<Option<String>>,
}

impl ContactChange {
    /// Whether applying the change to `c` changes any value: a change that only sets what is
    /// already there writes nothing and emits no `contact.updated`.
    pub fn alters(&self, c: &Contact) -> bool {
        fn differs(now: &Option<String>, new: Option<Option<&str>>) -> bool {
            new.is_some_and(|v| now.as_deref() != v)
        }
        self.name.as_deref().is_some_and(|n| c.name.as_deref() != Some(n))
            || differs(&c.phone, self.phone.as_ref().map(|v| v.as_ref().map(E164Phone::as_str)))
            || differs(&c.email, self.email.as_ref().map(|v| v.as_ref().map(crate::users::Email::as_str)))
            || differs(&c.country, self.country.as_ref().map(|v| v.as_ref().map(CountryCode::as_str)))
            || differs(&c.language, self.language.as_ref().map(|v| v.as_ref().map(LanguageTag::as_str)))
            || differs(&c.note, self.note.as_ref().map(|v| v.as_deref()))
    }

    /// The event an applied change emits, with the contact's record once changed.
    pub fn event(&self, contact: Contact) -> crate::webhooks::DomainEvent {
        crate::webhooks::DomainEvent::ContactUpdated(contact)
    }
}

/// Which contacts a listing returns; every filter given must match.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ContactFilter {
    /// Exactly this (lowercase) e-mail.
    pub email: Option<String>,
    /// Exactly this E.164 phone.
    pub phone: Option<String>,
    /// Names starting with this, case-insensitively.
    pub name_prefix: Option<String>,
    /// Contacts with a thread carrying the label of this name (case-insensitive).
    pub label: Option<String>,
    /// Changed at or after this instant.
    pub updated_since: Option<OffsetDateTime>,
}

/// The unique field a new or changed contact collides on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContactField {
    /// `phone`.
    Phone,
    /// `email`.
    Email,
}

impl ContactField {
    /// The field's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ContactField::Phone => "phone",
            ContactField::Email => "email",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contact() -> Contact {
        Contact {
            id: 1,
            name: Some("Ana".into()),
            phone: Some("+14155550123".into()),
            email: None,
            country: Some("BR".into()),
            language: None,
            note: Some("VIP".into()),
            created_at: OffsetDateTime::UNIX_EPOCH,
            updated_at: OffsetDateTime::UNIX_EPOCH,
            first_contacted_at: None,
            last_contacted_at: None,
        }
    }

    #[test]
    fn a_change_to_what_is_there_alters_nothing() {
        let c = contact();
        assert!(!ContactChange::default().alters(&c));
        let same = ContactChange {
            name: Some("Ana".into()),
            phone: Some(Some(E164Phone::new("phone", "+1 415 555 0123").expect("valid"))),
            email: Some(None),
            country: Some(Some(CountryCode::new("country", "br").expect("valid"))),
            language: Some(None),
            note: Some(Some("VIP".into())),
        };
        assert!(!same.alters(&c));
    }

    #[test]
    fn setting_or_clearing_any_field_alters_the_contact() {
        let c = contact();
        let changes = [
            ContactChange { name: Some("Ana Lima".into()), ..Default::default() },
            ContactChange { phone: Some(None), ..Default::default() },
            ContactChange {
                email: Some(Some(crate::users::Email::new("email", "ana@example.com").expect("valid"))),
                ..Default::default()
            },
            ContactChange { country: Some(None), ..Default::default() },
            ContactChange {
                language: Some(Some(LanguageTag::new("language", "pt-BR").expect("valid"))),
                ..Default::default()
            },
            ContactChange { note: Some(None), ..Default::default() },
        ];
        for change in changes {
            assert!(change.alters(&c), "{change:?}");
            assert_eq!(change.event(c.clone()).event_type(), crate::webhooks::EventType::ContactUpdated);
        }
    }

    #[test]
    fn an_address_another_contact_has_is_refused() {
        assert_eq!(admit_email(true), Err(ContactField::Email));
        assert_eq!(admit_email(false), Ok(()));
    }

    #[test]
    fn a_stored_contact_emits_contact_created_with_its_record() {
        let new =
            NewContact { name: "Ana".into(), phone: None, email: None, country: None, language: None, note: None };
        let event = new.event(contact());
        assert_eq!(event.event_type(), crate::webhooks::EventType::ContactCreated);
        assert!(matches!(event, crate::webhooks::DomainEvent::ContactCreated(c) if c == contact()));
    }

    #[test]
    fn typed_numbers_are_normalised() {
        for (raw, want) in [
            ("+1 (415) 555-0123", "+14155550123"),
            ("0044 20 7946 0958", "+442079460958"),
            ("+49.30.123456", "+4930123456"),
        ] {
            assert_eq!(E164Phone::new("phone", raw).map(|p| p.0), Ok(want.to_owned()));
        }
    }

    #[test]
    fn numbers_without_country_or_with_junk_are_refused() {
        for bad in ["4155550123", "+0123456789", "+12", "+1234567890123456", "+1415abc0123", ""] {
            assert!(E164Phone::new("phone", bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn language_tags_are_checked() {
        for ok in ["en", "pt-BR", "zh-Hant-TW", "es-419"] {
            assert!(LanguageTag::new("language", ok).is_ok(), "{ok}");
        }
        for bad in ["", "e", "english", "pt_BR", "pt-", "pt-toolongsubtag"] {
            assert!(LanguageTag::new("language", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn country_is_uppercased() {
        assert_eq!(CountryCode::new("country", "br").map(|c| c.0), Ok("BR".into()));
        assert!(CountryCode::new("country", "BRA").is_err());
    }
}

/// An erased contact: the `data` of `contact.deleted`, its id and nothing of the person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ErasedContact {
    /// The erased contact.
    pub id: i64,
}
