//! The per-country rates behind `cost_based.estimated_outbound_cost_usd`.
//!
//! WhatsApp charges per template message delivered to a customer, at a rate that depends on the
//! customer's country; replies inside the 24-hour customer service window are free. The table holds
//! approximate USD rates per template message (marketing category, Meta's published rate card,
//! rounded); docs/assistant.md lists it. It is an estimate for conversation, never an invoice.

/// Rates in USD per template message, by ISO 3166-1 alpha-2 country.
pub const TEMPLATE_RATES_USD: &[(&str, f64)] = &[
    ("AR", 0.0618),
    ("BR", 0.0625),
    ("CL", 0.0889),
    ("CO", 0.0125),
    ("DE", 0.1365),
    ("EG", 0.1073),
    ("ES", 0.0615),
    ("FR", 0.0859),
    ("GB", 0.0529),
    ("ID", 0.0411),
    ("IL", 0.0353),
    ("IN", 0.0107),
    ("IT", 0.0691),
    ("MX", 0.0305),
    ("MY", 0.0860),
    ("NG", 0.0516),
    ("NL", 0.1597),
    ("PE", 0.0703),
    ("PK", 0.0473),
    ("RU", 0.0802),
    ("SA", 0.0455),
    ("TR", 0.0109),
    ("AE", 0.0384),
    ("US", 0.0250),
    ("CA", 0.0250),
    ("ZA", 0.0379),
];

/// The rate for countries without an entry, and for contacts without a country.
pub const OTHER_RATE_USD: f64 = 0.0604;

/// What the estimate is and is not.
pub const DISCLAIMER: &str = "Estimate only: the template messages sent to this contact on WhatsApp in the period \
     times an approximate per-country rate. Replies inside the 24-hour service window are free and not counted; actual \
     charges depend on the template category, your provider's pricing and currency, and appear only on your invoice.";

/// The country whose rate applies (`other` when none) and the rate.
pub fn template_rate(country: Option<&str>) -> (String, f64) {
    country
        .and_then(|c| TEMPLATE_RATES_USD.iter().find(|(code, _)| code.eq_ignore_ascii_case(c)))
        .map_or_else(|| ("other".to_owned(), OTHER_RATE_USD), |(code, rate)| ((*code).to_owned(), *rate))
}

/// `templates` × the rate, rounded to 4 decimal places (hundredths of a cent).
pub fn estimate(templates: i64, rate: f64) -> f64 {
    (templates as f64 * rate * 10_000.0).round() / 10_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_and_unknown_countries() {
        assert_eq!(template_rate(Some("br")), ("BR".to_owned(), 0.0625));
        assert_eq!(template_rate(Some("ZZ")), ("other".to_owned(), OTHER_RATE_USD));
        assert_eq!(template_rate(None), ("other".to_owned(), OTHER_RATE_USD));
    }

    #[test]
    fn estimate_rounds_to_hundredths_of_a_cent() {
        assert_eq!(estimate(3, 0.0625), 0.1875);
        assert_eq!(estimate(7, 0.0107), 0.0749);
        assert_eq!(estimate(0, 0.1), 0.0);
    }
}
