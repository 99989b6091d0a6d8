//! `ctx.elicit::<T>` needs a form: a type that does not derive `Elicit` is refused at the call.
use schemars::JsonSchema;
use serde::Deserialize;
use surface::context::ToolContext;

#[derive(Deserialize, JsonSchema)]
pub struct Name {
    pub name: String,
}

async fn ask(ctx: ToolContext) {
    let _ = ctx.elicit::<Name>("What is your name?").await;
}

fn main() {
    let _ = ask;
}
