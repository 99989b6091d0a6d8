//! A prompt with a second input: the error is at the extra one.
use schemars::JsonSchema;
use serde::Deserialize;
use surface::prompt;
use surface::prompt::PromptAnswer;
use surface_ui_tests::ops::OpsClient;

#[derive(Deserialize, JsonSchema)]
pub struct Topic {
    pub topic: String,
}

/// Summarises the machine.
#[prompt]
async fn summary(args: Topic, style: String, client: &OpsClient) -> Result<PromptAnswer, surface::Failure> {
    let load = client.load().get().await?;
    Ok(PromptAnswer::new().user_text(format!("{} {style} load {load}", args.topic)))
}

fn main() {
    let _ = SummaryPrompt;
}
