//! Contact values.

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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn country_is_uppercased() {
        assert_eq!(CountryCode::new("country", "br").map(|c| c.0), Ok("BR".into()));
        assert!(CountryCode::new("country", "BRA").is_err());
    }
}
