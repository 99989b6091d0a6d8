//! What a tool answers ([`ToolOutput`]) and what a prompt's messages hold, in one place: a value;
//! a picture ([`ok_image`], `render = image`); a sound ([`ok_audio`], `render = audio`); an
//! answer of several content blocks ([`OkContent`]) — text, pictures, sounds, embedded resources
//! (a member read, or any text or bytes at a URI) and resource links — still carrying a value as
//! `structuredContent` when it has one; and who speaks a message ([`Role`]), in a prompt or a
//! sampling request.
//!
//! ```
//! use surface_runtime::blocks::OkContent;
//! let answer = OkContent::new()
//!     .text("Three processes are over their limit:")
//!     .embedded_text("surface://cells/load", "application/json", "{\"load\": 0.93}")
//!     .link("surface://collections/processes/42", "process 42")
//!     .value(serde_json::json!({"over": 3}));
//! assert_eq!(answer.blocks.len(), 3);
//! ```

use crate::failure::Failure;
use serde::Serialize;
use serde_json::Value;

/// What a tool answers on success.
#[derive(Clone, Debug, PartialEq)]
pub enum ToolOutput {
    /// A value: travels as `structuredContent` and as the same JSON in text.
    Value(Value),
    /// A picture: the bytes once, as an image block; the facts as `structuredContent`.
    Image(OkImage),
    /// Several content blocks (or a sound), with the value as `structuredContent` when there
    /// is one; see [`crate::blocks`].
    Content(crate::blocks::OkContent),
}

/// A tool answer that is a picture. Build with [`ok_image`].
#[derive(Clone, Debug, PartialEq)]
pub struct OkImage {
    /// The image bytes.
    pub bytes: Vec<u8>,
    /// Its MIME type (`"image/png"`).
    pub mime: String,
    /// Facts about it (dimensions, what it shows); must not repeat the bytes.
    pub detail: Value,
}

/// An image answer: the bytes travel once as an MCP image block, `detail` as the structured arm.
///
/// ```
/// let img = surface_runtime::ok_image(vec![137, 80, 78, 71], "image/png", serde_json::json!({"width": 1}));
/// assert_eq!(img.mime, "image/png");
/// ```
pub fn ok_image(bytes: Vec<u8>, mime: impl Into<String>, detail: impl Serialize) -> OkImage {
    let detail = serde_json::to_value(detail)
        .unwrap_or_else(|e| Value::String(format!("<unserializable detail: {e}>")));
    OkImage {
        bytes,
        mime: mime.into(),
        detail,
    }
}

/// Turns what a tool or procedure returns on success into a [`ToolOutput`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be what a tool answers",
    label = "must be `Serialize` (or an `OkImage` from `ok_image`)",
    note = "derive `serde::Serialize` on the type"
)]
pub trait IntoToolOutput {
    /// The output.
    fn into_tool_output(self) -> Result<ToolOutput, Failure>;
}

impl<T: Serialize> IntoToolOutput for T {
    fn into_tool_output(self) -> Result<ToolOutput, Failure> {
        crate::failure::encode_value(&self).map(ToolOutput::Value)
    }
}

impl IntoToolOutput for OkImage {
    fn into_tool_output(self) -> Result<ToolOutput, Failure> {
        Ok(ToolOutput::Image(self))
    }
}

pub use crate::role::Role;

/// One content block of a tool answer.
#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    /// Text.
    Text(String),
    /// A picture: its bytes and MIME type.
    Image {
        /// The bytes.
        bytes: Vec<u8>,
        /// `image/png`, …
        mime: String,
    },
    /// A sound: its bytes and MIME type.
    Audio {
        /// The bytes.
        bytes: Vec<u8>,
        /// `audio/wav`, …
        mime: String,
    },
    /// A resource's contents, embedded.
    Embedded {
        /// The resource's URI.
        uri: String,
        /// Its MIME type.
        mime: String,
        /// Text or bytes.
        body: EmbeddedBody,
    },
    /// A link to a resource the host may read.
    Link {
        /// The resource's URI.
        uri: String,
        /// Its name.
        name: String,
        /// Its MIME type, when known.
        mime: Option<String>,
    },
}

/// The contents of an embedded resource.
#[derive(Clone, Debug, PartialEq)]
pub enum EmbeddedBody {
    /// Text.
    Text(String),
    /// Bytes (sent base64).
    Blob(Vec<u8>),
}

/// A tool answer of several content blocks, plus the value (if any) hosts read as
/// `structuredContent`. Build with [`OkContent::new`] and the block methods.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OkContent {
    /// The blocks, in order.
    pub blocks: Vec<Block>,
    /// The structured value.
    pub value: Option<Value>,
}

impl OkContent {
    /// No blocks yet.
    pub fn new() -> Self {
        OkContent::default()
    }

    /// Adds a block.
    pub fn block(mut self, block: Block) -> Self {
        self.blocks.push(block);
        self
    }

    /// Adds text.
    pub fn text(self, text: impl Into<String>) -> Self {
        self.block(Block::Text(text.into()))
    }

    /// Adds a picture.
    pub fn image(self, bytes: Vec<u8>, mime: impl Into<String>) -> Self {
        self.block(Block::Image {
            bytes,
            mime: mime.into(),
        })
    }

    /// Adds a sound.
    pub fn audio(self, bytes: Vec<u8>, mime: impl Into<String>) -> Self {
        self.block(Block::Audio {
            bytes,
            mime: mime.into(),
        })
    }

    /// Embeds text at `uri` (a member read: its URI, `application/json`, its JSON).
    pub fn embedded_text(
        self,
        uri: impl Into<String>,
        mime: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        self.block(Block::Embedded {
            uri: uri.into(),
            mime: mime.into(),
            body: EmbeddedBody::Text(text.into()),
        })
    }

    /// Embeds bytes at `uri`.
    pub fn embedded_blob(self, uri: impl Into<String>, mime: impl Into<String>, bytes: Vec<u8>) -> Self {
        self.block(Block::Embedded {
            uri: uri.into(),
            mime: mime.into(),
            body: EmbeddedBody::Blob(bytes),
        })
    }

    /// Links the resource at `uri` (e.g. a member's URI) for the host to read.
    pub fn link(self, uri: impl Into<String>, name: impl Into<String>) -> Self {
        self.block(Block::Link {
            uri: uri.into(),
            name: name.into(),
            mime: None,
        })
    }

    /// Sets the structured value (serialization failures become its text).
    pub fn value(mut self, value: impl Serialize) -> Self {
        self.value = Some(
            serde_json::to_value(value).unwrap_or_else(|e| Value::String(format!("<unserializable: {e}>"))),
        );
        self
    }
}

impl IntoToolOutput for OkContent {
    fn into_tool_output(self) -> Result<ToolOutput, Failure> {
        Ok(ToolOutput::Content(self))
    }
}

/// A tool answer that is a sound (`render = audio`). Build with [`ok_audio`].
#[derive(Clone, Debug, PartialEq)]
pub struct OkAudio {
    /// The sound's bytes.
    pub bytes: Vec<u8>,
    /// Its MIME type (`"audio/wav"`).
    pub mime: String,
    /// Facts about it (duration, what it says); must not repeat the bytes.
    pub detail: Value,
}

/// A sound answer: the bytes travel once as an MCP audio block, `detail` as the structured arm.
///
/// ```
/// let a = surface_runtime::blocks::ok_audio(vec![82, 73, 70, 70], "audio/wav", serde_json::json!({"ms": 10}));
/// assert_eq!(a.mime, "audio/wav");
/// ```
pub fn ok_audio(bytes: Vec<u8>, mime: impl Into<String>, detail: impl Serialize) -> OkAudio {
    let detail = serde_json::to_value(detail)
        .unwrap_or_else(|e| Value::String(format!("<unserializable detail: {e}>")));
    OkAudio {
        bytes,
        mime: mime.into(),
        detail,
    }
}

impl IntoToolOutput for OkAudio {
    fn into_tool_output(self) -> Result<ToolOutput, Failure> {
        Ok(ToolOutput::Content(OkContent {
            blocks: vec![Block::Audio {
                bytes: self.bytes,
                mime: self.mime,
            }],
            value: Some(self.detail),
        }))
    }
}
