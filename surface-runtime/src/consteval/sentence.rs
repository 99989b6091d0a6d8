//! The one sentence builder of const evaluation: every compile-time check (`expose!`'s keys,
//! `bundle!`'s roster, a view's binding) writes its message into a [`Sentence`] and panics with
//! it, and boot-time composition renders the same rules through it, so one rule has one wording.

/// A sentence built in const evaluation: a fixed buffer (const fns cannot allocate); text that
/// does not fit is left out whole, so the sentence stays valid UTF-8.
///
/// ```
/// use surface_runtime::rules::Sentence;
/// const S: Sentence = Sentence::new().push("tool \"").push("a").push("\" is named ").push_usize(2).push(" times");
/// assert_eq!(S.as_str(), "tool \"a\" is named 2 times");
/// ```
pub struct Sentence {
    buf: [u8; Sentence::CAPACITY],
    len: usize,
}

impl Default for Sentence {
    fn default() -> Self {
        Sentence::new()
    }
}

impl Sentence {
    /// How many bytes a sentence (or a list of them) holds.
    pub const CAPACITY: usize = 2048;

    /// An empty sentence.
    pub const fn new() -> Sentence {
        Sentence {
            buf: [0; Sentence::CAPACITY],
            len: 0,
        }
    }

    /// Whether nothing was written.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many more bytes fit.
    pub(crate) const fn room(&self) -> usize {
        Sentence::CAPACITY - self.len
    }

    /// Appends one byte (callers keep whole characters together: see [`Sentence::room`]).
    pub(crate) const fn push_byte(mut self, b: u8) -> Sentence {
        if self.len < Sentence::CAPACITY {
            self.buf[self.len] = b;
            self.len += 1;
        }
        self
    }

    /// Appends `text` whole, or nothing when it does not fit.
    pub const fn push(mut self, text: &str) -> Sentence {
        let bytes = text.as_bytes();
        if bytes.len() > self.room() {
            return self;
        }
        let mut i = 0;
        while i < bytes.len() {
            self.buf[self.len] = bytes[i];
            self.len += 1;
            i += 1;
        }
        self
    }

    /// Appends `n` in decimal.
    pub const fn push_usize(mut self, mut n: usize) -> Sentence {
        let mut digits = [0u8; 20];
        let mut count = 0;
        loop {
            digits[count] = b'0' + (n % 10) as u8;
            count += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        if count > self.room() {
            return self;
        }
        while count > 0 {
            count -= 1;
            self.buf[self.len] = digits[count];
            self.len += 1;
        }
        self
    }

    /// The text.
    pub const fn as_str(&self) -> &str {
        let (head, _) = self.buf.split_at(self.len);
        match std::str::from_utf8(head) {
            Ok(s) => s,
            // Unreachable: only whole strings and whole names are appended.
            Err(_) => "a compile-time check failed",
        }
    }

    /// Stops const evaluation (a compile error at the macro's token) with this text.
    pub const fn fail(&self) -> ! {
        panic!("{}", self.as_str())
    }
}
