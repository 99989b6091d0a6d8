//! A prompt returning a `String`: at the return type, saying what to write.
use surface::prompt;

use surface_ui_tests::ops::OpsClient;

/// Summarises the machine.
#[prompt]
async fn summary(client: &OpsClient) -> String {
    let _ = client;
    "load".to_string()
}

fn main() {
    let _ = SummaryPrompt;
}
