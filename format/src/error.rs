//! One error type for every decoder and reader.
//!
//! An [`Error`] always says *where*: the component, the absolute byte offset in
//! that component, and — once a higher layer attaches them — the file path and
//! the partition being read. Decoders build errors from their cursor
//! ([`crate::cur::Cur::err`]); callers add context with [`Error::in_file`] and
//! [`Error::in_partition`] as the error rises.
//!
//! `Display` prints e.g.
//! `nb-1-big-Data.db+0x1a2f: checksum mismatch in compressed chunk 12 (crc32 expected 0x…, got 0x…) [partition key 'k1']`.

use std::fmt;
use std::path::Path;

use crate::component::Component;

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong, without the where.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input ended before a field could be read.
    UnexpectedEof {
        /// Bytes the field needed.
        need: u64,
        /// Bytes that remained.
        have: u64,
    },
    /// A length read from the file exceeds what remains (or a sane bound).
    LengthOutOfRange {
        /// The length that was read.
        len: u64,
        /// Bytes that remained.
        remaining: u64,
    },
    /// The file ends before what its own contents place in it.
    Truncated {
        /// Bytes the file needs at least.
        expected: u64,
        /// Bytes it has.
        actual: u64,
    },
    /// A checksum did not match.
    ChecksumMismatch {
        /// "crc32", "adler32", "sha1".
        algo: &'static str,
        /// Stored value.
        expected: u32,
        /// Computed value.
        got: u32,
    },
    /// A field holds a value outside its domain.
    BadValue(String),
    /// Decompression failed.
    Decompress(String),
    /// The sstable version is unknown or unsupported.
    UnknownVersion(String),
    /// The file name is not an sstable component name.
    BadFileName(String),
    /// A component the operation needs is absent.
    MissingComponent,
    /// A type string could not be parsed.
    BadType(String),
    /// The operation is not supported for this input.
    Unsupported(String),
    /// An operating-system I/O error.
    Io(std::io::ErrorKind, String),
}

/// A decoding or I/O error with its location.
#[derive(Debug, Clone, PartialEq)]
pub struct Error {
    /// What went wrong.
    pub kind: ErrorKind,
    /// The component being read (if any).
    pub component: Option<Component>,
    /// Absolute byte offset in the component (uncompressed offset for Data.db
    /// unless the message says otherwise).
    pub offset: Option<u64>,
    /// The file, once known.
    pub file: Option<Box<Path>>,
    /// The partition key being read, already rendered (typed form and hex).
    pub partition: Option<Box<str>>,
    /// The compressed chunk being read (compressed Data.db).
    pub chunk: Option<u32>,
    /// Which field was being decoded.
    pub what: &'static str,
}

impl Error {
    /// A new error with no location yet.
    pub fn new(kind: ErrorKind, what: &'static str) -> Self {
        Error {
            kind,
            component: None,
            offset: None,
            file: None,
            partition: None,
            chunk: None,
            what,
        }
    }

    /// A new error located in `component` at `offset`.
    pub fn at(kind: ErrorKind, component: Component, offset: u64, what: &'static str) -> Self {
        Error {
            component: Some(component),
            offset: Some(offset),
            ..Error::new(kind, what)
        }
    }

    /// Attach the file path (keeps an existing one).
    pub fn in_file(mut self, path: &Path) -> Self {
        if self.file.is_none() {
            self.file = Some(path.into());
        }
        self
    }

    /// Attach the component if none is set yet.
    pub fn in_component(mut self, c: Component) -> Self {
        if self.component.is_none() {
            self.component = Some(c);
        }
        self
    }

    /// Attach the partition being read (keeps an existing one).
    pub fn in_partition(mut self, key: impl Into<String>) -> Self {
        if self.partition.is_none() {
            self.partition = Some(key.into().into_boxed_str());
        }
        self
    }

    /// Attach the compressed chunk index (keeps an existing one).
    pub fn in_chunk(mut self, chunk: u64) -> Self {
        let chunk = u32::try_from(chunk).unwrap_or(u32::MAX);
        if self.chunk.is_none() {
            self.chunk = Some(chunk);
        }
        self
    }

    /// True when the input could not be read at all (OS error or missing file),
    /// as opposed to content that was read but is malformed.
    pub fn is_io(&self) -> bool {
        matches!(self.kind, ErrorKind::Io(..) | ErrorKind::MissingComponent)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::UnexpectedEof { need, have } => {
                write!(
                    f,
                    "unexpected end of input (need {need} bytes, {have} left)"
                )
            }
            ErrorKind::LengthOutOfRange { len, remaining } => {
                write!(f, "length {len} out of range ({remaining} bytes left)")
            }
            ErrorKind::Truncated { expected, actual } => write!(
                f,
                "the file is truncated: {actual} bytes, at least {expected} expected; \
                 restore it from a backup or snapshot"
            ),
            ErrorKind::ChecksumMismatch {
                algo,
                expected,
                got,
            } => {
                write!(
                    f,
                    "{algo} checksum mismatch (stored {expected:#010x}, computed {got:#010x})"
                )
            }
            ErrorKind::BadValue(m) => write!(f, "{m}"),
            ErrorKind::Decompress(m) => write!(f, "decompression failed: {m}"),
            ErrorKind::UnknownVersion(v) => match crate::version::release_before_jb(v) {
                Some(r) => write!(
                    f,
                    "unsupported sstable version {v} ({r}); sstkit reads jb and later"
                ),
                None => write!(f, "unknown or unsupported sstable version '{v}'"),
            },
            ErrorKind::BadFileName(n) => write!(f, "not an sstable component file name: {n}"),
            ErrorKind::MissingComponent => write!(f, "component is missing"),
            ErrorKind::BadType(m) => write!(f, "bad type string: {m}"),
            ErrorKind::Unsupported(m) => write!(f, "unsupported: {m}"),
            ErrorKind::Io(_, m) => write!(f, "{m}"),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Location first: "<file or component>+0x<offset>: "
        match (&self.file, self.component) {
            (Some(p), _) => write!(f, "{}", p.display())?,
            (None, Some(c)) => write!(f, "{}", c.suffix())?,
            (None, None) => {}
        }
        if let Some(off) = self.offset {
            write!(f, "+{off:#x}")?;
        }
        if self.file.is_some() || self.component.is_some() || self.offset.is_some() {
            write!(f, ": ")?;
        }
        write!(f, "{}", self.kind)?;
        if !self.what.is_empty() {
            write!(f, " (reading {})", self.what)?;
        }
        if let Some(c) = self.chunk {
            write!(f, " in compressed chunk {c}")?;
        }
        if let Some(k) = &self.partition {
            write!(f, " [partition key {k}]")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::new(ErrorKind::Io(e.kind(), e.to_string()), "")
    }
}
