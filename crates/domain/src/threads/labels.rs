//! A thread's labels set anew: the names must all be labels of the workspace, and the same set
//! again changes nothing (no write, no event: docs/product/labels.md). The storage adapter loads
//! the labels the names match and the thread's current ones inside its transaction (row locked),
//! asks [`decide_labels`], and writes what comes back.

use super::model::LabelNames;
use super::ports::SetThreadLabelsError;
use super::record::ThreadRecord;
use crate::webhooks::DomainEvent;

/// A label of the workspace whose name matched a wanted name, ignoring case (as the store folds
/// case: the same rule as its unique index on names), as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownLabel {
    /// The wanted name it matched, as given.
    pub asked_as: String,
    /// The label's id.
    pub id: i64,
    /// Its name as stored (its own case).
    pub name: String,
}

/// What to write: the thread carries exactly these labels. It emits `thread.labels_changed` once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelsChange {
    /// The ids of the labels the thread carries afterwards; the others are taken off.
    pub label_ids: Vec<i64>,
}

impl LabelsChange {
    /// The event the change emits, with the thread's record once relabelled.
    pub fn event(&self, thread: ThreadRecord) -> DomainEvent {
        DomainEvent::ThreadLabelsChanged(thread)
    }
}

/// The labels `wanted` names, given the workspace's labels they matched (`known`) and the names
/// the thread carries now (`current`, sorted ignoring case, as a thread is read): `None` when
/// the set is the one already there.
///
/// # Errors
/// [`SetThreadLabelsError::UnknownLabels`] with every wanted name no label of the workspace has
/// (ignoring case), in the order given.
pub fn decide_labels(
    wanted: &LabelNames,
    known: &[KnownLabel],
    current: &[String],
) -> Result<Option<LabelsChange>, SetThreadLabelsError> {
    let unknown: Vec<String> =
        wanted.names().iter().filter(|n| !known.iter().any(|k| &k.asked_as == *n)).cloned().collect();
    if !unknown.is_empty() {
        return Err(SetThreadLabelsError::UnknownLabels(unknown));
    }
    // One entry per label, however many wanted names matched it.
    let mut labels: Vec<&KnownLabel> = Vec::new();
    for k in known {
        if !labels.iter().any(|l| l.id == k.id) {
            labels.push(k);
        }
    }
    let mut after: Vec<&str> = labels.iter().map(|k| k.name.as_str()).collect();
    after.sort_by_cached_key(|n| n.to_lowercase());
    if after == current {
        return Ok(None);
    }
    Ok(Some(LabelsChange { label_ids: labels.iter().map(|k| k.id).collect() }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::webhooks::samples::sample_thread;
    use crate::webhooks::EventType;

    fn names(raw: &[&str]) -> LabelNames {
        LabelNames::new(&raw.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>()).expect("valid")
    }

    /// The labels as the store matches them to `wanted` (ignoring case).
    fn known(wanted: &LabelNames, labels: &[(i64, &str)]) -> Vec<KnownLabel> {
        let mut found = Vec::new();
        for asked in wanted.names() {
            for (id, name) in labels.iter().filter(|(_, n)| n.to_lowercase() == asked.to_lowercase()) {
                found.push(KnownLabel { asked_as: asked.clone(), id: *id, name: (*name).to_owned() });
            }
        }
        found
    }

    fn current(raw: &[&str]) -> Vec<String> {
        raw.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn names_no_label_has_are_refused_together_in_the_order_given() {
        let wanted = names(&["Billing", "nope", "VIP", "gone"]);
        let refused = decide_labels(&wanted, &known(&wanted, &[(1, "vip"), (2, "billing")]), &[]);
        assert!(
            matches!(&refused, Err(SetThreadLabelsError::UnknownLabels(n)) if n == &["nope", "gone"]),
            "{refused:?}"
        );
    }

    #[test]
    fn the_same_set_again_in_any_case_or_order_changes_nothing() {
        let wanted = names(&["vip", "BILLING"]);
        let labels = known(&wanted, &[(1, "VIP"), (2, "Billing")]);
        assert_eq!(decide_labels(&wanted, &labels, &current(&["Billing", "VIP"])).ok(), Some(None));
    }

    #[test]
    fn another_set_is_written_with_one_event() {
        let wanted = names(&["VIP", "Billing"]);
        let labels = known(&wanted, &[(1, "VIP"), (2, "Billing")]);
        let change = decide_labels(&wanted, &labels, &current(&["VIP"])).expect("known").expect("a change");
        assert_eq!(change.label_ids, [1, 2]);
        assert_eq!(change.event(sample_thread()).event_type(), EventType::ThreadLabelsChanged);
    }

    #[test]
    fn a_name_the_store_matched_is_known_whatever_its_own_case_folding() {
        // Greek final sigma: Rust lowers `ΟΔΟΣ` to `οδος`, PostgreSQL to `οδοσ`; the store's match
        // is what counts, and one label asked for twice is carried once.
        let wanted = names(&["ΟΔΟΣ", "οδοσ"]);
        let labels: Vec<KnownLabel> = wanted
            .names()
            .iter()
            .map(|asked| KnownLabel { asked_as: asked.clone(), id: 7, name: "ΟΔΟΣ".to_owned() })
            .collect();
        let change = decide_labels(&wanted, &labels, &[]).expect("known").expect("a change");
        assert_eq!(change.label_ids, [7]);
    }

    #[test]
    fn no_labels_takes_them_all_off_and_is_nothing_on_a_bare_thread() {
        let empty = names(&[]);
        assert_eq!(decide_labels(&empty, &[], &[]).ok(), Some(None));
        let change = decide_labels(&empty, &[], &current(&["VIP"])).expect("known").expect("a change");
        assert!(change.label_ids.is_empty());
    }
}
