//! A derived member is read-only: its live member has no setter.
use surface::surface;

/// What an observer sees.
#[surface]
pub struct Observer {
    /// The load, derived from another surface.
    #[cell(derived)]
    pub load: u32,
}

#[surface]
impl Observer {}

fn reset(observer: &Observer) {
    observer.load.set(0);
}

fn main() {
    let _ = reset;
}
