//! Tool arguments described once: the same description renders the JSON Schema that models see and
//! validates what they send, so the two cannot disagree.
//!
//! The schemas stay inside the subset that OpenAI function calling, Anthropic tool use and MCP all
//! accept: `type: object`, `properties`, `required`, `enum`, `minimum`/`maximum`, `default`,
//! `description` and `additionalProperties: false`.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::common::error::{FieldError, ValidationErrors};

/// The type and limits of one argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgKind {
    /// Free text of at most `max_chars` characters (checked here, stated in the description).
    Text {
        /// Longest accepted value.
        max_chars: usize,
        /// The value used when the argument is absent.
        default: Option<&'static str>,
    },
    /// One of a fixed set of strings.
    Choice {
        /// The accepted values.
        values: &'static [&'static str],
        /// The value used when the argument is absent.
        default: Option<&'static str>,
    },
    /// A whole number within bounds.
    Integer {
        /// Smallest accepted value.
        min: i64,
        /// Largest accepted value.
        max: i64,
        /// The value used when the argument is absent.
        default: Option<i64>,
    },
    /// `true` or `false`.
    Flag {
        /// The value used when the argument is absent.
        default: bool,
    },
}

/// One argument of a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArgSpec {
    /// snake_case name.
    pub name: &'static str,
    /// What it means, for the model.
    pub description: &'static str,
    /// Type and limits.
    pub kind: ArgKind,
    /// Whether the call is invalid without it.
    pub required: bool,
}

/// A validated argument value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgValue {
    /// A string (free text or a choice).
    Text(String),
    /// An integer.
    Integer(i64),
    /// A boolean.
    Flag(bool),
}

/// Arguments that passed validation, with defaults filled in; absent optional arguments without a
/// default are simply missing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ValidArgs(BTreeMap<&'static str, ArgValue>);

impl ValidArgs {
    /// A text or choice argument.
    pub fn text(&self, name: &str) -> Option<&str> {
        match self.0.get(name) {
            Some(ArgValue::Text(s)) => Some(s),
            _ => None,
        }
    }

    /// An integer argument.
    pub fn integer(&self, name: &str) -> Option<i64> {
        match self.0.get(name) {
            Some(ArgValue::Integer(i)) => Some(*i),
            _ => None,
        }
    }

    /// A boolean argument (false when absent without default).
    pub fn flag(&self, name: &str) -> bool {
        matches!(self.0.get(name), Some(ArgValue::Flag(true)))
    }
}

/// The JSON Schema of an argument list.
pub fn input_schema(args: &[ArgSpec]) -> Value {
    let mut properties = Map::new();
    for a in args {
        let mut p = Map::new();
        match a.kind {
            ArgKind::Text { default, .. } => {
                p.insert("type".into(), json!("string"));
                if let Some(d) = default {
                    p.insert("default".into(), json!(d));
                }
            }
            ArgKind::Choice { values, default } => {
                p.insert("type".into(), json!("string"));
                p.insert("enum".into(), json!(values));
                if let Some(d) = default {
                    p.insert("default".into(), json!(d));
                }
            }
            ArgKind::Integer { min, max, default } => {
                p.insert("type".into(), json!("integer"));
                p.insert("minimum".into(), json!(min));
                p.insert("maximum".into(), json!(max));
                if let Some(d) = default {
                    p.insert("default".into(), json!(d));
                }
            }
            ArgKind::Flag { default } => {
                p.insert("type".into(), json!("boolean"));
                p.insert("default".into(), json!(default));
            }
        }
        p.insert("description".into(), json!(a.description));
        properties.insert(a.name.into(), Value::Object(p));
    }
    let required: Vec<&str> = args.iter().filter(|a| a.required).map(|a| a.name).collect();
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".into(), json!(required));
    }
    schema.insert("additionalProperties".into(), json!(false));
    Value::Object(schema)
}

/// Checks `raw` (a JSON object, or null for no arguments) against `specs`. A `null` value counts as
/// absent, because several model APIs send null for optional arguments they do not use.
///
/// # Errors
/// Every unknown, missing or invalid argument, each named.
pub fn validate(specs: &[ArgSpec], raw: &Value) -> Result<ValidArgs, ValidationErrors> {
    let empty = Map::new();
    let object = match raw {
        Value::Null => &empty,
        Value::Object(o) => o,
        _ => return Err(ValidationErrors::one("arguments", "must be a JSON object of the tool's arguments")),
    };
    let mut errors = ValidationErrors::default();
    for key in object.keys() {
        if !specs.iter().any(|s| s.name == key) {
            let known: Vec<&str> = specs.iter().map(|s| s.name).collect();
            let message = if known.is_empty() {
                "unknown argument; this tool takes no arguments".to_owned()
            } else {
                format!("unknown argument; this tool takes: {}", known.join(", "))
            };
            errors.0.push(FieldError::new(key.clone(), message));
        }
    }
    let mut out = ValidArgs::default();
    for spec in specs {
        match object.get(spec.name).filter(|v| !v.is_null()) {
            Some(v) => {
                if let Some(value) = errors.check(check(spec, v)) {
                    out.0.insert(spec.name, value);
                }
            }
            None if spec.required => errors.0.push(FieldError::new(spec.name, "is required")),
            None => {
                if let Some(d) = default_of(spec.kind) {
                    out.0.insert(spec.name, d);
                }
            }
        }
    }
    errors.into_result().map(|()| out)
}

fn default_of(kind: ArgKind) -> Option<ArgValue> {
    match kind {
        ArgKind::Text { default, .. } | ArgKind::Choice { default, .. } => {
            default.map(|d| ArgValue::Text(d.to_owned()))
        }
        ArgKind::Integer { default, .. } => default.map(ArgValue::Integer),
        ArgKind::Flag { default } => Some(ArgValue::Flag(default)),
    }
}

fn check(spec: &ArgSpec, v: &Value) -> Result<ArgValue, FieldError> {
    let err = |m: String| FieldError::new(spec.name, m);
    match spec.kind {
        ArgKind::Text { max_chars, .. } => {
            let s = v.as_str().ok_or_else(|| err("must be a string".into()))?;
            if s.chars().count() > max_chars {
                return Err(err(format!("must have at most {max_chars} characters")));
            }
            if s.contains('\0') {
                return Err(err("must not contain the NUL character (\\u0000)".into()));
            }
            Ok(ArgValue::Text(s.to_owned()))
        }
        ArgKind::Choice { values, .. } => {
            let s = v.as_str().ok_or_else(|| err(format!("must be one of {}", values.join(", "))))?;
            if values.contains(&s) {
                Ok(ArgValue::Text(s.to_owned()))
            } else {
                Err(err(format!("must be one of {}, not `{s}`", values.join(", "))))
            }
        }
        ArgKind::Integer { min, max, .. } => {
            // 12.0 is an integer in JSON Schema; 12.5 and "12" are not.
            let i = v
                .as_i64()
                .or_else(|| v.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15).map(|f| f as i64))
                .ok_or_else(|| err("must be an integer".into()))?;
            if (min..=max).contains(&i) {
                Ok(ArgValue::Integer(i))
            } else {
                Err(err(format!("must be between {min} and {max}, not {i}")))
            }
        }
        ArgKind::Flag { .. } => v.as_bool().map(ArgValue::Flag).ok_or_else(|| err("must be true or false".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[ArgSpec] = &[
        ArgSpec {
            name: "query",
            description: "q",
            kind: ArgKind::Text { max_chars: 5, default: None },
            required: true,
        },
        ArgSpec {
            name: "range",
            description: "r",
            kind: ArgKind::Choice { values: &["7d", "30d"], default: Some("7d") },
            required: false,
        },
        ArgSpec {
            name: "limit",
            description: "l",
            kind: ArgKind::Integer { min: 1, max: 8, default: Some(5) },
            required: false,
        },
        ArgSpec { name: "active_only", description: "a", kind: ArgKind::Flag { default: false }, required: false },
    ];

    fn fields(e: ValidationErrors) -> Vec<String> {
        e.0.into_iter().map(|f| f.field).collect()
    }

    #[test]
    fn schema_is_the_common_subset() {
        let s = input_schema(SPECS);
        assert_eq!(s["type"], "object");
        assert_eq!(s["additionalProperties"], false);
        assert_eq!(s["required"], json!(["query"]));
        assert_eq!(s["properties"]["range"]["enum"], json!(["7d", "30d"]));
        assert_eq!(s["properties"]["limit"]["minimum"], 1);
        assert_eq!(s["properties"]["active_only"]["default"], false);
        assert!(input_schema(&[]).get("required").is_none(), "an empty `required` is refused by some providers");
    }

    #[test]
    fn defaults_fill_absent_and_null_arguments() -> Result<(), ValidationErrors> {
        let a = validate(SPECS, &json!({"query": "abc", "range": null}))?;
        assert_eq!(a.text("range"), Some("7d"));
        assert_eq!(a.integer("limit"), Some(5));
        assert!(!a.flag("active_only"));
        Ok(())
    }

    #[test]
    fn every_bad_argument_is_named() {
        let e = validate(SPECS, &json!({"range": "365d", "limit": 9, "active_only": "yes", "colour": 1}))
            .err()
            .map(fields)
            .unwrap_or_default();
        assert_eq!(e, ["colour", "query", "range", "limit", "active_only"]);
    }

    #[test]
    fn integers_are_whole_numbers() {
        assert!(validate(SPECS, &json!({"query": "a", "limit": 3.0})).is_ok());
        assert!(validate(SPECS, &json!({"query": "a", "limit": 3.5})).is_err());
        assert!(validate(SPECS, &json!({"query": "a", "limit": "3"})).is_err());
    }

    #[test]
    fn arguments_must_be_an_object() {
        assert_eq!(validate(SPECS, &json!([1])).err().map(fields).unwrap_or_default(), ["arguments"]);
        assert!(validate(&[], &Value::Null).is_ok());
    }

    #[test]
    fn text_length_is_checked() {
        assert!(validate(SPECS, &json!({"query": "abcdef"})).is_err());
    }
}
