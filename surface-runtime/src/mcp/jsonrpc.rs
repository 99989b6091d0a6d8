//! The MCP face's JSON-RPC codec: one read of a message, method first, for a stdio line and an
//! HTTP body alike ([`read_message_in`]); what one stdio input line is ([`decode_line`], a pure
//! function, fuzzed), the error answer a line that is no request is owed ([`error_answer`], with
//! JSON-RPC's named codes, which the HTTP face's own answers use too), and a stateless outline
//! of a line's shape ([`outline`]) that finds its `id` even in a line serde cannot hold.
//! [`super::transport`] reads with it (and writes with its other half, [`super::encode`]), and
//! the HTTP gate reads each `POST` body with it; the benchmarks and the fuzz targets reach it
//! through `mcp::__transport`.

use super::meta_memo::MetaMemo;
use rmcp::model::{
    CallToolRequest, ClientJsonRpcMessage, ClientRequest, GetPromptRequest, JsonRpcMessage,
    JsonRpcVersion2_0, ListToolsRequest, ReadResourceRequest, RequestId,
};

/// A UTF-8 byte order mark, stripped from the start of a line as rmcp's own transport does.
pub(crate) const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// JSON-RPC's "Parse error": the line is not JSON (or JSON serde cannot hold).
pub(crate) const PARSE_ERROR: i32 = -32700;
/// JSON-RPC's "Invalid Request": JSON, but not a JSON-RPC request.
pub(crate) const INVALID_REQUEST: i32 = -32600;
/// JSON-RPC's "Internal error".
#[cfg(feature = "auth")]
pub(crate) const INTERNAL_ERROR: i32 = -32603;
/// JSON-RPC's implementation-defined server error (the range -32000 to -32099): the server
/// cannot take the request now (busy, full, shutting down).
pub(crate) const SERVER_ERROR: i32 = -32000;

/// What one input line is, decided without any state: [`decode_line`]'s answer.
#[derive(Debug)]
pub enum Decoded {
    /// A JSON-RPC message for rmcp, boxed once here: a request is moved from here to the call
    /// that answers it, past the queue of requests waiting their turn.
    Message(Box<ClientJsonRpcMessage>),
    /// Nothing to answer: an empty line, or a notification that did not parse.
    Ignore,
    /// An error answer to write back (one line, newline included).
    Refuse(Vec<u8>),
}

/// Decodes one line (without its newline): a message, nothing, or the error answer it is owed.
///
/// ```
/// use surface_runtime::mcp::__transport::{Decoded, decode_line};
/// let Decoded::Refuse(answer) = decode_line(br#"{"jsonrpc":"2.0","id":3}"#) else { panic!() };
/// let answer: serde_json::Value = serde_json::from_slice(&answer).unwrap();
/// assert_eq!((answer["id"].clone(), answer["error"]["code"].clone()), (3.into(), (-32600).into()));
/// assert!(matches!(decode_line(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), Decoded::Message(_)));
/// ```
pub fn decode_line(line: &[u8]) -> Decoded {
    decode_line_in(line, None)
}

/// [`decode_line`] for a connection that remembers its client's `_meta` (`memo`): a call's
/// `_meta` equal to the one remembered is not read again.
pub(crate) fn decode_line_in(line: &[u8], memo: Option<&MetaMemo>) -> Decoded {
    let line = line.strip_prefix(UTF8_BOM).unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.trim_ascii().is_empty() {
        return Decoded::Ignore;
    }
    let parsed = read_message_in(line, memo);
    if let Ok(m) = &parsed
        && !matches!(m, JsonRpcMessage::Notification(_))
    {
        let mut message = parsed.expect("checked");
        super::listen_ids::ListenTaskIds::note(&mut message, line);
        return Decoded::Message(Box::new(message));
    }
    // A notification, or no message: the outline tells a request with a bad `id` (which rmcp
    // may have read as a notification) from a true notification.
    let outline = outline(line);
    if !outline.complete {
        return Decoded::Refuse(error_answer(
            None,
            PARSE_ERROR,
            "Parse error: the line is not JSON",
        ));
    }
    // An answer to one of the server's own requests that cannot be read: the request it
    // answers fails with why (an ask must end), and nothing is written back to an answer.
    if let (Kind::Object, Some(raw), None, true, Err(e)) =
        (outline.kind, outline.id, outline.method, outline.answer, &parsed)
        && !is_syntax(e)
        && let Ok(id) = serde_json::from_slice::<RequestId>(raw)
    {
        return Decoded::Message(Box::new(JsonRpcMessage::error(
            rmcp::model::ErrorData::invalid_request(
                format!("the client's answer could not be read: {e}"),
                None,
            ),
            Some(id),
        )));
    }
    match (outline.kind, outline.id, parsed) {
        (Kind::Object, None, Ok(m)) => Decoded::Message(Box::new(m)),
        (Kind::Object, None, Err(_)) if outline.method.is_some() => Decoded::Ignore,
        (Kind::Object, Some(id), Ok(_)) => Decoded::Refuse(error_answer(
            Some(id),
            INVALID_REQUEST,
            "Invalid request: `id` must be a string or an integer",
        )),
        (Kind::Object, id, Err(e)) if is_syntax(&e) => {
            Decoded::Refuse(error_answer(id, PARSE_ERROR, &format!("Parse error: {e}")))
        }

        (Kind::Object, id, Err(e)) => Decoded::Refuse(error_answer(
            id,
            INVALID_REQUEST,
            &format!("Invalid request: {e}"),
        )),
        (Kind::Array, ..) => Decoded::Refuse(error_answer(
            None,
            INVALID_REQUEST,
            "Invalid request: JSON-RPC batches are not supported",
        )),
        _ => Decoded::Refuse(error_answer(
            None,
            INVALID_REQUEST,
            "Invalid request: not a JSON-RPC message",
        )),
    }
}

/// A `tools/call` line read as rmcp reads `JsonRpcRequest<CallToolRequest>` (unknown keys
/// ignored, `params._meta` into the request's extensions, not into `params.meta`), but in one
/// pass: rmcp's derive buffers the line twice (two `#[serde(flatten)]`s), which was a third
/// of the cost of a call. A line this does not read goes to rmcp's own derive.
#[derive(serde::Deserialize)]
struct ToolsCall<'a> {
    #[serde(deserialize_with = "exactly::<V2_0, _>")]
    #[allow(dead_code)] // read to check it is "2.0", as rmcp's derive does
    jsonrpc: (),
    id: RequestId,
    #[serde(deserialize_with = "exactly::<ToolsCallMethod, _>")]
    #[allow(dead_code)] // read to check it, and to stop at once at another method
    method: (),
    #[serde(borrow)]
    params: ToolsCallParams<'a>,
}

/// A string a field must be, spelled once.
trait Literal {
    const TEXT: &'static str;
}
struct V2_0;
impl Literal for V2_0 {
    const TEXT: &'static str = "2.0";
}
struct ToolsCallMethod;
impl Literal for ToolsCallMethod {
    const TEXT: &'static str = "tools/call";
}

/// Reads a string that must be `L::TEXT`, without copying it (a `Cow<str>` read through
/// `Deserialize` is always owned).
fn exactly<'de, L: Literal, D: serde::Deserializer<'de>>(d: D) -> Result<(), D::Error> {
    struct Exactly<L>(std::marker::PhantomData<L>);
    impl<L: Literal> serde::de::Visitor<'_> for Exactly<L> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(L::TEXT)
        }
        fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<(), E> {
            if text == L::TEXT {
                Ok(())
            } else {
                Err(E::invalid_value(serde::de::Unexpected::Str(text), &L::TEXT))
            }
        }
    }
    d.deserialize_str(Exactly::<L>(std::marker::PhantomData))
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolsCallParams<'a> {
    /// Kept as text here, read by [`ToolsCall::into_message`] (through the connection's
    /// [`MetaMemo`], if any).
    #[serde(rename = "_meta", borrow)]
    meta: Option<&'a serde_json::value::RawValue>,
    name: std::borrow::Cow<'static, str>,
    arguments: Option<rmcp::model::JsonObject>,
    input_responses: Option<rmcp::model::InputResponses>,
    request_state: Option<String>,
}

impl ToolsCall<'_> {
    /// The message, or `None` when its `_meta` is no object (rmcp's derive then answers it).
    fn into_message(self, memo: Option<&MetaMemo>) -> Option<ClientJsonRpcMessage> {
        let ToolsCallParams {
            meta,
            name,
            arguments,
            input_responses,
            request_state,
        } = self.params;
        let mut params = rmcp::model::CallToolRequestParams::new(name);
        params.arguments = arguments;
        params.input_responses = input_responses;
        params.request_state = request_state;
        call_message(self.id, params, meta.map(|text| text.get()), memo)
    }
}

/// A call read by hand ([`call_line`](super::call_line)) as a message: its arguments read now,
/// or `None` when they (or its `_meta`) are no JSON object, for serde's read to answer.
fn hand_read_message(
    call: super::call_line::CallLine<'_>,
    memo: Option<&MetaMemo>,
) -> Option<ClientJsonRpcMessage> {
    let mut params = rmcp::model::CallToolRequestParams::new(call.name.to_owned());
    params.arguments = match call.arguments {
        Some(text) => Some(serde_json::from_str(text).ok()?),
        None => None,
    };
    call_message(call.id, params, call.meta, memo)
}

/// A call's message with its `_meta` read from `meta`'s text (through the connection's
/// memory, if it keeps one) and put where it waits: `None` when that text is no object.
fn call_message(
    id: RequestId,
    mut params: rmcp::model::CallToolRequestParams,
    meta: Option<&str>,
    memo: Option<&MetaMemo>,
) -> Option<ClientJsonRpcMessage> {
    let (meta, lent) = match meta {
        Some(text) => match memo {
            Some(memo) => memo.read(text).ok().map(|(map, lent)| (Some(map), lent))?,
            None => (Some(serde_json::from_str(text).ok()?), false),
        },
        None => (None, false),
    };
    let meta = meta.map(rmcp::model::RequestMetaObject::from);
    if lent {
        // Where only the call that takes it looks (see `settle_meta`).
        params.meta = meta;
        return Some(JsonRpcMessage::request(
            ClientRequest::from(CallToolRequest::new(params)),
            id,
        ));
    }
    let mut request = CallToolRequest::new(params);
    if let Some(meta) = meta {
        request.extensions.insert(meta);
    }
    Some(JsonRpcMessage::request(ClientRequest::from(request), id))
}

/// A call's `_meta` lent by its connection's memory ([`MetaMemo`]) waits in the call's
/// `params.meta`, which rmcp's own read never fills (it puts `_meta` in the request's
/// extensions): the direct answer takes it from there and gives it back when the call ends
/// (`session.rs`). A request rmcp's loop takes is settled first — its `_meta` moved where
/// rmcp's read would have put it — so rmcp sees exactly what its own read gives.
pub(crate) fn settle_meta(request: &mut ClientRequest) {
    if let Some(meta) = take_lent_meta(request)
        && let ClientRequest::CallToolRequest(call) = request
    {
        call.extensions.insert(meta);
    }
}

/// Takes the `_meta` a call's connection lent it (see [`settle_meta`]), if it carries one.
pub(crate) fn take_lent_meta(request: &mut ClientRequest) -> Option<rmcp::model::RequestMetaObject> {
    match request {
        ClientRequest::CallToolRequest(call) => call.params.meta.take(),
        _ => None,
    }
}

/// A request's `_meta`, wherever it waits (see [`settle_meta`]).
pub(crate) fn meta_of(request: &ClientRequest) -> &rmcp::model::RequestMetaObject {
    use rmcp::model::GetMeta;
    match request {
        ClientRequest::CallToolRequest(call) if let Some(meta) = &call.params.meta => meta,
        request => request.get_meta(),
    }
}

/// [`read_message_in`] without a memory of `_meta`.
#[cfg(test)]
pub(crate) fn read_message(body: &[u8]) -> serde_json::Result<ClientJsonRpcMessage> {
    read_message_in(body, None)
}

/// Reads a message (a stdio line, a `POST` body) as rmcp does (`ClientJsonRpcMessage`), but
/// method first: a body naming one of the plain requests is read straight into that request's
/// type (rmcp's own deserializer, `_meta` and all) instead of through the untagged
/// `ClientRequest`, which tries its variants in turn and builds a formatted error for each that
/// fails. Anything else, or a body the typed read refuses, takes the generic read.
///
/// The body's UTF-8 is checked once, up front, rather than string by string as a read from
/// bytes does (nine times for a plain call); a body that is not UTF-8 takes the generic read
/// from bytes, which refuses it saying where.
///
/// `memo`: what is remembered of the `_meta` the clients keep sending, if anything is (a stdio
/// connection's memory, an HTTP endpoint's for its stateless requests). A call's `_meta` it
/// lends waits in `params.meta`: read it with [`meta_of`].
pub(crate) fn read_message_in(
    body: &[u8],
    memo: Option<&MetaMemo>,
) -> serde_json::Result<ClientJsonRpcMessage> {
    match std::str::from_utf8(body) {
        Ok(text) => read_text(text, memo),
        Err(_) => serde_json::from_slice(body),
    }
}

/// [`read_message_in`] of a body known to be UTF-8.
fn read_text(body: &str, memo: Option<&MetaMemo>) -> serde_json::Result<ClientJsonRpcMessage> {
    // The plain call, read by hand; then serde's read of any call: another method stops it at
    // its `method` (no scan for the method before it, which cost a third of the read).
    if let Some(call) = super::call_line::read(body)
        && let Some(message) = hand_read_message(call, memo)
    {
        return Ok(message);
    }
    if let Ok(call) = serde_json::from_str::<ToolsCall>(body)
        && let Some(message) = call.into_message(memo)
    {
        return Ok(message);
    }
    /// The envelope of a request; `params` is skipped here.
    #[derive(serde::Deserialize)]
    struct Envelope<'a> {
        jsonrpc: Option<JsonRpcVersion2_0>,
        id: Option<RequestId>,
        #[serde(borrow, default)]
        method: Option<std::borrow::Cow<'a, str>>,
    }
    /// The request read from the same object: `T` reads `method` and `params` and ignores
    /// `jsonrpc` and `id`, as it does under `JsonRpcRequest`'s flatten, without buffering the
    /// whole message first.
    fn typed<T>(body: &str, id: RequestId) -> Option<ClientJsonRpcMessage>
    where
        T: serde::de::DeserializeOwned,
        ClientRequest: From<T>,
    {
        let request = serde_json::from_str::<T>(body).ok()?;
        Some(JsonRpcMessage::request(ClientRequest::from(request), id))
    }
    let typed = match serde_json::from_str::<Envelope>(body) {
        Ok(Envelope {
            jsonrpc: Some(_),
            id: Some(id),
            method: Some(method),
        }) => match method.as_ref() {
            "tools/call" => typed::<CallToolRequest>(body, id),
            "resources/read" => typed::<ReadResourceRequest>(body, id),
            "prompts/get" => typed::<GetPromptRequest>(body, id),
            "tools/list" => typed::<ListToolsRequest>(body, id),
            _ => None,
        },
        _ => None,
    };
    match typed {
        Some(message) => Ok(message),
        None => serde_json::from_str(body),
    }
}

fn is_syntax(e: &serde_json::Error) -> bool {
    matches!(
        e.classify(),
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof
    )
}

/// `{"jsonrpc":"2.0","id":…,"error":{…}}` and a newline. `id` is echoed when it is a string or
/// a number as written, else `null` (JSON-RPC 2.0: the id is null when it cannot be read).
pub(crate) fn error_answer(id: Option<&[u8]>, code: i32, message: &str) -> Vec<u8> {
    // Echoed only when it reads back as a JSON string or number: a raw id with a lone surrogate
    // escape or bytes that are not UTF-8 would make the answer itself unreadable.
    let id = match id {
        Some(raw @ [b'"' | b'-' | b'0'..=b'9', ..])
            if serde_json::from_slice::<serde_json::Value>(raw).is_ok() =>
        {
            raw
        }
        _ => b"null",
    };
    let mut out = Vec::with_capacity(64 + id.len() + message.len());
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id);
    out.extend_from_slice(format!(",\"error\":{{\"code\":{code},\"message\":").as_bytes());
    // The one escaper answers are written with (serde's bytes; `encode.rs` holds it to them).
    super::encode::write_str(message, &mut out);
    out.extend_from_slice(b"}}\n");
    out
}

/// The top-level shape of a JSON text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `{…}`
    Object,
    /// `[…]`
    Array,
    /// A string, number, `true`, `false` or `null`.
    Scalar,
    /// Not a JSON value (or nothing).
    Invalid,
}

/// What [`outline`] found at the top level of a JSON text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outline<'a> {
    /// The top-level shape.
    pub kind: Kind,
    /// The whole text is one valid JSON value (whitespace around it allowed).
    pub complete: bool,
    /// The raw text of the top-level object's first `"id"` value, if one was read whole.
    pub id: Option<&'a [u8]>,
    /// The raw text of its first `"method"` value, likewise.
    pub method: Option<&'a [u8]>,
    /// It has a top-level `"result"` or `"error"`: the shape of an answer.
    pub answer: bool,
}

/// Outlines a JSON text without building it and without recursion (nesting depth costs
/// memory proportional to it, never stack): validates its syntax and picks out the top-level
/// `id` and `method`. On a text cut short (a prefix of an oversized line) it still answers what
/// it read before the cut.
///
/// ```
/// use surface_runtime::mcp::__transport::{Kind, outline};
/// let o = outline(br#"{"jsonrpc":"2.0","id":7,"params":{"#);
/// assert_eq!((o.kind, o.complete, o.id), (Kind::Object, false, Some(&b"7"[..])));
/// ```
pub fn outline(text: &[u8]) -> Outline<'_> {
    let mut c = Cursor { s: text, i: 0 };
    let mut o = Outline {
        kind: Kind::Invalid,
        complete: false,
        id: None,
        method: None,
        answer: false,
    };
    c.ws();
    let body = match c.peek() {
        Some(b'{') => {
            o.kind = Kind::Object;
            c.members(&mut o)
        }
        Some(b'[') => {
            o.kind = Kind::Array;
            c.value()
        }
        Some(_) => {
            o.kind = Kind::Scalar;
            c.value()
        }
        None => None,
    };
    if body.is_none() {
        if o.kind == Kind::Scalar {
            o.kind = Kind::Invalid;
        }
        return o;
    }
    c.ws();
    o.complete = c.i == text.len();
    o
}

/// A byte cursor; every step answers `None` on invalid or missing input.
struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.i += 1;
        Some(b)
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn expect(&mut self, b: u8) -> Option<()> {
        (self.next()? == b).then_some(())
    }

    /// The top-level object, noting its `id` and `method`.
    fn members(&mut self, o: &mut Outline<'a>) -> Option<()> {
        self.expect(b'{')?;
        self.ws();
        if self.peek()? == b'}' {
            self.i += 1;
            return Some(());
        }
        loop {
            let key_start = self.i;
            self.string()?;
            let key = &self.s[key_start..self.i];
            self.ws();
            self.expect(b':')?;
            self.ws();
            let value_start = self.i;
            self.value()?;
            let value = &self.s[value_start..self.i];
            match key {
                b"\"id\"" if o.id.is_none() => o.id = Some(value),
                b"\"method\"" if o.method.is_none() => o.method = Some(value),
                b"\"result\"" | b"\"error\"" => o.answer = true,
                _ => {}
            }
            self.ws();
            match self.next()? {
                b',' => self.ws(),
                b'}' => return Some(()),
                _ => return None,
            }
        }
    }

    /// One value of any depth, iteratively: `stack` holds `true` per open object.
    fn value(&mut self) -> Option<()> {
        let mut stack: Vec<bool> = Vec::new();
        loop {
            self.ws();
            match self.peek()? {
                open @ (b'{' | b'[') => {
                    self.i += 1;
                    self.ws();
                    let object = open == b'{';
                    let close = if object { b'}' } else { b']' };
                    if self.peek()? != close {
                        stack.push(object);
                        if object {
                            self.key()?;
                        }
                        continue;
                    }
                    self.i += 1;
                }
                b'"' => self.string()?,
                b't' => self.literal(b"true")?,
                b'f' => self.literal(b"false")?,
                b'n' => self.literal(b"null")?,
                b'-' | b'0'..=b'9' => self.number()?,
                _ => return None,
            }
            // After a value: close what ends here, or go on after a comma.
            loop {
                let Some(&object) = stack.last() else {
                    return Some(());
                };
                self.ws();
                match self.next()? {
                    b',' => {
                        if object {
                            self.ws();
                            self.key()?;
                        }
                        break;
                    }
                    b'}' if object => {
                        stack.pop();
                    }
                    b']' if !object => {
                        stack.pop();
                    }
                    _ => return None,
                }
            }
        }
    }

    /// `"key"` and its colon.
    fn key(&mut self) -> Option<()> {
        self.string()?;
        self.ws();
        self.expect(b':')
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.i.checked_add(word.len())?;
        (self.s.get(self.i..end)? == word).then(|| self.i = end)
    }

    fn string(&mut self) -> Option<()> {
        self.expect(b'"')?;
        loop {
            match self.next()? {
                b'"' => return Some(()),
                b'\\' => match self.next()? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                    b'u' => {
                        for _ in 0..4 {
                            if !self.next()?.is_ascii_hexdigit() {
                                return None;
                            }
                        }
                    }
                    _ => return None,
                },
                0..=0x1f => return None,
                _ => {}
            }
        }
    }

    fn digits(&mut self) -> Option<()> {
        if !self.next()?.is_ascii_digit() {
            return None;
        }
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.i += 1;
        }
        Some(())
    }

    fn number(&mut self) -> Option<()> {
        if self.peek()? == b'-' {
            self.i += 1;
        }
        if self.peek()? == b'0' {
            self.i += 1;
        } else {
            self.digits()?;
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            self.digits()?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            self.digits()?;
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::JsonRpcRequest;

    /// The method-first read gives exactly what rmcp's generic read gives.
    #[test]
    fn method_first_parsing_reads_what_the_generic_read_does() {
        let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"0"},"progressToken":7,"x":[1,2.5,1e300,-0.0,18446744073709551615]}"#;
        let bodies = [
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"a","arguments":{{"n":1.25,"big":123456789012345678,"s":"\u00e9"}},{meta}}}}}"#),
            format!(r#"{{"params":{{{meta},"name":"a"}},"method":"tools/call","id":"x-1","jsonrpc":"2.0"}}"#),
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a","arguments":{},"inputResponses":{"k":{"action":"accept","content":{"name":"Ada"}}},"requestState":"s"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"x://y/1"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"p","arguments":{"a":"b"}}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"cursor":"c"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":7,"method":"tools\/call","params":{"name":"a"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"a"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"arguments":{}}}"#.to_owned(),
            r#"{"jsonrpc":"1.0","id":9,"method":"tools/call","params":{"name":"a"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":10,"method":"ping"}"#.to_owned(),
            r#"{"jsonrpc":"2\u002e0","id":11,"method":"tools/call","params":{"name":"a"}}"#.to_owned(),
            r#"{"jsonrpc":2.0,"id":12,"method":"tools/call","params":{"name":"a"}}"#.to_owned(),
        ];
        for body in &bodies {
            let fast = read_message(body.as_bytes()).map(|m| serde_json::to_value(m).unwrap());
            let slow = serde_json::from_slice::<ClientJsonRpcMessage>(body.as_bytes())
                .map(|m| serde_json::to_value(m).unwrap());
            match (fast, slow) {
                (Ok(fast), Ok(slow)) => assert_eq!(fast, slow, "{body}"),
                (Err(_), Err(_)) => {}
                (fast, slow) => panic!("{body}: {fast:?} vs {slow:?}"),
            }
        }
        // A body that is not UTF-8 is refused as the generic read refuses it, saying where.
        for body in [
            &b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a\xff\"}}"[..],
            &b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\xc3\"}"[..],
        ] {
            let fast = read_message(body).map(|_| ()).map_err(|e| e.to_string());
            let slow = serde_json::from_slice::<ClientJsonRpcMessage>(body)
                .map(|_| ())
                .map_err(|e| e.to_string());
            assert!(fast.is_err(), "{body:?}");
            assert_eq!(fast, slow, "{body:?}");
        }
    }

    /// An error answer is the JSON serde writes for it, whatever its message holds.
    #[test]
    fn an_error_answer_is_serdes_json() {
        for message in [
            "plain",
            "quote \" and \\ slash",
            "tab\tnew\nline\u{1}\u{1f}\u{7f}",
            "é ☃ 𝄞",
        ] {
            let line = error_answer(Some(b"7"), INVALID_REQUEST, message);
            let expected = serde_json::json!({
                "jsonrpc": "2.0",
                "id": 7,
                "error": { "code": INVALID_REQUEST, "message": message },
            });
            assert_eq!(line.last(), Some(&b'\n'));
            let written = &line[..line.len() - 1];
            assert_eq!(
                serde_json::from_slice::<serde_json::Value>(written).unwrap(),
                expected
            );
            let serde_message = serde_json::to_string(message).unwrap();
            assert!(
                written.ends_with(format!("\"message\":{serde_message}}}}}").as_bytes()),
                "{}",
                String::from_utf8_lossy(written)
            );
        }
    }

    /// The hand read of a plain call ([`super::super::call_line`]) gives what rmcp's generic
    /// read gives, for plain calls and for thousands of mutations of them (a byte replaced,
    /// inserted or removed): whenever the hand read answers, the generic read agrees.
    #[test]
    fn the_hand_read_of_a_call_is_the_generic_read() {
        let seeds = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"load_sample","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":-42,"method":"tools/call","params":{"name":"proc_spawn","arguments":{"name":"w1","n":[1,{"a":"\"}"}]}}}"#,
            r#" { "method" : "tools/call" , "params" : { "arguments" : { "pid" : 3 } , "name" : "proc_kill" } , "id" : "req-7" , "jsonrpc" : "2.0" } "#,
            r#"{"jsonrpc":"2.0","id":9223372036854775807,"method":"tools/call","params":{"_meta":{"progressToken":"t","io.modelcontextprotocol/protocolVersion":"2026-07-28","x":{"y":[true,null]}},"name":"a"}}"#,
            r#"{"params":{"name":"a","_meta":{}},"id":0,"jsonrpc":"2.0","method":"tools/call"}"#,
            // Lines the hand read must leave to serde (or read as it does).
            r#"{"jsonrpc":"2.0","id":01,"method":"tools/call","params":{"name":"a"}}"#,
            r#"{"jsonrpc":"2.0","id":-0,"method":"tools/call","params":{"name":"a"}}"#,
            r#"{"jsonrpc":"2.0","id":1.0,"method":"tools/call","params":{"name":"a"}}"#,
            r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"tools/call","params":{"name":"a"}}"#,
            r#"{"jsonrpc":"1.0","jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"a"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{},"arguments":{"x":1}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a\u0062"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":null,"arguments":null}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"x":1]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}x"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"},"extra":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
        ];
        let alphabet: &[u8] = b"\"\\{}[],: 0-1.eEanu\x01\t";
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut random = move |below: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % below as u64) as usize
        };
        let mut hand_reads = 0;
        for round in 0..20_000 {
            let mut line = seeds[round % seeds.len()].as_bytes().to_vec();
            for _ in 0..random(3) {
                let at = random(line.len() + 1);
                let byte = alphabet[random(alphabet.len())];
                match random(3) {
                    0 if at < line.len() => line[at] = byte,
                    1 if at < line.len() => {
                        line.remove(at);
                    }
                    _ => line.insert(at, byte),
                }
            }
            let Ok(text) = std::str::from_utf8(&line) else {
                continue;
            };
            let Some(message) =
                super::super::call_line::read(text).and_then(|call| hand_read_message(call, None))
            else {
                continue;
            };
            hand_reads += 1;
            let generic = serde_json::from_str::<ClientJsonRpcMessage>(text).unwrap_or_else(|e| {
                panic!("{text}: the hand read took a line the generic read refuses: {e}")
            });
            assert_eq!(
                serde_json::to_value(message).unwrap(),
                serde_json::to_value(generic).unwrap(),
                "{text}"
            );
        }
        assert!(hand_reads > 1_500, "only {hand_reads} lines read by hand");
    }

    fn refusal(line: &[u8]) -> serde_json::Value {
        match decode_line(line) {
            Decoded::Refuse(bytes) => serde_json::from_slice(&bytes).expect("an answer is JSON"),
            other => panic!("{}: {other:?}", String::from_utf8_lossy(line)),
        }
    }

    #[test]
    fn outline_validates_without_recursion() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(outline(deep.as_bytes()).complete);
        let cut = format!("{}{}", "[".repeat(10), "]".repeat(9));
        assert!(!outline(cut.as_bytes()).complete);
        let texts: [(&[u8], bool); 14] = [
            (b"{\"a\":}", false),
            (b"01", false),
            (b"1.", false),
            (b"-", false),
            (b"\"\x01\"", false),
            (b"tru", false),
            (b"{\"a\" 1}", false),
            (b"[1,]", false),
            (b"1 2", false),
            (b" {\"a\":[1,{\"b\":null}],\"c\":\"\\u00e9\"} ", true),
            (b"-0.5e+3", true),
            (b"[]", true),
            (b"{}", true),
            (b"\"x\"", true),
        ];
        for (text, complete) in texts {
            assert_eq!(
                outline(text).complete,
                complete,
                "{}",
                String::from_utf8_lossy(text)
            );
        }
    }

    #[test]
    fn a_tools_call_reads_as_rmcps_own_derive_reads_it() {
        let lines: [&[u8]; 6] = [
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#,
            br#"{"id":"a","method":"tools/call","jsonrpc":"2.0","params":{"name":"t","arguments":{"x":[1,{"y":null}]},"_meta":{"progressToken":7,"k":"v"}}}"#,
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","arguments":null,"extra":1},"extra":{"z":1}}"#,
            br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t","inputResponses":{"k":{"action":"cancel"}},"requestState":"s"}}"#,
            br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"_meta":{},"name":"\u00e9"}}"#,
            br#"{"jsonrpc":"2.0","id":-5,"method":"tools/call","params":{"name":"t","arguments":{}}}"#,
        ];
        // Without a memory of `_meta`, and with one (read thrice: the third read is answered
        // from it).
        let memo = MetaMemo::default();
        let reads = lines.iter().flat_map(|line| {
            [
                (line, None),
                (line, Some(&memo)),
                (line, Some(&memo)),
                (line, Some(&memo)),
            ]
        });
        for (line, memo) in reads {
            let mut fast = serde_json::from_slice::<ToolsCall>(line)
                .unwrap_or_else(|e| panic!("{}: {e}", String::from_utf8_lossy(line)))
                .into_message(memo)
                .expect("its _meta is an object");
            let JsonRpcMessage::Request(request) = &mut fast else {
                panic!("not a request")
            };
            let meta = meta_of(&request.request).clone();
            settle_meta(&mut request.request);
            assert_eq!(meta_of(&request.request), &meta, "settled, the same _meta");
            let theirs = serde_json::from_slice::<JsonRpcRequest<CallToolRequest>>(line).unwrap();
            let theirs: ClientJsonRpcMessage =
                JsonRpcMessage::request(ClientRequest::from(theirs.request), theirs.id);
            let (JsonRpcMessage::Request(a), JsonRpcMessage::Request(b)) = (&fast, &theirs) else {
                panic!("not requests")
            };
            assert_eq!(
                serde_json::to_value(&fast).unwrap(),
                serde_json::to_value(&theirs).unwrap()
            );
            use rmcp::model::GetMeta;
            assert_eq!(a.request.get_meta(), b.request.get_meta());
            let (ClientRequest::CallToolRequest(a), ClientRequest::CallToolRequest(b)) =
                (&a.request, &b.request)
            else {
                panic!("not tools/call")
            };
            assert_eq!(a.params, b.params);
        }
        // What it does not read, rmcp's derive does (or refuses) as before.
        for line in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#[..],
            br#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"t"}}"#,
        ] {
            assert!(serde_json::from_slice::<ToolsCall>(line).is_err());
        }
        // A `_meta` that is no object is left to rmcp's derive too, memory or not, and the line
        // reads as that derive reads it.
        let line = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":5}}"#;
        let memo = MetaMemo::default();
        for memo in [None, Some(&memo), Some(&memo), Some(&memo)] {
            let call = serde_json::from_slice::<ToolsCall>(line).unwrap();
            assert!(call.into_message(memo).is_none());
            let read = read_message_in(line, memo).map(|m| serde_json::to_value(m).unwrap());
            let theirs = serde_json::from_slice::<ClientJsonRpcMessage>(line)
                .map(|m| serde_json::to_value(m).unwrap());
            assert_eq!(read.map_err(|e| e.to_string()), theirs.map_err(|e| e.to_string()));
        }
    }

    #[test]
    fn every_refusal_names_the_id_it_could_read() {
        let cases: [(&[u8], serde_json::Value, i32); 7] = [
            (
                b"{\"jsonrpc\":\"2.0\",\"id\":7,\"params\":{",
                serde_json::Value::Null,
                PARSE_ERROR,
            ),
            (b"[]", serde_json::Value::Null, INVALID_REQUEST),
            (
                b"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}",
                serde_json::Value::Null,
                INVALID_REQUEST,
            ),
            (
                b"{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"x\",\"params\":{\"n\":1e400}}",
                "a".into(),
                PARSE_ERROR,
            ),
            (b"{\"jsonrpc\":\"2.0\",\"id\":4}", 4.into(), INVALID_REQUEST),
            (
                b"{\"jsonrpc\":\"2.0\",\"id\":{\"x\":1},\"method\":\"ping\"}",
                serde_json::Value::Null,
                INVALID_REQUEST,
            ),
            (b"true", serde_json::Value::Null, INVALID_REQUEST),
        ];
        for (line, id, code) in cases {
            let answer = refusal(line);
            assert_eq!(answer.get("id"), Some(&id), "{answer}");
            assert_eq!(answer["error"]["code"], code, "{answer}");
        }
        assert!(matches!(
            decode_line(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":5}"),
            Decoded::Ignore
        ));
        assert!(matches!(decode_line(b"  \r"), Decoded::Ignore));
    }
}
