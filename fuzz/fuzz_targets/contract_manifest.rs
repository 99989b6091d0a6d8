//! The contract manifest reader: `Manifest::from_json` never panics on any text, and a
//! manifest it accepts is written back (`to_json`) as text it reads to the same manifest.
#![no_main]

use libfuzzer_sys::fuzz_target;
use surface_runtime::mcp::contract::Manifest;

fuzz_target!(|text: &str| {
    if let Ok(manifest) = Manifest::from_json(text) {
        let again = Manifest::from_json(&manifest.to_json()).expect("a written manifest reads back");
        assert_eq!(again, manifest);
    }
});
