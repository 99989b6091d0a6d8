//! URI item ids: `id_to_key` accepts exactly the canonical spelling `key_to_id` produces, so one
//! item has one URI (`%201`, `" 1"` or `1\t` must not address item 1).
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde::Serialize;
use serde::de::DeserializeOwned;
use surface_runtime::{id_to_key, key_to_id};

fn canonical_only<K: Serialize + DeserializeOwned>(id: &str) {
    if let Ok(key) = id_to_key::<K>(id) {
        assert_eq!(key_to_id(&key), id, "a non-canonical id addressed an item");
    }
}

fuzz_target!(|id: &str| {
    canonical_only::<u32>(id);
    canonical_only::<i64>(id);
    canonical_only::<u8>(id);
    canonical_only::<String>(id);
    canonical_only::<bool>(id);
});
