//! A collection's item template must hold `{id}` exactly once.
use surface::resource::ResourceForm;

const ITEMS: ResourceForm = ResourceForm::template("test://template/data");

fn main() {
    let _ = ITEMS;
}
