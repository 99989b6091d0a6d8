//! An elicitation form is flat: a struct field is refused at its type.
use schemars::JsonSchema;
use serde::Deserialize;
use surface::Elicit;

#[derive(Deserialize, JsonSchema)]
pub struct Address {
    pub street: String,
}

#[derive(Deserialize, JsonSchema, Elicit)]
pub struct Signup {
    pub name: String,
    pub address: Address,
}

fn main() {}
