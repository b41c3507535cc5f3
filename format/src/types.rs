//! CQL types, parsed from Cassandra's marshal type strings.
//!
//! The serialization header in Statistics.db stores every column type as the
//! string form of its `AbstractType` (Cassandra `o.a.c/db/marshal/TypeParser.java`):
//!
//! ```text
//! type   := name [ '(' params ')' ]
//! name   := [0-9A-Za-z-+._&]+   (no '.' => "org.apache.cassandra.db.marshal." prefix)
//! params := type (',' type)*                          most parameterized types
//!         | ks ',' hexname (',' hexfield ':' type)*   UserType
//!         | type ',' dimension                        VectorType
//!         | alias '=>' type (',' …)*                 DynamicCompositeType
//! ```
//!
//! Frozenness matters for decoding: a collection or UDT that is *not* wrapped
//! in `FrozenType(...)` is multi-cell (a complex column, one cell per element);
//! types nested inside a frozen type are frozen (see
//! `shared/docs/sstable-format.md` §6.6). Fixed value lengths follow
//! `AbstractType.valueLengthIfFixed` (§3.12).

use crate::error::{Error, ErrorKind, Result};

/// A native (non-parameterized) type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Native {
    /// `AsciiType`
    Ascii,
    /// `LongType`
    Bigint,
    /// `BytesType`
    Blob,
    /// `BooleanType`
    Boolean,
    /// `CounterColumnType`
    Counter,
    /// `SimpleDateType`
    Date,
    /// `DecimalType`
    Decimal,
    /// `DoubleType`
    Double,
    /// `DurationType`
    Duration,
    /// `FloatType`
    Float,
    /// `InetAddressType`
    Inet,
    /// `Int32Type`
    Int,
    /// `ShortType`
    Smallint,
    /// `UTF8Type`
    Text,
    /// `TimeType`
    Time,
    /// `TimestampType`
    Timestamp,
    /// `DateType` (the legacy timestamp type)
    LegacyDate,
    /// `TimeUUIDType`
    Timeuuid,
    /// `ByteType`
    Tinyint,
    /// `UUIDType`
    Uuid,
    /// `LexicalUUIDType`
    LexicalUuid,
    /// `IntegerType`
    Varint,
    /// `EmptyType` (compact-storage value with no column)
    Empty,
}

impl Native {
    const TABLE: [(&'static str, Native, &'static str); 23] = [
        ("AsciiType", Native::Ascii, "ascii"),
        ("LongType", Native::Bigint, "bigint"),
        ("BytesType", Native::Blob, "blob"),
        ("BooleanType", Native::Boolean, "boolean"),
        ("CounterColumnType", Native::Counter, "counter"),
        ("SimpleDateType", Native::Date, "date"),
        ("DecimalType", Native::Decimal, "decimal"),
        ("DoubleType", Native::Double, "double"),
        ("DurationType", Native::Duration, "duration"),
        ("FloatType", Native::Float, "float"),
        ("InetAddressType", Native::Inet, "inet"),
        ("Int32Type", Native::Int, "int"),
        ("ShortType", Native::Smallint, "smallint"),
        ("UTF8Type", Native::Text, "text"),
        ("TimeType", Native::Time, "time"),
        ("TimestampType", Native::Timestamp, "timestamp"),
        ("DateType", Native::LegacyDate, "timestamp"),
        ("TimeUUIDType", Native::Timeuuid, "timeuuid"),
        ("ByteType", Native::Tinyint, "tinyint"),
        ("UUIDType", Native::Uuid, "uuid"),
        ("LexicalUUIDType", Native::LexicalUuid, "uuid"),
        ("IntegerType", Native::Varint, "varint"),
        ("EmptyType", Native::Empty, "empty"),
    ];

    fn from_class(short: &str) -> Option<Native> {
        Self::TABLE
            .iter()
            .find(|(c, _, _)| *c == short)
            .map(|(_, n, _)| *n)
    }

    /// The marshal class short name.
    pub fn class(self) -> &'static str {
        Self::TABLE
            .iter()
            .find(|(_, n, _)| *n == self)
            .map(|(c, _, _)| *c)
            .unwrap_or("BytesType")
    }

    /// The CQL name.
    pub fn cql(self) -> &'static str {
        Self::TABLE
            .iter()
            .find(|(_, n, _)| *n == self)
            .map(|(_, _, q)| *q)
            .unwrap_or("blob")
    }

    /// `valueLengthIfFixed`.
    pub fn fixed_len(self) -> Option<usize> {
        match self {
            Native::Boolean => Some(1),
            Native::Int | Native::Float => Some(4),
            Native::Bigint | Native::Double | Native::Timestamp | Native::LegacyDate => Some(8),
            Native::Uuid | Native::Timeuuid | Native::LexicalUuid => Some(16),
            Native::Empty => Some(0),
            _ => None,
        }
    }
}

/// A parsed type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CqlType {
    /// A native type.
    Native(Native),
    /// `ReversedType(T)`: descending clustering order; same values as T.
    Reversed(Box<CqlType>),
    /// `FrozenType(T)`: T serialized as one value.
    Frozen(Box<CqlType>),
    /// `ListType(T)`
    List(Box<CqlType>),
    /// `SetType(T)`
    Set(Box<CqlType>),
    /// `MapType(K,V)`
    Map(Box<CqlType>, Box<CqlType>),
    /// `TupleType(T…)` (always frozen)
    Tuple(Vec<CqlType>),
    /// `UserType(ks,hexname,hexfield:T,…)`
    Udt {
        /// Keyspace.
        keyspace: String,
        /// Type name (decoded from hex).
        name: String,
        /// Field names (decoded from hex) and types.
        fields: Vec<(String, CqlType)>,
    },
    /// `CompositeType(T…)` (multi-column partition keys, legacy cell names)
    Composite(Vec<CqlType>),
    /// `DynamicCompositeType(a=>T,…)`
    DynamicComposite(Vec<(u8, CqlType)>),
    /// `VectorType(T,n)`
    Vector(Box<CqlType>, usize),
    /// `ColumnToCollectionType(hex:T,…)` (legacy)
    ColumnToCollection(Vec<(String, CqlType)>),
    /// Any other class: kept by name, values treated as blobs.
    Custom(String),
}

const MARSHAL: &str = "org.apache.cassandra.db.marshal.";

impl CqlType {
    /// Parse a marshal type string.
    pub fn parse(s: &str) -> Result<CqlType> {
        let mut p = Parser {
            s: s.as_bytes(),
            i: 0,
            depth: 0,
        };
        let t = p.ty()?;
        p.ws();
        if p.i != p.s.len() {
            return Err(p.err("trailing characters"));
        }
        Ok(t)
    }

    /// Strip `ReversedType` wrappers.
    pub fn unreversed(&self) -> &CqlType {
        match self {
            CqlType::Reversed(t) => t.unreversed(),
            t => t,
        }
    }

    /// Strip `ReversedType` and `FrozenType` wrappers (the type a value's
    /// bytes are read as).
    #[inline]
    pub fn bare(&self) -> &CqlType {
        let mut t = self;
        while let CqlType::Reversed(i) | CqlType::Frozen(i) = t {
            t = i;
        }
        t
    }

    /// True for `ReversedType(..)`.
    pub fn is_reversed(&self) -> bool {
        matches!(self, CqlType::Reversed(_))
    }

    /// `valueLengthIfFixed`: the fixed serialized length, if any.
    pub fn fixed_len(&self) -> Option<usize> {
        match self {
            CqlType::Native(n) => n.fixed_len(),
            CqlType::Reversed(t) => t.fixed_len(),
            CqlType::Vector(t, n) => t.fixed_len().and_then(|l| l.checked_mul(*n)),
            _ => None,
        }
    }

    /// True when values of this column are stored one cell per element
    /// (non-frozen collection or UDT): a complex column.
    pub fn is_multi_cell(&self) -> bool {
        match self {
            CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..) | CqlType::Udt { .. } => true,
            CqlType::Reversed(t) => t.is_multi_cell(),
            _ => false,
        }
    }

    /// True for counter columns.
    pub fn is_counter(&self) -> bool {
        matches!(self.unreversed(), CqlType::Native(Native::Counter))
    }

    /// For a multi-cell type: the type of the cell path (list: timeuuid, set
    /// and map: the key type, UDT: the field index as smallint-like short).
    pub fn path_type(&self) -> Option<CqlType> {
        match self.unreversed() {
            CqlType::List(_) => Some(CqlType::Native(Native::Timeuuid)),
            CqlType::Set(k) | CqlType::Map(k, _) => Some(k.frozen_inner()),
            CqlType::Udt { .. } => Some(CqlType::Native(Native::Smallint)),
            _ => None,
        }
    }

    /// For a multi-cell type: the type of each cell's value (list/map: the
    /// value type; set: empty; UDT: depends on the field, see [`CqlType::udt_field`]).
    pub fn cell_value_type(&self) -> Option<CqlType> {
        match self.unreversed() {
            CqlType::List(v) | CqlType::Map(_, v) => Some(v.frozen_inner()),
            CqlType::Set(_) => Some(CqlType::Native(Native::Empty)),
            _ => None,
        }
    }

    /// Field `i` of a UDT.
    pub fn udt_field(&self, i: usize) -> Option<&(String, CqlType)> {
        match self.unreversed() {
            CqlType::Udt { fields, .. } => fields.get(i),
            CqlType::Frozen(t) => t.udt_field(i),
            _ => None,
        }
    }

    /// Elements nested in a collection are always frozen; make that explicit.
    fn frozen_inner(&self) -> CqlType {
        match self {
            CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..) | CqlType::Udt { .. } => {
                CqlType::Frozen(Box::new(self.clone()))
            }
            t => t.clone(),
        }
    }

    /// The CQL spelling, e.g. `frozen<map<int, text>>`.
    pub fn cql(&self) -> String {
        self.cql_inner(false)
    }

    fn cql_inner(&self, frozen_ctx: bool) -> String {
        let wrap = |s: String| {
            if frozen_ctx {
                s
            } else {
                format!("frozen<{s}>")
            }
        };
        match self {
            CqlType::Native(n) => n.cql().to_string(),
            CqlType::Reversed(t) => t.cql_inner(frozen_ctx),
            CqlType::Frozen(t) => match &**t {
                CqlType::Tuple(_) | CqlType::Native(_) | CqlType::Vector(..) => t.cql_inner(true),
                _ if frozen_ctx => t.cql_inner(true),
                _ => format!("frozen<{}>", t.cql_inner(true)),
            },
            CqlType::List(t) => format!("list<{}>", t.cql_nested()),
            CqlType::Set(t) => format!("set<{}>", t.cql_nested()),
            CqlType::Map(k, v) => format!("map<{}, {}>", k.cql_nested(), v.cql_nested()),
            CqlType::Tuple(ts) => {
                let inner: Vec<String> = ts.iter().map(CqlType::cql_nested).collect();
                format!("tuple<{}>", inner.join(", "))
            }
            // Frozen or not, a UDT is spelled with its bare name here; the
            // `frozen<>` wrapper comes from the enclosing FrozenType.
            CqlType::Udt { name, .. } => quote_ident(name),
            CqlType::Composite(ts) => {
                let inner: Vec<String> = ts.iter().map(|t| t.cql_inner(true)).collect();
                format!(
                    "'org.apache.cassandra.db.marshal.CompositeType({})'",
                    inner.join(",")
                )
            }
            CqlType::Vector(t, n) => wrap(format!("vector<{}, {n}>", t.cql_nested())),
            CqlType::DynamicComposite(_) | CqlType::ColumnToCollection(_) => {
                format!("'{}'", self.class_string())
            }
            CqlType::Custom(c) => format!("'{c}'"),
        }
    }

    /// Spelling of a type nested in a collection/tuple: collections and UDTs
    /// nested there are frozen.
    fn cql_nested(&self) -> String {
        match self.unreversed() {
            CqlType::Frozen(t) => match &**t {
                CqlType::Native(_) | CqlType::Tuple(_) | CqlType::Vector(..) => t.cql_inner(true),
                _ => format!("frozen<{}>", t.cql_inner(true)),
            },
            t @ (CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..) | CqlType::Udt { .. }) => {
                format!("frozen<{}>", t.cql_inner(true))
            }
            t => t.cql_inner(true),
        }
    }

    /// The marshal class string (inverse of [`CqlType::parse`], fully qualified).
    pub fn class_string(&self) -> String {
        fn list(ts: &[CqlType]) -> String {
            ts.iter()
                .map(CqlType::class_string)
                .collect::<Vec<_>>()
                .join(",")
        }
        match self {
            CqlType::Native(n) => format!("{MARSHAL}{}", n.class()),
            CqlType::Reversed(t) => format!("{MARSHAL}ReversedType({})", t.class_string()),
            CqlType::Frozen(t) => format!("{MARSHAL}FrozenType({})", t.class_string()),
            CqlType::List(t) => format!("{MARSHAL}ListType({})", t.class_string()),
            CqlType::Set(t) => format!("{MARSHAL}SetType({})", t.class_string()),
            CqlType::Map(k, v) => {
                format!(
                    "{MARSHAL}MapType({},{})",
                    k.class_string(),
                    v.class_string()
                )
            }
            CqlType::Tuple(ts) => format!("{MARSHAL}TupleType({})", list(ts)),
            CqlType::Composite(ts) => format!("{MARSHAL}CompositeType({})", list(ts)),
            CqlType::Udt {
                keyspace,
                name,
                fields,
            } => {
                let mut s = format!("{MARSHAL}UserType({keyspace},{}", hex(name.as_bytes()));
                for (f, t) in fields {
                    s.push_str(&format!(",{}:{}", hex(f.as_bytes()), t.class_string()));
                }
                s.push(')');
                s
            }
            CqlType::DynamicComposite(ts) => {
                let inner: Vec<String> = ts
                    .iter()
                    .map(|(a, t)| format!("{}=>{}", *a as char, t.class_string()))
                    .collect();
                format!("{MARSHAL}DynamicCompositeType({})", inner.join(","))
            }
            // Cassandra writes the dimension after " , " (`TypeParser.stringifyVectorParameters`).
            CqlType::Vector(t, n) => format!("{MARSHAL}VectorType({} , {n})", t.class_string()),
            CqlType::ColumnToCollection(cs) => {
                let inner: Vec<String> = cs
                    .iter()
                    .map(|(n, t)| format!("{}:{}", hex(n.as_bytes()), t.class_string()))
                    .collect();
                format!("{MARSHAL}ColumnToCollectionType({})", inner.join(","))
            }
            CqlType::Custom(c) => c.clone(),
        }
    }

    /// Components of a composite (for partition keys): itself when not composite.
    pub fn components(&self) -> Vec<CqlType> {
        match self {
            CqlType::Composite(ts) => ts.clone(),
            t => vec![t.clone()],
        }
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Quote a CQL identifier when it is not a plain lowercase identifier.
pub fn quote_ident(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if plain {
        s.to_string()
    } else {
        format!("\"{}\"", s.replace('"', "\"\""))
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    depth: u32,
}

/// Nesting of types and values deeper than this is rejected (bounded
/// recursion on hostile input).
pub const MAX_DEPTH: u32 = 64;

impl Parser<'_> {
    fn err(&self, m: &str) -> Error {
        Error::new(
            ErrorKind::BadType(format!(
                "{m} at char {} of {:?}",
                self.i,
                String::from_utf8_lossy(self.s)
            )),
            "type string",
        )
    }

    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.i).copied()
    }

    fn expect(&mut self, c: u8) -> Result<()> {
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(self.err(&format!("expected '{}'", c as char)))
        }
    }

    fn ident(&mut self) -> Result<String> {
        self.ws();
        let st = self.i;
        while self.i < self.s.len() {
            let c = self.s[self.i];
            if c.is_ascii_alphanumeric() || b"-+._&".contains(&c) {
                self.i += 1;
            } else {
                break;
            }
        }
        if st == self.i {
            return Err(self.err("expected a name"));
        }
        Ok(String::from_utf8_lossy(&self.s[st..self.i]).into_owned())
    }

    fn params(&mut self) -> Result<Vec<CqlType>> {
        let mut v = Vec::new();
        if self.peek() == Some(b')') {
            self.i += 1;
            return Ok(v);
        }
        loop {
            v.push(self.ty()?);
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b')') => {
                    self.i += 1;
                    return Ok(v);
                }
                _ => return Err(self.err("expected ',' or ')'")),
            }
        }
    }

    fn one(&mut self, name: &str) -> Result<Box<CqlType>> {
        let mut v = self.params()?;
        if v.len() != 1 {
            return Err(self.err(&format!("{name} takes one parameter")));
        }
        Ok(Box::new(v.remove(0)))
    }

    fn ty(&mut self) -> Result<CqlType> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err("type nested too deeply"));
        }
        let r = self.ty_inner();
        self.depth -= 1;
        r
    }

    fn ty_inner(&mut self) -> Result<CqlType> {
        let full = self.ident()?;
        let short = full.strip_prefix(MARSHAL).unwrap_or(&full).to_string();
        let has_params = self.peek() == Some(b'(');
        if !has_params {
            return Ok(match Native::from_class(&short) {
                Some(n) => CqlType::Native(n),
                None => CqlType::Custom(full),
            });
        }
        self.i += 1; // '('
        Ok(match short.as_str() {
            "ReversedType" => CqlType::Reversed(self.one("ReversedType")?),
            "FrozenType" => CqlType::Frozen(self.one("FrozenType")?),
            "ListType" => CqlType::List(self.one("ListType")?),
            "SetType" => CqlType::Set(self.one("SetType")?),
            "MapType" => {
                let mut v = self.params()?;
                if v.len() != 2 {
                    return Err(self.err("MapType takes two parameters"));
                }
                let val = v.remove(1);
                CqlType::Map(Box::new(v.remove(0)), Box::new(val))
            }
            "TupleType" => CqlType::Tuple(self.params()?),
            "CompositeType" => CqlType::Composite(self.params()?),
            "UserType" => self.user_type()?,
            "VectorType" => {
                let t = self.ty()?;
                self.expect(b',')?;
                let n = self.ident()?;
                let n: usize = n.parse().map_err(|_| self.err("bad vector dimension"))?;
                self.expect(b')')?;
                CqlType::Vector(Box::new(t), n)
            }
            "DynamicCompositeType" => {
                let mut v = Vec::new();
                loop {
                    let alias = self.ident()?;
                    self.expect(b'=')?;
                    self.expect(b'>')?;
                    let t = self.ty()?;
                    v.push((alias.bytes().next().unwrap_or(b'?'), t));
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b')') => {
                            self.i += 1;
                            break;
                        }
                        _ => return Err(self.err("expected ',' or ')'")),
                    }
                }
                CqlType::DynamicComposite(v)
            }
            "ColumnToCollectionType" => {
                let mut v = Vec::new();
                loop {
                    let name = unhex(&self.ident()?).ok_or_else(|| self.err("bad hex name"))?;
                    self.expect(b':')?;
                    v.push((name, self.ty()?));
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b')') => {
                            self.i += 1;
                            break;
                        }
                        _ => return Err(self.err("expected ',' or ')'")),
                    }
                }
                CqlType::ColumnToCollection(v)
            }
            _ => {
                // Unknown parameterized class: skip its balanced parameters.
                let st = self.i;
                let mut depth = 1;
                while self.i < self.s.len() && depth > 0 {
                    match self.s[self.i] {
                        b'(' => depth += 1,
                        b')' => depth -= 1,
                        _ => {}
                    }
                    self.i += 1;
                }
                if depth != 0 {
                    return Err(self.err("unbalanced parentheses"));
                }
                let params = String::from_utf8_lossy(&self.s[st..self.i - 1]);
                CqlType::Custom(format!("{full}({params})"))
            }
        })
    }

    fn user_type(&mut self) -> Result<CqlType> {
        let keyspace = self.ident()?;
        self.expect(b',')?;
        let name = unhex(&self.ident()?).ok_or_else(|| self.err("bad hex type name"))?;
        let mut fields = Vec::new();
        loop {
            match self.peek() {
                Some(b',') => {
                    self.i += 1;
                    let f = unhex(&self.ident()?).ok_or_else(|| self.err("bad hex field name"))?;
                    self.expect(b':')?;
                    fields.push((f, self.ty()?));
                }
                Some(b')') => {
                    self.i += 1;
                    break;
                }
                _ => return Err(self.err("expected ',' or ')'")),
            }
        }
        Ok(CqlType::Udt {
            keyspace,
            name,
            fields,
        })
    }
}

fn unhex(s: &str) -> Option<String> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect();
    Some(String::from_utf8_lossy(&bytes?).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_common_types() {
        let t = CqlType::parse("org.apache.cassandra.db.marshal.MapType(org.apache.cassandra.db.marshal.Int32Type,org.apache.cassandra.db.marshal.UTF8Type)").unwrap();
        assert!(t.is_multi_cell());
        assert_eq!(t.cql(), "map<int, text>");
        let f = CqlType::parse("org.apache.cassandra.db.marshal.FrozenType(org.apache.cassandra.db.marshal.ListType(org.apache.cassandra.db.marshal.Int32Type))").unwrap();
        assert!(!f.is_multi_cell());
        assert_eq!(f.cql(), "frozen<list<int>>");
        let r = CqlType::parse("org.apache.cassandra.db.marshal.ReversedType(org.apache.cassandra.db.marshal.TimestampType)").unwrap();
        assert_eq!(r.fixed_len(), Some(8));
        assert!(r.is_reversed());
        let u = CqlType::parse("org.apache.cassandra.db.marshal.UserType(ks,7574,6d795f696e74:org.apache.cassandra.db.marshal.Int32Type,6d795f74657874:org.apache.cassandra.db.marshal.UTF8Type)").unwrap();
        assert_eq!(u.udt_field(1).map(|f| f.0.as_str()), Some("my_text"));
        assert_eq!(CqlType::parse(&u.class_string()).unwrap(), u);
        let v = CqlType::parse("org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.FloatType , 3)").unwrap();
        assert_eq!(v.fixed_len(), Some(12));
        assert_eq!(CqlType::parse("ShortType").unwrap().fixed_len(), None);
        assert!(CqlType::parse("MapType(Int32Type").is_err());
        assert!(CqlType::parse(&"ListType(".repeat(200)).is_err());
    }
}
