//! A prompt returning a bare `PromptAnswer`: at the return type, saying what to write.
use surface::prompt;
use surface::prompt::PromptAnswer;
use surface_ui_tests::ops::OpsClient;

/// Summarises the machine.
#[prompt]
async fn summary(client: &OpsClient) -> PromptAnswer {
    let _ = client;
    PromptAnswer::new().user_text("load")
}

fn main() {
    let _ = SummaryPrompt;
}
