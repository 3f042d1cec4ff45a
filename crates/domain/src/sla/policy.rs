//! SLA policies: their targets, which threads they apply to, and the validation of what a request
//! gives.

use time::OffsetDateTime;

use super::ports::{CreateSlaPolicyError, UpdateSlaPolicyError};
use crate::common::error::{FieldError, ValidationErrors};
use crate::common::text::bounded;

/// The longest policy name.
pub const MAX_POLICY_NAME: usize = 100;
/// The longest target: a year.
pub const MAX_TARGET_SECONDS: i64 = 365 * 24 * 3600;
/// The most channels or labels one policy names.
pub const MAX_POLICY_MATCHES: usize = 100;

/// What an SLA measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SlaTarget {
    /// Cycle start → the first response by a member or AI agent.
    FirstResponse,
    /// A contact's message awaiting an answer after a response → the next response.
    NextResponse,
    /// Cycle start → the thread becoming `resolved`.
    Resolution,
}

impl SlaTarget {
    /// Every target, in the order the record lists them.
    pub const ALL: [SlaTarget; 3] = [SlaTarget::FirstResponse, SlaTarget::NextResponse, SlaTarget::Resolution];

    /// The wire and stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            SlaTarget::FirstResponse => "first_response",
            SlaTarget::NextResponse => "next_response",
            SlaTarget::Resolution => "resolution",
        }
    }

    /// A stored name (`None` for anything else).
    pub fn stored(raw: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == raw)
    }
}

/// A policy's targets, in seconds; `None`: not measured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SlaTargets {
    /// First response.
    pub first_response: Option<i64>,
    /// Next response.
    pub next_response: Option<i64>,
    /// Resolution.
    pub resolution: Option<i64>,
}

impl SlaTargets {
    /// The seconds of `target`.
    pub fn of(&self, target: SlaTarget) -> Option<i64> {
        match target {
            SlaTarget::FirstResponse => self.first_response,
            SlaTarget::NextResponse => self.next_response,
            SlaTarget::Resolution => self.resolution,
        }
    }
}

/// An SLA policy as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlaPolicy {
    /// Its id; the first matching policy by id applies.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// Its targets.
    pub targets: SlaTargets,
    /// Whether only the workspace's business hours count.
    pub business_hours: bool,
    /// The channels it applies to; empty: every channel.
    pub channel_ids: Vec<i64>,
    /// The labels it applies to (a thread carrying any of them); empty: every thread.
    pub labels: Vec<String>,
    /// Creation time.
    pub created_at: OffsetDateTime,
}

impl SlaPolicy {
    /// Whether the policy applies to a thread on `channel_id` carrying `labels` (names compared
    /// ignoring case, as label names are unique ignoring case).
    pub fn matches(&self, channel_id: i64, labels: &[String]) -> bool {
        let channel = self.channel_ids.is_empty() || self.channel_ids.contains(&channel_id);
        let label = self.labels.is_empty()
            || self.labels.iter().any(|p| labels.iter().any(|l| l.to_lowercase() == p.to_lowercase()));
        channel && label
    }
}

/// The policy that applies to a thread: the first matching one by id.
pub fn policy_for<'a>(policies: &'a [SlaPolicy], channel_id: i64, labels: &[String]) -> Option<&'a SlaPolicy> {
    policies.iter().filter(|p| p.matches(channel_id, labels)).min_by_key(|p| p.id)
}

/// A validated new policy (its channels and labels still to be found in the workspace by the
/// storage, which answers [`super::CreateSlaPolicyError::UnknownChannels`] and `UnknownLabels`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSlaPolicy {
    /// Name.
    pub name: String,
    /// Targets (at least one).
    pub targets: SlaTargets,
    /// Business hours only.
    pub business_hours: bool,
    /// Channels, without repeats.
    pub channel_ids: Vec<i64>,
    /// Label names, without repeats (ignoring case).
    pub labels: Vec<String>,
}

/// A validated change; `None` keeps a field (a target's `Some(None)` removes it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SlaPolicyChange {
    /// New name.
    pub name: Option<String>,
    /// New first response target.
    pub first_response: Option<Option<i64>>,
    /// New next response target.
    pub next_response: Option<Option<i64>>,
    /// New resolution target.
    pub resolution: Option<Option<i64>>,
    /// New business hours flag.
    pub business_hours: Option<bool>,
    /// New channels.
    pub channel_ids: Option<Vec<i64>>,
    /// New labels.
    pub labels: Option<Vec<String>>,
}

impl SlaPolicyChange {
    /// `policy` with the change applied.
    pub fn apply(&self, policy: &SlaPolicy) -> SlaPolicy {
        let mut p = policy.clone();
        if let Some(name) = &self.name {
            p.name.clone_from(name);
        }
        if let Some(t) = self.first_response {
            p.targets.first_response = t;
        }
        if let Some(t) = self.next_response {
            p.targets.next_response = t;
        }
        if let Some(t) = self.resolution {
            p.targets.resolution = t;
        }
        if let Some(b) = self.business_hours {
            p.business_hours = b;
        }
        if let Some(c) = &self.channel_ids {
            p.channel_ids.clone_from(c);
        }
        if let Some(l) = &self.labels {
            p.labels.clone_from(l);
        }
        p
    }
}

/// A policy's name: 1 to 100 characters, trimmed.
///
/// # Errors
/// A [`FieldError`] on `name`.
pub fn policy_name(raw: &str) -> Result<String, FieldError> {
    bounded("name", raw, 1, MAX_POLICY_NAME)
}

/// A target in seconds: 1 second to a year.
///
/// # Errors
/// A [`FieldError`] on `field`.
pub fn target_seconds(field: &str, seconds: i64) -> Result<i64, FieldError> {
    if seconds <= 0 {
        return Err(FieldError::new(field, "must be a positive number of seconds"));
    }
    if seconds > MAX_TARGET_SECONDS {
        return Err(FieldError::new(field, format!("must be at most {MAX_TARGET_SECONDS} seconds (a year)")));
    }
    Ok(seconds)
}

/// At least one target.
///
/// # Errors
/// A [`FieldError`] on `first_response_seconds` when every target is null.
pub fn some_target(targets: SlaTargets) -> Result<SlaTargets, FieldError> {
    if targets == SlaTargets::default() {
        return Err(FieldError::new(
            "first_response_seconds",
            "give at least one of first_response_seconds, next_response_seconds, resolution_seconds",
        ));
    }
    Ok(targets)
}

/// Channel ids: positive, without repeats, at most [`MAX_POLICY_MATCHES`].
///
/// # Errors
/// A [`FieldError`] on `channel_ids`.
pub fn channel_ids(ids: &[i64]) -> Result<Vec<i64>, FieldError> {
    if ids.len() > MAX_POLICY_MATCHES {
        return Err(FieldError::new("channel_ids", format!("must have at most {MAX_POLICY_MATCHES} channels")));
    }
    if ids.iter().any(|id| *id <= 0) {
        return Err(FieldError::new("channel_ids", "must hold channel ids"));
    }
    let mut out: Vec<i64> = Vec::with_capacity(ids.len());
    for id in ids {
        if !out.contains(id) {
            out.push(*id);
        }
    }
    Ok(out)
}

/// Label names: each 1 to 50 characters, without repeats (ignoring case), at most
/// [`MAX_POLICY_MATCHES`].
///
/// # Errors
/// A [`FieldError`] on `labels`.
pub fn label_names(names: &[String]) -> Result<Vec<String>, FieldError> {
    if names.len() > MAX_POLICY_MATCHES {
        return Err(FieldError::new("labels", format!("must have at most {MAX_POLICY_MATCHES} labels")));
    }
    let mut out: Vec<String> = Vec::with_capacity(names.len());
    for n in names {
        let n = bounded("labels", n, 1, crate::threads::MAX_LABEL_NAME)?;
        if !out.iter().any(|o| o.to_lowercase() == n.to_lowercase()) {
            out.push(n);
        }
    }
    Ok(out)
}

/// The fields of a new policy as received.
#[derive(Debug, Clone, Default)]
pub struct SlaPolicyInput {
    /// Name.
    pub name: String,
    /// First response target, seconds.
    pub first_response_seconds: Option<i64>,
    /// Next response target, seconds.
    pub next_response_seconds: Option<i64>,
    /// Resolution target, seconds.
    pub resolution_seconds: Option<i64>,
    /// Business hours only (default false).
    pub business_hours: Option<bool>,
    /// Channels (default: all).
    pub channel_ids: Option<Vec<i64>>,
    /// Labels (default: all).
    pub labels: Option<Vec<String>>,
}

impl SlaPolicyInput {
    /// Validates every field, naming each bad one.
    ///
    /// # Errors
    /// [`ValidationErrors`].
    pub fn validate(self) -> Result<NewSlaPolicy, ValidationErrors> {
        let mut errors = ValidationErrors::default();
        let name = errors.check(policy_name(&self.name));
        let mut target = |field: &str, v: Option<i64>| match v {
            None => Some(None),
            Some(s) => errors.check(target_seconds(field, s)).map(Some),
        };
        let first = target("first_response_seconds", self.first_response_seconds);
        let next = target("next_response_seconds", self.next_response_seconds);
        let resolution = target("resolution_seconds", self.resolution_seconds);
        let targets = match (first, next, resolution) {
            (Some(first_response), Some(next_response), Some(resolution)) => {
                errors.check(some_target(SlaTargets { first_response, next_response, resolution }))
            }
            _ => None,
        };
        let channels = errors.check(channel_ids(self.channel_ids.as_deref().unwrap_or_default()));
        let labels = errors.check(label_names(self.labels.as_deref().unwrap_or_default()));
        match (name, targets, channels, labels) {
            (Some(name), Some(targets), Some(channel_ids), Some(labels)) if errors.0.is_empty() => Ok(NewSlaPolicy {
                name,
                targets,
                business_hours: self.business_hours.unwrap_or(false),
                channel_ids,
                labels,
            }),
            _ => Err(errors),
        }
    }
}

/// A change as received; a target's `Some(None)` is an explicit null.
#[derive(Debug, Clone, Default)]
pub struct SlaPolicyChangeInput {
    /// New name.
    pub name: Option<String>,
    /// New first response target.
    pub first_response_seconds: Option<Option<i64>>,
    /// New next response target.
    pub next_response_seconds: Option<Option<i64>>,
    /// New resolution target.
    pub resolution_seconds: Option<Option<i64>>,
    /// New business hours flag.
    pub business_hours: Option<bool>,
    /// New channels.
    pub channel_ids: Option<Vec<i64>>,
    /// New labels.
    pub labels: Option<Vec<String>>,
}

impl SlaPolicyChangeInput {
    /// Validates every field given, naming each bad one (whether some target is left is checked
    /// against the stored policy, [`some_target`]).
    ///
    /// # Errors
    /// [`ValidationErrors`].
    pub fn validate(self) -> Result<SlaPolicyChange, ValidationErrors> {
        let mut errors = ValidationErrors::default();
        let name = self.name.as_deref().and_then(|n| errors.check(policy_name(n)));
        let mut target = |field: &str, v: Option<Option<i64>>| match v {
            None | Some(None) => v,
            Some(Some(s)) => errors.check(target_seconds(field, s)).map(Some),
        };
        let first_response = target("first_response_seconds", self.first_response_seconds);
        let next_response = target("next_response_seconds", self.next_response_seconds);
        let resolution = target("resolution_seconds", self.resolution_seconds);
        let channel_ids = self.channel_ids.as_deref().and_then(|c| errors.check(channel_ids(c)));
        let labels = self.labels.as_deref().and_then(|l| errors.check(label_names(l)));
        errors.clone().into_result()?;
        let change = SlaPolicyChange {
            name,
            first_response,
            next_response,
            resolution,
            business_hours: self.business_hours,
            channel_ids,
            labels,
        };
        if change == SlaPolicyChange::default() {
            return Err(ValidationErrors::one("body", "give at least one field to change"));
        }
        Ok(change)
    }
}

/// What the workspace has of the channels and labels a policy names, as its storage read them
/// inside the change's transaction.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolicyReferences {
    /// The named channel ids that are channels of the workspace.
    pub channels: Vec<i64>,
    /// The workspace's labels among the named ones, as the workspace spells them.
    pub labels: Vec<String>,
}

impl PolicyReferences {
    /// The ids of `ids` that are no channel of the workspace.
    fn unknown_channels(&self, ids: &[i64]) -> Vec<i64> {
        ids.iter().copied().filter(|c| !self.channels.contains(c)).collect()
    }

    /// The names of `names` that are no label of the workspace (ignoring case).
    fn unknown_labels(&self, names: &[String]) -> Vec<String> {
        names.iter().filter(|n| self.spelling(n).is_none()).cloned().collect()
    }

    /// `names` as the workspace spells them, the unknown ones left out.
    fn spelled(&self, names: &[String]) -> Vec<String> {
        names.iter().filter_map(|n| self.spelling(n).map(ToOwned::to_owned)).collect()
    }

    fn spelling(&self, name: &str) -> Option<&str> {
        let lowered = name.to_lowercase();
        self.labels.iter().find(|e| e.to_lowercase() == lowered).map(String::as_str)
    }
}

/// The policy to store for `new`: refused when it names a channel, then a label, that the
/// workspace lacks; its labels as the workspace spells them.
///
/// # Errors
/// [`CreateSlaPolicyError::UnknownChannels`], [`CreateSlaPolicyError::UnknownLabels`].
pub fn decide_new_policy(new: &NewSlaPolicy, found: &PolicyReferences) -> Result<NewSlaPolicy, CreateSlaPolicyError> {
    let channels = found.unknown_channels(&new.channel_ids);
    if !channels.is_empty() {
        return Err(CreateSlaPolicyError::UnknownChannels(channels));
    }
    let labels = found.unknown_labels(&new.labels);
    if !labels.is_empty() {
        return Err(CreateSlaPolicyError::UnknownLabels(labels));
    }
    Ok(NewSlaPolicy { labels: found.spelled(&new.labels), ..new.clone() })
}

/// The policy `before` becomes with `change`, over what the workspace has of the channels and
/// labels it then names: refused when it is left without a target, or names a channel the
/// workspace lacks, or a label the workspace lacks among those the change names. Labels the
/// change names are stored as the workspace spells them; labels it keeps stay as they were (a
/// label deleted since does not block a change of something else).
///
/// # Errors
/// [`UpdateSlaPolicyError::Invalid`], [`UpdateSlaPolicyError::UnknownChannels`],
/// [`UpdateSlaPolicyError::UnknownLabels`].
pub fn decide_policy_change(
    before: &SlaPolicy,
    change: &SlaPolicyChange,
    found: &PolicyReferences,
) -> Result<SlaPolicy, UpdateSlaPolicyError> {
    let mut after = change.apply(before);
    some_target(after.targets).map_err(|e| UpdateSlaPolicyError::Invalid(ValidationErrors(vec![e])))?;
    let channels = found.unknown_channels(&after.channel_ids);
    if !channels.is_empty() {
        return Err(UpdateSlaPolicyError::UnknownChannels(channels));
    }
    if change.labels.is_some() {
        let labels = found.unknown_labels(&after.labels);
        if !labels.is_empty() {
            return Err(UpdateSlaPolicyError::UnknownLabels(labels));
        }
        after.labels = found.spelled(&after.labels);
    }
    Ok(after)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(labels: &[&str]) -> Vec<String> {
        labels.iter().map(|l| (*l).to_owned()).collect()
    }

    fn new_policy(channels: &[i64], labels: &[&str]) -> NewSlaPolicy {
        NewSlaPolicy {
            name: "Gold".into(),
            targets: SlaTargets { first_response: Some(60), ..SlaTargets::default() },
            business_hours: false,
            channel_ids: channels.to_vec(),
            labels: names(labels),
        }
    }

    fn found(channels: &[i64], labels: &[&str]) -> PolicyReferences {
        PolicyReferences { channels: channels.to_vec(), labels: names(labels) }
    }

    #[test]
    fn a_new_policy_naming_a_channel_the_workspace_lacks_is_refused_before_its_labels() {
        let e = decide_new_policy(&new_policy(&[1, 2, 3], &["vip"]), &found(&[2], &[])).expect_err("refused");
        assert!(matches!(e, CreateSlaPolicyError::UnknownChannels(ids) if ids == [1, 3]));
    }

    #[test]
    fn a_new_policy_naming_a_label_the_workspace_lacks_is_refused() {
        let e = decide_new_policy(&new_policy(&[2], &["VIP", "gone"]), &found(&[2], &["vip"])).expect_err("refused");
        assert!(matches!(e, CreateSlaPolicyError::UnknownLabels(n) if n == ["gone"]));
    }

    #[test]
    fn a_new_policy_stores_its_labels_as_the_workspace_spells_them() {
        let stored = decide_new_policy(&new_policy(&[2], &["vip", "BILLING"]), &found(&[2], &["Billing", "VIP"]));
        assert_eq!(stored.expect("admitted").labels, ["VIP", "Billing"]);
    }

    #[test]
    fn a_change_that_leaves_no_target_is_refused() {
        let before = policy(1, &[], &[]);
        let change = SlaPolicyChange { first_response: Some(None), ..SlaPolicyChange::default() };
        let e = decide_policy_change(&before, &change, &found(&[], &[])).expect_err("refused");
        assert!(matches!(e, UpdateSlaPolicyError::Invalid(_)));
    }

    #[test]
    fn a_change_is_refused_for_a_channel_the_policy_would_name_that_the_workspace_lacks() {
        let before = policy(1, &[4], &[]);
        let change = SlaPolicyChange { name: Some("Silver".into()), ..SlaPolicyChange::default() };
        let e = decide_policy_change(&before, &change, &found(&[], &[])).expect_err("refused");
        assert!(matches!(e, UpdateSlaPolicyError::UnknownChannels(ids) if ids == [4]));
    }

    #[test]
    fn labels_a_change_keeps_are_neither_checked_nor_respelled() {
        let before = policy(1, &[], &["deleted since"]);
        let change = SlaPolicyChange { name: Some("Silver".into()), ..SlaPolicyChange::default() };
        let after = decide_policy_change(&before, &change, &found(&[], &[])).expect("admitted");
        assert_eq!((after.name.as_str(), after.labels), ("Silver", names(&["deleted since"])));
    }

    #[test]
    fn labels_a_change_names_must_exist_and_are_stored_as_the_workspace_spells_them() {
        let before = policy(1, &[], &[]);
        let change = SlaPolicyChange { labels: Some(names(&["vip", "gone"])), ..SlaPolicyChange::default() };
        let e = decide_policy_change(&before, &change, &found(&[], &["VIP"])).expect_err("refused");
        assert!(matches!(e, UpdateSlaPolicyError::UnknownLabels(n) if n == ["gone"]));
        let change = SlaPolicyChange { labels: Some(names(&["vip"])), ..SlaPolicyChange::default() };
        let after = decide_policy_change(&before, &change, &found(&[], &["VIP"])).expect("admitted");
        assert_eq!(after.labels, ["VIP"]);
    }

    fn policy(id: i64, channels: &[i64], labels: &[&str]) -> SlaPolicy {
        SlaPolicy {
            id,
            name: format!("p{id}"),
            targets: SlaTargets { first_response: Some(60), ..SlaTargets::default() },
            business_hours: false,
            channel_ids: channels.to_vec(),
            labels: labels.iter().map(|l| (*l).to_owned()).collect(),
            created_at: OffsetDateTime::UNIX_EPOCH,
        }
    }

    fn fields(e: ValidationErrors) -> Vec<String> {
        e.0.into_iter().map(|f| f.field).collect()
    }

    #[test]
    fn the_first_matching_policy_by_id_applies_and_empty_lists_match_all() {
        let policies = [policy(9, &[], &[]), policy(3, &[7], &["VIP"]), policy(5, &[8], &[])];
        let vip = vec!["vip".to_owned(), "billing".to_owned()];
        assert_eq!(policy_for(&policies, 7, &vip).map(|p| p.id), Some(3), "labels ignore case");
        assert_eq!(policy_for(&policies, 7, &[]).map(|p| p.id), Some(9), "3 needs a label");
        assert_eq!(policy_for(&policies, 8, &vip).map(|p| p.id), Some(5));
        assert_eq!(policy_for(&policies[1..2], 8, &vip), None);
    }

    #[test]
    fn a_new_policy_names_each_bad_field() {
        let e = SlaPolicyInput {
            name: " ".into(),
            first_response_seconds: Some(0),
            next_response_seconds: Some(-5),
            resolution_seconds: Some(MAX_TARGET_SECONDS + 1),
            channel_ids: Some(vec![0]),
            labels: Some(vec![String::new()]),
            ..SlaPolicyInput::default()
        }
        .validate()
        .expect_err("invalid");
        assert_eq!(
            fields(e),
            ["name", "first_response_seconds", "next_response_seconds", "resolution_seconds", "channel_ids", "labels"]
        );
        let none = SlaPolicyInput { name: "x".into(), ..SlaPolicyInput::default() }.validate().expect_err("no target");
        assert_eq!(fields(none), ["first_response_seconds"]);
        let ok = SlaPolicyInput {
            name: " Gold ".into(),
            resolution_seconds: Some(3600),
            channel_ids: Some(vec![4, 4]),
            labels: Some(vec!["VIP".into(), "vip".into()]),
            ..SlaPolicyInput::default()
        }
        .validate()
        .expect("valid");
        assert_eq!((ok.name.as_str(), ok.channel_ids, ok.labels), ("Gold", vec![4], vec!["VIP".to_owned()]));
    }

    #[test]
    fn a_change_names_each_bad_field_and_may_clear_a_target() {
        let e = SlaPolicyChangeInput { first_response_seconds: Some(Some(0)), ..SlaPolicyChangeInput::default() }
            .validate()
            .expect_err("invalid");
        assert_eq!(fields(e), ["first_response_seconds"]);
        assert_eq!(fields(SlaPolicyChangeInput::default().validate().expect_err("empty")), ["body"]);
        let clear = SlaPolicyChangeInput { first_response_seconds: Some(None), ..SlaPolicyChangeInput::default() }
            .validate()
            .expect("valid");
        let after = clear.apply(&policy(1, &[], &[]));
        assert_eq!(after.targets, SlaTargets::default());
        assert!(some_target(after.targets).is_err(), "the storage refuses a policy left without targets");
    }
}
