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
