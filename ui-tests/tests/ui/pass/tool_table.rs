//! A `#[tool]` gets a companion type (`scaled` → `ScaledTool`) that describes it (name, title,
//! description, mutates) and invokes it; the function itself stays an ordinary function.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use surface::{BespokeTool, CancellationToken, ToolTable, surface, tool};

#[derive(Clone, Serialize, Deserialize, JsonSchema)]
pub struct Load {
    pub cpu: f64,
}

#[surface]
pub struct Ops {
    #[cell]
    pub load: Load,
}

#[surface]
impl Ops {}

#[derive(Deserialize, JsonSchema)]
pub struct Scale {
    pub by: f64,
}

/// The load, scaled.
#[tool(read_only, title = "Scaled load")]
async fn scaled(args: Scale, client: &OpsClient) -> Result<f64, surface::Failure> {
    Ok(client.load().get().await?.cpu * args.by)
}

/// Resets the load.
#[tool]
async fn reset(client: &OpsClient, _cancel: CancellationToken) -> Result<(), surface::Failure> {
    client.load().set(&Load { cpu: 0.0 }).await
}

fn main() {
    let d = ScaledTool.descriptor();
    assert_eq!(d.name, "scaled");
    assert_eq!(d.title, Some("Scaled load"));
    assert_eq!(d.description, "The load, scaled.");
    assert!(!d.mutates);

    let d = BespokeTool::descriptor(&ResetTool);
    assert_eq!((d.name, d.title, d.mutates), ("reset", None, true));

    let table: ToolTable<OpsClient> = vec![Arc::new(ScaledTool), Arc::new(ResetTool)];
    let client = OpsClient::direct(Arc::new(Ops {
        load: surface::Cell::new(Load { cpu: 0.5 }),
    }));
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    runtime.block_on(async {
        let out = table[0]
            .invoke(
                serde_json::json!({ "by": 2.0 }),
                &client,
                CancellationToken::new(),
            )
            .await
            .unwrap();
        assert_eq!(out, surface::ToolOutput::Value(serde_json::json!(1.0)));
        // The function stays callable directly.
        assert_eq!(scaled(Scale { by: 4.0 }, &client).await.unwrap(), 2.0);
        table[1]
            .invoke(serde_json::Value::Null, &client, CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(client.load().get().await.unwrap().cpu, 0.0);
    });
}
