//! What the derive macros cannot state about the document: the rules the server applies to a
//! value that are written in the domain (a name's text, an e-mail, a phone number, the event
//! catalogue, a header name), added to the generated document so that a client, a generator or a
//! schema-driven tester (schemathesis) knows which values are taken. Each rule here is one the
//! server enforces; a value the document allows is accepted unless it names something that must
//! exist (a label, a member, a cursor this API issued), which no schema can describe.

use serde_json::{json, Value};

use domain::audit::{ActorType, AuditAction};
use domain::members::Availability;
use domain::reports::GroupBy;
use domain::webhooks::controls::{MAX_HEADERS, MAX_HEADER_VALUE};
use domain::webhooks::EventType;

/// A name or other free text the domain takes through `common::text::bounded`: not blank, no
/// control characters but tab and line feed (the server trims the ends).
pub const TEXT: &str = "^[^\\u0000-\\u0008\\u000B-\\u001F\\u007F-\\u009F]*[^\\s\\u0000-\\u001F\\u007F-\\u009F][^\\u0000-\\u0008\\u000B-\\u001F\\u007F-\\u009F]*$";

/// A phone number as `domain::contacts::E164Phone` reads it: `+` or `00`, then 8 to 15 digits
/// (the first not 0), with spaces, no-break spaces, dashes, dots and parentheses anywhere; stored
/// in E.164 (`+14155550123`).
pub const PHONE: &str =
    "^\\s*[-. ()\\u00A0]*(\\+|0[-. ()\\u00A0]*0)[-. ()\\u00A0]*[1-9]([-. ()\\u00A0]*[0-9]){7,14}[-. ()\\u00A0]*\\s*$";

/// A language tag (`domain::contacts::LanguageTag`): a primary subtag of 2 or 3 letters, then
/// subtags of 1 to 8 letters or digits, at most 35 characters.
const LANGUAGE: &str = "^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$";

/// A control-free text that may be blank (a contact's note): tab and line feed only.
const NOTE: &str = "^[^\\u0000-\\u0008\\u000B-\\u001F\\u007F-\\u009F]*$";

/// Any other text: the NUL character is refused everywhere (PostgreSQL cannot store it).
const NO_NUL: &str = "^[^\\u0000]*$";

/// The bodies of `PATCH` operations that must change something (else 422 "give at least one"):
/// the fields that count as a change, and whether `null` is one (it clears the value) or is the
/// same as leaving the field out.
const CHANGES: [(&str, &[(&str, bool)]); 7] = [
    (
        "UpdateChannelBody",
        &[("display_name", false), ("status", false), ("credentials", false), ("default_team_id", true)],
    ),
    (
        "UpdateContactBody",
        &[("name", false), ("phone", true), ("email", true), ("country", true), ("language", true), ("note", true)],
    ),
    ("UpdateLabelBody", &[("name", false), ("color", false)]),
    (
        "UpdateSlaPolicyBody",
        &[
            ("name", false),
            ("first_response_seconds", true),
            ("next_response_seconds", true),
            ("resolution_seconds", true),
            ("business_hours", false),
            ("channel_ids", false),
            ("labels", false),
        ],
    ),
    ("UpdateTeamBody", &[("name", false), ("member_ids", false), ("assignment", false)]),
    ("UpdateThreadBody", &[("status", false), ("assignee", true)]),
    ("UpdateUserBody", &[("name", false), ("role", false), ("active", false), ("availability", false)]),
];

/// An RFC 3339 instant the server can compute with: years 0001 to 9998 once in UTC
/// (`domain::common::instant`). A pattern cannot apply the offset, so the two days next to the
/// bounds are left out whole (the server takes their instants that stay inside).
const INSTANT: &str = "^(?!0000|0001-01-01|9998-12-31|9999)[0-9]{4}-";

/// The static header names wms sets itself or that would break the request
/// (`domain::webhooks::controls::static_headers`): refused in any case, `webhook-` as a prefix.
const RESERVED_HEADERS: [&str; 7] =
    ["content-type", "content-length", "host", "transfer-encoding", "connection", "te", "upgrade"];

/// A header name: one of the tokens RFC 9110 allows, none of [`RESERVED_HEADERS`] nor `webhook-*`
/// in any case (JSON Schema patterns have no flags, so each letter is a class of both cases).
fn header_name() -> String {
    let any_case = |word: &str| -> String {
        word.chars()
            .map(|c| if c.is_ascii_alphabetic() { format!("[{}{}]", c.to_ascii_uppercase(), c) } else { c.to_string() })
            .collect()
    };
    let reserved: Vec<String> = RESERVED_HEADERS.iter().map(|w| format!("{}$", any_case(w))).collect();
    format!("^(?!{}|{})[!#$%&'*+.^_`|~0-9A-Za-z-]+$", any_case("webhook-"), reserved.join("|"))
}

/// Adds the rules to the generated document, and returns those whose schema, member or
/// parameter it does not have (none: a unit test keeps it so, so a renamed body cannot silently
/// lose its rules).
pub fn apply(doc: &mut Value) -> Vec<String> {
    let mut missed = Vec::new();
    if let Some(schemas) = doc.pointer_mut("/components/schemas").and_then(Value::as_object_mut) {
        for schema in schemas.values_mut() {
            names(schema);
        }
    }
    let events: Vec<&str> = EventType::CATALOG.iter().map(|e| e.as_str()).collect();
    // `null` (or no body) sends `webhook.test`.
    let mut samples = vec![Value::Null, json!(EventType::WebhookTest.as_str())];
    samples.extend(events.iter().map(|e| json!(e)));
    let email = json!({"format": "email", "maxLength": 254});
    // `null` is the same as leaving it out.
    let mut availability = vec![Value::Null];
    availability.extend(Availability::ALL.iter().map(|a| json!(a.as_str())));
    let instant = json!({"format": "date-time", "pattern": INSTANT});
    let fields: [(&str, &str, Value); 25] = [
        ("LoginBody", "email", email.clone()),
        ("LoginBody", "password", json!({"minLength": 1})),
        ("PasswordResetBody", "email", email.clone()),
        ("CreateUserBody", "email", email.clone()),
        ("CreateContactBody", "email", email.clone()),
        ("CreateContactBody", "phone", json!({"pattern": PHONE})),
        ("UpdateContactBody", "email", email.clone()),
        ("UpdateContactBody", "phone", json!({"pattern": PHONE})),
        ("CreateContactBody", "language", json!({"maxLength": 35, "pattern": LANGUAGE})),
        ("CreateContactBody", "note", json!({"pattern": NOTE})),
        ("UpdateContactBody", "note", json!({"pattern": NOTE})),
        ("UpdateUserBody", "availability", json!({"enum": availability})),
        ("UpdateContactBody", "language", json!({"maxLength": 35, "pattern": LANGUAGE})),
        ("CreateWebhookBody", "events", json!({"items": {"enum": events}})),
        ("UpdateWebhookBody", "events", json!({"minItems": 1, "items": {"enum": events}})),
        ("CreateWebhookBody", "headers", headers()),
        ("UpdateWebhookBody", "headers", headers()),
        ("ReplayBody", "event_types", json!({"items": {"enum": events}})),
        ("ReplayBody", "since", instant.clone()),
        ("ReplayBody", "until", instant.clone()),
        ("TestBody", "event_type", json!({"enum": samples})),
        ("CreateSlaPolicyBody", "labels", json!({"items": {"minLength": 1, "maxLength": 50, "pattern": TEXT}})),
        ("UpdateSlaPolicyBody", "labels", json!({"items": {"minLength": 1, "maxLength": 50, "pattern": TEXT}})),
        ("SetThreadLabelsBody", "labels", json!({"items": {"minLength": 1, "maxLength": 50, "pattern": TEXT}})),
        ("BusinessHoursRecord", "holidays", json!({"items": {"format": "date"}})),
    ];
    for (schema, field, rule) in fields {
        match doc.pointer_mut(&format!("/components/schemas/{schema}/properties/{field}")) {
            Some(property) => merge(property, &rule),
            None => missed.push(format!("{schema}.{field}")),
        }
    }
    for (schema, counted) in CHANGES {
        let Some(body) = doc.pointer_mut(&format!("/components/schemas/{schema}")).and_then(Value::as_object_mut)
        else {
            missed.push(schema.to_owned());
            continue;
        };
        {
            let any: Vec<Value> = counted
                .iter()
                .map(|(field, clears)| match clears {
                    true => json!({"required": [field]}),
                    false => json!({"required": [field], "properties": {*field: {"not": {"type": "null"}}}}),
                })
                .collect();
            body.insert("minProperties".to_owned(), json!(1));
            body.insert("anyOf".to_owned(), Value::Array(any));
        }
    }
    // A contact needs a phone or an e-mail.
    match doc.pointer_mut("/components/schemas/CreateContactBody").and_then(Value::as_object_mut) {
        None => missed.push("CreateContactBody".to_owned()),
        Some(contact) => {
            contact.insert(
                "anyOf".to_owned(),
                json!([
                    {"required": ["phone"], "properties": {"phone": {"type": "string"}}},
                    {"required": ["email"], "properties": {"email": {"type": "string"}}}
                ]),
            );
        }
    }
    // The test send's body may be left out, but when given it is an object (JSON `null` is 422
    // like every other body that is not one).
    match doc.pointer_mut("/paths/~1v1~1webhooks~1{webhook_id}~1test/post/requestBody/content/application~1json/schema")
    {
        Some(body) => *body = json!({"$ref": "#/components/schemas/TestBody"}),
        None => missed.push("the test send's body".to_owned()),
    }
    let actions: Vec<&str> = AuditAction::ALL.iter().map(|a| a.as_str()).collect();
    let actors: Vec<&str> = ActorType::ALL.iter().map(|a| a.as_str()).collect();
    let text = json!({"minLength": 1, "maxLength": 50, "pattern": TEXT});
    let parameters: [(&str, &str, Value); 15] = [
        ("/v1/contacts", "email", email),
        ("/v1/contacts", "q", json!({"minLength": 1, "pattern": TEXT})),
        ("/v1/contacts", "label", text.clone()),
        ("/v1/contacts", "updated_since", instant.clone()),
        ("/v1/threads", "label", text),
        ("/v1/threads", "updated_since", json!({"pattern": INSTANT})),
        ("/v1/messages", "since", json!({"pattern": INSTANT})),
        ("/v1/messages", "until", json!({"pattern": INSTANT})),
        // The audit log's filters are the settings page's too, whose form sends empty fields: an
        // empty value is no filter (`AuditFilter::parse`).
        ("/v1/audit-events", "action", or_blank(json!({"enum": actions}))),
        ("/v1/audit-events", "actor_type", or_blank(json!({"enum": actors}))),
        ("/v1/audit-events", "since", or_blank(instant.clone())),
        ("/v1/audit-events", "until", or_blank(instant.clone())),
        ("/v1/events", "type", json!({"enum": events})),
        ("/v1/events", "since", instant.clone()),
        ("/v1/webhooks/{webhook_id}/stats", "since", instant),
    ];
    let mut parameters = parameters.to_vec();
    for path in ["/v1/reports/conversations", "/v1/reports/conversations.csv"] {
        // Empty is the default there (the reports page's form sends its empty fields).
        parameters.push((path, "group_by", or_blank(json!({"enum": GroupBy::NAMES}))));
        parameters.push((path, "business_hours", or_blank(json!({"enum": ["true", "false"]}))));
    }
    for (path, name, rule) in parameters {
        if !query_parameter(doc, path, name, &rule) {
            missed.push(format!("GET {path}?{name}"));
        }
    }
    missed
}

/// A name (a string property of at most some length that must not be empty, with no rule of its
/// own) follows [`TEXT`]; any other string without a rule of its own, [`NO_NUL`]. (The rules
/// below replace these where the domain says more.)
fn names(schema: &mut Value) {
    let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) else { return };
    for property in properties.values_mut() {
        let Some(p) = property.as_object_mut() else { continue };
        let string =
            p.get("type").is_some_and(|t| t == "string" || t.as_array().is_some_and(|a| a.contains(&json!("string"))));
        let bare = !p.contains_key("pattern") && !p.contains_key("format") && !p.contains_key("enum");
        if string && bare {
            let name = p.get("minLength") == Some(&json!(1)) && p.contains_key("maxLength");
            p.insert("pattern".to_owned(), json!(if name { TEXT } else { NO_NUL }));
        }
    }
}

/// Static headers (`domain::webhooks::controls::static_headers`): at most [`MAX_HEADERS`], token
/// names, values of visible ASCII and tabs. (Two names differing only in case are refused too,
/// which no schema states.)
fn headers() -> Value {
    json!({
        "maxProperties": MAX_HEADERS,
        "propertyNames": {"pattern": header_name()},
        "additionalProperties": {"type": "string", "maxLength": MAX_HEADER_VALUE, "pattern": "^[\\t\\u0020-\\u007E]*$"}
    })
}

/// `rule`, or the empty string: for the query parameters whose empty value the server reads as
/// absent.
fn or_blank(rule: Value) -> Value {
    match rule.get("enum").and_then(Value::as_array) {
        Some(values) => {
            let mut values = values.clone();
            values.push(json!(""));
            json!({"enum": values})
        }
        None => json!({"anyOf": [rule, {"maxLength": 0}]}),
    }
}

/// Adds `rule` to the schema of the query parameter `name` of `GET path`; whether there is one.
fn query_parameter(doc: &mut Value, path: &str, name: &str, rule: &Value) -> bool {
    let pointer = format!("/paths/{}/get/parameters", path.replace('~', "~0").replace('/', "~1"));
    let Some(parameters) = doc.pointer_mut(&pointer).and_then(Value::as_array_mut) else { return false };
    let mut found = false;
    for p in parameters.iter_mut().filter(|p| p["name"] == name && p["in"] == "query") {
        if let Some(schema) = p.get_mut("schema") {
            merge(schema, rule);
            found = true;
        }
    }
    found
}

/// Merges the keys of `rule` into `target` (objects recursively).
fn merge(target: &mut Value, rule: &Value) {
    match (target.as_object_mut(), rule.as_object()) {
        (Some(t), Some(r)) => {
            for (k, v) in r {
                match t.get_mut(k) {
                    Some(existing) if existing.is_object() && v.is_object() => merge(existing, v),
                    _ => {
                        t.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        _ => *target = rule.clone(),
    }
}

#[cfg(test)]
mod tests {
    use utoipa::OpenApi;

    use super::*;

    fn generated() -> Value {
        serde_json::to_value(crate::openapi::ApiDoc::openapi()).unwrap_or_default()
    }

    #[test]
    fn every_rule_finds_its_place() {
        assert_eq!(apply(&mut generated()), Vec::<String>::new());
    }

    #[test]
    fn names_patch_bodies_and_instants_say_what_the_server_takes() {
        let mut doc = generated();
        apply(&mut doc);
        let at = |p: &str| doc.pointer(p).cloned().unwrap_or(Value::Null);
        assert_eq!(at("/components/schemas/CreateLabelBody/properties/name/pattern"), json!(TEXT));
        assert_eq!(at("/components/schemas/CreateContactBody/properties/note/pattern"), json!(NOTE));
        assert_eq!(at("/components/schemas/LoginBody/properties/password/pattern"), json!(NO_NUL));
        assert_eq!(at("/components/schemas/UpdateLabelBody/minProperties"), json!(1));
        assert_eq!(
            at("/components/schemas/UpdateThreadBody/anyOf"),
            json!([
                {"required": ["status"], "properties": {"status": {"not": {"type": "null"}}}},
                {"required": ["assignee"]}
            ]),
            "null unassigns, so it is a change; a null status is none"
        );
        assert_eq!(at("/components/schemas/ReplayBody/properties/since/format"), json!("date-time"));
        // The audit log's filters take an empty value as no filter (the settings page's form).
        let audit = doc["paths"]["/v1/audit-events"]["get"]["parameters"].as_array().cloned().unwrap_or_default();
        let until = audit.iter().find(|p| p["name"] == "until").map(|p| p["schema"].clone()).unwrap_or_default();
        assert_eq!(until["anyOf"][1], json!({"maxLength": 0}), "{until}");
        let action = audit.iter().find(|p| p["name"] == "action").map(|p| p["schema"].clone()).unwrap_or_default();
        assert!(action["enum"].as_array().is_some_and(|e| e.contains(&json!(""))), "{action}");
        let reserved = at("/components/schemas/CreateWebhookBody/properties/headers/propertyNames/pattern");
        assert!(reserved.as_str().is_some_and(|p| p.starts_with("^(?![Ww][Ee][Bb][Hh][Oo][Oo][Kk]-|")), "{reserved}");
    }
}
