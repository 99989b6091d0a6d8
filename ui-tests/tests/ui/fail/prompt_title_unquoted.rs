//! A prompt's title written without quotes: the error says to quote it.
use surface::prompt;
use surface::prompt::PromptAnswer;
use surface_ui_tests::ops::OpsClient;

/// Summarises the machine.
#[prompt(title = Summary)]
async fn summary(client: &OpsClient) -> Result<PromptAnswer, surface::Failure> {
    let load = client.load().get().await?;
    Ok(PromptAnswer::new().user_text(format!("load {load}")))
}

fn main() {
    let _ = SummaryPrompt;
}
