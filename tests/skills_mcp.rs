//! Skills (the `io.modelcontextprotocol/skills` extension, SEP-2640) on the real ops binary,
//! over stdio and over Streamable HTTP, in both protocol eras: the server declares the
//! extension; `skills/list` and `skills/get` answer the `triage` skill's entry (its frontmatter
//! and the digest and size of its one file); `resources/read` of `skill://triage/SKILL.md`
//! answers exactly the bytes the entry describes, beginning with that frontmatter; an unknown
//! skill is `-32602`. In process, with rmcp's own client: a caller whose scopes do not reach
//! every tool and resource the skill uses is not shown it anywhere.

#[allow(dead_code)]
#[path = "../examples/ops.rs"]
mod ops;

mod common;

use common::raw_http::{http, legacy_open, legacy_post, spawn_serving};
use common::stdio::Wire;
use common::{ERAS, Era};
use rmcp::model::{GetSkillRequestParams, ReadResourceRequestParams, ResourceContents, SkillResource};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;

const SKILLS: &str = "io.modelcontextprotocol/skills";
const TRIAGE: &str = "skill://triage/SKILL.md";

/// A client of the ops binary over one transport, in one era.
struct Ops {
    era: Era,
    transport: Transport,
    next: u64,
}

enum Transport {
    Stdio(Wire),
    /// The child serving (killed on drop), its address, and the legacy session.
    Http(
        #[allow(dead_code)] tokio::process::Child,
        SocketAddr,
        Option<String>,
    ),
}

impl Ops {
    /// Opens ops over stdio or HTTP; answers the server's capabilities as told to this client
    /// (`initialize` on legacy, `server/discover` on 2026-07-28).
    async fn open(over_http: bool, era: Era) -> (Ops, Value) {
        let transport = if over_http {
            let (child, addr) = spawn_serving(common::stdio::ops(), &["--http", "127.0.0.1:0"]).await;
            Transport::Http(child, addr, None)
        } else {
            Transport::Stdio(Wire::start(&[], false))
        };
        let mut ops = Ops {
            era,
            transport,
            next: 0,
        };
        let capabilities = match (era, &mut ops.transport) {
            (Era::Legacy, Transport::Stdio(wire)) => {
                let init = wire
                    .request(
                        0,
                        "initialize",
                        json!({"protocolVersion": "2025-11-25", "capabilities": {},
                            "clientInfo": {"name": "skills-test", "version": "0"}}),
                    )
                    .await;
                wire.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                    .await;
                init["result"]["capabilities"].clone()
            }
            (Era::Legacy, Transport::Http(_, addr, session)) => {
                let (id, init) = legacy_open(*addr).await;
                *session = Some(id);
                init["capabilities"].clone()
            }
            (Era::Modern, _) => {
                let discover = ops.ask("server/discover", json!({})).await;
                discover["result"]["capabilities"].clone()
            }
        };
        (ops, capabilities)
    }

    /// One request's whole answer (`result` or `error`).
    async fn ask(&mut self, method: &str, mut params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        if self.era == Era::Modern {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "skills-test", "version": "0"}
            });
        }
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        match &mut self.transport {
            Transport::Stdio(wire) => wire.request(id, method, params).await,
            Transport::Http(_, addr, Some(session)) => legacy_post(*addr, session, &message).await.message(),
            Transport::Http(_, addr, None) => {
                let mut headers = vec![
                    ("Content-Type", "application/json"),
                    ("Accept", "application/json, text/event-stream"),
                    ("MCP-Protocol-Version", "2026-07-28"),
                    ("Mcp-Method", method),
                ];
                // SEP-2243: a `resources/read` names its URI in Mcp-Name.
                let uri = params["uri"].as_str().map(str::to_owned);
                if let (Some(uri), "resources/read") = (&uri, method) {
                    headers.push(("Mcp-Name", uri));
                }
                http(*addr, "POST", &headers, &message.to_string())
                    .await
                    .message()
            }
        }
    }

    async fn result(&mut self, method: &str, params: Value) -> Value {
        let answer = self.ask(method, params).await;
        assert!(
            answer.get("result").is_some(),
            "{method} ({:?}): {answer}",
            self.era
        );
        answer["result"].clone()
    }
}

/// The frontmatter at the head of a `SKILL.md`, as the JSON object a host compares with the
/// entry's (ops writes each value as a JSON string, which YAML reads the same).
fn frontmatter(text: &str) -> Value {
    let head = text.strip_prefix("---\n").expect("frontmatter first");
    let (head, _) = head.split_once("\n---\n").expect("frontmatter closed");
    let fields = head.lines().map(|line| {
        let (key, value) = line.split_once(": ").expect("key: value");
        (
            key.to_owned(),
            serde_json::from_str::<Value>(value).expect("a quoted string"),
        )
    });
    Value::Object(fields.collect())
}

/// What every transport and era must answer about ops' one skill.
async fn check_triage(over_http: bool, era: Era) {
    let context = format!("{} {era:?}", if over_http { "http" } else { "stdio" });
    let (mut ops, capabilities) = Ops::open(over_http, era).await;
    assert_eq!(
        capabilities["extensions"][SKILLS],
        json!({}),
        "{context}: {capabilities}"
    );
    assert!(
        capabilities.get("resources").is_some(),
        "{context}: skills ride on resources"
    );

    let listed = ops.result("skills/list", json!({})).await;
    let skills = listed["skills"].as_array().expect("skills");
    assert_eq!(skills.len(), 1, "{context}: {listed}");
    let entry = &skills[0];
    assert_eq!(entry["uri"], TRIAGE, "{context}");
    assert_eq!(entry["frontmatter"]["name"], "triage", "{context}");
    assert_eq!(
        entry["frontmatter"]["description"],
        ops::TRIAGE.description(),
        "{context}"
    );
    if era == Era::Modern {
        assert_eq!(listed["resultType"], "complete", "{context}");
        assert!(
            listed["ttlMs"].is_u64() && listed["cacheScope"].is_string(),
            "{context}: {listed}"
        );
    } else {
        assert!(listed.get("resultType").is_none(), "{context}: {listed}");
    }

    let got = ops.result("skills/get", json!({"uri": TRIAGE})).await;
    assert_eq!(
        &got["skill"], entry,
        "{context}: skills/get answers the listed entry"
    );

    // The file is exactly what the entry describes: its size and SHA-256, its frontmatter.
    let files: Vec<SkillResource> = serde_json::from_value(entry["resources"].clone()).expect("a manifest");
    assert_eq!(files.len(), 1, "{context}: {entry}");
    assert_eq!(files[0].uri, TRIAGE);
    let read = ops.result("resources/read", json!({"uri": TRIAGE})).await;
    let contents = &read["contents"][0];
    assert_eq!(contents["mimeType"], "text/markdown", "{context}");
    let text = contents["text"].as_str().expect("text");
    files[0]
        .verify(text.as_bytes())
        .expect("the bytes the entry describes");
    assert_eq!(frontmatter(text), entry["frontmatter"], "{context}");
    // The instructions, then what they use by its served names.
    assert!(text.contains("# Triage a loaded machine"), "{context}");
    for line in [
        "- resource `surface://cells/load`",
        "- resource `surface://collections/processes`",
        "- tool `proc_kill`",
    ] {
        assert!(text.contains(line), "{context}: {line} in {text}");
    }

    let resources = ops.result("resources/list", json!({})).await;
    let row = resources["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .find(|r| r["uri"] == TRIAGE)
        .unwrap_or_else(|| panic!("{context}: the SKILL.md is a listed resource: {resources}"));
    assert_eq!(row["name"], "triage");
    assert_eq!(row["mimeType"], "text/markdown");

    for unknown in ["skill://nope/SKILL.md", "skill://triage"] {
        let refused = ops.ask("skills/get", json!({"uri": unknown})).await;
        assert_eq!(
            refused["error"]["code"], -32602,
            "{context}: {unknown}: {refused}"
        );
    }
}

#[tokio::test]
async fn stdio_serves_the_skill_in_both_eras() {
    for era in ERAS {
        check_triage(false, era).await;
    }
}

#[tokio::test]
async fn http_serves_the_skill_in_both_eras() {
    for era in ERAS {
        check_triage(true, era).await;
    }
}

/// Ops in process for a stdio caller granted `scopes`, through rmcp's client in `era`.
async fn caller(scopes: &[&str], era: Era) -> common::Client {
    let served = ops::mcp_server(Arc::new(ops::Ops::new()))
        .stdio_scopes(scopes.iter().copied())
        .start()
        .expect("composes");
    common::connect(&served, era).await
}

#[tokio::test]
async fn a_caller_is_shown_only_the_skills_it_reaches() {
    for era in ERAS {
        // `triage` uses `proc.kill`, which needs `ops.admin`.
        let admin = caller(&["ops.admin"], era).await;
        let skills = admin.service.list_all_skills().await.expect("skills/list");
        assert_eq!(skills.len(), 1, "{era:?}");
        assert_eq!(skills[0].uri, TRIAGE);
        let got = admin
            .service
            .get_skill(GetSkillRequestParams::new(TRIAGE))
            .await
            .expect("skills/get");
        assert_eq!(got.skill, skills[0]);

        let reader = caller(&["ops.read"], era).await;
        assert!(
            reader
                .service
                .list_all_skills()
                .await
                .expect("skills/list")
                .is_empty(),
            "{era:?}"
        );
        let refused = reader
            .service
            .get_skill(GetSkillRequestParams::new(TRIAGE))
            .await
            .map(|_| ())
            .map_err(common::rpc_error)
            .expect_err("not served to it");
        assert_eq!(refused.code.0, -32602, "{era:?}");
        let unread = reader
            .service
            .read_resource(ReadResourceRequestParams::new(TRIAGE))
            .await;
        assert!(unread.is_err(), "{era:?}: {unread:?}");
        let listed = reader.service.list_all_resources().await.expect("resources/list");
        assert!(listed.iter().all(|r| r.uri != TRIAGE), "{era:?}");
        // What it does reach still reads.
        let load = reader
            .service
            .read_resource(ReadResourceRequestParams::new("surface://cells/load"))
            .await
            .expect("load");
        assert!(matches!(
            &load.contents[0],
            ResourceContents::TextResourceContents { .. }
        ));
    }
}

/// A surface of its own, for a skill handed to the wrong member.
#[surface::surface]
pub struct Other {
    /// A number.
    #[cell]
    pub n: u32,
}

#[surface::surface]
impl Other {}

const OTHER: surface::Expose<Other> = surface::expose!(Other { n: resource });

/// A skill over `Other`.
const COUNT: surface::skill::Skill<Other> = surface::skill!(OTHER {
    name: "count",
    description: "Read the number.",
    uses: [n],
    instructions: "Read it.",
});

/// Ops' map without `proc.kill`, which `triage` uses.
const READ_ONLY: surface::Expose<ops::Ops> = surface::expose!(ops::Ops {
    load: resource,
    processes: resource
});

fn refusals(server: surface::mcp::McpServer) -> Vec<String> {
    match server.start() {
        Ok(_) => panic!("composed"),
        Err(e) => e.problems,
    }
}

#[test]
fn composition_refuses_a_skill_its_member_cannot_serve() {
    use surface::mcp::{McpServer, Member};
    let unexposed = refusals(McpServer::new("x", "0").core(Member::new(READ_ONLY).skill(ops::TRIAGE)));
    assert_eq!(
        unexposed,
        [
            "skill \"triage\" on the core uses \"proc.kill\", which the expose map of Ops does not expose: expose it, or leave it out of the skill"
        ]
    );
    let foreign = refusals(McpServer::new("x", "0").core(Member::new(ops::EXPOSE).skill(COUNT)));
    assert_eq!(
        foreign,
        [
            "skill \"count\" on the core is declared over `Other`'s expose map, not `Ops`'s: hand it to the member that serves `Other`"
        ]
    );
    let twice = refusals(
        McpServer::new("x", "0").core(Member::new(ops::EXPOSE).skill(ops::TRIAGE).skill(ops::TRIAGE)),
    );
    assert_eq!(
        twice,
        [
            "skill \"triage\" on the core is served at skill://triage/SKILL.md, which is already served: give one of them another name"
        ]
    );
}

#[tokio::test]
async fn a_siblings_skill_is_served_under_its_key_with_its_served_names() {
    let ops = Arc::new(ops::Ops::new());
    let served = surface::mcp::McpServer::new("x", "0")
        .sibling("a", ops::core())
        .view(ops::PROCESSES)
        .client(move || surface::mcp::BundleClient::new().sibling("a", ops::OpsClient::direct(ops.clone())))
        .start()
        .expect("composes");
    for era in ERAS {
        let client = common::connect(&served, era).await;
        let skills = client.service.list_all_skills().await.expect("skills/list");
        let uri = "skill://a/triage/SKILL.md";
        assert_eq!(skills.len(), 1, "{era:?}");
        assert_eq!((skills[0].uri.as_str(), skills[0].name()), (uri, "triage"));
        let read = client
            .service
            .read_resource(ReadResourceRequestParams::new(uri))
            .await
            .expect("read");
        let ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
            panic!("text")
        };
        let tools = client.service.list_all_tools().await.expect("tools");
        let kill = tools
            .iter()
            .find(|t| t.name.ends_with("proc_kill"))
            .expect("kill");
        assert_ne!(kill.name, "proc_kill", "a sibling's tool is prefixed");
        assert!(
            text.contains(&format!("- tool `{}`", kill.name)),
            "{era:?}: {text}"
        );
        let resources = client.service.list_all_resources().await.expect("resources");
        let load = resources.iter().find(|r| r.name.ends_with("load")).expect("load");
        assert!(
            text.contains(&format!("- resource `{}`", load.uri)),
            "{era:?}: {text}"
        );
    }
}

/// Two bearer tokens: `reader` (ops.read) and `admin` (ops.admin).
struct Tokens;

impl surface::auth::TokenVerifier for Tokens {
    async fn verify(&self, token: &str) -> Result<surface::Principal, surface::auth::Refusal> {
        let scope = match token {
            "reader" => "ops.read",
            "admin" => "ops.admin",
            _ => return Err(surface::auth::Refusal::new("unknown token")),
        };
        Ok(surface::Principal::new("https://issuer.test", token).with_scopes([scope]))
    }
}

#[tokio::test]
async fn over_http_a_skill_beyond_the_tokens_scopes_is_a_step_up() {
    let auth = surface::auth::Auth::custom(Tokens)
        .authorization_server("https://issuer.test")
        .with_resource("http://127.0.0.1/mcp");
    let served = ops::mcp_server(Arc::new(ops::Ops::new()))
        .start()
        .expect("composes");
    let server = served
        .serve_http(surface::mcp::HttpOptions::loopback(0).auth(auth))
        .await
        .expect("serves");
    let addr = server.local_addr();
    let ask = |token: &'static str, method: &'static str, params: Value| async move {
        let mut params = params;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "skills-test", "version": "0"}
        });
        let bearer = format!("Bearer {token}");
        let mut headers = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Authorization", bearer.as_str()),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", method),
        ];
        if method == "resources/read" {
            headers.push(("Mcp-Name", TRIAGE));
        }
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        http(addr, "POST", &headers, &body.to_string()).await
    };
    // The reader is not shown the skill, and asking for it is a step-up to ops.admin.
    let listed = ask("reader", "skills/list", json!({})).await;
    assert_eq!(listed.status, 200, "{listed:?}");
    assert_eq!(listed.message()["result"]["skills"], json!([]));
    for (method, params) in [
        ("skills/get", json!({"uri": TRIAGE})),
        ("resources/read", json!({"uri": TRIAGE})),
    ] {
        let refused = ask("reader", method, params.clone()).await;
        assert_eq!(refused.status, 403, "{method}: {refused:?}");
        let challenge = refused.header("www-authenticate").expect("a challenge");
        assert!(
            challenge.starts_with("Bearer error=\"insufficient_scope\", scope=\"ops.admin\""),
            "{method}: {challenge}"
        );
        let granted = ask("admin", method, params).await;
        assert_eq!(granted.status, 200, "{method}: {granted:?}");
        assert!(granted.message().get("result").is_some(), "{method}: {granted:?}");
    }
    let listed = ask("admin", "skills/list", json!({})).await;
    assert_eq!(listed.message()["result"]["skills"][0]["uri"], TRIAGE);
    drop(server);
}
