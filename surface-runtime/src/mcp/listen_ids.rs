//! The `taskIds` of a `subscriptions/listen` filter, read off the raw request: rmcp's
//! [`SubscriptionFilter`](rmcp::model::SubscriptionFilter) has no such field, so each transport
//! decodes them here and notes them in the request's extensions for `subscriptions.rs`.

use rmcp::model::{ClientJsonRpcMessage, ClientRequest, GetExtensions, JsonRpcMessage};

/// The `taskIds` of a `subscriptions/listen` filter, read off the raw request by the transport
/// (rmcp's [`SubscriptionFilter`](rmcp::model::SubscriptionFilter) drops them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ListenTaskIds(pub(crate) Vec<String>);

impl ListenTaskIds {
    /// The `params.notifications.taskIds` of the raw request `raw` (none when it names none).
    pub(crate) fn of(raw: &[u8]) -> Option<ListenTaskIds> {
        #[derive(serde::Deserialize)]
        struct Raw {
            params: Params,
        }
        #[derive(serde::Deserialize)]
        struct Params {
            notifications: Filter,
        }
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Filter {
            #[serde(default)]
            task_ids: Vec<String>,
        }
        let ids = serde_json::from_slice::<Raw>(raw)
            .ok()?
            .params
            .notifications
            .task_ids;
        (!ids.is_empty()).then_some(ListenTaskIds(ids))
    }

    /// Notes on `message`, when it is a listen naming `taskIds`, the ids `raw` names.
    pub(crate) fn note(message: &mut ClientJsonRpcMessage, raw: &[u8]) {
        if let JsonRpcMessage::Request(r) = message
            && matches!(r.request, ClientRequest::SubscriptionsListenRequest(_))
            && let Some(ids) = ListenTaskIds::of(raw)
        {
            r.request.extensions_mut().insert(ids);
        }
    }
}
