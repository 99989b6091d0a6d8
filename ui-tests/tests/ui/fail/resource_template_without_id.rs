//! A collection's item template must hold `{id}` exactly once.
use surface::resource::ResourceForm;
use surface::resource_template;

const ITEMS: ResourceForm = resource_template!("test://template/data");

fn main() {
    let _ = ITEMS;
}
