//! A stdio connection's memory of the `_meta` its client keeps sending.
//!
//! A 2026-07-28 client puts the same `_meta` (protocol version, client info, capabilities) on
//! every request, and rmcp's types keep it as a map of JSON values: reading it into one and
//! dropping it after the call was a sixth of such a call's instructions (bench/NOTES.md). Here
//! a `_meta` the connection has seen twice in a row is kept read (the *prototype*), and a later
//! one equal to it byte for byte is answered with a map a finished call gave back — or a copy
//! of the prototype when none is free — instead of being read again. What it holds is
//! bounded: one text of at most [`MAX_TEXT`] bytes, its map and [`MAX_SPARES`] spare maps.
//!
//! A map handed out must be exactly what reading the text gives, so a map given back is kept
//! only if it equals the prototype: calls' maps come back whatever text they were read from (a
//! client may alternate between two `_meta`s), and that comparison (~700 instructions for a
//! 2026-07-28 client's three keys) is still a fraction of reading and dropping one.

use crate::sync::lock;
use rmcp::model::JsonObject;
use std::sync::Mutex;

/// The longest `_meta` text remembered: a larger one is read every time.
const MAX_TEXT: usize = 4096;
/// The most finished calls' maps kept for reuse (one per call in flight at once is enough).
const MAX_SPARES: usize = 8;

/// See the module docs.
#[derive(Default)]
pub(crate) struct MetaMemo {
    inner: Mutex<Memo>,
}

#[derive(Default)]
struct Memo {
    /// The prototype's text and its map.
    text: Vec<u8>,
    prototype: Option<JsonObject>,
    /// Maps equal to the prototype, given back by finished calls.
    spares: Vec<JsonObject>,
    /// The text last read that was not the prototype's: seen again next, it becomes it.
    missed: Vec<u8>,
}

impl MetaMemo {
    /// The map the `_meta` text `text` reads as.
    pub(crate) fn read(&self, text: &str) -> serde_json::Result<JsonObject> {
        let bytes = text.as_bytes();
        {
            let mut memo = lock(&self.inner);
            let memo = &mut *memo;
            if let Some(prototype) = &memo.prototype
                && memo.text == bytes
            {
                return Ok(memo.spares.pop().unwrap_or_else(|| prototype.clone()));
            }
        }
        let map: JsonObject = serde_json::from_str(text)?;
        if bytes.len() <= MAX_TEXT {
            let mut memo = lock(&self.inner);
            if memo.missed == bytes {
                // The same text twice in a row: the client's steady `_meta`.
                memo.text.clear();
                memo.text.extend_from_slice(bytes);
                memo.prototype = Some(map.clone());
                memo.spares.clear();
            } else {
                memo.missed.clear();
                memo.missed.extend_from_slice(bytes);
            }
        }
        Ok(map)
    }

    /// Takes back the map of a finished call's `_meta`, for a later equal text.
    pub(crate) fn give_back(&self, map: JsonObject) {
        if map.is_empty() {
            return;
        }
        let mut guard = lock(&self.inner);
        let memo = &mut *guard;
        if let Some(prototype) = &memo.prototype
            && memo.spares.len() < MAX_SPARES
            && *prototype == map
        {
            memo.spares.push(map);
            return;
        }
        drop(guard);
        // Not kept: dropped outside the lock.
        drop(map);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STEADY: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}"#;

    fn read(memo: &MetaMemo, text: &str) -> JsonObject {
        memo.read(text).unwrap()
    }

    #[test]
    fn every_map_handed_out_is_what_its_text_reads_as() {
        let memo = MetaMemo::default();
        let expected: JsonObject = serde_json::from_str(STEADY).unwrap();
        let other = r#"{"progressToken":7}"#;
        let mut held = Vec::new();
        for round in 0..40 {
            let text = if round % 7 == 3 { other } else { STEADY };
            let map = read(&memo, text);
            assert_eq!(
                map,
                serde_json::from_str::<JsonObject>(text).unwrap(),
                "round {round}"
            );
            held.push(map);
            if round % 3 == 0 {
                for map in held.drain(..) {
                    memo.give_back(map);
                }
            }
        }
        assert_eq!(read(&memo, STEADY), expected);
    }

    #[test]
    fn a_steady_text_is_read_once_and_its_maps_come_back() {
        let memo = MetaMemo::default();
        let (first, second) = (read(&memo, STEADY), read(&memo, STEADY));
        assert!(
            lock(&memo.inner).prototype.is_some(),
            "seen twice in a row, it is kept"
        );
        memo.give_back(first);
        memo.give_back(second);
        assert_eq!(lock(&memo.inner).spares.len(), 2);
        let third = read(&memo, STEADY);
        assert_eq!(
            lock(&memo.inner).spares.len(),
            1,
            "a spare was handed out, not a new read"
        );
        memo.give_back(third);
    }

    #[test]
    fn only_a_map_equal_to_the_remembered_one_is_taken_back() {
        let other = STEADY.replace("2026-07-28", "2026-07-29");
        // A map the call changed; one read from another text, as many entries and other
        // values (a client may alternate between two `_meta`s, and every call gives back).
        let changed = |memo: &MetaMemo| {
            let mut map = read(memo, STEADY);
            map.insert("progressToken".into(), 1.into());
            map
        };
        let another = |memo: &MetaMemo| read(memo, &other);
        for unequal in [&changed as &dyn Fn(&MetaMemo) -> JsonObject, &another] {
            let memo = MetaMemo::default();
            read(&memo, STEADY);
            read(&memo, STEADY);
            memo.give_back(unequal(&memo));
            assert!(lock(&memo.inner).spares.is_empty());
            assert_eq!(
                read(&memo, STEADY),
                serde_json::from_str::<JsonObject>(STEADY).unwrap()
            );
        }
    }

    #[test]
    fn what_it_keeps_is_bounded() {
        let memo = MetaMemo::default();
        let maps: Vec<_> = (0..3 * MAX_SPARES).map(|_| read(&memo, STEADY)).collect();
        for map in maps {
            memo.give_back(map);
        }
        assert_eq!(lock(&memo.inner).spares.len(), MAX_SPARES);
        let huge = format!(r#"{{"k":"{}"}}"#, "x".repeat(MAX_TEXT));
        read(&memo, &huge);
        read(&memo, &huge);
        let memo = lock(&memo.inner);
        assert_eq!(
            memo.text,
            STEADY.as_bytes(),
            "a text over the bound is never kept"
        );
        assert!(memo.missed.len() <= MAX_TEXT);
    }

    #[test]
    fn a_text_that_is_no_object_is_refused_as_reading_it_refuses() {
        let memo = MetaMemo::default();
        assert!(memo.read("5").is_err());
        assert!(memo.read("[1]").is_err());
    }
}
