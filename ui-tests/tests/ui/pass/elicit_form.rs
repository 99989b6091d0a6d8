//! A flat form with every field shape an elicitation allows derives `Elicit`, and its schema is
//! the form the host is sent.
use schemars::JsonSchema;
use serde::Deserialize;
use surface::Elicit;

#[derive(Deserialize, JsonSchema, Elicit)]
pub enum Size {
    /// Small
    Small,
    /// Large
    Large,
}

#[derive(Deserialize, JsonSchema, Elicit)]
pub struct Order {
    pub name: String,
    pub quantity: u32,
    pub price: f64,
    pub gift: bool,
    pub size: Size,
    pub extras: Vec<Size>,
    pub note: Option<String>,
    #[serde(skip)]
    pub internal: Vec<Vec<u8>>,
}

fn main() {
    fn form<T: surface::ask::ElicitForm>() -> serde_json::Value {
        surface::ask::form_schema::<T>().unwrap()
    }
    let schema = form::<Order>();
    assert_eq!(schema["properties"]["size"]["oneOf"][1]["title"], "Large");
    assert_eq!(schema["properties"]["extras"]["type"], "array");
    assert!(schema["properties"].get("internal").is_none());
}
