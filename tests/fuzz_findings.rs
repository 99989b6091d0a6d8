//! What the fuzz targets in `fuzz/` found, kept as ordinary tests so `cargo test` guards them.

use surface::wire::protocol::ReplyFrame;

/// `wire_frame`: serde_json's default float parser may round the last digit, so a number relayed
/// through the bridge (decoded from the daemon, encoded again for MCP) came out changed.
/// The workspace enables serde_json's `float_roundtrip`.
#[test]
fn a_relayed_float_keeps_its_value() {
    let line = r#"{"id":0,"ok":{"wire":1111111111111111111111}}"#;
    let frame: ReplyFrame = serde_json::from_str(line).unwrap();
    let again: ReplyFrame = serde_json::from_str(&serde_json::to_string(&frame).unwrap()).unwrap();
    assert_eq!(again, frame);
    for text in [
        "0.1",
        "1.7976931348623157e308",
        "2.2250738585072014e-308",
        "1.1111111111111111e21",
    ] {
        let value: serde_json::Value = serde_json::from_str(text).unwrap();
        let reparsed: f64 = text.parse().unwrap();
        assert_eq!(value.as_f64(), Some(reparsed), "{text}");
    }
}

/// `request_line`: a request whose `id` holds bytes that are not UTF-8 (or a lone surrogate
/// escape) was answered with that id copied raw, so the error answer was no JSON a client could
/// read; it now answers `id: null`.
#[test]
fn an_unreadable_id_is_answered_with_null() {
    use surface::mcp::__transport::{Decoded, decode_line};
    for line in [
        &b"{\"jsonrpc\":\"2.0\",\"id\":\"tool\xff\xfell\",\"params\":{\"n\":0e400}}"[..],
        br#"{"jsonrpc":"2.0","id":"\ud800","params":{"n":0e400}}"#,
    ] {
        let Decoded::Refuse(answer) = decode_line(line) else {
            panic!("a request that does not parse is refused")
        };
        let answer: serde_json::Value = serde_json::from_slice(&answer).expect("the answer is JSON");
        assert_eq!(answer["id"], serde_json::Value::Null);
    }
}

/// `uri_id`: only the canonical spelling of a key addresses its item.
#[test]
fn only_the_canonical_id_addresses_an_item() {
    use surface::{id_to_key, key_to_id};
    assert_eq!(id_to_key::<u32>("1").unwrap(), 1);
    for id in [
        " 1",
        "1\t",
        "\r\n1",
        "01",
        "1.0",
        "+1",
        "\"1\"",
        "-1",
        "4294967296",
        "",
    ] {
        assert!(id_to_key::<u32>(id).is_err(), "{id:?} addressed an item");
    }
    assert_eq!(key_to_id(&id_to_key::<String>("alice").unwrap()), "alice");
}
