//! [`TestClient`]: one connection to a served bundle, in either [`Era`].

use crate::mcp::{CompositionError, ServedMcp, Siblings};
use crate::schema::InputSchema;
use crate::schema::profile::{ProfileError, SchemaProfile};
use crate::sync::lock;
use rmcp::model::{
    CallToolRequestParams, ProtocolVersion, ReadResourceRequestParams, ResourceContents, ServerNotification,
    SubscriptionFilter,
};
use rmcp::service::RunningService;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use serde_json::Value;
use std::fmt;
use std::sync::Arc;
use tokio::sync::mpsc;

use super::answers::{Answer, Rejection, ResourceInfo, SkillInfo, TemplateInfo, ToolInfo, answer};
use super::notices::{Notice, Notices, Router};

/// The protocol era a test client opens its connection in. One server serves both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Era {
    /// `initialize` (protocol 2025-11-25 and earlier); subscriptions by `resources/subscribe`.
    Legacy,
    /// `server/discover` (protocol 2026-07-28); subscriptions by `subscriptions/listen`.
    Modern,
}

impl Era {
    /// Both eras, for `for era in Era::ALL { … }`.
    ///
    /// ```
    /// assert_eq!(surface_runtime::testing::Era::ALL.len(), 2);
    /// ```
    pub const ALL: [Era; 2] = [Era::Legacy, Era::Modern];
}

/// An agent connected in memory to a served bundle. See the [module docs](crate::testing).
pub struct TestClient {
    era: Era,
    served: ServedMcp,
    router: Router,
    service: RunningService<RoleClient, Router>,
}

fn rejection(e: rmcp::ServiceError) -> Rejection {
    match e {
        rmcp::ServiceError::McpError(e) => Rejection {
            code: Some(e.code.0),
            message: e.message.into_owned(),
        },
        other => Rejection {
            code: None,
            message: other.to_string(),
        },
    }
}

fn listed<T: serde::Serialize>(item: &T) -> Value {
    serde_json::to_value(item).unwrap_or(Value::Null)
}

impl TestClient {
    /// Opens a connection to `served` in `era`, through the served bundle's own connection
    /// path ([`ServedMcp::serve`] on one half of an in-memory duplex).
    ///
    /// # Panics
    ///
    /// When the connection does not open (a test cannot go on without it).
    pub async fn connect(served: &ServedMcp, era: Era) -> TestClient {
        let (server_io, client_io) = tokio::io::duplex(1 << 20);
        let server = served.clone();
        tokio::spawn(async move {
            let (reader, writer) = tokio::io::split(server_io);
            if let Ok(connection) = server.serve(reader, writer).await {
                let _ = connection.waiting().await;
            }
        });
        let router = Router {
            routes: Arc::default(),
        };
        let opened = match era {
            Era::Legacy => router.clone().serve(client_io).await,
            Era::Modern => {
                router
                    .clone()
                    .serve_with_lifecycle(
                        client_io,
                        ClientLifecycleMode::Discover {
                            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                        },
                    )
                    .await
            }
        };
        let service = opened.unwrap_or_else(|e| panic!("the {era:?} test connection did not open: {e}"));
        TestClient {
            era,
            served: served.clone(),
            router,
            service,
        }
    }

    /// The era this connection speaks.
    pub fn era(&self) -> Era {
        self.era
    }

    /// The protocol version the server agreed to (`2026-07-28`, `2025-11-25`, …).
    pub fn protocol_version(&self) -> Option<String> {
        let info = self.service.peer_info()?;
        Some(info.protocol_version.to_string())
    }

    /// The `instructions` the server gave when the connection opened.
    pub fn instructions(&self) -> Option<String> {
        self.service.peer_info()?.instructions.clone()
    }

    /// Every tool, as `tools/list` answers now.
    pub async fn list_tools(&self) -> Vec<ToolInfo> {
        let tools = self.service.list_all_tools().await.unwrap_or_default();
        tools
            .iter()
            .map(|t| ToolInfo {
                name: t.name.to_string(),
                input_schema: Value::Object((*t.input_schema).clone()),
                read_only: t.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true),
                listed: listed(t),
            })
            .collect()
    }

    /// The names of every tool, in list order.
    pub async fn tool_names(&self) -> Vec<String> {
        self.list_tools().await.into_iter().map(|t| t.name).collect()
    }

    /// Checks every tool this connection lists against `profile` (see
    /// [`crate::schema::profile`]): answers one [`ProfileError`] per tool whose input the
    /// profile cannot express, each naming the tool and the fields. For a `cargo test` that
    /// keeps a portable server ready for a stricter host.
    pub async fn check_profile(&self, profile: SchemaProfile) -> Result<(), Vec<ProfileError>> {
        let refused: Vec<ProfileError> = self
            .list_tools()
            .await
            .into_iter()
            .filter_map(|tool| {
                let Value::Object(schema) = tool.input_schema else {
                    return None;
                };
                let input = InputSchema {
                    schema,
                    wrapped: false,
                    nulls_are_absent: false,
                };
                profile.check(&tool.name, &input).err()
            })
            .collect();
        if refused.is_empty() { Ok(()) } else { Err(refused) }
    }

    /// Every resource, as `resources/list` answers now.
    pub async fn list_resources(&self) -> Vec<ResourceInfo> {
        let resources = self.service.list_all_resources().await.unwrap_or_default();
        resources
            .iter()
            .map(|r| ResourceInfo {
                uri: r.uri.clone(),
                name: r.name.clone(),
                listed: listed(r),
            })
            .collect()
    }

    /// Every resource template, as `resources/templates/list` answers now.
    pub async fn list_templates(&self) -> Vec<TemplateInfo> {
        let templates = self
            .service
            .list_all_resource_templates()
            .await
            .unwrap_or_default();
        templates
            .iter()
            .map(|t| TemplateInfo {
                uri_template: t.uri_template.clone(),
                name: t.name.clone(),
                listed: listed(t),
            })
            .collect()
    }

    /// Calls tool `name` with `arguments` (a JSON object; anything else is sent as no
    /// arguments), as a host would.
    pub async fn call(&self, name: &str, arguments: Value) -> Answer {
        let mut params = CallToolRequestParams::new(name.to_owned());
        if let Value::Object(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        match self.service.call_tool(params).await {
            Ok(result) => answer(result),
            Err(e) => Answer::Rejected(rejection(e)),
        }
    }

    /// Every skill, as `skills/list` answers now (none when the server declares no skills).
    pub async fn list_skills(&self) -> Vec<SkillInfo> {
        let skills = self.service.list_all_skills().await.unwrap_or_default();
        skills
            .iter()
            .map(|s| SkillInfo {
                uri: s.uri.clone(),
                name: s.frontmatter.name.clone(),
                description: s.frontmatter.description.clone(),
                listed: listed(s),
            })
            .collect()
    }

    /// Reads the resource at `uri` and answers the JSON it holds.
    pub async fn read(&self, uri: &str) -> Result<Value, Rejection> {
        let text = self.read_text(uri).await?;
        serde_json::from_str(&text).map_err(|e| Rejection {
            code: None,
            message: format!("{uri} answered text that is not JSON: {e}"),
        })
    }

    /// Reads the resource at `uri` and answers its text (a skill's `SKILL.md`, say).
    pub async fn read_text(&self, uri: &str) -> Result<String, Rejection> {
        let result = self
            .service
            .read_resource(ReadResourceRequestParams::new(uri.to_owned()))
            .await
            .map_err(rejection)?;
        let text = result.contents.iter().find_map(|c| match c {
            ResourceContents::TextResourceContents { text, .. } => Some(text),
            _ => None,
        });
        text.cloned().ok_or_else(|| Rejection {
            code: None,
            message: format!("{uri} answered no text contents"),
        })
    }

    /// Subscribes to `uri` (`resources/subscribe`, or a `subscriptions/listen` stream in
    /// 2026-07-28) and answers its `updated` notices.
    pub async fn subscribe(&self, uri: &str) -> Result<Notices, Rejection> {
        let (tx, heard) = mpsc::unbounded_channel();
        match self.era {
            Era::Legacy => {
                lock(&self.router.routes)
                    .updated
                    .entry(uri.to_owned())
                    .or_default()
                    .push(tx);
                #[allow(deprecated)]
                let subscribed = self
                    .service
                    .subscribe(rmcp::model::SubscribeRequestParams::new(uri.to_owned()))
                    .await;
                subscribed.map_err(rejection)?;
            }
            Era::Modern => {
                let filter = SubscriptionFilter::builder()
                    .resource_subscription(uri.to_owned())
                    .build();
                self.listen(filter, tx).await?;
            }
        }
        Ok(Notices { heard })
    }

    /// Answers the stream of `tools/list_changed` and `resources/list_changed` notices (sent
    /// unasked in the legacy era; a listen stream asking for both in 2026-07-28).
    pub async fn watch_lists(&self) -> Result<Notices, Rejection> {
        let (tx, heard) = mpsc::unbounded_channel();
        match self.era {
            Era::Legacy => lock(&self.router.routes).lists.push(tx),
            Era::Modern => {
                let filter = SubscriptionFilter::builder()
                    .tools_list_changed()
                    .resources_list_changed()
                    .build();
                self.listen(filter, tx).await?;
            }
        }
        Ok(Notices { heard })
    }

    /// Replaces the served bundle's siblings ([`ServedMcp::reroster`]): every connection,
    /// this one included, hears that both lists changed.
    pub async fn reroster(&self, siblings: Siblings) -> Result<Vec<String>, CompositionError> {
        self.served.reroster(siblings).await
    }

    /// The served bundle this client is connected to.
    pub fn served(&self) -> &ServedMcp {
        &self.served
    }

    async fn listen(
        &self,
        filter: SubscriptionFilter,
        tx: mpsc::UnboundedSender<Notice>,
    ) -> Result<(), Rejection> {
        let mut subscription = self.service.listen(filter).await.map_err(rejection)?;
        tokio::spawn(async move {
            loop {
                let notice = match subscription.next().await {
                    Ok(Some(ServerNotification::ResourceUpdatedNotification(n))) => {
                        Notice::Updated(n.params.uri)
                    }
                    Ok(Some(ServerNotification::ToolListChangedNotification(_))) => Notice::ToolsChanged,
                    Ok(Some(ServerNotification::ResourceListChangedNotification(_))) => {
                        Notice::ResourcesChanged
                    }
                    Ok(Some(_)) => continue,
                    Ok(None) => return,
                    Err(e) => {
                        let _ = tx.send(Notice::Ended(e.to_string()));
                        return;
                    }
                };
                // The `Notices` was dropped: stop listening.
                if tx.send(notice).is_err() {
                    return;
                }
            }
        });
        Ok(())
    }
}

impl fmt::Debug for TestClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TestClient").field("era", &self.era).finish()
    }
}
