use surface::View;

// MCP Apps hosts render only ui:// resources.
const PANEL: View = surface::view!("https://ops/processes", "<!doctype html><p>processes</p>");

fn main() {
    let _ = PANEL;
}
