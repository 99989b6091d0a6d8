//! A choice in a form is a unit variant; one carrying data is refused at the variant.
use schemars::JsonSchema;
use serde::Deserialize;
use surface::Elicit;

#[derive(Deserialize, JsonSchema, Elicit)]
pub enum Size {
    Small,
    Custom(u32),
}

fn main() {}
