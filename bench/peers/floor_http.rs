//! The HTTP floor: the same three tools behind a bare hyper HTTP/1.1 server (serde_json, one
//! JSON answer per `POST`, no MCP framework) on the same `#[tokio::main]` runtime as the
//! servers under test. Nothing a user should ship — a session is only an id it hands out, the
//! `GET` stream only stays open, nothing is checked — it shows what the loopback, HTTP and JSON
//! alone cost through `httpload`, so a ratio against rmcp can be read against this ceiling.
//!
//! `floor-http ADDR`

#[path = "table.rs"]
mod table;

#[path = "floor_calls.rs"]
mod floor_calls;

use bytes::Bytes;
use floor_calls::{Request as Message, result};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use table::Table;

type Body = BoxBody<Bytes, Infallible>;

struct Floor {
    table: Table,
    sessions: AtomicU64,
}

fn status(code: StatusCode) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::new()).boxed());
    *r.status_mut() = code;
    r
}

impl Floor {
    async fn serve(self: Arc<Self>, req: Request<Incoming>) -> Result<Response<Body>, Infallible> {
        match *req.method() {
            Method::POST => {}
            // The standalone stream: open, and silent.
            Method::GET => {
                let mut r = Response::new(BodyExt::boxed(StreamBody::new(futures::stream::pending::<
                    Result<Frame<Bytes>, Infallible>,
                >())));
                r.headers_mut()
                    .insert("content-type", "text/event-stream".parse().unwrap());
                return Ok(r);
            }
            Method::DELETE => return Ok(status(StatusCode::OK)),
            _ => return Ok(status(StatusCode::METHOD_NOT_ALLOWED)),
        }
        let Ok(body) = req.into_body().collect().await.map(|b| b.to_bytes()) else {
            return Ok(status(StatusCode::BAD_REQUEST));
        };
        let Ok(message) = serde_json::from_slice::<Message>(&body) else {
            return Ok(status(StatusCode::BAD_REQUEST));
        };
        let Some(id) = message.id else {
            return Ok(status(StatusCode::ACCEPTED));
        };
        let session = (message.method == "initialize")
            .then(|| self.sessions.fetch_add(1, Ordering::Relaxed).to_string());
        let result = result(&self.table, message.method, message.params);
        let mut out = Vec::with_capacity(512);
        out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
        out.extend_from_slice(id.get().as_bytes());
        out.extend_from_slice(b",\"result\":");
        serde_json::to_writer(&mut out, &result).unwrap();
        out.push(b'}');
        let mut r = Response::new(Full::new(Bytes::from(out)).boxed());
        r.headers_mut()
            .insert("content-type", "application/json".parse().unwrap());
        if let Some(s) = session {
            r.headers_mut().insert("mcp-session-id", s.parse().unwrap());
        }
        Ok(r)
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args().nth(1).ok_or("usage: floor-http ADDR")?;
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    let floor = Arc::new(Floor {
        table: Table::new(),
        sessions: AtomicU64::new(1),
    });
    loop {
        let (tcp, _) = listener.accept().await?;
        let _ = tcp.set_nodelay(true);
        let floor = floor.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| floor.clone().serve(req));
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(tcp), service)
                .await;
        });
    }
}
