//! A declared resource URI is checked at compile time: it must start with a scheme.
use surface::resource::ResourceForm;
use surface::resource_uri;

const NOTES: ResourceForm = resource_uri!("notes today");

fn main() {
    let _ = NOTES;
}
