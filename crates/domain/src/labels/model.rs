//! Label values.

use time::OffsetDateTime;

use crate::common::error::FieldError;
use crate::common::text::bounded;

/// The colour of a label without one given (a neutral grey).
pub const DEFAULT_LABEL_COLOR: &str = "#6b7280";

/// A label as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    /// Its id.
    pub id: i64,
    /// Its name, unique in the workspace ignoring case.
    pub name: String,
    /// `#rrggbb`, lowercase.
    pub color: String,
    /// Creation time.
    pub created_at: OffsetDateTime,
}

/// A label's name: 1 to 50 characters, trimmed.
///
/// # Errors
/// A [`FieldError`] on `name`.
pub fn label_name(raw: &str) -> Result<String, FieldError> {
    bounded("name", raw, 1, crate::threads::MAX_LABEL_NAME)
}

/// A colour `#rrggbb` (either case; kept lowercase).
///
/// # Errors
/// A [`FieldError`] on `color`.
pub fn label_color(raw: &str) -> Result<String, FieldError> {
    let ok = raw.len() == 7 && raw.starts_with('#') && raw[1..].chars().all(|c| c.is_ascii_hexdigit());
    if ok {
        Ok(raw.to_ascii_lowercase())
    } else {
        Err(FieldError::new("color", "must be a colour `#rrggbb`, such as #22c55e"))
    }
}

/// A validated new label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewLabel {
    /// Name.
    pub name: String,
    /// Colour.
    pub color: String,
}

/// A validated change; `None` keeps a field.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelChange {
    /// New name.
    pub name: Option<String>,
    /// New colour.
    pub color: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_are_hex_triplets_kept_lowercase() {
        assert_eq!(label_color("#22C55E").as_deref(), Ok("#22c55e"));
        for bad in ["22c55e", "#22c55", "#22c55g", "#22c55e0", "red", "#ÿÿÿ"] {
            assert_eq!(label_color(bad).expect_err(bad).field, "color");
        }
    }

    #[test]
    fn names_are_trimmed_and_bounded() {
        assert_eq!(label_name("  VIP ").as_deref(), Ok("VIP"));
        assert!(label_name(" ").is_err());
        assert!(label_name(&"x".repeat(51)).is_err());
    }
}
