//! Helpers for validated text values.

use super::error::FieldError;

/// Trims `raw` and checks that it has `min..=max` characters and no control characters.
///
/// # Errors
/// A [`FieldError`] naming `field` when the text is out of bounds.
pub fn bounded(field: &str, raw: &str, min: usize, max: usize) -> Result<String, FieldError> {
    let t = raw.trim();
    let n = t.chars().count();
    if n < min {
        return Err(if min == 1 {
            FieldError::new(field, "must not be empty")
        } else {
            FieldError::new(field, format!("must have at least {min} characters"))
        });
    }
    if n > max {
        return Err(FieldError::new(field, format!("must have at most {max} characters")));
    }
    if t.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return Err(FieldError::new(field, "must not contain control characters"));
    }
    Ok(t.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_and_accepts_in_bounds() {
        assert_eq!(bounded("name", "  Acme ", 1, 10).ok().as_deref(), Some("Acme"));
    }

    #[test]
    fn rejects_blank_and_too_long_and_control() {
        assert!(bounded("name", "   ", 1, 10).is_err());
        assert!(bounded("name", "abcdefghijk", 1, 10).is_err());
        assert!(bounded("name", "a\u{0}b", 1, 10).is_err());
    }

    #[test]
    fn counts_characters_not_bytes() {
        assert!(bounded("name", "ééééé", 1, 5).is_ok());
    }
}
