//! `server.json` for the official MCP registry, generated from the contract manifest.
//!
//! The registry lists a server by a reverse-DNS name with a package to install it from; it
//! accepts crates (`registryType: "cargo"`, run over stdio). What the registry needs that the
//! MCP face does not say (the name, the one-line description, the crate and its version) is a
//! [`RegistryEntry`]; everything the face says is read off the checked-in
//! [`Manifest`], so the listing and the contract gate cannot
//! disagree. The tools, resources and scopes travel in the publisher-provided `_meta`.
//!
//! [`server_json`] refuses, with a sentence, what the registry would refuse: a name that is
//! not `namespace/name`, a description over 100 characters, a version that is a range or
//! `latest`.
//!
//! ```
//! use surface_runtime::mcp::contract::Manifest;
//! use surface_runtime::mcp::registry::{RegistryEntry, server_json};
//!
//! let manifest = Manifest::from_json(r#"{"tools": {"count": {"description": "How many."}},
//!     "resources": {}, "templates": {}}"#).unwrap();
//! let entry = RegistryEntry::new("io.github.example/ops", "Operate a machine's processes", "0.1.0")
//!     .crate_name("ops-server");
//! let json = server_json(&manifest, &entry).unwrap();
//! assert_eq!(json["packages"][0]["registryType"], "cargo");
//! assert_eq!(json["packages"][0]["identifier"], "ops-server");
//! assert_eq!(json["_meta"]["io.modelcontextprotocol.registry/publisher-provided"]["tools"][0]["name"], "count");
//! assert!(server_json(&manifest, &RegistryEntry::new("ops", "x", "0.1.0")).is_err());
//! ```

use super::contract::Manifest;
use serde_json::{Value, json};

/// The `$schema` a generated `server.json` names.
pub const SERVER_SCHEMA: &str =
    "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";

/// The registry's longest description.
pub const MAX_DESCRIPTION: usize = 100;

/// What the registry needs beyond the MCP face: see [`server_json`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegistryEntry {
    name: String,
    description: String,
    version: String,
    title: Option<String>,
    crate_name: Option<String>,
    repository: Option<String>,
    arguments: Vec<String>,
}

impl RegistryEntry {
    /// A server listed as `name` (reverse DNS: `io.github.you/server`) with a one-line
    /// `description` (at most 100 characters), at `version` (also the version of the crate that
    /// installs it).
    pub fn new(name: impl Into<String>, description: impl Into<String>, version: impl Into<String>) -> Self {
        RegistryEntry {
            name: name.into(),
            description: description.into(),
            version: version.into(),
            title: None,
            crate_name: None,
            repository: None,
            arguments: Vec::new(),
        }
    }

    /// The display name hosts show.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The crate that installs the server (by default the part of the name after the slash).
    pub fn crate_name(mut self, name: impl Into<String>) -> Self {
        self.crate_name = Some(name.into());
        self
    }

    /// The source repository's URL (a `github.com` or `gitlab.com` one names its host).
    pub fn repository(mut self, url: impl Into<String>) -> Self {
        self.repository = Some(url.into());
        self
    }

    /// A fixed argument the server runs with (`--stdio`), in order.
    pub fn argument(mut self, value: impl Into<String>) -> Self {
        self.arguments.push(value.into());
        self
    }

    fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let name_ok = self.name.len() >= 3
            && self.name.len() <= 200
            && self.name.split_once('/').is_some_and(|(namespace, server)| {
                !namespace.is_empty()
                    && !server.is_empty()
                    && !server.contains('/')
                    && namespace
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
                    && server
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || ".-_".contains(c))
            });
        if !name_ok {
            problems.push(format!(
                "the name \"{}\" is not `namespace/server` in reverse DNS (e.g. `io.github.you/ops`: letters, digits, `.` and `-`, then one `/`, then letters, digits, `.`, `_` and `-`; 3 to 200 characters)",
                self.name
            ));
        }
        let chars = self.description.chars().count();
        if chars == 0 || chars > MAX_DESCRIPTION {
            problems.push(format!(
                "the description has {chars} characters: the registry takes 1 to {MAX_DESCRIPTION}"
            ));
        }
        let ranged = self.version.is_empty()
            || self.version == "latest"
            || self.version.len() > 255
            || self.version.contains(['^', '~', '>', '<', '*', ' '])
            || self.version.split('.').any(|part| part == "x");
        if ranged {
            problems.push(format!(
                "the version \"{}\" is not one exact version (`0.1.0`; no range, no `latest`)",
                self.version
            ));
        }
        problems
    }
}

/// The registry's `server.json` for `manifest` listed as `entry`: one cargo package run over
/// stdio, and the manifest's tools, resources, templates and scopes as publisher-provided
/// metadata. Every problem the registry would refuse is listed in the error, one sentence
/// each.
pub fn server_json(manifest: &Manifest, entry: &RegistryEntry) -> Result<Value, String> {
    let problems = entry.problems();
    if !problems.is_empty() {
        return Err(format!("server.json: {}", problems.join("; ")));
    }
    let server = entry.name.split_once('/').map_or("", |(_, server)| server);
    let mut package = json!({
        "registryType": "cargo",
        "registryBaseUrl": "https://crates.io",
        "identifier": entry.crate_name.as_deref().unwrap_or(server),
        "version": entry.version,
        "transport": {"type": "stdio"},
    });
    if !entry.arguments.is_empty() {
        package["packageArguments"] = entry
            .arguments
            .iter()
            .map(|value| json!({"type": "positional", "value": value}))
            .collect();
    }
    let tools: Vec<Value> = manifest
        .tools
        .iter()
        .map(|(name, tool)| {
            let mut listed = json!({"name": name});
            for key in ["title", "description", "scope"] {
                if let Some(value) = tool.get(key) {
                    listed[key] = value.clone();
                }
            }
            listed
        })
        .collect();
    let mut listing = json!({
        "$schema": SERVER_SCHEMA,
        "name": entry.name,
        "description": entry.description,
        "version": entry.version,
        "packages": [package],
        "_meta": {"io.modelcontextprotocol.registry/publisher-provided": {
            "tools": tools,
            "resources": manifest.resources.keys().collect::<Vec<_>>(),
            "resourceTemplates": manifest.templates.keys().collect::<Vec<_>>(),
            "scopes": manifest.scopes.keys().collect::<Vec<_>>(),
        }},
    });
    if let Some(title) = &entry.title {
        listing["title"] = json!(title);
    }
    if let Some(url) = &entry.repository {
        let source = ["github", "gitlab"]
            .into_iter()
            .find(|host| url.contains(&format!("{host}.com/")))
            .unwrap_or("git");
        listing["repository"] = json!({"url": url, "source": source});
    }
    Ok(listing)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> Manifest {
        Manifest::from_json(
            r#"{"tools": {"proc_kill": {"description": "Stop a process.", "scope": "ops.admin",
                "inputSchema": {"type": "object"}}},
                "resources": {"surface://cells/load": {}}, "templates": {}}"#,
        )
        .unwrap()
    }

    #[test]
    fn every_problem_the_registry_would_refuse_is_one_sentence() {
        let long = "x".repeat(101);
        for (entry, says) in [
            (
                RegistryEntry::new("ops", "Ops", "0.1.0"),
                "is not `namespace/server`",
            ),
            (
                RegistryEntry::new("a/b/c", "Ops", "0.1.0"),
                "is not `namespace/server`",
            ),
            (
                RegistryEntry::new("io.github.x/ops", &long, "0.1.0"),
                "has 101 characters",
            ),
            (
                RegistryEntry::new("io.github.x/ops", "", "0.1.0"),
                "has 0 characters",
            ),
            (
                RegistryEntry::new("io.github.x/ops", "Ops", "latest"),
                "not one exact version",
            ),
            (
                RegistryEntry::new("io.github.x/ops", "Ops", "^0.1"),
                "not one exact version",
            ),
            (
                RegistryEntry::new("io.github.x/ops", "Ops", "1.x"),
                "not one exact version",
            ),
        ] {
            let error = server_json(&manifest(), &entry).unwrap_err();
            assert!(error.contains(says), "{entry:?}: {error}");
        }
        let all = server_json(&manifest(), &RegistryEntry::new("ops", "", "latest")).unwrap_err();
        for each in ["the name", "the description", "the version"] {
            assert_eq!(all.matches(each).count(), 1, "{all}");
        }
    }

    #[test]
    fn the_listing_carries_the_manifest_and_one_cargo_package() {
        let entry = RegistryEntry::new("io.github.x/ops", "Operate processes", "0.1.0")
            .title("Ops")
            .repository("https://github.com/x/ops")
            .argument("--stdio");
        let json = server_json(&manifest(), &entry).unwrap();
        assert_eq!(json["$schema"], SERVER_SCHEMA);
        assert_eq!(json["title"], "Ops");
        assert_eq!(
            json["repository"],
            json!({"url": "https://github.com/x/ops", "source": "github"})
        );
        assert_eq!(
            json["packages"],
            json!([{"registryType": "cargo", "registryBaseUrl": "https://crates.io", "identifier": "ops",
                "version": "0.1.0", "transport": {"type": "stdio"},
                "packageArguments": [{"type": "positional", "value": "--stdio"}]}])
        );
        let provided = &json["_meta"]["io.modelcontextprotocol.registry/publisher-provided"];
        assert_eq!(
            provided["tools"],
            json!([{"name": "proc_kill", "description": "Stop a process.", "scope": "ops.admin"}])
        );
        assert_eq!(provided["resources"], json!(["surface://cells/load"]));
    }
}
