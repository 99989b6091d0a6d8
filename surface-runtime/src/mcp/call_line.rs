//! The common `tools/call` message read by hand: most of what a busy server reads, and serde's
//! derive reaches its few fields through a key match, a visitor and a string scan per token.
//!
//! Only the plain shape is read here: the four envelope keys and `name`, `arguments`, `_meta`
//! in `params`, in any order, with no escape in a key, the method or the name. Anything else —
//! another key, a repeated one, an escape, an id that is no plain integer, a `null` — answers
//! `None`, and the caller's serde read decides, so a message is read the same either way (the
//! tests in `jsonrpc.rs` hold the two reads equal, line by mutated line). `arguments` and
//! `_meta` come back as their texts, for the caller to read (serde checks them then, or the
//! connection's memory finds a text it has read before).

use rmcp::model::RequestId;

/// What [`read`] found in a `tools/call` message.
pub(crate) struct CallLine<'a> {
    pub(crate) id: RequestId,
    pub(crate) name: &'a str,
    /// The text of the `arguments` object, not yet read.
    pub(crate) arguments: Option<&'a str>,
    /// The text of the `_meta` object, not yet read.
    pub(crate) meta: Option<&'a str>,
}

/// The call `text` is, when it is one of the plain shape (see the module's words).
pub(crate) fn read(text: &str) -> Option<CallLine<'_>> {
    let mut r = Reader { text, i: 0 };
    let (mut version, mut id, mut method, mut params) = (false, None, false, None);
    r.ws();
    r.byte(b'{')?;
    loop {
        r.ws();
        // Each key is told by its first letter and then matched whole: a key the plain shape
        // has no place for, or one seen already, answers `None` as any other surprise does.
        match r.after_quote()? {
            b'j' if !version => {
                r.key("jsonrpc")?;
                r.literal("2.0")?;
                version = true;
            }
            b'i' if id.is_none() => {
                r.key("id")?;
                id = Some(r.id()?);
            }
            b'm' if !method => {
                r.key("method")?;
                r.literal("tools/call")?;
                method = true;
            }
            b'p' if params.is_none() => {
                r.key("params")?;
                params = Some(r.params()?);
            }
            _ => return None,
        }
        if !r.more()? {
            break;
        }
    }
    r.ws();
    if !(version && method && r.i == text.len()) {
        return None;
    }
    let (name, arguments, meta) = params?;
    Some(CallLine {
        id: id?,
        name,
        arguments,
        meta,
    })
}

/// The bytes that end a plain string: its closing quote, and an escape or a control byte,
/// which make it no plain string.
const STOPS: [bool; 256] = {
    let mut stops = [false; 256];
    let mut byte = 0;
    while byte < 0x20 {
        stops[byte] = true;
        byte += 1;
    }
    stops[b'"' as usize] = true;
    stops[b'\\' as usize] = true;
    stops
};

struct Reader<'a> {
    text: &'a str,
    i: usize,
}

impl<'a> Reader<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.i).copied()
    }

    fn byte(&mut self, expected: u8) -> Option<()> {
        (self.peek()? == expected).then(|| self.i += 1)
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    /// The byte after the opening quote of the string at the reader (the first letter of a
    /// key), when there is one.
    fn after_quote(&self) -> Option<u8> {
        let bytes = self.text.as_bytes();
        (*bytes.get(self.i)? == b'"').then(|| bytes.get(self.i + 1).copied())?
    }

    /// The string `expected` exactly, quoted and with no escape: compared whole rather than
    /// scanned for its end, since the reader knows what it must be.
    #[inline(always)]
    fn literal(&mut self, expected: &str) -> Option<()> {
        let n = expected.len();
        let quoted = self.text.as_bytes().get(self.i..self.i + n + 2)?;
        (quoted[0] == b'"' && &quoted[1..=n] == expected.as_bytes() && quoted[n + 1] == b'"')
            .then(|| self.i += n + 2)
    }

    /// The key `expected` and its colon.
    #[inline(always)]
    fn key(&mut self, expected: &str) -> Option<()> {
        self.literal(expected)?;
        self.ws();
        self.byte(b':')?;
        self.ws();
        Some(())
    }

    /// After a member: `true` at a comma, `false` at the object's end.
    fn more(&mut self) -> Option<bool> {
        self.ws();
        let more = match self.peek()? {
            b',' => true,
            b'}' => false,
            _ => return None,
        };
        self.i += 1;
        Some(more)
    }

    /// A string with no escape (and no control byte, which JSON forbids unescaped).
    fn plain_string(&mut self) -> Option<&'a str> {
        self.byte(b'"')?;
        let bytes = self.text.as_bytes();
        let start = self.i;
        let mut end = start;
        while !STOPS[*bytes.get(end)? as usize] {
            end += 1;
        }
        if bytes[end] != b'"' {
            return None;
        }
        self.i = end + 1;
        self.text.get(start..end)
    }

    /// A string id, or an integer one written plainly (no sign before a zero, no leading zero,
    /// no fraction or exponent) that fits an `i64`.
    fn id(&mut self) -> Option<RequestId> {
        if self.peek()? == b'"' {
            return Some(RequestId::String(self.plain_string()?.into()));
        }
        let negative = self.peek()? == b'-';
        if negative {
            self.i += 1;
        }
        let bytes = self.text.as_bytes();
        let start = self.i;
        let mut n: i64 = 0;
        while let Some(digit @ b'0'..=b'9') = bytes.get(self.i).copied() {
            let digit = i64::from(digit - b'0');
            n = n.checked_mul(10)?;
            n = if negative {
                n.checked_sub(digit)?
            } else {
                n.checked_add(digit)?
            };
            self.i += 1;
        }
        let digits = self.i - start;
        let leading_zero = bytes[start..].first() == Some(&b'0');
        if digits == 0 || (leading_zero && (digits > 1 || negative)) {
            return None;
        }
        if matches!(self.peek(), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        Some(RequestId::Number(n))
    }

    /// `params`: `name`, and `arguments` and `_meta` as texts.
    fn params(&mut self) -> Option<(&'a str, Option<&'a str>, Option<&'a str>)> {
        self.byte(b'{')?;
        let (mut name, mut arguments, mut meta) = (None, None, None);
        loop {
            self.ws();
            match self.after_quote()? {
                b'n' if name.is_none() => {
                    self.key("name")?;
                    name = Some(self.plain_string()?);
                }
                b'a' if arguments.is_none() => {
                    self.key("arguments")?;
                    arguments = Some(self.object()?);
                }
                b'_' if meta.is_none() => {
                    self.key("_meta")?;
                    meta = Some(self.object()?);
                }
                _ => return None,
            }
            if !self.more()? {
                break;
            }
        }
        Some((name?, arguments, meta))
    }

    /// An object's text, found by its brackets and strings: what is inside is left for serde
    /// (or the memory of a text serde read) to check.
    fn object(&mut self) -> Option<&'a str> {
        let start = self.i;
        self.byte(b'{')?;
        let bytes = self.text.as_bytes();
        let mut depth = 1usize;
        while depth > 0 {
            match *bytes.get(self.i)? {
                b'"' => {
                    self.i += 1;
                    loop {
                        match *bytes.get(self.i)? {
                            b'"' => break,
                            b'\\' => self.i += 2,
                            _ => self.i += 1,
                        }
                    }
                }
                b'{' | b'[' => depth += 1,
                b'}' | b']' => depth -= 1,
                _ => {}
            }
            self.i += 1;
        }
        self.text.get(start..self.i)
    }
}
