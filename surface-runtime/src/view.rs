//! MCP Apps views (the `io.modelcontextprotocol/ui` extension, SEP-1865): an interactive HTML
//! page a host renders next to a tool's answer.
//!
//! A [`View`] is declared once, in a `const`: its `ui://<server>/<name>` URI, a self-contained
//! HTML document (`include_str!` is fine) and optional resource meta (a [`Csp`], the
//! [`Permissions`] it asks for, a dedicated sandbox `domain`, `prefers_border`). A bespoke tool
//! is bound to it by naming the const, `#[tool(read_only, view = PANEL)]`, and the server
//! declares it (`McpServer::view(PANEL)`, or `views: [PANEL]` in `bundle!`). The MCP face then
//! serves the page at its URI as `text/html;profile=mcp-app` and points every bound tool at it
//! (`_meta.ui.resourceUri`). Nothing here depends on rmcp.
//!
//! The URI is checked at compile time by [`view!`](crate::view!), so a view that is not
//! `ui://` does not build, with one error at your call:
//!
//! ```
//! use surface_runtime::view::{Csp, View};
//! const PANEL: View = surface_runtime::view!("ui://ops/processes", "<!doctype html><title>p</title>")
//!     .title("Processes")
//!     .csp(Csp::NONE.connect_domains(&["https://api.example.com"]))
//!     .prefers_border(true);
//! assert_eq!(PANEL.uri(), "ui://ops/processes");
//! assert_eq!(PANEL.name(), "processes");
//! assert_eq!(PANEL.meta().unwrap()["prefersBorder"], true);
//! ```
//!
//! ```compile_fail
//! use surface_runtime::view::View;
//! const PANEL: View = surface_runtime::view!("https://ops/processes", "<html></html>");
//! ```

use serde_json::{Map, Value, json};

/// The MIME type of an MCP Apps view (`resources/list`, `resources/read`, embedded copies).
pub const VIEW_MIME: &str = "text/html;profile=mcp-app";

/// The extension key a server advertises in `capabilities.extensions` (and a client advertises,
/// with [`VIEW_MIME`] in its `mimeTypes`, when it renders views).
pub const UI_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The flat tool-meta key older Apps hosts read (`_meta["ui/resourceUri"]`).
pub const FLAT_RESOURCE_URI_KEY: &str = "ui/resourceUri";

/// The origins a view may reach (`_meta.ui.csp` of its resource). Every list empty (the
/// default, [`Csp::NONE`]) is the host's secure default: no network at all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Csp {
    /// Origins for fetch/XHR/WebSocket (`connect-src`).
    pub connect_domains: &'static [&'static str],
    /// Origins for images, scripts, stylesheets, fonts and media.
    pub resource_domains: &'static [&'static str],
    /// Origins for nested iframes (`frame-src`).
    pub frame_domains: &'static [&'static str],
    /// Origins a `<base>` may point at (`base-uri`).
    pub base_uri_domains: &'static [&'static str],
}

impl Csp {
    /// No origin at all (what a self-contained page needs).
    pub const NONE: Csp = Csp {
        connect_domains: &[],
        resource_domains: &[],
        frame_domains: &[],
        base_uri_domains: &[],
    };

    /// With these `connectDomains`.
    pub const fn connect_domains(mut self, origins: &'static [&'static str]) -> Csp {
        self.connect_domains = origins;
        self
    }

    /// With these `resourceDomains`.
    pub const fn resource_domains(mut self, origins: &'static [&'static str]) -> Csp {
        self.resource_domains = origins;
        self
    }

    /// With these `frameDomains`.
    pub const fn frame_domains(mut self, origins: &'static [&'static str]) -> Csp {
        self.frame_domains = origins;
        self
    }

    /// With these `baseUriDomains`.
    pub const fn base_uri_domains(mut self, origins: &'static [&'static str]) -> Csp {
        self.base_uri_domains = origins;
        self
    }

    fn to_json(self) -> Value {
        let mut out = Map::new();
        for (key, list) in [
            ("connectDomains", self.connect_domains),
            ("resourceDomains", self.resource_domains),
            ("frameDomains", self.frame_domains),
            ("baseUriDomains", self.base_uri_domains),
        ] {
            if !list.is_empty() {
                out.insert(key.to_owned(), json!(list));
            }
        }
        Value::Object(out)
    }
}

/// The sandbox permissions a view asks its host for (`_meta.ui.permissions`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Permissions {
    /// The camera.
    pub camera: bool,
    /// The microphone.
    pub microphone: bool,
    /// The geolocation.
    pub geolocation: bool,
    /// Writing to the clipboard.
    pub clipboard_write: bool,
}

impl Permissions {
    /// Nothing asked.
    pub const NONE: Permissions = Permissions {
        camera: false,
        microphone: false,
        geolocation: false,
        clipboard_write: false,
    };

    fn to_json(self) -> Value {
        let mut out = Map::new();
        for (key, on) in [
            ("camera", self.camera),
            ("microphone", self.microphone),
            ("geolocation", self.geolocation),
            ("clipboardWrite", self.clipboard_write),
        ] {
            if on {
                out.insert(key.to_owned(), json!({}));
            }
        }
        Value::Object(out)
    }
}

/// A [`View`] at `uri` serving `html`, its URI checked at compile time where you write it: a
/// URI that is not `ui://<server>/<name>` is one error at this call, saying what to write. Both
/// arguments are constant `&'static str`s (`include_str!` is fine).
///
/// ```
/// const PANEL: surface_runtime::view::View =
///     surface_runtime::view!("ui://ops/panel", "<!doctype html><p>panel</p>").prefers_border(true);
/// assert_eq!(PANEL.name(), "panel");
/// ```
///
/// ```compile_fail
/// let web = surface_runtime::view!("https://ops/panel", "<p>");
/// ```
#[macro_export]
macro_rules! view {
    ($uri:expr, $html:expr $(,)?) => {{
        // The rule runs in a `const` block in the caller's crate, so its panic is the caller's
        // error, not a frame inside `surface`.
        const {
            if let ::core::option::Option::Some(why) = $crate::view::uri_problem($uri) {
                ::core::panic!("{}", why)
            }
        }
        $crate::view::View::new($uri, $html)
    }};
}

/// An MCP Apps view: a `ui://` URI, a self-contained HTML document and its resource meta.
/// Declare it in a `const` (the URI is checked at compile time there) and bind tools to it with
/// `#[tool(view = NAME)]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct View {
    uri: &'static str,
    html: &'static str,
    title: Option<&'static str>,
    description: Option<&'static str>,
    csp: Option<Csp>,
    permissions: Option<Permissions>,
    domain: Option<&'static str>,
    prefers_border: Option<bool>,
}

impl View {
    /// A view at `uri` (`ui://<server>/<name>`) serving `html`. Panics (at compile time in a
    /// `const`) when the URI is not of that shape; prefer [`view!`], whose compile error is at
    /// your call rather than inside this function.
    ///
    /// [`view!`]: crate::view!
    pub const fn new(uri: &'static str, html: &'static str) -> View {
        if let Err(why) = check_uri(uri) {
            panic!("{}", why);
        }
        View {
            uri,
            html,
            title: None,
            description: None,
            csp: None,
            permissions: None,
            domain: None,
            prefers_border: None,
        }
    }

    /// Its display title in `resources/list`.
    pub const fn title(mut self, title: &'static str) -> View {
        self.title = Some(title);
        self
    }

    /// Its description in `resources/list`.
    pub const fn description(mut self, description: &'static str) -> View {
        self.description = Some(description);
        self
    }

    /// The origins it may reach (resource meta `csp`; never on a tool).
    pub const fn csp(mut self, csp: Csp) -> View {
        self.csp = Some(csp);
        self
    }

    /// The sandbox permissions it asks for (resource meta `permissions`; never on a tool).
    pub const fn permissions(mut self, permissions: Permissions) -> View {
        self.permissions = Some(permissions);
        self
    }

    /// A dedicated sandbox origin (resource meta `domain`; its format is the host's).
    pub const fn domain(mut self, domain: &'static str) -> View {
        self.domain = Some(domain);
        self
    }

    /// Whether it wants the host to draw a border and background around it.
    pub const fn prefers_border(mut self, prefers: bool) -> View {
        self.prefers_border = Some(prefers);
        self
    }

    /// Its URI.
    pub const fn uri(&self) -> &'static str {
        self.uri
    }

    /// Its HTML document.
    pub const fn html(&self) -> &'static str {
        self.html
    }

    /// Its title, if declared.
    pub const fn display_title(&self) -> Option<&'static str> {
        self.title
    }

    /// Its description, if declared.
    pub const fn display_description(&self) -> Option<&'static str> {
        self.description
    }

    /// The `<name>` of `ui://<server>/<name>` (what `resources/list` calls it).
    pub fn name(&self) -> &'static str {
        let rest = &self.uri["ui://".len()..];
        rest.split_once('/').map_or(rest, |(_, name)| name)
    }

    /// The resource meta `_meta.ui` carries on `resources/read` (and `resources/list`):
    /// `csp`, `permissions`, `domain`, `prefersBorder`, each when set; `None` when none is.
    pub fn meta(&self) -> Option<Value> {
        let mut ui = Map::new();
        if let Some(csp) = self.csp {
            ui.insert("csp".to_owned(), csp.to_json());
        }
        if let Some(p) = self.permissions {
            ui.insert("permissions".to_owned(), p.to_json());
        }
        if let Some(d) = self.domain {
            ui.insert("domain".to_owned(), d.into());
        }
        if let Some(b) = self.prefers_border {
            ui.insert("prefersBorder".to_owned(), b.into());
        }
        (!ui.is_empty()).then_some(Value::Object(ui))
    }
}

const SHAPE: &str = "a view's URI is `ui://<server>/<name>` (MCP Apps hosts render only ui:// resources): write e.g. `ui://ops/processes`";

/// Checks a view URI: `ui://`, a non-empty server segment, `/`, a non-empty name, and nothing a
/// URI never holds unescaped (the rules of a declared resource URI).
/// What is wrong with `uri` as a view's URI, if anything (the rule [`View::new`] and [`view!`]
/// both apply).
///
/// [`view!`]: crate::view!
///
/// ```
/// use surface_runtime::view::uri_problem;
/// assert_eq!(uri_problem("ui://ops/processes"), None);
/// assert!(uri_problem("https://ops/processes").is_some());
/// ```
pub const fn uri_problem(uri: &str) -> Option<&'static str> {
    match check_uri(uri) {
        Ok(()) => None,
        Err(why) => Some(why),
    }
}

const fn check_uri(uri: &str) -> Result<(), &'static str> {
    let b = uri.as_bytes();
    let scheme = b"ui://";
    if b.len() < scheme.len() {
        return Err(SHAPE);
    }
    let mut i = 0;
    while i < scheme.len() {
        if b[i] != scheme[i] {
            return Err(SHAPE);
        }
        i += 1;
    }
    // The server segment runs to the first `/`; both it and what follows are non-empty.
    let start = i;
    while i < b.len() && b[i] != b'/' {
        i += 1;
    }
    if i == start || i + 1 >= b.len() {
        return Err(SHAPE);
    }
    if let Err(why) = crate::resource::check(uri, 0) {
        return Err(why);
    }
    Ok(())
}

/// Whether client capabilities (as JSON: `initialize`'s, or a 2026-07-28 request's) say the
/// client renders views: the [`UI_EXTENSION`] key with [`VIEW_MIME`] among its `mimeTypes`.
///
/// ```
/// use serde_json::json;
/// use surface_runtime::view::renders_views;
/// let caps = json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}});
/// assert!(renders_views(&caps));
/// assert!(!renders_views(&json!({"extensions": {"io.modelcontextprotocol/ui": {}}})));
/// ```
pub fn renders_views(capabilities: &Value) -> bool {
    capabilities
        .get("extensions")
        .and_then(|e| e.get(UI_EXTENSION))
        .and_then(|ui| ui.get("mimeTypes"))
        .and_then(Value::as_array)
        .is_some_and(|m| m.iter().any(|t| t.as_str() == Some(VIEW_MIME)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_checked() {
        assert!(check_uri("ui://ops/processes").is_ok());
        assert!(check_uri("ui://ops/panels/main").is_ok());
        assert!(check_uri("https://ops/processes").is_err());
        assert!(check_uri("ui://ops").is_err());
        assert!(check_uri("ui://ops/").is_err());
        assert!(check_uri("ui:///processes").is_err());
        assert!(check_uri("ui://ops/a b").is_err());
        assert!(check_uri("ui://ops/{id}").is_err());
    }

    #[test]
    fn meta_has_only_what_is_set() {
        const BARE: View = View::new("ui://s/v", "<p>");
        assert_eq!(BARE.meta(), None);
        let full = BARE
            .csp(Csp::NONE.resource_domains(&["https://cdn.example"]))
            .permissions(Permissions {
                clipboard_write: true,
                ..Permissions::NONE
            })
            .domain("v.example")
            .prefers_border(false);
        assert_eq!(
            full.meta(),
            Some(json!({
                "csp": {"resourceDomains": ["https://cdn.example"]},
                "permissions": {"clipboardWrite": {}},
                "domain": "v.example",
                "prefersBorder": false,
            }))
        );
    }

    #[test]
    #[should_panic(expected = "ui://<server>/<name>")]
    fn a_view_outside_ui_is_refused() {
        let _ = View::new(std::hint::black_box("http://ops/processes"), "");
    }
}
