//! MCP Apps on the MCP face: the declared views of a server, served under both UI conventions.
//!
//! - **Declared** (MCP Apps, SEP-1865): every view-bound tool carries `_meta.ui.resourceUri`
//!   (and the flat `_meta["ui/resourceUri"]` older hosts read, unless switched off);
//!   `resources/list` lists each view as `text/html;profile=mcp-app`; `resources/read` answers
//!   exactly one content item with the HTML as `text` and the view's resource meta as
//!   `_meta.ui`; the capabilities carry `extensions: {"io.modelcontextprotocol/ui": {}}` in both
//!   eras. A tool's `_meta.ui` never carries `csp` or `permissions` (they belong to the page).
//!   All of it is advertised only to a client that declares the extension in its capabilities
//!   (at `initialize`, or per request on 2026-07-28), as the Apps spec asks a server to check
//!   first; any other client sees the tools without UI meta and no view in `resources/list`
//!   (a view's `resources/read` still answers, and the tools answer the same to everyone).
//! - **Embedded** (mcp-ui), when switched on: a client that says it renders views (the
//!   extension key with `text/html;profile=mcp-app` among its `mimeTypes`, at `initialize` or
//!   per request on 2026-07-28) also gets the `ui://` resource inside the tool result.
//!
//! Text first, always: a view-bound tool's answer keeps its complete text and
//! `structuredContent` (a host without UI loses nothing); the embedded page comes after them.
//! With the UI off (`McpServer::ui(false)`, `--no-ui` on the examples) there are no views, no
//! extension and no UI meta at all; bound tools answer exactly as unbound ones.

use super::resources::{ResourceEntry, TemplateEntry};
use crate::table::ToolRow;
use crate::view::{FLAT_RESOURCE_URI_KEY, UI_EXTENSION, VIEW_MIME, View, renders_views};
use rmcp::model::{
    CallToolResult, ClientCapabilities, ContentBlock, MetaObject, ReadResourceResult, Resource,
    ResourceContents, ServerCapabilities,
};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap};

/// What the server was told about views: the fixed part (never moves across rerosters).
#[derive(Clone, Debug)]
pub(crate) struct Ui {
    pub views: Vec<View>,
    /// Off: no views, no extension, no UI meta.
    pub enabled: bool,
    /// Also write the flat `_meta["ui/resourceUri"]` key.
    pub flat_key: bool,
    /// Embed the page in the results of clients that render views.
    pub embed: bool,
}

impl Default for Ui {
    fn default() -> Self {
        Ui {
            views: Vec::new(),
            enabled: true,
            flat_key: true,
            embed: false,
        }
    }
}

impl Ui {
    /// Whether the server serves any view (and so advertises the extension).
    fn serves_views(&self) -> bool {
        self.enabled && !self.views.is_empty()
    }
}

/// The views one generation serves, by URI.
#[derive(Clone, Debug, Default)]
pub(crate) struct Served {
    views: BTreeMap<&'static str, View>,
    flat_key: bool,
    embed: bool,
}

/// Adds the UI extension to the server's capabilities when a view is served.
pub(crate) fn advertise(capabilities: &mut ServerCapabilities, ui: &Ui) {
    if ui.serves_views() {
        capabilities
            .extensions
            .get_or_insert_with(Default::default)
            .insert(UI_EXTENSION.to_owned(), Map::new());
    }
}

/// Whether a client's capabilities declare the MCP Apps extension (whatever its settings).
pub(crate) fn declared(client: Option<&ClientCapabilities>) -> bool {
    client
        .and_then(|c| c.extensions.as_ref())
        .is_some_and(|e| e.contains_key(UI_EXTENSION))
}

/// The server's capabilities as told to a client: without the UI extension unless it declared
/// the extension itself.
pub(crate) fn told(
    mut capabilities: ServerCapabilities,
    client: Option<&ClientCapabilities>,
) -> ServerCapabilities {
    if !declared(client)
        && let Some(extensions) = &mut capabilities.extensions
    {
        extensions.remove(UI_EXTENSION);
        if extensions.is_empty() {
            capabilities.extensions = None;
        }
    }
    capabilities
}

/// The views of a roster, refusing (in `problems`) a view declared twice, a view at a URI a
/// member also claims, and a tool bound to a view the server does not declare.
pub(crate) fn compose(
    ui: &Ui,
    rows: &[ToolRow],
    resources: &HashMap<String, ResourceEntry>,
    templates: &[TemplateEntry],
    problems: &mut Vec<String>,
) -> Served {
    if !ui.enabled {
        return Served::default();
    }
    let mut views = BTreeMap::new();
    for view in &ui.views {
        if views.insert(view.uri(), *view).is_some() {
            problems.push(format!("the view {} is declared twice — keep one", view.uri()));
        }
        let claimed = resources.contains_key(view.uri())
            || templates
                .iter()
                .any(|t| crate::resource::match_template(&t.prefix, &t.suffix, view.uri()).is_some());
        if claimed {
            problems.push(format!(
                "the view {} is at a URI a member's resource also claims — move one",
                view.uri()
            ));
        }
    }
    for row in rows {
        if let Some(uri) = row.entry.view
            && !views.contains_key(uri)
        {
            problems.push(format!(
                "tool \"{}\" ({}) is bound to the view {uri}, which this server does not declare — declare it with `.view(…)` (or in `bundle!`'s `views: [..]`)",
                row.name, row.origin
            ));
        }
    }
    Served {
        views,
        flat_key: ui.flat_key,
        embed: ui.embed,
    }
}

impl Served {
    /// Whether no view is served.
    pub(crate) fn is_empty(&self) -> bool {
        self.views.is_empty()
    }

    /// The `_meta` of a tool bound to `view` (none when unbound or the UI is off): the nested
    /// `ui.resourceUri`, plus the flat key when on. Never `csp` or `permissions`.
    pub(crate) fn tool_meta(&self, view: Option<&str>) -> Option<MetaObject> {
        let uri = view.filter(|v| self.views.contains_key(v))?;
        let mut meta = Map::new();
        meta.insert("ui".to_owned(), json!({ "resourceUri": uri }));
        if self.flat_key {
            meta.insert(FLAT_RESOURCE_URI_KEY.to_owned(), uri.into());
        }
        Some(MetaObject(meta))
    }

    /// The `resources/list` entries of the views.
    pub(crate) fn list(&self) -> impl Iterator<Item = Resource> + '_ {
        self.views.values().map(|view| {
            let mut r = Resource::new(view.uri(), view.name()).with_mime_type(VIEW_MIME);
            r.title = view.display_title().map(str::to_owned);
            r.description = view.display_description().map(str::to_owned);
            r.meta = ui_meta(view);
            r
        })
    }

    /// `resources/read` of a view: one item, the HTML as text, `_meta.ui` when set.
    pub(crate) fn read(&self, uri: &str) -> Option<ReadResourceResult> {
        let view = self.views.get(uri)?;
        Some(ReadResourceResult::new(vec![contents(view)]))
    }

    /// A successful answer of a tool bound to `view` (text first already: see results.rs),
    /// for a client that renders views when embedding is on, with the page embedded after it.
    pub(crate) fn finish(
        &self,
        view: Option<&str>,
        client: Option<Value>,
        mut result: CallToolResult,
    ) -> CallToolResult {
        let Some(view) = view.and_then(|v| self.views.get(v)) else {
            return result;
        };
        if result.is_error == Some(true) {
            return result;
        }
        // Text first already: every success with a value has its text block (results.rs).
        if self.embed && client.as_ref().is_some_and(renders_views) {
            result.content.push(ContentBlock::resource(contents(view)));
        }
        result
    }
}

/// `{"ui": <the view's resource meta>}`, when it has any.
fn ui_meta(view: &View) -> Option<MetaObject> {
    let meta = view.meta()?;
    Some(MetaObject(Map::from_iter([("ui".to_owned(), meta)])))
}

fn contents(view: &View) -> ResourceContents {
    ResourceContents::TextResourceContents {
        uri: view.uri().to_owned(),
        mime_type: Some(VIEW_MIME.to_owned()),
        text: view.html().to_owned(),
        meta: ui_meta(view),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::{Csp, Permissions};

    const PANEL: View = View::new("ui://t/panel", "<p>panel</p>")
        .csp(Csp::NONE.connect_domains(&["https://api.example"]))
        .permissions(Permissions {
            camera: true,
            ..Permissions::NONE
        });

    fn served(flat_key: bool, embed: bool) -> Served {
        let ui = Ui {
            views: vec![PANEL],
            flat_key,
            embed,
            ..Ui::default()
        };
        let mut problems = Vec::new();
        let s = compose(&ui, &[], &HashMap::new(), &[], &mut problems);
        assert!(problems.is_empty(), "{problems:?}");
        s
    }

    #[test]
    fn a_tools_meta_points_at_the_page_and_nothing_else() {
        let meta = served(true, false).tool_meta(Some("ui://t/panel")).unwrap();
        assert_eq!(
            Value::Object(meta.0),
            json!({"ui": {"resourceUri": "ui://t/panel"}, "ui/resourceUri": "ui://t/panel"})
        );
        let meta = served(false, false).tool_meta(Some("ui://t/panel")).unwrap();
        assert_eq!(
            Value::Object(meta.0),
            json!({"ui": {"resourceUri": "ui://t/panel"}})
        );
        assert!(served(true, false).tool_meta(None).is_none());
    }

    #[test]
    fn a_read_is_one_item_with_the_pages_meta() {
        let read = serde_json::to_value(served(true, false).read("ui://t/panel").unwrap()).unwrap();
        let items = read["contents"].as_array().unwrap();
        assert_eq!(items.len(), 1);
        assert_eq!(items[0]["mimeType"], VIEW_MIME);
        assert_eq!(items[0]["text"], "<p>panel</p>");
        assert_eq!(
            items[0]["_meta"]["ui"],
            json!({"csp": {"connectDomains": ["https://api.example"]}, "permissions": {"camera": {}}})
        );
    }

    #[test]
    fn answers_stay_text_first_and_embed_only_for_clients_that_render() {
        let ui_client = json!({"extensions": {UI_EXTENSION: {"mimeTypes": [VIEW_MIME]}}});
        let image = super::super::results::success(crate::blocks::ToolOutput::Image(crate::ok_image(
            vec![0],
            "image/png",
            json!({"w": 1}),
        )));
        let out = served(true, true).finish(Some("ui://t/panel"), Some(ui_client.clone()), image);
        let kinds: Vec<&str> = serde_json::to_value(&out.content)
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .map(|b| {
                if b["type"] == "text" {
                    "text"
                } else if b["type"] == "image" {
                    "image"
                } else {
                    "resource"
                }
            })
            .collect();
        assert_eq!(kinds, ["text", "image", "resource"]);
        let plain = CallToolResult::success(vec![ContentBlock::text("{}")]);
        let out = served(true, true).finish(Some("ui://t/panel"), Some(json!({})), plain.clone());
        assert_eq!(out.content.len(), 1, "a client without UI gets no page");
        let out = served(true, false).finish(Some("ui://t/panel"), Some(ui_client), plain);
        assert_eq!(out.content.len(), 1, "embedding is off");
    }

    #[test]
    fn an_undeclared_or_doubled_view_is_refused() {
        let ui = Ui {
            views: vec![PANEL, PANEL],
            ..Ui::default()
        };
        let mut problems = Vec::new();
        compose(&ui, &[], &HashMap::new(), &[], &mut problems);
        assert_eq!(problems, ["the view ui://t/panel is declared twice — keep one"]);
    }
}
