//! Table schemas: built from an sstable's serialization header (optionally
//! with Scylla.db's column names) or parsed from CQL `CREATE TABLE` /
//! `CREATE TYPE` statements, and rendered back as CQL.
//!
//! Column names. The serialization header (`shared/docs/sstable-format.md`
//! §6.5) stores static and regular column names but not partition-key and
//! clustering names. When no better source is given, partition-key columns are
//! named `pk0, pk1, …` and clustering columns `ck0, ck1, …`
//! ([`TableSchema::names_generated`] is then true). Scylla's `Scylla.db`
//! schema sub-component (§13.1) and a user-supplied `schema.cql` carry the
//! real names.
//!
//! Types follow the header conventions (§6.6): a non-frozen collection or UDT
//! is multi-cell; `frozen<…>` becomes `FrozenType(…)` with everything inside
//! frozen (inner `frozen<>` dropped, as Cassandra prints it); tuples and
//! vectors are never wrapped in `FrozenType`; DESC clustering columns are
//! `ReversedType(…)` in [`TableSchema::clustering_types`].

use std::collections::BTreeMap;

use crate::error::{Error, ErrorKind, Result};
use crate::scylla::ScyllaSchema;
use crate::statistics::{ColumnDef, SerializationHeader};
use crate::types::{CqlType, Native};

/// Sort order of a clustering column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClusteringOrder {
    /// Ascending (the default).
    Asc,
    /// Descending (`ReversedType` in the header).
    Desc,
}

/// One column of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaColumn {
    /// Column name (unquoted, case preserved).
    pub name: String,
    /// Type, without the `ReversedType` wrapper of DESC clustering columns.
    pub ty: CqlType,
}

/// A user-defined type definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UdtDef {
    /// Keyspace (may be empty when unknown).
    pub keyspace: String,
    /// Type name.
    pub name: String,
    /// Fields in order.
    pub fields: Vec<(String, CqlType)>,
}

/// A table schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableSchema {
    /// Keyspace, when known.
    pub keyspace: Option<String>,
    /// Table name, when known.
    pub table: Option<String>,
    /// Partition key columns in key order.
    pub partition_key: Vec<SchemaColumn>,
    /// Clustering columns in clustering order, with their sort order.
    pub clustering: Vec<(SchemaColumn, ClusteringOrder)>,
    /// Static columns.
    pub static_columns: Vec<SchemaColumn>,
    /// Regular columns.
    pub regular_columns: Vec<SchemaColumn>,
    /// User-defined types declared alongside (from `CREATE TYPE`); types used
    /// by columns are also found by [`TableSchema::udts`].
    pub declared_types: Vec<UdtDef>,
    /// `WITH COMPACT STORAGE` was declared.
    pub compact_storage: bool,
    /// Partition-key / clustering names were generated (`pk0…`, `ck0…`).
    pub names_generated: bool,
}

fn err(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::BadValue(msg.into()), "schema")
}

impl TableSchema {
    /// Build from a serialization header, naming key columns `pk0…`/`ck0…`.
    pub fn from_header(h: &SerializationHeader) -> TableSchema {
        let pk_types = match &h.partition_key_type {
            CqlType::Composite(ts) => ts.clone(),
            t => vec![t.clone()],
        };
        let partition_key = pk_types
            .into_iter()
            .enumerate()
            .map(|(i, ty)| SchemaColumn {
                name: format!("pk{i}"),
                ty,
            })
            .collect();
        let clustering = h
            .clustering_types
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let order = if t.is_reversed() {
                    ClusteringOrder::Desc
                } else {
                    ClusteringOrder::Asc
                };
                (
                    SchemaColumn {
                        name: format!("ck{i}"),
                        ty: t.unreversed().clone(),
                    },
                    order,
                )
            })
            .collect();
        let cols = |cs: &[crate::statistics::ColumnDef]| {
            cs.iter()
                .map(|c| SchemaColumn {
                    name: c.name.clone(),
                    ty: c.ty.clone(),
                })
                .collect()
        };
        TableSchema {
            keyspace: None,
            table: None,
            partition_key,
            clustering,
            static_columns: cols(&h.static_columns),
            regular_columns: cols(&h.regular_columns),
            declared_types: Vec::new(),
            compact_storage: false,
            names_generated: true,
        }
    }

    /// Build from a header, taking key column names (and keyspace/table)
    /// from Scylla.db's schema sub-component when it matches the header's
    /// key shape.
    pub fn from_header_with_scylla(
        h: &SerializationHeader,
        scylla: Option<&ScyllaSchema>,
    ) -> TableSchema {
        let mut s = TableSchema::from_header(h);
        let Some(sc) = scylla else { return s };
        let pk: Vec<&str> = sc
            .columns
            .iter()
            .filter(|c| c.kind == 1)
            .map(|c| c.name.as_str())
            .collect();
        let ck: Vec<&str> = sc
            .columns
            .iter()
            .filter(|c| c.kind == 2)
            .map(|c| c.name.as_str())
            .collect();
        if pk.len() == s.partition_key.len() && ck.len() == s.clustering.len() {
            for (c, n) in s.partition_key.iter_mut().zip(&pk) {
                c.name = n.to_string();
            }
            for (c, n) in s.clustering.iter_mut().zip(&ck) {
                c.0.name = n.to_string();
            }
            s.names_generated = false;
        }
        if !sc.keyspace.is_empty() {
            s.keyspace = Some(sc.keyspace.clone());
        }
        if !sc.table.is_empty() {
            s.table = Some(sc.table.clone());
        }
        s
    }

    /// The partition key type as the header stores it (`CompositeType` for
    /// several columns).
    pub fn partition_key_type(&self) -> CqlType {
        match self.partition_key.as_slice() {
            [one] => one.ty.clone(),
            cols => CqlType::Composite(cols.iter().map(|c| c.ty.clone()).collect()),
        }
    }

    /// Clustering types as the header stores them (`ReversedType` for DESC).
    pub fn clustering_types(&self) -> Vec<CqlType> {
        self.clustering
            .iter()
            .map(|(c, o)| match o {
                ClusteringOrder::Asc => c.ty.clone(),
                ClusteringOrder::Desc => CqlType::Reversed(Box::new(c.ty.clone())),
            })
            .collect()
    }

    /// Every UDT used by a column (or declared), dependencies first, each once.
    pub fn udts(&self) -> Vec<UdtDef> {
        let mut out: Vec<UdtDef> = Vec::new();
        fn walk(t: &CqlType, out: &mut Vec<UdtDef>, depth: u32) {
            if depth > crate::types::MAX_DEPTH {
                return;
            }
            match t {
                CqlType::Udt {
                    keyspace,
                    name,
                    fields,
                } => {
                    for (_, ft) in fields {
                        walk(ft, out, depth + 1);
                    }
                    if !out
                        .iter()
                        .any(|u| u.name == *name && u.keyspace == *keyspace)
                    {
                        // Record the type with its fields as declared (frozen
                        // wrappers of the multi-cell form win).
                        out.push(UdtDef {
                            keyspace: keyspace.clone(),
                            name: name.clone(),
                            fields: fields.clone(),
                        });
                    }
                }
                CqlType::Reversed(t) | CqlType::Frozen(t) | CqlType::List(t) | CqlType::Set(t) => {
                    walk(t, out, depth + 1)
                }
                CqlType::Vector(t, _) => walk(t, out, depth + 1),
                CqlType::Map(k, v) => {
                    walk(k, out, depth + 1);
                    walk(v, out, depth + 1);
                }
                CqlType::Tuple(ts) | CqlType::Composite(ts) => {
                    ts.iter().for_each(|t| walk(t, out, depth + 1))
                }
                _ => {}
            }
        }
        for d in &self.declared_types {
            walk(
                &CqlType::Udt {
                    keyspace: d.keyspace.clone(),
                    name: d.name.clone(),
                    fields: d.fields.clone(),
                },
                &mut out,
                0,
            );
        }
        for c in self.all_columns() {
            walk(&c.ty, &mut out, 0);
        }
        out
    }

    fn all_columns(&self) -> impl Iterator<Item = &SchemaColumn> {
        self.partition_key
            .iter()
            .chain(self.clustering.iter().map(|c| &c.0))
            .chain(&self.static_columns)
            .chain(&self.regular_columns)
    }

    /// A column by name.
    pub fn column(&self, name: &str) -> Option<&SchemaColumn> {
        self.all_columns().find(|c| c.name == name)
    }

    /// `CREATE TYPE` statements for the UDTs (dependencies first), then the
    /// `CREATE TABLE` statement. Non-key columns are listed by name, as
    /// `DESCRIBE` does; `WITH CLUSTERING ORDER BY` is added when a clustering
    /// column is DESC.
    pub fn to_create_table(&self, keyspace: &str, table: &str) -> String {
        let mut out = String::new();
        for u in self.udts() {
            let ks = if keyspace.is_empty() {
                u.keyspace.clone()
            } else {
                keyspace.to_string()
            };
            out.push_str(&format!("CREATE TYPE {} (\n", qualified(&ks, &u.name)));
            let fields: Vec<String> =
                // UDT fields are spelled like collection elements: nested
                // collections and UDTs are frozen.
                u.fields.iter().map(|(n, t)| format!("    {} {}", cql_ident(n), nested(t, 0))).collect();
            out.push_str(&fields.join(",\n"));
            out.push_str("\n);\n\n");
        }
        out.push_str(&format!("CREATE TABLE {} (\n", qualified(keyspace, table)));
        let mut lines = Vec::new();
        let simple_pk = self.partition_key.len() == 1 && self.clustering.is_empty();
        for (i, c) in self.partition_key.iter().enumerate() {
            let mut l = format!("    {} {}", cql_ident(&c.name), cql_type(&c.ty));
            if simple_pk && i == 0 {
                l.push_str(" PRIMARY KEY");
            }
            lines.push(l);
        }
        for (c, _) in &self.clustering {
            lines.push(format!("    {} {}", cql_ident(&c.name), cql_type(&c.ty)));
        }
        let mut others: Vec<(&SchemaColumn, bool)> = self
            .static_columns
            .iter()
            .map(|c| (c, true))
            .chain(self.regular_columns.iter().map(|c| (c, false)))
            .collect();
        others.sort_by(|a, b| a.0.name.cmp(&b.0.name));
        for (c, is_static) in others {
            lines.push(format!(
                "    {} {}{}",
                cql_ident(&c.name),
                cql_type(&c.ty),
                if is_static { " static" } else { "" }
            ));
        }
        if !simple_pk {
            let pk: Vec<String> = self
                .partition_key
                .iter()
                .map(|c| cql_ident(&c.name))
                .collect();
            let pk = if pk.len() == 1 {
                pk[0].clone()
            } else {
                format!("({})", pk.join(", "))
            };
            let mut key = vec![pk];
            key.extend(self.clustering.iter().map(|c| cql_ident(&c.0.name)));
            lines.push(format!("    PRIMARY KEY ({})", key.join(", ")));
        }
        out.push_str(&lines.join(",\n"));
        out.push_str("\n)");
        if self.clustering.iter().any(|c| c.1 == ClusteringOrder::Desc) {
            let order: Vec<String> = self
                .clustering
                .iter()
                .map(|(c, o)| {
                    format!(
                        "{} {}",
                        cql_ident(&c.name),
                        if *o == ClusteringOrder::Desc {
                            "DESC"
                        } else {
                            "ASC"
                        }
                    )
                })
                .collect();
            out.push_str(&format!(" WITH CLUSTERING ORDER BY ({})", order.join(", ")));
        }
        out.push(';');
        if self.compact_storage {
            out.push_str(
                "\n-- NOTE: declared WITH COMPACT STORAGE (not accepted by Cassandra 4.0+)",
            );
        }
        out.push('\n');
        out
    }

    /// Parse the first `CREATE TABLE` of a CQL script (with the `CREATE TYPE`
    /// statements it uses); see [`parse_cql_schema`].
    pub fn from_cql(text: &str) -> Result<TableSchema> {
        parse_cql_schema(text)?
            .into_iter()
            .next()
            .ok_or_else(|| err("no CREATE TABLE statement"))
    }
}

fn qualified(ks: &str, name: &str) -> String {
    if ks.is_empty() {
        cql_ident(name)
    } else {
        format!("{}.{}", cql_ident(ks), cql_ident(name))
    }
}

/// CQL reserved keywords (Cassandra `ReservedKeywords`): identifiers spelled
/// like these must be quoted.
const RESERVED: &[&str] = &[
    "add",
    "allow",
    "alter",
    "and",
    "apply",
    "asc",
    "authorize",
    "batch",
    "begin",
    "by",
    "columnfamily",
    "create",
    "default",
    "delete",
    "desc",
    "describe",
    "drop",
    "entries",
    "execute",
    "from",
    "full",
    "grant",
    "if",
    "in",
    "index",
    "infinity",
    "insert",
    "into",
    "is",
    "keyspace",
    "limit",
    "materialized",
    "mbean",
    "mbeans",
    "modify",
    "nan",
    "norecursive",
    "not",
    "null",
    "of",
    "on",
    "or",
    "order",
    "primary",
    "rename",
    "replace",
    "revoke",
    "schema",
    "select",
    "set",
    "table",
    "to",
    "token",
    "truncate",
    "unlogged",
    "unset",
    "update",
    "use",
    "using",
    "view",
    "where",
    "with",
];

/// Quote an identifier when needed: not a plain lower-case identifier, or a
/// reserved keyword.
pub fn cql_ident(s: &str) -> String {
    let plain = s.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if plain && !RESERVED.contains(&s) {
        s.to_string()
    } else {
        format!("\"{}\"", s.replace('"', "\"\""))
    }
}

/// The CQL spelling of a column type as `DESCRIBE` writes it.
pub fn cql_type(t: &CqlType) -> String {
    type_str(t, false, 0)
}

/// `frozen`: inside a frozen type, where nothing is wrapped in `frozen<>`
/// again (the outermost frozen type gets it from its [`CqlType::Frozen`]).
fn type_str(t: &CqlType, frozen: bool, depth: u32) -> String {
    if depth > crate::types::MAX_DEPTH {
        return "blob".into();
    }
    match t {
        CqlType::Native(n) => n.cql().to_string(),
        CqlType::Reversed(t) => type_str(t, frozen, depth + 1),
        CqlType::Frozen(t) => match &**t {
            CqlType::Native(_) | CqlType::Tuple(_) | CqlType::Vector(..) | CqlType::Custom(_) => {
                type_str(t, true, depth + 1)
            }
            _ if frozen => type_str(t, true, depth + 1),
            _ => format!("frozen<{}>", type_str(t, true, depth + 1)),
        },
        CqlType::List(e) => format!("list<{}>", nested(e, depth)),
        CqlType::Set(e) => format!("set<{}>", nested(e, depth)),
        CqlType::Map(k, v) => format!("map<{}, {}>", nested(k, depth), nested(v, depth)),
        CqlType::Tuple(ts) => {
            format!(
                "frozen<tuple<{}>>",
                ts.iter()
                    .map(|t| nested(t, depth))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
        CqlType::Udt { name, .. } => cql_ident(name),
        CqlType::Vector(e, n) => format!("vector<{}, {n}>", nested(e, depth)),
        CqlType::Composite(_) | CqlType::DynamicComposite(_) | CqlType::ColumnToCollection(_) => {
            format!("'{}'", t.class_string())
        }
        CqlType::Custom(c) => format!("'{c}'"),
    }
}

/// An element of a collection/tuple: collections and UDTs nested there are
/// frozen and spelled `frozen<…>`; tuples already carry their `frozen<>`.
fn nested(t: &CqlType, depth: u32) -> String {
    match t.unreversed() {
        CqlType::Frozen(inner) => match &**inner {
            CqlType::Native(_) | CqlType::Tuple(_) | CqlType::Vector(..) | CqlType::Custom(_) => {
                type_str(inner, true, depth + 1)
            }
            _ => format!("frozen<{}>", type_str(inner, true, depth + 1)),
        },
        t @ (CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..) | CqlType::Udt { .. }) => {
            format!("frozen<{}>", type_str(t, true, depth + 1))
        }
        t => type_str(t, true, depth + 1),
    }
}

// ------------------------------------------------------------- CQL parser

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// Unquoted identifier or keyword (original spelling).
    Word(String),
    /// `"quoted"` identifier.
    Quoted(String),
    /// `'string'`.
    Str(String),
    /// A number or other literal run.
    Num(String),
    /// Punctuation.
    Sym(char),
}

fn tokenize(text: &str) -> Result<Vec<Tok>> {
    let c: Vec<char> = text.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    while i < c.len() {
        let ch = c[i];
        if ch.is_whitespace() {
            i += 1;
        } else if (ch == '-' && c.get(i + 1) == Some(&'-'))
            || (ch == '/' && c.get(i + 1) == Some(&'/'))
        {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && c.get(i + 1) == Some(&'*') {
            i += 2;
            while i < c.len() && !(c[i] == '*' && c.get(i + 1) == Some(&'/')) {
                i += 1;
            }
            i += 2;
        } else if ch == '\'' || ch == '"' {
            let mut s = String::new();
            i += 1;
            loop {
                match c.get(i) {
                    None => return Err(err("unterminated quoted text")),
                    Some(&q) if q == ch => {
                        if c.get(i + 1) == Some(&ch) {
                            s.push(ch);
                            i += 2;
                        } else {
                            i += 1;
                            break;
                        }
                    }
                    Some(&x) => {
                        s.push(x);
                        i += 1;
                    }
                }
            }
            out.push(if ch == '\'' {
                Tok::Str(s)
            } else {
                Tok::Quoted(s)
            });
        } else if ch.is_alphabetic() || ch == '_' {
            let st = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push(Tok::Word(c[st..i].iter().collect()));
        } else if ch.is_ascii_digit()
            || (ch == '-' && c.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            let st = i;
            i += 1;
            while i < c.len()
                && (c[i].is_alphanumeric() || c[i] == '.' || c[i] == '-' || c[i] == '+')
            {
                i += 1;
            }
            out.push(Tok::Num(c[st..i].iter().collect()));
        } else {
            out.push(Tok::Sym(ch));
            i += 1;
        }
    }
    Ok(out)
}

/// A token as it was written (for messages).
impl std::fmt::Display for Tok {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Tok::Word(w) | Tok::Num(w) => write!(f, "{w}"),
            Tok::Quoted(q) => write!(f, "\"{}\"", q.replace('"', "\"\"")),
            Tok::Str(s) => write!(f, "'{}'", s.replace('\'', "''")),
            Tok::Sym(c) => write!(f, "{c}"),
        }
    }
}

struct P {
    t: Vec<Tok>,
    i: usize,
}

impl P {
    fn peek(&self) -> Option<&Tok> {
        self.t.get(self.i)
    }
    fn kw(&self, k: &str) -> bool {
        matches!(self.peek(), Some(Tok::Word(w)) if w.eq_ignore_ascii_case(k))
    }
    fn eat_kw(&mut self, k: &str) -> bool {
        if self.kw(k) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect_kw(&mut self, k: &str) -> Result<()> {
        if self.eat_kw(k) {
            Ok(())
        } else {
            Err(self.err(&format!("expected {k}")))
        }
    }
    fn sym(&self, s: char) -> bool {
        self.peek() == Some(&Tok::Sym(s))
    }
    fn eat_sym(&mut self, s: char) -> bool {
        if self.sym(s) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect_sym(&mut self, s: char) -> Result<()> {
        if self.eat_sym(s) {
            Ok(())
        } else {
            Err(self.err(&format!("expected '{s}'")))
        }
    }
    fn err(&self, m: &str) -> Error {
        match self.peek() {
            Some(t) => err(format!("{m} at token {} ({t})", self.i)),
            None => err(format!("{m} at the end of the statement")),
        }
    }
    /// An identifier: unquoted ones are case-insensitive (lower-cased).
    fn ident(&mut self) -> Result<String> {
        match self.peek().cloned() {
            Some(Tok::Word(w)) => {
                self.i += 1;
                Ok(w.to_lowercase())
            }
            Some(Tok::Quoted(q)) => {
                self.i += 1;
                Ok(q)
            }
            _ => Err(self.err("expected an identifier")),
        }
    }
    /// `[ks.]name`
    fn qname(&mut self) -> Result<(Option<String>, String)> {
        let a = self.ident()?;
        if self.eat_sym('.') {
            Ok((Some(a), self.ident()?))
        } else {
            Ok((None, a))
        }
    }
    fn skip_statement(&mut self) {
        while let Some(t) = self.peek() {
            let end = *t == Tok::Sym(';');
            self.i += 1;
            if end {
                break;
            }
        }
    }
}

/// Parse every `CREATE TABLE` in a CQL script, resolving user types from the
/// script's `CREATE TYPE` statements. Other statements (`CREATE KEYSPACE`,
/// `USE`, `INSERT`, …) are skipped; comments (`--`, `//`, `/* */`) are
/// allowed. Supports `PRIMARY KEY` inline or as a clause (composite
/// partition keys in parentheses), `static`, `WITH CLUSTERING ORDER BY`,
/// `COMPACT STORAGE`, `IF NOT EXISTS`, quoted identifiers, `frozen<>`,
/// `vector<>`, and custom types as quoted class names.
pub fn parse_cql_schema(text: &str) -> Result<Vec<TableSchema>> {
    let mut p = P {
        t: tokenize(text)?,
        i: 0,
    };
    let mut types: BTreeMap<String, UdtDef> = BTreeMap::new();
    let mut current_ks: Option<String> = None;
    let mut tables = Vec::new();
    while p.peek().is_some() {
        if p.eat_sym(';') {
            continue;
        }
        if p.eat_kw("use") {
            current_ks = Some(p.ident()?);
            p.skip_statement();
            continue;
        }
        if !p.eat_kw("create") {
            p.skip_statement();
            continue;
        }
        if p.eat_kw("type") {
            if p.eat_kw("if") {
                p.expect_kw("not")?;
                p.expect_kw("exists")?;
            }
            let (ks, name) = p.qname()?;
            let ks = ks.or_else(|| current_ks.clone()).unwrap_or_default();
            p.expect_sym('(')?;
            let mut fields = Vec::new();
            loop {
                let f = p.ident()?;
                let t = parse_type(&mut p, &types, &ks, false, 0)?;
                fields.push((f, t));
                if p.eat_sym(',') {
                    continue;
                }
                p.expect_sym(')')?;
                break;
            }
            types.insert(
                name.clone(),
                UdtDef {
                    keyspace: ks,
                    name,
                    fields,
                },
            );
            p.skip_statement();
        } else if p.eat_kw("table") || p.eat_kw("columnfamily") {
            tables.push(parse_table(&mut p, &types, current_ks.as_deref())?);
        } else {
            p.skip_statement();
        }
    }
    Ok(tables)
}

fn parse_table(
    p: &mut P,
    types: &BTreeMap<String, UdtDef>,
    current_ks: Option<&str>,
) -> Result<TableSchema> {
    if p.eat_kw("if") {
        p.expect_kw("not")?;
        p.expect_kw("exists")?;
    }
    let (ks, table) = p.qname()?;
    let ks = ks.or_else(|| current_ks.map(str::to_string));
    let ks_s = ks.clone().unwrap_or_default();
    p.expect_sym('(')?;
    let mut cols: Vec<(String, CqlType, bool)> = Vec::new();
    let mut pk: Vec<String> = Vec::new();
    let mut ck: Vec<String> = Vec::new();
    loop {
        if p.eat_kw("primary") {
            p.expect_kw("key")?;
            p.expect_sym('(')?;
            if p.eat_sym('(') {
                loop {
                    pk.push(p.ident()?);
                    if !p.eat_sym(',') {
                        break;
                    }
                }
                p.expect_sym(')')?;
            } else {
                pk.push(p.ident()?);
            }
            while p.eat_sym(',') {
                ck.push(p.ident()?);
            }
            p.expect_sym(')')?;
        } else {
            let name = p.ident()?;
            let ty = parse_type(p, types, &ks_s, false, 0)?;
            let mut is_static = false;
            loop {
                if p.eat_kw("static") {
                    is_static = true;
                } else if p.eat_kw("primary") {
                    p.expect_kw("key")?;
                    if !pk.is_empty() {
                        return Err(p.err("two primary keys"));
                    }
                    pk.push(name.clone());
                } else {
                    break;
                }
            }
            cols.push((name, ty, is_static));
        }
        if p.eat_sym(',') {
            if p.sym(')') {
                p.i += 1;
                break;
            }
            continue;
        }
        p.expect_sym(')')?;
        break;
    }
    // Options: only CLUSTERING ORDER BY and COMPACT STORAGE matter.
    let mut order: BTreeMap<String, ClusteringOrder> = BTreeMap::new();
    let mut compact = false;
    while let Some(t) = p.peek() {
        if *t == Tok::Sym(';') {
            p.i += 1;
            break;
        }
        if p.eat_kw("clustering") {
            p.expect_kw("order")?;
            p.expect_kw("by")?;
            p.expect_sym('(')?;
            loop {
                let c = p.ident()?;
                let o = if p.eat_kw("desc") {
                    ClusteringOrder::Desc
                } else {
                    p.eat_kw("asc");
                    ClusteringOrder::Asc
                };
                order.insert(c, o);
                if !p.eat_sym(',') {
                    break;
                }
            }
            p.expect_sym(')')?;
        } else if p.eat_kw("compact") {
            p.expect_kw("storage")?;
            compact = true;
        } else {
            p.i += 1;
        }
    }
    if pk.is_empty() {
        return Err(err(format!("table {table} has no PRIMARY KEY")));
    }
    let mut find = |n: &str| -> Result<SchemaColumn> {
        let i = cols
            .iter()
            .position(|c| c.0 == n)
            .ok_or_else(|| err(format!("key column {n} is not defined")))?;
        let c = cols.remove(i);
        Ok(SchemaColumn { name: c.0, ty: c.1 })
    };
    let partition_key = pk.iter().map(|n| find(n)).collect::<Result<Vec<_>>>()?;
    let clustering = ck
        .iter()
        .map(|n| {
            Ok((
                find(n)?,
                order.get(n).copied().unwrap_or(ClusteringOrder::Asc),
            ))
        })
        .collect::<Result<Vec<_>>>()?;
    let mut static_columns = Vec::new();
    let mut regular_columns = Vec::new();
    for (name, ty, st) in cols {
        if st {
            static_columns.push(SchemaColumn { name, ty });
        } else {
            regular_columns.push(SchemaColumn { name, ty });
        }
    }
    let declared_types: Vec<UdtDef> = types.values().cloned().collect();
    let mut s = TableSchema {
        keyspace: ks,
        table: Some(table),
        partition_key,
        clustering,
        static_columns,
        regular_columns,
        declared_types: Vec::new(),
        compact_storage: compact,
        names_generated: false,
    };
    // Keep only the declared types this table uses.
    let used = s.udts();
    s.declared_types = declared_types
        .into_iter()
        .filter(|d| used.iter().any(|u| u.name == d.name))
        .collect();
    Ok(s)
}

/// Parse a CQL type. `frozen` = inside a frozen type (no `FrozenType`
/// wrappers, nested collections frozen).
fn parse_type(
    p: &mut P,
    types: &BTreeMap<String, UdtDef>,
    ks: &str,
    frozen: bool,
    depth: u32,
) -> Result<CqlType> {
    if depth > crate::types::MAX_DEPTH {
        return Err(p.err("type nested too deeply"));
    }
    if let Some(Tok::Str(class)) = p.peek().cloned() {
        p.i += 1;
        return CqlType::parse(&class);
    }
    let (_type_ks, name) = p.qname()?;
    let lname = name.to_lowercase();
    let params = |p: &mut P, n: usize, fr: bool| -> Result<Vec<CqlType>> {
        p.expect_sym('<')?;
        let mut v = Vec::new();
        loop {
            v.push(parse_type(p, types, ks, fr, depth + 1)?);
            if !p.eat_sym(',') {
                break;
            }
        }
        p.expect_sym('>')?;
        if n > 0 && v.len() != n {
            return Err(p.err(&format!("{name} takes {n} type parameters")));
        }
        Ok(v)
    };
    let native = |n: Native| Ok(CqlType::Native(n));
    match lname.as_str() {
        "ascii" => native(Native::Ascii),
        "bigint" => native(Native::Bigint),
        "blob" => native(Native::Blob),
        "boolean" => native(Native::Boolean),
        "counter" => native(Native::Counter),
        "date" => native(Native::Date),
        "decimal" => native(Native::Decimal),
        "double" => native(Native::Double),
        "duration" => native(Native::Duration),
        "float" => native(Native::Float),
        "inet" => native(Native::Inet),
        "int" => native(Native::Int),
        "smallint" => native(Native::Smallint),
        "text" | "varchar" => native(Native::Text),
        "time" => native(Native::Time),
        "timestamp" => native(Native::Timestamp),
        "timeuuid" => native(Native::Timeuuid),
        "tinyint" => native(Native::Tinyint),
        "uuid" => native(Native::Uuid),
        "varint" => native(Native::Varint),
        "frozen" => {
            let mut v = params(p, 1, true)?;
            let t = v.remove(0);
            Ok(match t {
                t @ (CqlType::Tuple(_)
                | CqlType::Vector(..)
                | CqlType::Native(_)
                | CqlType::Custom(_)) => t,
                t if frozen => t,
                t => CqlType::Frozen(Box::new(t)),
            })
        }
        "list" | "set" => {
            let mut v = params(p, 1, frozen)?;
            let e = freeze_nested(v.remove(0), frozen);
            Ok(if lname == "list" {
                CqlType::List(Box::new(e))
            } else {
                CqlType::Set(Box::new(e))
            })
        }
        "map" => {
            let mut v = params(p, 2, frozen)?;
            let val = freeze_nested(v.remove(1), frozen);
            let key = freeze_nested(v.remove(0), frozen);
            Ok(CqlType::Map(Box::new(key), Box::new(val)))
        }
        "tuple" => {
            let v = params(p, 0, true)?;
            Ok(CqlType::Tuple(v))
        }
        "vector" => {
            p.expect_sym('<')?;
            let e = parse_type(p, types, ks, true, depth + 1)?;
            p.expect_sym(',')?;
            let n = match p.peek().cloned() {
                Some(Tok::Num(n)) => {
                    p.i += 1;
                    n.parse::<usize>()
                        .map_err(|_| p.err("bad vector dimension"))?
                }
                _ => return Err(p.err("expected a vector dimension")),
            };
            p.expect_sym('>')?;
            Ok(CqlType::Vector(Box::new(e), n))
        }
        _ => {
            let d = types
                .get(&name)
                .ok_or_else(|| p.err(&format!("unknown type {name}")))?;
            let fields = if frozen {
                d.fields
                    .iter()
                    .map(|(n, t)| (n.clone(), strip_frozen(t, 0)))
                    .collect()
            } else {
                d.fields.clone()
            };
            Ok(CqlType::Udt {
                keyspace: if d.keyspace.is_empty() {
                    ks.to_string()
                } else {
                    d.keyspace.clone()
                },
                name: d.name.clone(),
                fields,
            })
        }
    }
}

/// A collection element or map key/value outside a frozen context: nested
/// collections and UDTs are frozen (`FrozenType`), already-frozen ones kept.
fn freeze_nested(t: CqlType, frozen: bool) -> CqlType {
    if frozen {
        return t;
    }
    match t {
        t @ (CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..) | CqlType::Udt { .. }) => {
            CqlType::Frozen(Box::new(strip_frozen(&t, 0)))
        }
        t => t,
    }
}

/// Remove `FrozenType` wrappers inside a frozen type (Cassandra prints
/// frozen types' inner types without them).
fn strip_frozen(t: &CqlType, depth: u32) -> CqlType {
    if depth > crate::types::MAX_DEPTH {
        return t.clone();
    }
    let s = |t: &CqlType| Box::new(strip_frozen(t, depth + 1));
    match t {
        CqlType::Frozen(t) => strip_frozen(t, depth + 1),
        CqlType::List(e) => CqlType::List(s(e)),
        CqlType::Set(e) => CqlType::Set(s(e)),
        CqlType::Map(k, v) => CqlType::Map(s(k), s(v)),
        CqlType::Tuple(ts) => {
            CqlType::Tuple(ts.iter().map(|t| strip_frozen(t, depth + 1)).collect())
        }
        CqlType::Udt {
            keyspace,
            name,
            fields,
        } => CqlType::Udt {
            keyspace: keyspace.clone(),
            name: name.clone(),
            fields: fields
                .iter()
                .map(|(n, t)| (n.clone(), strip_frozen(t, depth + 1)))
                .collect(),
        },
        CqlType::Vector(e, n) => CqlType::Vector(s(e), *n),
        t => t.clone(),
    }
}

/// Name of the hidden value column of a dense compact table declared
/// without a regular column (C\* `CompactTables.DEFAULT_VALUE_ALIAS`).
pub const HIDDEN_VALUE_COLUMN: &str = "value";

/// The serialization header the decoders see for a `ka`/`la` sstable of
/// table `s`: its key, clustering (with `ReversedType` for DESC) and column
/// types, and zero encoding stats (the legacy decoder yields absolute values).
///
/// A dense compact table (COMPACT STORAGE with clustering columns) declared
/// without a regular column gets the hidden `value` column as a `blob` (C\*
/// keeps it as an `EmptyType` column that may hold bytes, CASSANDRA-15778).
pub fn legacy_header(s: &TableSchema) -> SerializationHeader {
    let def = |name: &str, ty: &CqlType| ColumnDef {
        name: name.to_string(),
        name_bytes: name.as_bytes().to_vec(),
        ty: ty.clone(),
        type_string: ty.class_string(),
    };
    let pk = s.partition_key_type();
    let ck = s.clustering_types();
    let mut regular: Vec<ColumnDef> = s
        .regular_columns
        .iter()
        .map(|c| def(&c.name, &c.ty))
        .collect();
    if s.compact_storage && !s.clustering.is_empty() && regular.is_empty() {
        regular.push(def(HIDDEN_VALUE_COLUMN, &CqlType::Native(Native::Blob)));
    }
    SerializationHeader {
        min_timestamp: 0,
        min_local_deletion_time: 0,
        min_ttl: 0,
        raw_deltas: (0, 0, 0),
        partition_key_type_string: pk.class_string(),
        partition_key_type: pk,
        clustering_type_strings: ck.iter().map(CqlType::class_string).collect(),
        clustering_types: ck,
        static_columns: s
            .static_columns
            .iter()
            .map(|c| def(&c.name, &c.ty))
            .collect(),
        regular_columns: regular,
    }
}

#[cfg(test)]
mod tests;
