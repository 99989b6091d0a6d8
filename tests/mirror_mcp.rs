//! `resource(mirror)`: exposed members also served as read-only tools, for hosts that only call
//! tools — named through the naming table, checked in the one collision pass, answering the
//! JSON a resource read gives.

use serde_json::{Value, json};
use std::convert::Infallible;
use std::sync::Arc;
use surface::mcp::{BundleClient, McpServer, Member, ServedMcp};
use surface::schema::profile::SchemaProfile;
use surface::testing::{Era, TestClient};
use surface::{Cell, Collection, Event, Expose, Stream, expose, surface};

/// A small inventory.
#[surface]
pub struct Shop {
    /// Items on the shelf.
    #[cell]
    pub stock: u32,
    /// Orders, by number.
    #[collection(key = u32)]
    pub orders: String,
    /// What happened.
    #[stream]
    pub journal: String,
    /// Rung when the shop closes.
    #[event]
    pub closed: bool,
}

#[surface]
impl Shop {
    /// Counts the stock.
    #[procedure("stock.get")]
    async fn stock_get(&self) -> Result<u32, Infallible> {
        Ok(self.stock.get())
    }
}

const MIRRORED: Expose<Shop> = expose!(Shop {
    stock: resource(mirror),
    orders: resource(mirror),
    journal: resource(mirror),
    closed: resource,
});

fn shop() -> Arc<Shop> {
    let shop = Shop {
        stock: Cell::new(7),
        orders: Collection::new(),
        journal: Stream::new(),
        closed: Event::new(),
    };
    shop.orders.upsert(1, "tea".into());
    shop.orders.upsert(2, "cake".into());
    shop.journal.push("opened".into());
    Arc::new(shop)
}

fn served(member: impl Fn() -> Member, sibling: bool) -> ServedMcp {
    let (core, t) = (shop(), shop());
    let mut server = McpServer::new("shop", "0").core(member());
    if sibling {
        server = server.sibling("t", member());
    }
    server
        .client(move || {
            let mut bundle = BundleClient::with_core(ShopClient::direct(core.clone()));
            if sibling {
                bundle = bundle.sibling("t", ShopClient::direct(t.clone()));
            }
            bundle
        })
        .start()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A tool answer as the resource read it mirrors: objects as themselves, the rest under `value`.
fn as_tool_answer(read: Value) -> Value {
    match read {
        Value::Object(o) => Value::Object(o),
        other => json!({ "value": other }),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mirrors_answer_what_the_resources_read_in_both_eras() {
    let served = served(|| Member::new(MIRRORED), true);
    for era in Era::ALL {
        let agent = TestClient::connect(&served, era).await;
        let tools = agent.list_tools().await;
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "stock_get",
                "orders_keys",
                "orders_get",
                "journal_read",
                "t_stock_get",
                "t_orders_keys",
                "t_orders_get",
                "t_journal_read"
            ],
            "{era:?}"
        );
        for tool in &tools {
            assert!(tool.read_only, "{} is read-only", tool.name);
        }
        let get = tools.iter().find(|t| t.name == "t_orders_get").unwrap();
        assert_eq!(
            get.input_schema,
            json!({"type": "object", "properties": {"id": {"type": "integer", "minimum": 0}}, "required": ["id"]})
        );
        assert_eq!(
            get.listed["description"],
            "Reads the resource surface://collections/t/orders/{id} (the same JSON). Orders, by number."
        );
        for (tool, args, uri) in [
            ("stock_get", json!({}), "surface://cells/stock"),
            ("orders_keys", json!({}), "surface://collections/orders"),
            ("orders_get", json!({"id": 2}), "surface://collections/orders/2"),
            (
                "t_orders_get",
                json!({"id": "1"}),
                "surface://collections/t/orders/1",
            ),
            ("t_journal_read", json!({}), "surface://streams/t/journal"),
        ] {
            let read = agent.read(uri).await.unwrap();
            assert_eq!(
                agent.call(tool, args).await.value(),
                as_tool_answer(read),
                "{era:?} {tool}"
            );
        }
        assert_eq!(
            agent.call("orders_keys", json!({})).await.value(),
            json!({"value": [1, 2]})
        );
        let missing = agent.call("orders_get", json!({"id": 9})).await.refusal();
        assert!(missing.message.contains("9"), "{missing:?}");
        let no_id = agent.call("orders_get", json!({})).await.refusal();
        assert!(no_id.message.contains("`id`"), "{no_id:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_mirror_nothing_is_added_and_mirrors_fit_openai_strict() {
    const PLAIN: Expose<Shop> = expose!(Shop {
        stock: resource,
        orders: resource
    });
    let agent = TestClient::connect(&served(|| Member::new(PLAIN), false), Era::Modern).await;
    assert!(agent.list_tools().await.is_empty());
    let agent = TestClient::connect(&served(|| Member::new(MIRRORED), false), Era::Legacy).await;
    assert_eq!(agent.check_profile(SchemaProfile::OpenAiStrict).await, Ok(()));
}

#[test]
fn a_mirror_colliding_with_a_procedure_is_refused_naming_both() {
    const CLASH: Expose<Shop> = expose!(Shop { stock: resource(mirror), "stock.get": tool(read_only) });
    let refused = McpServer::new("shop", "0")
        .core(Member::new(CLASH))
        .start()
        .err()
        .expect("refused");
    assert_eq!(
        refused.problems,
        [
            "tool name \"stock_get\" is produced by both procedure stock.get on the core and the mirror of stock on the core — rename one"
        ]
    );
}
