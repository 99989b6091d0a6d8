//! A call's questions for its host ([`crate::ask`]) on the MCP face, in both eras.
//!
//! - A legacy session (one that opened with `initialize`) is asked directly: the server sends
//!   `elicitation/create`, `sampling/createMessage` or `roots/list` on the session and the call
//!   waits for the answer.
//! - A 2026-07-28 request cannot be asked anything (the era forbids server-to-client requests).
//!   Instead the call runs until every branch of it waits on an unanswered question; the face
//!   then drops it and answers an `input_required` result naming every question asked in that
//!   poll (a `join!` of asks is one round), keyed as the author keyed them. The host calls again
//!   with `inputResponses` and the echoed `requestState`; the call runs again from its start and
//!   each ask finds its answer by key. `requestState` carries the answers of earlier rounds, sealed
//!   with HMAC-SHA256 under a per-process key (rmcp's `RequestStateCodec`) and bound to the
//!   method, the name and the arguments of the request, for 30 minutes: a state that was altered,
//!   replayed against another call or kept too long is refused with -32602. Nothing is held on
//!   the server between rounds, so there is nothing to bound or expire there.
//!
//! An ask needing a capability the host did not declare fails with `AskError::Unsupported`; on
//! 2026-07-28, a call that then fails is answered with -32021 (MissingRequiredClientCapability,
//! naming the capability), and an answer that is not one (a number where an `ElicitResult` goes)
//! with -32602, rather than as the tool's own error.

use super::ask_requests::{parse_answer, request_of, send};
use super::handler_context::{CallPeer, HandlerContext};
use super::tasks::TaskInputs;
use crate::ask::{Answer, Ask, AskError};
use crate::failure::Failure;
use futures::task::AtomicWaker;
use rmcp::model::{
    ClientCapabilities, ErrorData, InputRequest, InputRequests, InputRequiredResult, InputResponses,
    JsonObject, RequestId, RequestStateCodec, SealOptions,
};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::Poll;
use std::time::Duration;

/// How long a `requestState` stays good: a person may take a while over a form.
const STATE_TTL: Duration = Duration::from_secs(30 * 60);

/// The per-process key sealing `requestState`; random, so a restart invalidates open rounds.
fn codec() -> &'static RequestStateCodec {
    static CODEC: OnceLock<RequestStateCodec> = OnceLock::new();
    CODEC.get_or_init(|| {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).expect("the OS random source is unavailable");
        RequestStateCodec::try_new(key.to_vec()).expect("a 32-byte key is long enough")
    })
}

/// What a 2026-07-28 call has been told and has asked, this round.
#[derive(Default)]
struct Rounds {
    /// Answers from the sealed state and this request's `inputResponses`.
    given: BTreeMap<String, Value>,
    /// The answers the call read: what the next round's state carries.
    used: Mutex<BTreeMap<String, Value>>,
    /// The questions it asked that have no answer yet.
    pending: Mutex<InputRequests>,
    /// Wakes the gate when a question is asked from a task the gate does not poll.
    waker: AtomicWaker,
}

enum Era {
    /// How long an ask waits for its answer, and the id of the call that asks (its requests,
    /// sent to [`CallAsks::peer`], ride that call's own stream).
    Legacy(Duration, RequestId),
    Modern(Rounds),
    /// A task tool's call (tasks.rs), before and after it becomes a task: a question asked with
    /// [`Asking::before_task`](crate::ask::Asking::before_task) is an `input_required` round of
    /// the `tools/call` itself, as on 2026-07-28; any other question waits for the task (handed
    /// over once the call first waits on anything but such questions) and is one of its
    /// `inputRequests`, answered by `tasks/update`. The hand-off is boxed: few calls are
    /// deferred, and every call's questions are built per call.
    Deferred(Rounds, Box<HandOff>),
}

/// Where a deferred call's task is, once it has one.
#[derive(Default)]
struct HandOff {
    task: OnceLock<TaskInputs>,
    handed: tokio::sync::Notify,
    /// The status message reported before there was a task to show it.
    early_status: Mutex<Option<String>>,
}

impl HandOff {
    /// The task, once the call has been handed to it.
    async fn task(&self) -> &TaskInputs {
        loop {
            // Created before the check: a hand-off between the two still wakes it.
            let handed = self.handed.notified();
            if let Some(task) = self.task.get() {
                return task;
            }
            handed.await;
        }
    }
}

/// One request's questions: how to ask them, and what went wrong in a way the protocol
/// (not the tool) should answer.
pub(crate) struct CallAsks {
    /// The session's peer, which the call's questions (legacy), progress and log messages go
    /// to: one per call, shared with the call's reporter (`context.rs`).
    pub(crate) peer: CallPeer,
    era: Era,
    capabilities: Capabilities,
    refusal: Mutex<Option<ErrorData>>,
}

/// What the caller of a call already holds for it, so that its round neither reads nor clones
/// it again.
#[derive(Default)]
pub(crate) struct Held {
    /// The client's capabilities, read from a 2026-07-28 request's `_meta` already.
    pub(crate) capabilities: Option<Box<ClientCapabilities>>,
}

/// What the host declared it can be asked, as rmcp's `RequestContext::client_capabilities`
/// reads it. A legacy session's come from its `initialize` and are read there only when the
/// call asks (most calls never do: cloning them per call was measurable).
enum Capabilities {
    /// Boxed: most calls are of a legacy session whose `initialize` declared them, and a call's
    /// questions (built per call) stay small for them.
    Known(Box<ClientCapabilities>),
    /// The legacy session's `initialize` (the peer is the era's).
    Session,
}

fn declares(caps: &ClientCapabilities, capability: &str) -> bool {
    match capability {
        "elicitation" => caps.elicitation.is_some(),
        crate::ask::URL_ELICITATION => caps.elicitation.as_ref().is_some_and(|e| e.url.is_some()),
        "sampling" => caps.sampling.is_some(),
        "roots" => caps.roots.is_some(),
        _ => false,
    }
}

fn required(capability: &str) -> ClientCapabilities {
    let required = match capability {
        crate::ask::URL_ELICITATION => json!({ "elicitation": { "url": {} } }),
        _ => json!({ capability: {} }),
    };
    serde_json::from_value(required).unwrap_or_default()
}

impl CallAsks {
    /// Asks `ask` under `key` in this request's era.
    pub(crate) async fn ask(&self, key: String, ask: Ask) -> Result<Answer, AskError> {
        self.ask_as(key, ask, false).await
    }

    /// Asks `ask` under `key`, before the call becomes a task when it is a task tool's call
    /// (otherwise as [`CallAsks::ask`]).
    pub(crate) async fn ask_before_task(&self, key: String, ask: Ask) -> Result<Answer, AskError> {
        self.ask_as(key, ask, true).await
    }

    /// Hands a deferred call (see [`Round::defer`]) to its task: its questions from now on are
    /// the task's `inputRequests`, and those already waiting for the task are asked there.
    pub(crate) fn hand_off(&self, inputs: TaskInputs) {
        if let Era::Deferred(_, hand) = &self.era {
            if let Some(status) = crate::sync::lock(&hand.early_status).take() {
                inputs.entry().status(status);
            }
            let _ = hand.task.set(inputs);
            hand.handed.notify_waiters();
        }
    }

    /// Shows `status` as the task's status message when this is a task tool's call (kept for
    /// the task until the call is handed to it); `false` for any other call.
    pub(crate) fn task_status(&self, status: impl FnOnce() -> String) -> bool {
        let Era::Deferred(_, hand) = &self.era else {
            return false;
        };
        match hand.task.get() {
            Some(task) => task.entry().status(status()),
            None => *crate::sync::lock(&hand.early_status) = Some(status()),
        }
        true
    }

    /// The task this call was handed to, if it is a task tool's call that has become one.
    pub(crate) fn handed_to(&self) -> Option<&Arc<super::tasks::Entry>> {
        match &self.era {
            Era::Deferred(_, hand) => hand.task.get().map(TaskInputs::entry),
            _ => None,
        }
    }

    async fn ask_as(&self, key: String, ask: Ask, before_task: bool) -> Result<Answer, AskError> {
        let capability = ask.capability();
        let declared = match (&self.capabilities, &self.era) {
            (Capabilities::Known(caps), _) => declares(caps, capability),
            (Capabilities::Session, Era::Legacy(..)) => (self.peer)
                .peer_info()
                .is_some_and(|info| declares(&info.capabilities, capability)),
            (Capabilities::Session, _) => false,
        };
        if !declared {
            if matches!(self.era, Era::Modern(_) | Era::Deferred(..)) {
                self.refuse(ErrorData::missing_required_client_capability(required(
                    capability,
                )));
            }
            return Err(AskError::Unsupported { capability });
        }
        let (method, params) = request_of(&ask);
        let encode = |method: &str, params: Value| -> Result<InputRequest, AskError> {
            serde_json::from_value(json!({ "method": method, "params": params }))
                .map_err(|e| AskError::Failed(format!("cannot encode the {method} request: {e}")))
        };
        let inputs = match &self.era {
            Era::Deferred(_, hand) if !before_task || hand.task.get().is_some() => hand.task().await,
            Era::Legacy(timeout, origin) => {
                super::observe::asked(method);
                let answer = send(&self.peer, origin, method, params, *timeout).await?;
                return parse_answer(&ask, &answer);
            }
            Era::Modern(rounds) | Era::Deferred(rounds, _) => {
                if let Some(answer) = rounds.given.get(&key) {
                    let parsed = parse_answer(&ask, answer);
                    match &parsed {
                        Ok(_) => {
                            crate::sync::lock(&rounds.used).insert(key, answer.clone());
                        }
                        Err(e) => self.refuse(ErrorData::invalid_params(
                            format!("inputResponses[\"{key}\"]: {e}"),
                            None,
                        )),
                    }
                    return parsed;
                }
                let request = encode(method, params)?;
                super::observe::asked(method);
                crate::sync::lock(&rounds.pending).insert(key, request);
                rounds.waker.wake();
                // The gate ends the round; this branch is never resumed.
                return std::future::pending().await;
            }
        };
        super::observe::asked(method);
        let Some(answer) = inputs.entry().ask(key.clone(), encode(method, params)?).await else {
            // The task ended meanwhile (cancelled, expired): its future is dropped.
            return std::future::pending().await;
        };
        let parsed = parse_answer(&ask, &answer);
        if let Err(e) = &parsed {
            self.refuse(ErrorData::invalid_params(
                format!("inputResponses[\"{key}\"]: {e}"),
                None,
            ));
        }
        parsed
    }

    fn refuse(&self, error: ErrorData) {
        crate::sync::lock(&self.refusal).get_or_insert(error);
    }
}

/// The arguments a round's state is bound to, as its request carried them.
#[derive(Clone, Copy)]
pub(crate) enum Arguments<'a> {
    /// A tool's: absent, they read as `{}`.
    Tool(Option<&'a JsonObject>),
    /// A prompt's: absent, they read as `null`.
    Prompt(Option<&'a JsonObject>),
}

/// Writes a JSON value with every object's keys sorted, so equal arguments bind equal states:
/// in place, without a sorted copy (an object whose keys are in order already, as a
/// `serde_json` map keeps them, is written as it is).
struct Sorted<'a>(&'a Value);

impl serde::Serialize for Sorted<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Object(map) => SortedMap(map).serialize(serializer),
            Value::Array(items) => serializer.collect_seq(items.iter().map(Sorted)),
            other => other.serialize(serializer),
        }
    }
}

/// [`Sorted`] of an object.
struct SortedMap<'a>(&'a Map<String, Value>);

impl serde::Serialize for SortedMap<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.0.keys().is_sorted() {
            return serializer.collect_map(self.0.iter().map(|(k, v)| (k, Sorted(v))));
        }
        let mut entries: Vec<(&String, &Value)> = self.0.iter().collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
        serializer.collect_map(entries.into_iter().map(|(k, v)| (k, Sorted(v))))
    }
}

/// One round of one request that may ask: `tools/call` or `prompts/get`.
pub(crate) struct Round {
    asks: Arc<CallAsks>,
    /// What a sealed state is bound to: method, name and arguments (2026-07-28 only: a legacy
    /// round never seals).
    binding: Vec<u8>,
}

/// How a round ended when it did not simply run to its answer.
pub(crate) enum Halt {
    /// Every branch of the call waits on a question: ask the host.
    InputRequired(InputRequiredResult),
    /// The protocol answers (an error), not the call.
    Refused(ErrorData),
}

impl Round {
    /// The round of a request of a legacy session: its questions are requests to the host, each
    /// waited for up to `ask_timeout`.
    pub(crate) fn legacy(context: &HandlerContext, ask_timeout: Duration) -> Round {
        // rmcp's `client_capabilities` for a request outside the 2026-07-28 lifecycle: its
        // `_meta`'s, else the session's `initialize`'s, read when asked (an inline session
        // stores no peer info: nothing declared, as rmcp reads it).
        let capabilities = match context.meta.client_capabilities() {
            Some(caps) => Capabilities::Known(Box::new(caps)),
            None => Capabilities::Session,
        };
        Round::new(
            context,
            Era::Legacy(ask_timeout, context.id.clone()),
            capabilities,
            Vec::new(),
        )
    }

    /// The round of a 2026-07-28 request of `method` for `name` with `arguments` (which the
    /// state binds): the sealed `state` is opened (refused with -32602 when it fails
    /// verification) and its answers joined with `responses`; with what the caller `held`.
    pub(crate) fn modern(
        context: &HandlerContext,
        held: Held,
        method: &str,
        name: &str,
        arguments: Arguments<'_>,
        responses: Option<InputResponses>,
        state: Option<String>,
    ) -> Result<Round, ErrorData> {
        let (rounds, binding) = Round::sealed(method, name, arguments, responses, state)?;
        let capabilities = Capabilities::Known(
            (held.capabilities)
                .unwrap_or_else(|| Box::new(context.client_capabilities().unwrap_or_default())),
        );
        Ok(Round::new(context, Era::Modern(rounds), capabilities, binding))
    }

    /// Opens the round of a task tool's `tools/call` for `name` with `arguments` on 2026-07-28,
    /// before the call becomes a task: see [`Round::defer`].
    pub(crate) fn open_deferred(
        context: &HandlerContext,
        name: &str,
        arguments: Arguments<'_>,
        responses: Option<InputResponses>,
        state: Option<String>,
    ) -> Result<Round, ErrorData> {
        let (rounds, binding) = Round::sealed("tools/call", name, arguments, responses, state)?;
        let capabilities = Capabilities::Known(Box::new(context.client_capabilities().unwrap_or_default()));
        let era = Era::Deferred(rounds, Box::default());
        Ok(Round::new(context, era, capabilities, binding))
    }

    /// The answers of earlier rounds (the sealed `state`, refused with -32602 when it fails
    /// verification) joined with `responses`, and what a state is bound to.
    fn sealed(
        method: &str,
        name: &str,
        arguments: Arguments<'_>,
        responses: Option<InputResponses>,
        state: Option<String>,
    ) -> Result<(Rounds, Vec<u8>), ErrorData> {
        // `{method}\n{name}\n{arguments}`, the arguments as compact JSON with sorted keys:
        // written straight into the bytes from the request's own map (`format!` through
        // `Display` cost a call ~1,400 instructions, a sorted copy of the map ~400 more).
        let mut binding = Vec::with_capacity(method.len() + name.len() + 64);
        binding.extend_from_slice(method.as_bytes());
        binding.push(b'\n');
        binding.extend_from_slice(name.as_bytes());
        binding.push(b'\n');
        match arguments {
            Arguments::Tool(Some(map)) | Arguments::Prompt(Some(map)) => {
                serde_json::to_writer(&mut binding, &SortedMap(map)).expect("JSON values serialize")
            }
            Arguments::Tool(None) => binding.extend_from_slice(b"{}"),
            Arguments::Prompt(None) => binding.extend_from_slice(b"null"),
        }
        let mut given: BTreeMap<String, Value> = match state {
            Some(sealed) => codec().open_json_with(&sealed, &binding).map_err(|e| {
                ErrorData::invalid_params(
                    format!("requestState failed its integrity check ({e}); start the call again without it"),
                    None,
                )
            })?,
            None => BTreeMap::new(),
        };
        given.extend(responses.unwrap_or_default());
        let rounds = Rounds {
            given,
            ..Rounds::default()
        };
        Ok((rounds, binding))
    }

    fn new(context: &HandlerContext, era: Era, capabilities: Capabilities, binding: Vec<u8>) -> Round {
        Round {
            asks: Arc::new(CallAsks {
                peer: context.peer.share(),
                era,
                capabilities,
                refusal: Mutex::new(None),
            }),
            binding,
        }
    }

    /// Whether this round is of the 2026-07-28 era (its logging follows the request's `_meta`).
    pub(crate) fn is_modern(&self) -> bool {
        matches!(self.asks.era, Era::Modern(_) | Era::Deferred(..))
    }

    /// Runs a task tool's call inline until it first waits: it ends there with an
    /// `input_required` round when it waits on questions asked before the task
    /// ([`Asking::before_task`](crate::ask::Asking::before_task)), else it is to be handed to a
    /// task ([`Deferral::Handing`]: the call, still running, and this round).
    pub(crate) fn defer<T, F>(self, call: F) -> Deferring<F>
    where
        F: Future<Output = Result<T, Failure>> + Unpin,
    {
        Deferring {
            call: Some(call),
            round: Some(self),
        }
    }

    /// The questions of this round, for the call's context.
    pub(crate) fn asks(&self) -> Arc<CallAsks> {
        self.asks.clone()
    }

    /// Runs the call; on 2026-07-28, ends it as soon as it waits only on questions.
    pub(crate) fn run<T, F: Future<Output = Result<T, Failure>>>(self, call: F) -> Running<F> {
        Running {
            call,
            round: Some(self),
        }
    }

    /// How the call ended (`None`: it waits on questions only) as this round answers it.
    fn finish<T>(self, outcome: Option<Result<T, Failure>>) -> Result<Result<T, Failure>, Halt> {
        match outcome {
            Some(Ok(value)) => Ok(Ok(value)),
            Some(Err(failure)) => match crate::sync::lock(&self.asks.refusal).take() {
                Some(refusal) => Err(Halt::Refused(refusal)),
                None => Ok(Err(failure)),
            },
            None => {
                let (Era::Modern(rounds) | Era::Deferred(rounds, _)) = &self.asks.era else {
                    unreachable!("only a 2026-07-28 round ends waiting")
                };
                let pending = std::mem::take(&mut *crate::sync::lock(&rounds.pending));
                let used = std::mem::take(&mut *crate::sync::lock(&rounds.used));
                let options = SealOptions::new().associated_data(&self.binding).ttl(STATE_TTL);
                let state = codec().seal_json_with(&used, &options).map_err(|e| {
                    Halt::Refused(ErrorData::internal_error(
                        format!("cannot seal requestState: {e}"),
                        None,
                    ))
                })?;
                Err(Halt::InputRequired(InputRequiredResult::new(
                    Some(pending),
                    Some(state),
                )))
            }
        }
    }
}

pin_project_lite::pin_project! {
    /// [`Round::run`]'s future. Written by hand, not as an `async fn`: one would hold the
    /// call's future twice (its argument, then the pinned copy it polls).
    pub(crate) struct Running<F> {
        #[pin]
        call: F,
        round: Option<Round>,
    }
}

impl<T, F: Future<Output = Result<T, Failure>>> Future for Running<F> {
    type Output = Result<Result<T, Failure>, Halt>;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let round = this
            .round
            .as_ref()
            .expect("a round's future polled after it ended");
        let rounds = match &round.asks.era {
            Era::Modern(rounds) => Some(rounds),
            // Handed to its task: it runs on as one.
            Era::Deferred(rounds, hand) if hand.task.get().is_none() => Some(rounds),
            Era::Legacy(..) | Era::Deferred(..) => None,
        };
        if let Some(rounds) = rounds {
            rounds.waker.register(cx.waker());
        }
        let outcome = match this.call.poll(cx) {
            Poll::Ready(out) => Some(out),
            Poll::Pending => match rounds {
                Some(rounds) if !crate::sync::lock(&rounds.pending).is_empty() => None,
                _ => return Poll::Pending,
            },
        };
        let round = this.round.take().expect("checked above");
        Poll::Ready(round.finish(outcome))
    }
}

/// How [`Round::defer`] ended.
pub(crate) enum Deferral<F, T> {
    /// Inline: it ran to its answer, or ended for the protocol to answer (an `input_required`
    /// round, a refusal).
    Ended(Result<Result<T, Failure>, Halt>),
    /// It waits on something other than questions asked before the task: hand it over.
    Handing(F, Round),
}

/// [`Round::defer`]'s future.
pub(crate) struct Deferring<F> {
    call: Option<F>,
    round: Option<Round>,
}

impl<T, F: Future<Output = Result<T, Failure>> + Unpin> Future for Deferring<F> {
    type Output = Deferral<F, T>;

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let call = this.call.as_mut().expect("a deferred call polled after it ended");
        let outcome = match std::pin::Pin::new(call).poll(cx) {
            Poll::Ready(out) => Some(out),
            Poll::Pending => None,
        };
        let round = this.round.take().expect("checked above");
        let asking = match &round.asks.era {
            Era::Deferred(rounds, _) => !crate::sync::lock(&rounds.pending).is_empty(),
            _ => false,
        };
        if outcome.is_none() && !asking {
            let call = this.call.take().expect("checked above");
            return Poll::Ready(Deferral::Handing(call, round));
        }
        Poll::Ready(Deferral::Ended(round.finish(outcome)))
    }
}

impl<T: From<InputRequiredResult>> From<Halt> for Result<T, ErrorData> {
    fn from(halt: Halt) -> Self {
        match halt {
            Halt::InputRequired(result) => Ok(result.into()),
            Halt::Refused(error) => Err(error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_is_bound_to_its_call() {
        let binding = b"tools/call\nt\n{}";
        let options = SealOptions::new().associated_data(binding).ttl(STATE_TTL);
        let used = BTreeMap::from([("k".to_owned(), json!({"action": "cancel"}))]);
        let sealed = codec().seal_json_with(&used, &options).unwrap();
        let opened: BTreeMap<String, Value> = codec().open_json_with(&sealed, binding).unwrap();
        assert_eq!(opened, used);
        assert!(
            codec()
                .open_json_with::<Value>(&format!("{sealed}-TAMPERED"), binding)
                .is_err()
        );
        assert!(
            codec()
                .open_json_with::<Value>(&sealed, b"tools/call\nother\n{}")
                .is_err()
        );
    }

    /// The bytes states were bound to before the binding was written in place: the arguments
    /// as a `Value` (a tool's absent ones `{}`, a prompt's `null`), every object's keys sorted
    /// into a copy, `Display`ed. A state sealed before outlives a restart, so these stay.
    fn bound_before(method: &str, name: &str, arguments: &Value) -> Vec<u8> {
        fn canonical(value: &Value) -> Value {
            match value {
                Value::Object(map) => {
                    let mut keys: Vec<&String> = map.keys().collect();
                    keys.sort();
                    Value::Object(
                        keys.into_iter()
                            .map(|k| (k.clone(), canonical(&map[k])))
                            .collect(),
                    )
                }
                Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
                other => other.clone(),
            }
        }
        format!("{method}\n{name}\n{}", canonical(arguments)).into_bytes()
    }

    #[test]
    fn a_binding_is_method_name_and_sorted_compact_arguments() {
        let arguments =
            json!({"b": [1, {"y": "\n", "x": null, "w": [{"d": 1, "c": 2.5}]}], "a": "é", "": true});
        let map = arguments.as_object().unwrap();
        let bound = |arguments| Round::sealed("tools/call", "t", arguments, None, None).unwrap().1;
        let binding = bound(Arguments::Tool(Some(map)));
        assert_eq!(binding, bound_before("tools/call", "t", &arguments));
        assert_eq!(
            String::from_utf8(binding).unwrap(),
            "tools/call\nt\n{\"\":true,\"a\":\"é\",\"b\":[1,{\"w\":[{\"c\":2.5,\"d\":1}],\"x\":null,\"y\":\"\\n\"}]}"
        );
        assert_eq!(
            bound(Arguments::Tool(None)),
            bound_before("tools/call", "t", &json!({}))
        );
        let prompt = |arguments| {
            Round::sealed("prompts/get", "p", arguments, None, None)
                .unwrap()
                .1
        };
        assert_eq!(
            prompt(Arguments::Prompt(Some(map))),
            bound_before("prompts/get", "p", &arguments)
        );
        assert_eq!(
            prompt(Arguments::Prompt(None)),
            bound_before("prompts/get", "p", &Value::Null)
        );
    }
}
