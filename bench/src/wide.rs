//! A wide surface: 20 members (8 cells, 6 collections, 3 streams, 3 events), all exposed, for
//! the reroster benchmark (siblings × 20 members).

use crate::ops::{Load, Process, Saved};
use surface::{Expose, expose, surface};

/// Twenty members.
#[surface]
pub struct Wide {
    /// c0.
    #[cell]
    pub c0: Load,
    /// c1.
    #[cell]
    pub c1: Load,
    /// c2.
    #[cell]
    pub c2: Load,
    /// c3.
    #[cell]
    pub c3: Load,
    /// c4.
    #[cell]
    pub c4: u32,
    /// c5.
    #[cell]
    pub c5: u32,
    /// c6.
    #[cell]
    pub c6: String,
    /// c7.
    #[cell]
    pub c7: String,
    /// k0.
    #[collection(key = u32)]
    pub k0: Process,
    /// k1.
    #[collection(key = u32)]
    pub k1: Process,
    /// k2.
    #[collection(key = u32)]
    pub k2: Process,
    /// k3.
    #[collection(key = String)]
    pub k3: Process,
    /// k4.
    #[collection(key = String)]
    pub k4: Load,
    /// k5.
    #[collection(key = String)]
    pub k5: Load,
    /// s0.
    #[stream]
    pub s0: String,
    /// s1.
    #[stream]
    pub s1: String,
    /// s2.
    #[stream]
    pub s2: Load,
    /// e0.
    #[event]
    pub e0: Saved,
    /// e1.
    #[event]
    pub e1: Saved,
    /// e2.
    #[event]
    pub e2: Load,
}

#[surface]
impl Wide {}

impl Default for Wide {
    fn default() -> Self {
        let load = || Load { cpu: 0.0, procs: 0 };
        Wide {
            c0: surface::Cell::new(load()),
            c1: surface::Cell::new(load()),
            c2: surface::Cell::new(load()),
            c3: surface::Cell::new(load()),
            c4: surface::Cell::new(0),
            c5: surface::Cell::new(0),
            c6: surface::Cell::new(String::new()),
            c7: surface::Cell::new(String::new()),
            k0: surface::Collection::new(),
            k1: surface::Collection::new(),
            k2: surface::Collection::new(),
            k3: surface::Collection::new(),
            k4: surface::Collection::new(),
            k5: surface::Collection::new(),
            s0: surface::Stream::new(),
            s1: surface::Stream::new(),
            s2: surface::Stream::new(),
            e0: surface::Event::new(),
            e1: surface::Event::new(),
            e2: surface::Event::new(),
        }
    }
}

/// All twenty, as resources.
pub const WIDE: Expose<Wide> = expose!(Wide {
    c0: resource,
    c1: resource,
    c2: resource,
    c3: resource,
    c4: resource,
    c5: resource,
    c6: resource,
    c7: resource,
    k0: resource,
    k1: resource,
    k2: resource,
    k3: resource,
    k4: resource,
    k5: resource,
    s0: resource,
    s1: resource,
    s2: resource,
    e0: resource,
    e1: resource,
    e2: resource,
});
