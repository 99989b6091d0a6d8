//! `#[surface]` and `#[procedure]` on a free function: one error, saying to move it into the
//! surface's impl block (its `#[procedure]` is not reported again).
use std::convert::Infallible;
use surface::surface;

#[surface]
#[procedure("proc.kill")]
async fn kill(pid: u32) -> Result<u32, Infallible> {
    Ok(pid)
}

fn main() {
    let _ = kill(1);
}
