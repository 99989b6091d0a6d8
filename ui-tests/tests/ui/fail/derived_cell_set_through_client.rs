//! A derived member is read-only: the typed client has no setter for it either.
use surface::surface;

/// What an observer sees.
#[surface]
pub struct Observer {
    /// The log, derived from another surface.
    #[stream(derived)]
    pub log: String,
}

#[surface]
impl Observer {}

async fn append(client: &ObserverClient) {
    let _ = client.log().push(&"forged".to_string()).await;
}

fn main() {
    let _ = append;
}
