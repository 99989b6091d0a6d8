//! A declared resource URI is checked in const evaluation: it must start with a scheme.
use surface::resource::ResourceForm;

const NOTES: ResourceForm = ResourceForm::uri("notes today");

fn main() {
    let _ = NOTES;
}
