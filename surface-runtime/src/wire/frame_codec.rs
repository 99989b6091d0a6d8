//! How a [`RequestFrame`] and a [`ReplyFrame`] read and write: by hand, in exactly the shape
//! [`protocol`](super::protocol) documents (`{"id":1,"op":"call",…}`, `{"id":1,"ok":…}`).
//!
//! Derived with `#[serde(flatten)]` (and, for requests, an `op` tag), serde first buffered each
//! frame into a tree of its own and then read the frame out of that tree: a fifth of the
//! served side's instructions per bridged call. Here each field is read once, into its type.
//!
//! What the derived code accepted, this accepts: keys in any order, unknown keys ignored, a
//! missing or repeated field refused by name; a reply takes the first of `ok`, `err`, `change`
//! and `progress` it finds.

use super::protocol::{Progress, Reply, ReplyFrame, Request, RequestFrame};
use crate::failure::Failure;
use crate::member::Change;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

impl Serialize for RequestFrame {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let fields = match &self.request {
            Request::List => 0,
            Request::Read { .. }
            | Request::Watch { .. }
            | Request::Unwatch { .. }
            | Request::Narrow { .. } => 1,
            Request::ReadItem { .. } | Request::Call { .. } => 2,
        };
        let mut map = serializer.serialize_map(Some(2 + fields))?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("op", &self.request.op())?;
        match &self.request {
            Request::Read { member } | Request::Watch { member } => map.serialize_entry("member", member)?,
            Request::ReadItem { member, item } => {
                map.serialize_entry("member", member)?;
                map.serialize_entry("item", item)?;
            }
            Request::Call { procedure, input } => {
                map.serialize_entry("procedure", procedure)?;
                map.serialize_entry("input", input)?;
            }
            Request::Unwatch { watch } => map.serialize_entry("watch", watch)?,
            Request::List => {}
            Request::Narrow { scopes } => map.serialize_entry("scopes", scopes)?,
        }
        map.end()
    }
}

impl Serialize for ReplyFrame {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("id", &self.id)?;
        match &self.reply {
            Reply::Ok(v) => map.serialize_entry("ok", v)?,
            Reply::Err(f) => map.serialize_entry("err", f)?,
            Reply::Change(c) => map.serialize_entry("change", c)?,
            Reply::Progress(p) => map.serialize_entry("progress", p)?,
        }
        map.end()
    }
}

/// A request's `op`, as its tag is spelled.
#[derive(Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Op {
    Read,
    ReadItem,
    Call,
    Watch,
    Unwatch,
    List,
    Narrow,
}

impl Request {
    fn op(&self) -> Op {
        match self {
            Request::Read { .. } => Op::Read,
            Request::ReadItem { .. } => Op::ReadItem,
            Request::Call { .. } => Op::Call,
            Request::Watch { .. } => Op::Watch,
            Request::Unwatch { .. } => Op::Unwatch,
            Request::List => Op::List,
            Request::Narrow { .. } => Op::Narrow,
        }
    }
}

/// Every key a request frame may carry; any other is skipped.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum RequestKey {
    Id,
    Op,
    Member,
    Item,
    Procedure,
    Input,
    Watch,
    Scopes,
    #[serde(other)]
    Other,
}

/// Every key a reply frame may carry; any other is skipped.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum ReplyKey {
    Id,
    Ok,
    Err,
    Change,
    Progress,
    #[serde(other)]
    Other,
}

/// Reads the value of a field seen for the first time; a second sighting is refused.
fn once<'de, A: MapAccess<'de>, T: Deserialize<'de>>(
    map: &mut A,
    slot: &mut Option<T>,
    name: &'static str,
) -> Result<(), A::Error> {
    if slot.is_some() {
        return Err(de::Error::duplicate_field(name));
    }
    *slot = Some(map.next_value()?);
    Ok(())
}

fn need<T, E: de::Error>(slot: Option<T>, name: &'static str) -> Result<T, E> {
    slot.ok_or_else(|| E::missing_field(name))
}

struct RequestFrameVisitor;

impl<'de> Visitor<'de> for RequestFrameVisitor {
    type Value = RequestFrame;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a request frame: an object with an `id` and an `op`")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RequestFrame, A::Error> {
        let (mut id, mut op) = (None, None);
        let (mut member, mut item, mut procedure) = (None::<String>, None::<String>, None::<String>);
        let (mut input, mut watch, mut scopes) = (None::<Value>, None::<u64>, None::<Vec<String>>);
        while let Some(key) = map.next_key()? {
            match key {
                RequestKey::Id => once(&mut map, &mut id, "id")?,
                RequestKey::Op => once(&mut map, &mut op, "op")?,
                RequestKey::Member => once(&mut map, &mut member, "member")?,
                RequestKey::Item => once(&mut map, &mut item, "item")?,
                RequestKey::Procedure => once(&mut map, &mut procedure, "procedure")?,
                RequestKey::Input => once(&mut map, &mut input, "input")?,
                RequestKey::Watch => once(&mut map, &mut watch, "watch")?,
                RequestKey::Scopes => once(&mut map, &mut scopes, "scopes")?,
                RequestKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let request = match need(op, "op")? {
            Op::Read => Request::Read {
                member: need(member, "member")?,
            },
            Op::ReadItem => Request::ReadItem {
                member: need(member, "member")?,
                item: need(item, "item")?,
            },
            Op::Call => Request::Call {
                procedure: need(procedure, "procedure")?,
                input: need(input, "input")?,
            },
            Op::Watch => Request::Watch {
                member: need(member, "member")?,
            },
            Op::Unwatch => Request::Unwatch {
                watch: need(watch, "watch")?,
            },
            Op::List => Request::List,
            Op::Narrow => Request::Narrow {
                scopes: need(scopes, "scopes")?,
            },
        };
        Ok(RequestFrame {
            id: need(id, "id")?,
            request,
        })
    }
}

impl<'de> Deserialize<'de> for RequestFrame {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(RequestFrameVisitor)
    }
}

struct ReplyFrameVisitor;

impl<'de> Visitor<'de> for ReplyFrameVisitor {
    type Value = ReplyFrame;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a reply frame: an object with an `id` and one of `ok`, `err`, `change`, `progress`")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ReplyFrame, A::Error> {
        let (mut id, mut reply) = (None, None);
        while let Some(key) = map.next_key()? {
            match key {
                ReplyKey::Id => once(&mut map, &mut id, "id")?,
                // The first of the four wins; a later one is skipped, as flattened serde did.
                ReplyKey::Ok if reply.is_none() => reply = Some(Reply::Ok(map.next_value::<Value>()?)),
                ReplyKey::Err if reply.is_none() => reply = Some(Reply::Err(map.next_value::<Failure>()?)),
                ReplyKey::Change if reply.is_none() => {
                    reply = Some(Reply::Change(map.next_value::<Change>()?));
                }
                ReplyKey::Progress if reply.is_none() => {
                    reply = Some(Reply::Progress(map.next_value::<Progress>()?));
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let reply = reply.ok_or_else(|| {
            de::Error::custom("a reply frame needs one of `ok`, `err`, `change` or `progress`")
        })?;
        Ok(ReplyFrame {
            id: need(id, "id")?,
            reply,
        })
    }
}

impl<'de> Deserialize<'de> for ReplyFrame {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ReplyFrameVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What the frames read as when serde derived them with `flatten`: the same values, and the
    /// same refusals.
    #[test]
    fn frames_read_and_write_as_the_derived_code_did() {
        let requests = [
            json!({"id":1,"op":"read","member":"load"}),
            json!({"id":2,"op":"read_item","member":"processes","item":"7"}),
            json!({"id":3,"op":"call","procedure":"proc.kill","input":{"pid":7}}),
            json!({"id":4,"op":"call","procedure":"load.sample","input":null}),
            json!({"id":5,"op":"watch","member":"processes"}),
            json!({"id":6,"op":"unwatch","watch":5}),
            json!({"id":7,"op":"list"}),
            json!({"id":8,"op":"narrow","scopes":["ops.read"]}),
        ];
        for frame in requests {
            let read: RequestFrame = serde_json::from_value(frame.clone()).unwrap();
            assert_eq!(serde_json::to_value(&read).unwrap(), frame);
        }
        // Keys in any order, and keys it does not know, read the same.
        let reordered: RequestFrame = serde_json::from_str(
            r#"{"input":{"pid":7},"extra":[1,{"id":2}],"procedure":"proc.kill","op":"call","id":3}"#,
        )
        .unwrap();
        assert_eq!(
            reordered,
            serde_json::from_value(json!({"id":3,"op":"call","procedure":"proc.kill","input":{"pid":7}}))
                .unwrap()
        );
        let refused = |frame: &str| {
            serde_json::from_str::<RequestFrame>(frame)
                .unwrap_err()
                .to_string()
        };
        assert!(refused(r#"{"id":1,"op":"call","input":{}}"#).starts_with("missing field `procedure`"));
        assert!(refused(r#"{"id":1,"op":"call","procedure":"a.b"}"#).starts_with("missing field `input`"));
        assert!(refused(r#"{"op":"list"}"#).starts_with("missing field `id`"));
        assert!(refused(r#"{"id":1}"#).starts_with("missing field `op`"));
        assert!(refused(r#"{"id":1,"op":"fly"}"#).starts_with("unknown variant `fly`, expected one of"));
        assert!(refused(r#"{"id":1,"id":2,"op":"list"}"#).starts_with("duplicate field `id`"));
        assert!(refused(r#"[1]"#).starts_with("invalid type: sequence"));

        let replies = [
            json!({"id":0,"ok":{"surface":"Ops","wire":1}}),
            json!({"id":2,"ok":null}),
            json!({"id":1,"err":{"message":"there is no process 7","kind":"refused"}}),
            json!({"id":2,"change":{"upserted":{"id":"3"}}}),
            json!({"id":6,"progress":{"progress":1.0,"total":3.0,"message":"copied the index"}}),
        ];
        for frame in replies {
            let read: ReplyFrame = serde_json::from_value(frame.clone()).unwrap();
            assert_eq!(serde_json::to_value(&read).unwrap(), frame);
        }
        let first: ReplyFrame =
            serde_json::from_str(r#"{"ok":1,"err":{"message":"x","kind":"refused"},"id":9}"#).unwrap();
        assert_eq!(
            first,
            ReplyFrame {
                id: 9,
                reply: Reply::Ok(json!(1))
            }
        );
        assert!(serde_json::from_str::<ReplyFrame>(r#"{"id":1}"#).is_err());
        assert!(
            serde_json::from_str::<ReplyFrame>(r#"{"ok":1}"#)
                .unwrap_err()
                .to_string()
                .starts_with("missing field `id`")
        );
    }
}
