//! A prompt without a doc comment is refused, as a tool is (agents read it).
use surface::prompt;
use surface::prompt::PromptAnswer;
use surface_ui_tests::ops::OpsClient;

#[prompt]
async fn summary(client: &OpsClient) -> Result<PromptAnswer, surface::Failure> {
    let load = client.load().get().await?;
    Ok(PromptAnswer::new().user_text(format!("load {load}")))
}

fn main() {
    let _ = SummaryPrompt;
}
