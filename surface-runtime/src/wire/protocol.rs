//! The wire protocol: newline-delimited JSON frames, one JSON object per line.
//!
//! The server greets each connection with `{"id":0,"ok":{"surface":"Ops","wire":1}}`. Then
//! every request carries a client-chosen `id`, and every reply frame names the request it
//! belongs to, so requests are multiplexed and answered out of order:
//!
//! ```text
//! → {"id":1,"op":"call","procedure":"proc.kill","input":{"pid":7}}
//! ← {"id":1,"err":{"message":"there is no process 7","detail":{…},"kind":"refused"}}
//! → {"id":2,"op":"watch","member":"processes"}
//! ← {"id":2,"ok":null}                      (the watch is open)
//! ← {"id":2,"change":{"upserted":{"id":"3"}}}
//! → {"id":3,"op":"unwatch","watch":2}
//! ```
//!
//! While a call runs, its procedure's progress (`ctx.progress`) arrives as `progress` frames
//! under the call's id, before its answer; they are advisory (dropped rather than stalling the
//! procedure when the connection's reply queue is full) and a client may ignore them:
//!
//! ```text
//! → {"id":6,"op":"call","procedure":"backup.run","input":{}}
//! ← {"id":6,"progress":{"progress":1.0,"total":3.0,"message":"copied the index"}}
//! ← {"id":6,"ok":{"copied":3}}
//! ```
//!
//! Who calls is the connection's: on a unix socket, the peer's uid (`uid:<n>`), reaching what
//! [`WireOptions::grant`](super::WireOptions::grant) granted it. `list` answers what this
//! connection reaches, and `narrow` gives up scopes for the rest of the connection (a client
//! dialled with fewer scopes than its uid holds, as the argv face and the bridge do):
//!
//! ```text
//! → {"id":4,"op":"narrow","scopes":["ops.read"]}
//! ← {"id":4,"ok":{"subject":"uid:1000","scopes":["ops.read"]}}
//! → {"id":5,"op":"list"}
//! ← {"id":5,"ok":{"subject":"uid:1000","scopes":["ops.read"],"members":["load"],"procedures":["load.sample"]}}
//! ```
//! Frames are bounded ([`MAX_FRAME`]); a longer line ends the connection.

use crate::failure::Failure;
use crate::member::Change;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The protocol version in the greeting.
pub const WIRE_VERSION: u32 = 1;

/// The longest frame either side accepts, in bytes.
pub const MAX_FRAME: usize = 16 * 1024 * 1024;

/// One request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// Read a whole member.
    Read {
        /// The member.
        member: String,
    },
    /// Read one collection item.
    ReadItem {
        /// The collection.
        member: String,
        /// The item's URI-shaped id.
        item: String,
    },
    /// Call a procedure.
    Call {
        /// `"ns.verb"`.
        procedure: String,
        /// Its input.
        input: Value,
    },
    /// Open a member's change feed; changes arrive as `change` frames under this request's id.
    Watch {
        /// The member.
        member: String,
    },
    /// Close the feed opened by request `watch`.
    Unwatch {
        /// The id of the `watch` request.
        watch: u64,
    },
    /// What this connection reaches: a [`Reach`].
    List,
    /// Keep only these scopes (of those the connection holds) for the rest of the connection;
    /// answered with a [`Reach`] without its lists.
    Narrow {
        /// Scope wire strings (`ops.read`).
        scopes: Vec<String>,
    },
}

/// Who a connection calls as, and what it reaches (the answer to `list` and `narrow`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reach {
    /// `uid:<n>` on a unix socket; `stdio` on a pair of streams.
    pub subject: String,
    /// The scopes it holds.
    pub scopes: Vec<String>,
    /// The exposed members it may read and watch (empty in a `narrow` answer).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<String>,
    /// The exposed procedures it may call (empty in a `narrow` answer).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub procedures: Vec<String>,
}

/// A request with its id: `{"id":1,"op":"call",…}` (read and written by hand, in
/// `frame_codec.rs`).
#[derive(Clone, Debug, PartialEq)]
pub struct RequestFrame {
    /// Chosen by the client, unique among its open requests.
    pub id: u64,
    /// The request.
    pub request: Request,
}

/// One reply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reply {
    /// The answer.
    Ok(Value),
    /// The failure.
    Err(Failure),
    /// A change on an open watch.
    Change(Change),
    /// Progress of a running call, before its answer.
    Progress(Progress),
}

/// How far a running call is, as its procedure reported it (`ctx.progress`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    /// How much is done.
    pub progress: f64,
    /// Of how much, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// What to show.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A reply with the id of its request: `{"id":1,"ok":…}` (read and written by hand, in
/// `frame_codec.rs`).
#[derive(Clone, Debug, PartialEq)]
pub struct ReplyFrame {
    /// The request's id (0 for the greeting).
    pub id: u64,
    /// The reply.
    pub reply: Reply,
}

/// The greeting's payload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    /// The served surface's name.
    pub surface: String,
    /// [`WIRE_VERSION`].
    pub wire: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn frames_read_as_documented() {
        let call: RequestFrame =
            serde_json::from_value(json!({"id":1,"op":"call","procedure":"proc.kill","input":{"pid":7}}))
                .unwrap();
        assert_eq!(
            call.request,
            Request::Call {
                procedure: "proc.kill".into(),
                input: json!({"pid": 7})
            }
        );
        let change = ReplyFrame {
            id: 2,
            reply: Reply::Change(Change::Upserted { id: "3".into() }),
        };
        assert_eq!(
            serde_json::to_value(&change).unwrap(),
            json!({"id":2,"change":{"upserted":{"id":"3"}}})
        );
        let back: ReplyFrame = serde_json::from_value(serde_json::to_value(&change).unwrap()).unwrap();
        assert_eq!(back, change);
        let err = ReplyFrame {
            id: 3,
            reply: Reply::Err(Failure::new(
                crate::FailureKind::InvalidInput { field: "pid".into() },
                "bad",
            )),
        };
        let v = serde_json::to_value(&err).unwrap();
        assert_eq!(
            v,
            json!({"id":3,"err":{"message":"bad","kind":"invalid-input","field":"pid"}})
        );
        assert_eq!(serde_json::from_value::<ReplyFrame>(v).unwrap(), err);
        let progress: ReplyFrame = serde_json::from_value(
            json!({"id":6,"progress":{"progress":1.0,"total":3.0,"message":"copied the index"}}),
        )
        .unwrap();
        assert_eq!(
            progress.reply,
            Reply::Progress(Progress {
                progress: 1.0,
                total: Some(3.0),
                message: Some("copied the index".into())
            })
        );
    }
}
