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
//! A map handed out must be exactly what reading the text gives. A map is *lent* (handed out
//! from the memory, a spare or a copy of the prototype) or read afresh, and only lent maps come
//! back: the read puts a lent map where only the call that takes it looks
//! (`jsonrpc::settle_meta` moves it where rmcp looks if rmcp's loop takes the request), and the
//! 2026-07-28 direct answer (`session.rs`) gives it back when its call, which reads the context
//! through shared references only, ends. While the prototype is the first one the connection
//! kept, every lent map is a copy of it and is taken back as it is; once a client's `_meta`
//! changed and another took its place, a map comes back only if it equals the current one
//! (a comparison of ~700 instructions for a 2026-07-28 client's three keys).

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
    /// How many prototypes this connection has kept.
    kept: u32,
}

impl MetaMemo {
    /// The map the `_meta` text `text` reads as, and whether it is lent (to be given back).
    pub(crate) fn read(&self, text: &str) -> serde_json::Result<(JsonObject, bool)> {
        let bytes = text.as_bytes();
        {
            let mut memo = lock(&self.inner);
            let memo = &mut *memo;
            if let Some(prototype) = &memo.prototype
                && memo.text == bytes
            {
                // "Twice in a row" means in a row: a text between two hits is no new steady one.
                memo.missed.clear();
                return Ok((memo.spares.pop().unwrap_or_else(|| prototype.clone()), true));
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
                memo.kept = memo.kept.saturating_add(1);
            } else {
                memo.missed.clear();
                memo.missed.extend_from_slice(bytes);
            }
        }
        Ok((map, false))
    }

    /// Takes back a lent map (see [`read`](Self::read)) of a finished call, for a later equal
    /// text.
    pub(crate) fn give_back(&self, map: JsonObject) {
        if map.is_empty() {
            return;
        }
        let mut guard = lock(&self.inner);
        let memo = &mut *guard;
        if let Some(prototype) = &memo.prototype
            && memo.spares.len() < MAX_SPARES
            && (memo.kept == 1 || *prototype == map)
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
        memo.read(text).unwrap().0
    }

    #[test]
    fn every_map_handed_out_is_what_its_text_reads_as() {
        // The client's `_meta` changes twice (a new prototype each time), with single other
        // texts between; lent maps come back in batches, some after the prototype changed.
        let other = STEADY.replace("2026-07-28", "2026-07-29");
        let single = r#"{"progressToken":7}"#;
        let text = |round: usize| match round {
            _ if round % 7 == 3 => single,
            15..30 => &other,
            _ => STEADY,
        };
        let memo = MetaMemo::default();
        let mut lent = Vec::new();
        for round in 0..45 {
            let (map, is_lent) = memo.read(text(round)).unwrap();
            assert_eq!(
                map,
                serde_json::from_str::<JsonObject>(text(round)).unwrap(),
                "round {round}"
            );
            if is_lent {
                lent.push(map);
            }
            if round % 4 == 0 {
                for map in lent.drain(..) {
                    memo.give_back(map);
                }
            }
        }
        assert_eq!(lock(&memo.inner).kept, 3);
    }

    #[test]
    fn a_steady_text_is_read_once_and_its_maps_come_back() {
        let memo = MetaMemo::default();
        let (first, second) = (memo.read(STEADY).unwrap(), memo.read(STEADY).unwrap());
        assert!(!first.1 && !second.1, "read afresh, not lent");
        assert!(
            lock(&memo.inner).prototype.is_some(),
            "seen twice in a row, it is kept"
        );
        let (third, fourth) = (memo.read(STEADY).unwrap(), memo.read(STEADY).unwrap());
        assert!(third.1 && fourth.1, "lent");
        memo.give_back(third.0);
        memo.give_back(fourth.0);
        assert_eq!(lock(&memo.inner).spares.len(), 2);
        let fifth = memo.read(STEADY).unwrap();
        assert_eq!(
            lock(&memo.inner).spares.len(),
            1,
            "a spare was handed out, not a new read"
        );
        memo.give_back(fifth.0);
    }

    #[test]
    fn a_map_lent_before_the_prototype_changed_is_not_taken_back() {
        let memo = MetaMemo::default();
        read(&memo, STEADY);
        read(&memo, STEADY);
        let (old, lent) = memo.read(STEADY).unwrap();
        assert!(lent);
        let other = STEADY.replace("2026-07-28", "2026-07-29");
        read(&memo, &other);
        read(&memo, &other);
        memo.give_back(old);
        assert!(lock(&memo.inner).spares.is_empty());
        assert_eq!(
            read(&memo, &other),
            serde_json::from_str::<JsonObject>(&other).unwrap()
        );
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
