//! A plain JSON reader (RFC 8259) for the reference readings of `tests/call/oracle.rs` and
//! `tests/list/oracle.rs`: written for them, sharing nothing with the crate under test. It keeps
//! what a reference needs to apply MCP's rules itself: every member of an object in order
//! (duplicates included), the text of every value as written (to compare raw JSON byte for byte),
//! numbers unevaluated, and for every string both whether it decodes to Unicode text (a lone
//! surrogate escape does not) and the text it decodes to.
#![allow(dead_code)]

/// A JSON value and where it sits in the input.
#[derive(Debug)]
pub struct Node {
    pub value: Json,
    /// Byte offsets of the value's text in the input.
    pub start: usize,
    pub end: usize,
}

#[derive(Debug)]
pub enum Json {
    Null,
    Bool(bool),
    /// A number, as written.
    Number(String),
    String(Str),
    Array(Vec<Node>),
    /// The members in order, duplicates kept.
    Object(Vec<Member>),
}

#[derive(Debug)]
pub struct Member {
    pub key: Str,
    /// Whether the key was written with an escape.
    pub key_escaped: bool,
    pub value: Node,
}

/// A string: its text, or `None` if an escape is a lone surrogate (grammatical JSON, but no
/// Unicode text).
#[derive(Debug, Clone, PartialEq)]
pub struct Str(pub Option<String>);

impl Node {
    pub fn text<'a>(&self, input: &'a str) -> &'a str {
        &input[self.start..self.end]
    }

    pub fn is_null(&self) -> bool {
        matches!(self.value, Json::Null)
    }

    /// The nesting depth of the deepest value in this one (a scalar is 0 deep).
    pub fn depth(&self) -> usize {
        match &self.value {
            Json::Array(items) => 1 + items.iter().map(Node::depth).max().unwrap_or(0),
            Json::Object(members) => 1 + members.iter().map(|m| m.value.depth()).max().unwrap_or(0),
            _ => 0,
        }
    }

    /// Whether some string anywhere in this value (key or value) is not Unicode text.
    pub fn has_lone_surrogate(&self) -> bool {
        match &self.value {
            Json::String(s) => s.0.is_none(),
            Json::Array(items) => items.iter().any(Node::has_lone_surrogate),
            Json::Object(members) => members
                .iter()
                .any(|m| m.key.0.is_none() || m.value.has_lone_surrogate()),
            _ => false,
        }
    }
}

/// Parses `input` as exactly one JSON value, with whitespace around it.
pub fn parse(input: &str) -> Result<Node, String> {
    let mut p = Parser {
        b: input.as_bytes(),
        i: 0,
    };
    p.ws();
    let node = p.value()?;
    p.ws();
    if p.i != p.b.len() {
        return Err(format!("trailing characters at {}", p.i));
    }
    Ok(node)
}

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while matches!(self.b.get(self.i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn literal(&mut self, word: &str) -> Result<(), String> {
        if self.b[self.i..].starts_with(word.as_bytes()) {
            self.i += word.len();
            Ok(())
        } else {
            Err(format!("bad literal at {}", self.i))
        }
    }

    fn value(&mut self) -> Result<Node, String> {
        let start = self.i;
        let value = match self.peek().ok_or("unexpected end")? {
            b'n' => self.literal("null").map(|()| Json::Null)?,
            b't' => self.literal("true").map(|()| Json::Bool(true))?,
            b'f' => self.literal("false").map(|()| Json::Bool(false))?,
            b'"' => Json::String(self.string()?.0),
            b'[' => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.peek() == Some(b']') {
                    self.i += 1;
                } else {
                    loop {
                        self.ws();
                        items.push(self.value()?);
                        self.ws();
                        match self.peek() {
                            Some(b',') => self.i += 1,
                            Some(b']') => {
                                self.i += 1;
                                break;
                            }
                            _ => return Err(format!("expected , or ] at {}", self.i)),
                        }
                    }
                }
                Json::Array(items)
            }
            b'{' => {
                self.i += 1;
                let mut members = Vec::new();
                self.ws();
                if self.peek() == Some(b'}') {
                    self.i += 1;
                } else {
                    loop {
                        self.ws();
                        if self.peek() != Some(b'"') {
                            return Err(format!("expected a key at {}", self.i));
                        }
                        let (key, key_escaped) = self.string()?;
                        self.ws();
                        if self.peek() != Some(b':') {
                            return Err(format!("expected : at {}", self.i));
                        }
                        self.i += 1;
                        self.ws();
                        let value = self.value()?;
                        members.push(Member {
                            key,
                            key_escaped,
                            value,
                        });
                        self.ws();
                        match self.peek() {
                            Some(b',') => self.i += 1,
                            Some(b'}') => {
                                self.i += 1;
                                break;
                            }
                            _ => return Err(format!("expected , or }} at {}", self.i)),
                        }
                    }
                }
                Json::Object(members)
            }
            b'-' | b'0'..=b'9' => Json::Number(self.number()?),
            other => return Err(format!("unexpected byte {other:#x} at {}", self.i)),
        };
        Ok(Node {
            value,
            start,
            end: self.i,
        })
    }

    fn number(&mut self) -> Result<String, String> {
        let start = self.i;
        let digits = |p: &mut Self| {
            let from = p.i;
            while matches!(p.peek(), Some(b'0'..=b'9')) {
                p.i += 1;
            }
            p.i > from
        };
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        if self.peek() == Some(b'0') {
            self.i += 1;
        } else if !digits(self) {
            return Err(format!("bad number at {start}"));
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if !digits(self) {
                return Err(format!("bad fraction at {start}"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if !digits(self) {
                return Err(format!("bad exponent at {start}"));
            }
        }
        Ok(String::from_utf8_lossy(&self.b[start..self.i]).into_owned())
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let h = self.b.get(self.i..self.i + 4).ok_or("short \\u escape")?;
        let h = std::str::from_utf8(h).map_err(|_| "bad \\u escape")?;
        if !h.bytes().all(|c| c.is_ascii_hexdigit()) {
            return Err(format!("bad \\u escape at {}", self.i));
        }
        self.i += 4;
        Ok(u32::from_str_radix(h, 16).unwrap())
    }

    /// A string at `self.i` (its opening quote): the string, and whether it had an escape.
    fn string(&mut self) -> Result<(Str, bool), String> {
        self.i += 1;
        let mut out = String::new();
        let mut text = true;
        let mut escaped = false;
        loop {
            let c = self.peek().ok_or("unterminated string")?;
            match c {
                b'"' => {
                    self.i += 1;
                    break;
                }
                0x00..=0x1f => return Err(format!("control character in string at {}", self.i)),
                b'\\' => {
                    escaped = true;
                    self.i += 1;
                    let e = self.peek().ok_or("unterminated escape")?;
                    self.i += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let u = self.hex4()?;
                            match u {
                                0xD800..=0xDBFF => {
                                    // A high surrogate is text only when a low one follows.
                                    let at = self.i;
                                    let low = if self.b[self.i..].starts_with(b"\\u") {
                                        self.i += 2;
                                        Some(self.hex4()?)
                                    } else {
                                        None
                                    };
                                    match low {
                                        Some(l @ 0xDC00..=0xDFFF) => {
                                            let c = 0x10000 + ((u - 0xD800) << 10) + (l - 0xDC00);
                                            out.push(char::from_u32(c).unwrap());
                                        }
                                        _ => {
                                            // Read what follows on its own.
                                            self.i = at;
                                            text = false;
                                        }
                                    }
                                }
                                0xDC00..=0xDFFF => text = false,
                                _ => out.push(char::from_u32(u).unwrap()),
                            }
                        }
                        _ => return Err(format!("bad escape at {}", self.i - 1)),
                    }
                }
                _ => {
                    // The input is a `&str`: copy the whole character.
                    let len = match c {
                        0x00..=0x7f => 1,
                        0xc0..=0xdf => 2,
                        0xe0..=0xef => 3,
                        _ => 4,
                    };
                    out.push_str(std::str::from_utf8(&self.b[self.i..self.i + len]).unwrap());
                    self.i += len;
                }
            }
        }
        Ok((Str(text.then_some(out)), escaped))
    }
}
