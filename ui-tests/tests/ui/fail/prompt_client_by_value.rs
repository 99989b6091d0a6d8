//! A prompt taking its client by value: the error is at the type and says `&OpsClient`, as
//! for a tool (the two share their signature's rules).
use surface::prompt;
use surface::prompt::PromptAnswer;
use surface_ui_tests::ops::OpsClient;

/// Summarises the machine.
#[prompt]
async fn summary(client: OpsClient) -> Result<PromptAnswer, surface::Failure> {
    let load = client.load().get().await?;
    Ok(PromptAnswer::new().user_text(format!("load {load}")))
}

fn main() {}
