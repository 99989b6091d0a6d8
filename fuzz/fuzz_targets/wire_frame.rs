//! Wire frames as a hostile peer sends them: the newline codec (bounded like `MAX_FRAME`, scaled
//! down) splits any bytes into lines without panicking, and every line that decodes as a request
//! or reply frame survives a round trip unchanged, so what the server answers is what it read.
#![no_main]

use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use surface_runtime::wire::protocol::{Hello, ReplyFrame, RequestFrame};
use tokio_util::codec::{Decoder, LinesCodec};

/// `MAX_FRAME` is 16 MiB; the fuzzer's inputs are far smaller, so bound the codec the same way
/// at a size the inputs can cross.
const SMALL_FRAME: usize = 512;

fn round_trips<T>(line: &str)
where
    T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
{
    if let Ok(frame) = serde_json::from_str::<T>(line) {
        let again = serde_json::to_string(&frame).expect("a decoded frame encodes");
        let back: T = serde_json::from_str(&again).expect("an encoded frame decodes");
        assert_eq!(back, frame);
    }
}

fuzz_target!(|data: &[u8]| {
    let mut codec = LinesCodec::new_with_max_length(SMALL_FRAME);
    let mut buf = BytesMut::from(data);
    loop {
        match codec.decode(&mut buf) {
            Ok(Some(line)) => {
                assert!(line.len() <= SMALL_FRAME);
                round_trips::<RequestFrame>(&line);
                round_trips::<ReplyFrame>(&line);
                round_trips::<Hello>(&line);
            }
            Ok(None) => break,
            // An over-long line or invalid UTF-8: the connection ends, as in the server.
            Err(_) => break,
        }
    }
});
