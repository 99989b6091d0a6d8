//! An event is heard, not read: it has no read for a tool to mirror.
use surface::{Expose, expose, surface};

/// A bell.
#[surface]
pub struct Bell {
    /// Rung when someone is at the door.
    #[event]
    pub rung: u32,
}

const EXPOSE: Expose<Bell> = expose!(Bell { rung: resource(mirror) });

#[surface]
impl Bell {}

fn main() {
    let _ = EXPOSE;
}
