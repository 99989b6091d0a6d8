//! `derived` is a word; a misspelling is named with the word to write.
use surface::surface;

#[surface]
pub struct Observer {
    #[cell(derived = true)]
    pub load: u32,
    #[stream(derive)]
    pub log: String,
}

#[surface]
impl Observer {}

fn main() {}
