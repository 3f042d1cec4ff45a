//! Which channels a report of delivery figures covers (the Analytics page's top countries, the
//! assistant's `get_channel_analytics`): only WhatsApp reports sent, delivered and read, so a
//! report over "every channel" is one over every WhatsApp channel, and a report asked for one
//! Messenger or Instagram channel says that platform has none.

use super::model::{ChannelId, ChannelType};

/// What a report of delivery figures covers, among a workspace's channels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FiguresScope<T> {
    /// None was asked for: every WhatsApp channel of the workspace (maybe none), in the given
    /// order.
    Every(Vec<T>),
    /// The WhatsApp channel asked for.
    One(T),
    /// The channel asked for is on a platform without delivery figures.
    OtherPlatform(T),
    /// The workspace has no channel with the id asked for (another workspace's included).
    Unknown,
}

impl ChannelType {
    /// Whether the platform reports delivery figures (sent, delivered, read, failed): WhatsApp.
    /// The `country_day_stats` rollup's workspace-wide scope counts the same channels.
    pub fn has_delivery_figures(self) -> bool {
        self == ChannelType::Whatsapp
    }
}

/// The scope of a report over the workspace's `channels` (each with its id and type, read by
/// `identify`), for the channel `asked` for or none.
pub fn figures_scope<T>(
    channels: Vec<T>,
    asked: Option<ChannelId>,
    identify: impl Fn(&T) -> (ChannelId, ChannelType),
) -> FiguresScope<T> {
    let Some(asked) = asked else {
        return FiguresScope::Every(channels.into_iter().filter(|c| identify(c).1.has_delivery_figures()).collect());
    };
    match channels.into_iter().find(|c| identify(c).0 == asked) {
        None => FiguresScope::Unknown,
        Some(c) if identify(&c).1.has_delivery_figures() => FiguresScope::One(c),
        Some(c) => FiguresScope::OtherPlatform(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workspace() -> Vec<(ChannelId, ChannelType)> {
        vec![
            (ChannelId(1), ChannelType::Whatsapp),
            (ChannelId(2), ChannelType::Messenger),
            (ChannelId(3), ChannelType::Whatsapp),
            (ChannelId(4), ChannelType::Instagram),
        ]
    }

    #[test]
    fn every_channel_means_every_whatsapp_channel() {
        let scope = figures_scope(workspace(), None, |c| *c);
        assert_eq!(
            scope,
            FiguresScope::Every(vec![(ChannelId(1), ChannelType::Whatsapp), (ChannelId(3), ChannelType::Whatsapp)])
        );
        assert_eq!(figures_scope(Vec::new(), None, |c: &(ChannelId, ChannelType)| *c), FiguresScope::Every(vec![]));
    }

    #[test]
    fn one_channel_asked_for_is_covered_only_on_whatsapp() {
        assert_eq!(
            figures_scope(workspace(), Some(ChannelId(3)), |c| *c),
            FiguresScope::One((ChannelId(3), ChannelType::Whatsapp))
        );
        for other in [2, 4] {
            assert!(matches!(
                figures_scope(workspace(), Some(ChannelId(other)), |c| *c),
                FiguresScope::OtherPlatform((ChannelId(id), _)) if id == other
            ));
        }
        assert_eq!(figures_scope(workspace(), Some(ChannelId(9)), |c| *c), FiguresScope::Unknown);
    }
}
