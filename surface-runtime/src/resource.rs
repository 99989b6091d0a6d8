//! Where and how an exposed member is served as a resource: at its own URI (a collection at its
//! own URI template, with exactly the variable `{id}`) and in the form of its choosing — JSON (the
//! default), text with a MIME type, or bytes served as a base64 blob with their MIME type.
//!
//! A member without a [`ResourceForm`] stays at the runtime's own `surface://` URI as JSON. A
//! form is declared on the member of a bundle ([`crate::bundle::Member::resource`]); its URI is
//! checked at compile time by [`resource_uri!`](crate::resource_uri) and
//! [`resource_template!`](crate::resource_template): a malformed URI, or a template without
//! exactly one `{id}`, does not build, and the error is one error at your macro call. (The `const
//! fn`s [`ResourceForm::uri`] and [`ResourceForm::template`] check the same, but their panic is
//! reported inside this module.)
//!
//! ```
//! use surface_runtime::resource::ResourceForm;
//! use surface_runtime::{resource_template, resource_uri};
//! const PICTURE: ResourceForm = resource_uri!("test://static-binary").blob("image/png");
//! const ITEMS: ResourceForm = resource_template!("test://template/{id}/data");
//! assert_eq!(PICTURE.declared_uri(), Some("test://static-binary"));
//! assert_eq!(ITEMS.template_parts(), Some(("test://template/", "/data")));
//! ```
//!
//! ```compile_fail
//! let no_id = surface_runtime::resource_template!("test://template/data");
//! ```

/// What a resource read answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResourceBody {
    /// The value as pretty JSON text, `application/json` (the default).
    Json,
    /// Text with this MIME type: a string value as itself, any other value as JSON.
    Text(&'static str),
    /// Bytes with this MIME type, served base64 as a blob: the value is a byte array (a
    /// `Vec<u8>` cell) or a string (its UTF-8 bytes).
    Blob(&'static str),
}

impl ResourceBody {
    /// The MIME type the resource is listed and read with.
    pub const fn mime(self) -> &'static str {
        match self {
            ResourceBody::Json => "application/json",
            ResourceBody::Text(m) | ResourceBody::Blob(m) => m,
        }
    }
}

/// A member's declared URI (or URI template) and body form. Build in a `const` so the URI is
/// checked at compile time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResourceForm {
    uri: Option<&'static str>,
    template: bool,
    body: ResourceBody,
}

impl ResourceForm {
    /// Keeps the runtime's `surface://` URI; only the body form changes.
    pub const fn default_uri() -> Self {
        ResourceForm {
            uri: None,
            template: false,
            body: ResourceBody::Json,
        }
    }

    /// A cell (or any single-valued member) at `uri`: a well-formed absolute URI with no
    /// template variable. Panics (at compile time in a `const`, reported inside this crate) when
    /// it is not; [`resource_uri!`](crate::resource_uri) reports it at your call instead.
    pub const fn uri(uri: &'static str) -> Self {
        if let Err(why) = check(uri, 0) {
            panic!("{}", why);
        }
        ResourceForm {
            uri: Some(uri),
            template: false,
            body: ResourceBody::Json,
        }
    }

    /// A collection's items at `template`, which has exactly one variable, `{id}` (the item's
    /// key), and no other. Panics (at compile time in a `const`, reported inside this crate) when
    /// it does not; [`resource_template!`](crate::resource_template) reports it at your call.
    pub const fn template(template: &'static str) -> Self {
        if let Err(why) = check(template, 1) {
            panic!("{}", why);
        }
        ResourceForm {
            uri: Some(template),
            template: true,
            body: ResourceBody::Json,
        }
    }

    /// Served as text with `mime` (a string value as itself).
    pub const fn text(mut self, mime: &'static str) -> Self {
        self.body = ResourceBody::Text(mime);
        self
    }

    /// Served as bytes with `mime`, a base64 blob.
    pub const fn blob(mut self, mime: &'static str) -> Self {
        self.body = ResourceBody::Blob(mime);
        self
    }

    /// The declared URI (or template), if any.
    pub const fn declared_uri(&self) -> Option<&'static str> {
        self.uri
    }

    /// Whether the declared URI is a collection's item template.
    pub const fn is_template(&self) -> bool {
        self.template
    }

    /// The body form.
    pub const fn body(&self) -> ResourceBody {
        self.body
    }

    /// A template's text before and after `{id}`.
    pub fn template_parts(&self) -> Option<(&'static str, &'static str)> {
        let t = self.uri.filter(|_| self.template)?;
        t.split_once("{id}")
    }
}

/// A [`ResourceForm`] at `uri`, checked at compile time where you write it: a malformed URI is
/// one error at this call, with the rule it breaks. `uri` is a constant `&'static str`.
///
/// ```
/// const NOTES: surface_runtime::resource::ResourceForm =
///     surface_runtime::resource_uri!("notes://today").text("text/markdown");
/// assert_eq!(NOTES.declared_uri(), Some("notes://today"));
/// ```
///
/// ```compile_fail
/// let spaced = surface_runtime::resource_uri!("notes today");
/// ```
#[macro_export]
macro_rules! resource_uri {
    ($uri:expr) => {{
        // The rule is evaluated in a `const` block in the caller's crate, so its panic is the
        // caller's error, not a frame inside `surface`. (Not shared through a helper macro: the
        // compiler's note would name it.)
        const {
            if let ::core::option::Option::Some(why) = $crate::resource::uri_problem($uri, 0) {
                ::core::panic!("{}", why)
            }
        }
        $crate::resource::ResourceForm::uri($uri)
    }};
}

/// A collection's [`ResourceForm`] at `template`, checked at compile time where you write it:
/// a template without exactly one `{id}` (or otherwise malformed) is one error at this call.
///
/// ```
/// const ITEMS: surface_runtime::resource::ResourceForm =
///     surface_runtime::resource_template!("x://items/{id}/data");
/// assert_eq!(ITEMS.template_parts(), Some(("x://items/", "/data")));
/// ```
///
/// ```compile_fail
/// let no_id = surface_runtime::resource_template!("x://items/data");
/// ```
#[macro_export]
macro_rules! resource_template {
    ($template:expr) => {{
        // As `resource_uri!`: the rule's panic happens in the caller's const block.
        const {
            if let ::core::option::Option::Some(why) = $crate::resource::uri_problem($template, 1) {
                ::core::panic!("{}", why)
            }
        }
        $crate::resource::ResourceForm::template($template)
    }};
}

/// What is wrong with a declared URI holding `{id}` `ids` times (0 for a plain URI, 1 for a
/// collection's template), if anything: the rule [`resource_uri!`](crate::resource_uri) and
/// [`resource_template!`](crate::resource_template) evaluate at compile time.
///
/// ```
/// use surface_runtime::resource::uri_problem;
/// assert_eq!(uri_problem("notes://today", 0), None);
/// assert!(uri_problem("x://items/data", 1).is_some());
/// ```
pub const fn uri_problem(uri: &str, ids: usize) -> Option<&'static str> {
    match check(uri, ids) {
        Ok(()) => None,
        Err(why) => Some(why),
    }
}

impl Default for ResourceForm {
    fn default() -> Self {
        ResourceForm::default_uri()
    }
}

/// Checks a declared URI: an RFC 3986 scheme, `:`, then visible ASCII other than the characters
/// a URI never holds unescaped; `{id}` exactly `ids` times and no other brace.
pub(crate) const fn check(uri: &str, ids: usize) -> Result<(), &'static str> {
    let b = uri.as_bytes();
    if b.is_empty() || !b[0].is_ascii_alphabetic() {
        return Err(
            "a resource URI starts with a scheme (a letter, then letters, digits, `+`, `-`, `.`), then `:`",
        );
    }
    let mut i = 0;
    while i < b.len() && b[i] != b':' {
        if !(b[i].is_ascii_alphanumeric() || b[i] == b'+' || b[i] == b'-' || b[i] == b'.') {
            return Err(
                "a resource URI starts with a scheme (a letter, then letters, digits, `+`, `-`, `.`), then `:`",
            );
        }
        i += 1;
    }
    if i == b.len() || i + 1 == b.len() {
        return Err("a resource URI has a scheme, `:` and something after it");
    }
    let mut found = 0;
    i += 1;
    while i < b.len() {
        let c = b[i];
        if c == b'{' {
            if i + 3 < b.len() && b[i + 1] == b'i' && b[i + 2] == b'd' && b[i + 3] == b'}' {
                found += 1;
                i += 4;
                continue;
            }
            return Err("the only template variable a resource URI may hold is `{id}`");
        }
        if c == b'}' {
            return Err("the only template variable a resource URI may hold is `{id}`");
        }
        if c <= b' ' || c >= 0x7f || matches!(c, b'"' | b'<' | b'>' | b'\\' | b'^' | b'`' | b'|') {
            return Err(
                "a resource URI holds no spaces, controls, non-ASCII or any of \"<>\\^`| (percent-encode them)",
            );
        }
        i += 1;
    }
    if found != ids {
        return Err(if ids == 0 {
            "a member's URI has no `{id}`: only a collection's template does (ResourceForm::template)"
        } else {
            "a collection's URI template has exactly one variable, `{id}` (the item's key)"
        });
    }
    Ok(())
}

/// The item id `uri` addresses under the template `prefix{id}suffix`: one non-empty segment
/// (no `/`), percent-decoded.
#[cfg_attr(not(feature = "mcp"), allow(dead_code))] // read through the MCP face
pub(crate) fn match_template(prefix: &str, suffix: &str, uri: &str) -> Option<String> {
    let id = uri.strip_prefix(prefix)?.strip_suffix(suffix)?;
    if id.is_empty() || id.contains('/') {
        return None;
    }
    Some(crate::schema::percent_decode(id).unwrap_or_else(|| id.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_checked() {
        assert!(check("test://static-text", 0).is_ok());
        assert!(check("urn:x", 0).is_ok());
        assert!(check("test://t/{id}/data", 1).is_ok());
        assert!(check("test://t/{id}/{id}", 1).is_err());
        assert!(check("test://t/data", 1).is_err());
        assert!(check("test://t/{id}", 0).is_err());
        assert!(check("test://t/{name}", 1).is_err());
        assert!(check("no scheme", 0).is_err());
        assert!(check("1x://a", 0).is_err());
        assert!(check("x:", 0).is_err());
        assert!(check("x://a b", 0).is_err());
    }

    #[test]
    fn templates_match_one_segment() {
        assert_eq!(
            match_template("test://t/", "/data", "test://t/123/data"),
            Some("123".to_owned())
        );
        assert_eq!(match_template("test://t/", "/data", "test://t//data"), None);
        assert_eq!(match_template("test://t/", "/data", "test://t/1/2/data"), None);
        assert_eq!(
            match_template("s://c/k/", "", "s://c/k/a%20b"),
            Some("a b".to_owned())
        );
    }

    #[test]
    #[should_panic(expected = "exactly one variable")]
    fn a_template_without_id_is_refused() {
        let _ = ResourceForm::template(std::hint::black_box("test://t/data"));
    }
}
