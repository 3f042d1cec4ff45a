//! What the workspace's admins are told about their keys by e-mail: a key about to expire (seven
//! days and one day before), and a key revoked because it was found leaked.

use time::{Duration, OffsetDateTime};

use super::model::{ApiKey, ApiKeyState};
use crate::mail::{Letter, Mail, MailLink, SiteUrl};
use crate::users::Email;

/// The API Keys page, which every notice links to.
const KEYS_PAGE: &str = "/settings/workspace/api-keys";

/// A notice before a key expires.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExpiryNotice {
    /// Seven days before.
    SevenDays,
    /// One day before.
    OneDay,
}

impl ExpiryNotice {
    /// Every notice, the most urgent first (the order they are looked for).
    pub const ALL: [ExpiryNotice; 2] = [ExpiryNotice::OneDay, ExpiryNotice::SevenDays];

    /// How long before the expiry it is due.
    pub fn lead(self) -> Duration {
        match self {
            ExpiryNotice::SevenDays => Duration::days(7),
            ExpiryNotice::OneDay => Duration::days(1),
        }
    }

    /// Its stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            ExpiryNotice::SevenDays => "7d",
            ExpiryNotice::OneDay => "1d",
        }
    }
}

/// What to do about a notice that is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeDecision {
    /// E-mail the admins.
    Send,
    /// Record it as handled without a mail: the key is no longer active, was rolled (its
    /// successor has the same expiry and gets its own notices), or a more urgent notice covers it.
    Skip,
}

/// How long before its creation a notice's moment may lie and still be sent: a key created to
/// expire "in seven days" reaches its seven-day moment as it is created.
const CREATED_AT_TOLERANCE: Duration = Duration::minutes(1);

/// Decides on `notice` for `key` at `now`: `None` while it is not due (before `expires_at - lead`,
/// or once the key has expired). A due notice is sent once for an active key that was not rolled.
/// It is skipped when its moment came before the key existed (a key made to last three days gets
/// the one-day notice only), and the seven-day notice of a key with a day or less left is skipped
/// (the one-day notice says it).
pub fn decide_expiry_notice(key: &ApiKey, notice: ExpiryNotice, now: OffsetDateTime) -> Option<NoticeDecision> {
    let expires_at = key.expires_at?;
    let moment = expires_at - notice.lead();
    if now < moment || now >= expires_at {
        return None;
    }
    if key.state(now) != ApiKeyState::Active || key.rolled_to.is_some() {
        return Some(NoticeDecision::Skip);
    }
    if moment < key.created_at - CREATED_AT_TOLERANCE {
        return Some(NoticeDecision::Skip);
    }
    if notice == ExpiryNotice::SevenDays && expires_at - now <= ExpiryNotice::OneDay.lead() {
        return Some(NoticeDecision::Skip);
    }
    Some(NoticeDecision::Send)
}

/// "in 7 days", "in 23 hours", "in 5 minutes", rounded to the nearest unit (a notice queued a few
/// seconds after its moment still says "in 7 days").
fn remaining(left: Duration) -> String {
    let plural = |n: i64, unit: &str| if n == 1 { format!("in 1 {unit}") } else { format!("in {n} {unit}s") };
    let minutes = (left.whole_seconds() + 30) / 60;
    let hours = (minutes + 30) / 60;
    if hours >= 24 {
        plural((hours + 12) / 24, "day")
    } else if hours >= 1 {
        plural(hours, "hour")
    } else {
        plural(minutes.max(1), "minute")
    }
}

fn utc(t: OffsetDateTime) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    format!("{:04}-{:02}-{:02} {:02}:{:02} UTC", t.year(), u8::from(t.month()), t.day(), t.hour(), t.minute())
}

/// The expiry notice for each admin, naming the key by its name and masked form.
pub fn expiry_mails(key: &ApiKey, admins: &[Email], site: &SiteUrl, now: OffsetDateTime) -> Vec<Mail> {
    let Some(expires_at) = key.expires_at else { return Vec::new() };
    let when = remaining(expires_at - now);
    let letter = Letter {
        paragraphs: vec![
            format!(
                "The API key “{}” ({}) of your wms workspace expires {when}, on {}.",
                key.name,
                key.masked_key,
                utc(expires_at)
            ),
            "After that, every request made with it is refused with 401 token_expired. If a service \
             still uses it, create a new key (or roll this one: the new key keeps its name and scopes) \
             and deploy it before then."
                .into(),
        ],
        link: Some(MailLink { label: "Open the API Keys page".into(), url: site.link(KEYS_PAGE) }),
        closing: vec!["You get this because you are an admin of the workspace.".into()],
    };
    let subject = format!("API key “{}” expires {when}", key.name);
    admins.iter().map(|to| Mail::compose(to.clone(), &subject, &letter)).collect()
}

/// The notice for each admin that `key` was revoked because it was found at `url`.
pub fn leak_mails(key: &ApiKey, url: Option<&str>, admins: &[Email], site: &SiteUrl) -> Vec<Mail> {
    let found = crate::secret_scanning::found_at(url);
    let letter = Letter {
        paragraphs: vec![
            format!(
                "GitHub secret scanning found the API key “{}” ({}) of your wms workspace {found}. wms \
                 revoked it at once: requests made with it are refused from now on.",
                key.name, key.masked_key
            ),
            "If a service used this key, create a new key for it, and remove the leaked key from the \
             repository and its history."
                .into(),
        ],
        link: Some(MailLink { label: "Open the API Keys page".into(), url: site.link(KEYS_PAGE) }),
        closing: vec!["You get this because you are an admin of the workspace.".into()],
    };
    let subject = format!("API key “{}” was leaked and has been revoked", key.name);
    admins.iter().map(|to| Mail::compose(to.clone(), &subject, &letter)).collect()
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;
    use crate::access::ScopeSet;
    use crate::api_keys::ApiKeyId;
    use crate::workspace::WorkspaceId;

    const EXPIRES: OffsetDateTime = datetime!(2026-06-10 12:00 UTC);

    fn key() -> ApiKey {
        ApiKey {
            id: ApiKeyId(1),
            workspace_id: WorkspaceId(1),
            name: "deploy".into(),
            masked_key: "wmsk_…abcd".into(),
            created_by: None,
            created_at: datetime!(2026-01-01 0:00 UTC),
            expires_at: Some(EXPIRES),
            last_used_at: None,
            last_used_ip: None,
            revoked_at: None,
            rolled_to: None,
            scopes: ScopeSet::full(),
        }
    }

    #[test]
    fn each_notice_is_due_from_its_moment_until_the_expiry() {
        let seven = EXPIRES - Duration::days(7);
        assert_eq!(decide_expiry_notice(&key(), ExpiryNotice::SevenDays, seven - Duration::seconds(1)), None);
        assert_eq!(decide_expiry_notice(&key(), ExpiryNotice::SevenDays, seven), Some(NoticeDecision::Send));
        assert_eq!(decide_expiry_notice(&key(), ExpiryNotice::OneDay, seven), None);
        let one = EXPIRES - Duration::days(1);
        assert_eq!(decide_expiry_notice(&key(), ExpiryNotice::OneDay, one), Some(NoticeDecision::Send));
        // With a day left the seven-day notice would say the same thing late: skipped.
        assert_eq!(decide_expiry_notice(&key(), ExpiryNotice::SevenDays, one), Some(NoticeDecision::Skip));
        assert_eq!(decide_expiry_notice(&key(), ExpiryNotice::OneDay, EXPIRES), None);
        let never = ApiKey { expires_at: None, ..key() };
        assert_eq!(decide_expiry_notice(&never, ExpiryNotice::OneDay, one), None);
    }

    #[test]
    fn a_moment_before_the_key_existed_is_skipped() {
        // Made to last three days: no seven-day notice, the one-day notice as usual.
        let short = ApiKey { created_at: EXPIRES - Duration::days(3), ..key() };
        let now = EXPIRES - Duration::days(2);
        assert_eq!(decide_expiry_notice(&short, ExpiryNotice::SevenDays, now), Some(NoticeDecision::Skip));
        let one = EXPIRES - Duration::days(1);
        assert_eq!(decide_expiry_notice(&short, ExpiryNotice::OneDay, one), Some(NoticeDecision::Send));
        // Made to last seven days (the moment a few seconds before it was created): sent.
        let week = ApiKey { created_at: EXPIRES - Duration::days(7) + Duration::seconds(5), ..key() };
        let now = week.created_at;
        assert_eq!(decide_expiry_notice(&week, ExpiryNotice::SevenDays, now), Some(NoticeDecision::Send));
    }

    #[test]
    fn revoked_and_rolled_keys_get_no_notice() {
        let one = EXPIRES - Duration::days(1);
        let revoked = ApiKey { revoked_at: Some(one), ..key() };
        assert_eq!(decide_expiry_notice(&revoked, ExpiryNotice::OneDay, one), Some(NoticeDecision::Skip));
        let rolled = ApiKey { revoked_at: Some(EXPIRES), rolled_to: Some(ApiKeyId(2)), ..key() };
        assert_eq!(decide_expiry_notice(&rolled, ExpiryNotice::OneDay, one), Some(NoticeDecision::Skip));
    }

    #[test]
    fn the_mails_name_the_key_and_when_it_expires() {
        let admins = [Email::new("to", "a@x.test").expect("email"), Email::new("to", "b@x.test").expect("email")];
        let site = SiteUrl::new("https://wms.test/");
        let mails = expiry_mails(&key(), &admins, &site, EXPIRES - Duration::days(7) + Duration::seconds(20));
        assert_eq!(mails.len(), 2);
        assert_eq!(mails[0].subject, "API key “deploy” expires in 7 days");
        assert!(mails[1].text.contains("wmsk_…abcd") && mails[1].text.contains("2026-06-10 12:00 UTC"));
        assert!(mails[1].text.contains("https://wms.test/settings/workspace/api-keys"));
        let soon = expiry_mails(&key(), &admins[..1], &site, EXPIRES - Duration::hours(23));
        assert_eq!(soon[0].subject, "API key “deploy” expires in 23 hours");
        let leaked = leak_mails(&key(), Some("https://github.com/o/r/blob/x/.env"), &admins, &site);
        assert!(
            leaked[0].text.contains("at https://github.com/o/r/blob/x/.env") && leaked[0].text.contains("wmsk_…abcd")
        );
    }
}

/// Handles the due expiry notices, the most urgent first, in batches until none is left.
#[derive(Clone)]
pub struct ExpiryNoticesService {
    store: std::sync::Arc<dyn super::ports::ExpiryNoticeStore>,
    clock: std::sync::Arc<dyn crate::common::ports::Clock>,
}

impl std::fmt::Debug for ExpiryNoticesService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExpiryNoticesService").finish_non_exhaustive()
    }
}

/// Keys handled per transaction.
const BATCH: i64 = 100;

impl ExpiryNoticesService {
    /// The service over its ports.
    pub fn new(
        store: std::sync::Arc<dyn super::ports::ExpiryNoticeStore>,
        clock: std::sync::Arc<dyn crate::common::ports::Clock>,
    ) -> Self {
        Self { store, clock }
    }

    /// One pass: every due notice handled; returns how many keys were.
    ///
    /// # Errors
    /// Infrastructure failures (what was handled before stays handled).
    pub async fn handle_due(&self) -> Result<usize, crate::common::error::RepoError> {
        let mut total = 0;
        for notice in ExpiryNotice::ALL {
            loop {
                let n = self.store.handle_due(notice, self.clock.now(), BATCH).await?;
                total += n;
                if n < usize::try_from(BATCH).unwrap_or(usize::MAX) {
                    break;
                }
            }
        }
        Ok(total)
    }
}
