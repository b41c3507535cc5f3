//! `read`: single-partition bounded reads.
//!
//! * Results: for every BIG fixture and the corpus sets with promoted
//!   indexes, for keys at the start, middle and end of the sstable (and its
//!   widest partition), `read` with a slice equals the `dump-data` output of
//!   that partition filtered to the slice — ranges at the start, middle and
//!   end of partitions, single rows, empty ranges, prefix bounds, inclusive
//!   and exclusive bounds, ranges inside range tombstones, row limits.
//! * IO: the deterministic counts of the issue (warm single-row read = one
//!   Data.db read; filter-negative keys cost nothing; cold Index.db reads grow
//!   with log₂(blocks); compressed: only the chunks overlapping the range are
//!   decompressed).
//!
//! # The expected result of a slice
//!
//! dump-data lists a partition's clustering elements in clustering order:
//! rows, and range-tombstone changes with a `weight` (-1: before the rows of
//! its key, +1: after them). A bound given as the (full or partial)
//! clustering `R` of an element cuts that list (`S` = the elements whose key
//! has `R` as a prefix, contiguous in the list):
//!
//! | bound | elements at or before it (lower) / at or after it (upper) |
//! |---|---|
//! | `--from R` | before `S`, and the `(R, -1)` changes |
//! | `--after R` | up to the end of `S` |
//! | `--to R` | the `(R, +1)` changes and after `S` |
//! | `--before R` | from the start of `S` |
//!
//! The result is the elements strictly between the two cuts; the tombstone
//! open at the lower cut (the last change before it) is re-opened by a change
//! at `R` (weight -1 for `--from`, +1 for `--after`) and the one open at the
//! upper cut is closed by a change at its `R` (+1 for `--to`, -1 for
//! `--before`) to `{}`. With `--limit N`, the elements stop after the N-th
//! row, and a tombstone open there is closed at that row's key (+1). An
//! empty slice (the lower bound at or after the upper one, e.g. `--after R
//! --before R`) gives no element at all.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use sstkit_format::component::Component;
use sstkit_format::statistics::Statistics;
use sstkit_format::types::CqlType;
use sstkit_format::Sstable;

use crate::util::{corpus, data_files, fixture_cases, sstkit};

/// The BIG fixture sstables (Data.db paths).
pub(crate) fn big_fixtures() -> Vec<PathBuf> {
    fixture_cases()
        .iter()
        .flat_map(|c| data_files(c))
        .filter(|p| !p.to_string_lossy().contains("-bti-"))
        .collect()
}

/// Corpus sets whose partitions have promoted indexes (row-format versions).
pub(crate) const CORPUS_SETS: &[&str] = &[
    "cassandra/legacy_ma_clust",
    "cassandra/legacy_mc_clust",
    "cassandra/legacy_na_clust",
    "cassandra/legacy_nb_clust",
    "cassandra/legacy_oa_clust",
    "cassandra/legacy_oa_clust_counter",
    "scylladb/3.x-uncompressed-skip_using_index_rows",
    "scylladb/3.x-uncompressed-filtering_and_forwarding_range_tombstones",
    "scylladb/3.x-uncompressed-read_range_tombstone_boundaries_index",
    "scylladb/3.x-uncompressed-read_range_tombstones_only_index",
    "scylladb/3.x-uncompressed-slicing_interleaved_rows_and_rts",
    "scylladb/3.x-uncompressed-write_many_range_tombstones",
];

pub(crate) fn corpus_sstables() -> Vec<PathBuf> {
    let Some(root) = corpus() else {
        return Vec::new();
    };
    let mut v = Vec::new();
    for s in CORPUS_SETS {
        v.extend(data_files(&root.join(s)));
    }
    // large_partition holds ka/la files too: only the row-format ones.
    for f in data_files(&root.join("scylladb/large_partition")) {
        let n = f.file_name().unwrap().to_string_lossy().into_owned();
        if n.starts_with("mc-") || n.starts_with("md-") || n.starts_with("me-") {
            v.push(f);
        }
    }
    v
}

pub(crate) fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Every partition of `sst` as dump-data prints it (ndjson, without the
/// `sstable` field).
pub(crate) fn dump(sst: &Path) -> Vec<Value> {
    let r = sstkit(["dump-data", "-o", "ndjson", &s(sst)]);
    assert_eq!(r.code, 0, "dump-data {}: {}", sst.display(), r.stderr);
    r.stdout
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().remove("sstable");
            v
        })
        .collect()
}

/// `read` of one key (hex) with `args`: the partition printed (None when
/// absent) and the `--io-stats=json` lines.
pub(crate) fn read(sst: &Path, key_hex: &str, args: &[String]) -> (Option<Value>, Vec<Value>) {
    let mut a = vec![
        "read".to_string(),
        "--clustering-order".to_string(),
        "-o".into(),
        "ndjson".into(),
        "--io-stats=json".into(),
        "--key-hex".into(),
        key_hex.into(),
    ];
    a.extend(args.iter().cloned());
    a.push(s(sst));
    let r = sstkit(&a);
    assert_eq!(r.code, 0, "read {a:?}: {}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(lines.len() <= 1, "one partition at most: {}", r.stdout);
    let part = lines.first().map(|l| {
        let mut v: Value = serde_json::from_str(l).unwrap();
        v.as_object_mut().unwrap().remove("sstable");
        v
    });
    (part, stats(&r.stderr))
}

/// The `--io-stats=json` lines of stderr, without `latency_us` (wall time,
/// different in every run; the counters are compared whole).
pub(crate) fn stats(stderr: &str) -> Vec<Value> {
    let strip = |c: &mut Value, l: &str| {
        let had = c.as_object_mut().and_then(|o| o.remove("latency_us"));
        assert!(had.is_some(), "latency_us in every counter set: {l}");
    };
    stderr
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).expect("--io-stats=json line is JSON");
            if let Some(o) = v["components"].as_object_mut() {
                o.values_mut().for_each(|c| strip(c, l));
            }
            strip(&mut v["total"], l);
            v
        })
        .collect()
}

pub(crate) fn counter(op: &Value, comp: &str, field: &str) -> u64 {
    op["components"][comp][field].as_u64().unwrap_or(0)
}

/// The clustering types of an sstable.
pub(crate) fn clustering_types(sst: &Path) -> Vec<CqlType> {
    let t = Sstable::open_path(sst).unwrap();
    let b = t.read_component(Component::Statistics).unwrap();
    let st = Statistics::parse_lenient(&b, t.features()).unwrap();
    st.header.unwrap().clustering_types
}

/// The components of a clustering `raw` (2-byte length + bytes each).
pub(crate) fn components(raw: &str) -> Vec<Vec<u8>> {
    let b: Vec<u8> = (0..raw.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&raw[i..i + 2], 16).unwrap())
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 2 <= b.len() {
        let n = u16::from_be_bytes([b[i], b[i + 1]]) as usize;
        out.push(b[i + 2..i + 2 + n].to_vec());
        i += 2 + n;
    }
    out
}

pub(crate) fn raw_of(comps: &[Vec<u8>]) -> String {
    comps
        .iter()
        .map(|c| format!("{:04x}{}", c.len(), hex(c)))
        .collect()
}

pub(crate) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The command-line text of the first `n` components (CQL literals, `:`
/// escaped, joined with `:`), or None when a value does not round-trip.
pub(crate) fn bound_text(types: &[CqlType], comps: &[Vec<u8>]) -> Option<String> {
    let mut parts = Vec::new();
    for (t, c) in types.iter().zip(comps) {
        let v = sstkit_format::value::decode(t, c).ok()?;
        let lit = sstkit_commands::render::value_text(&v, sstkit_commands::render::Form::Cqlsh);
        let back = sstkit_format::value::parse_cql_literal(t, &lit).ok()?;
        if &back != c {
            return None;
        }
        if types.len() == 1 {
            return Some(lit);
        }
        parts.push(lit.replace(':', "\\:"));
    }
    Some(parts.join(":"))
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Flag {
    From,
    After,
    To,
    Before,
}

impl Flag {
    fn arg(self) -> &'static str {
        match self {
            Flag::From => "--from",
            Flag::After => "--after",
            Flag::To => "--to",
            Flag::Before => "--before",
        }
    }
}

/// A bound: flag and clustering components.
#[derive(Debug, Clone)]
pub(crate) struct Bound {
    pub(crate) flag: Flag,
    pub(crate) comps: Vec<Vec<u8>>,
}

pub(crate) fn elements(p: &Value) -> &[Value] {
    p["clustering_elements"]
        .as_array()
        .map_or(&[], |a| a.as_slice())
}

pub(crate) fn key_raw(e: &Value) -> &str {
    e["key"]["raw"].as_str().unwrap_or("")
}

fn weight(e: &Value) -> i64 {
    e["weight"].as_i64().unwrap_or(0)
}

fn is_change(e: &Value) -> bool {
    e["type"] == "range-tombstone-change"
}

/// Where a bound cuts the element list (see the module docs): the index of
/// the first element after a lower bound / at or after an upper bound.
fn cut(els: &[Value], keys: &[Vec<Vec<u8>>], b: &Bound) -> usize {
    let r = raw_of(&b.comps);
    let n = b.comps.len();
    let in_s: Vec<usize> = (0..els.len())
        .filter(|&i| keys[i].len() >= n && keys[i][..n] == b.comps[..])
        .collect();
    let (Some(&first), Some(&last)) = (in_s.first(), in_s.last()) else {
        // Tests only use keys of the partition's elements.
        panic!("bound {r} is not a key of the partition");
    };
    let at = |i: usize, w: i64| key_raw(&els[i]) == r && is_change(&els[i]) && weight(&els[i]) == w;
    match b.flag {
        Flag::From => in_s
            .iter()
            .copied()
            .find(|&i| !at(i, -1))
            .unwrap_or(last + 1),
        Flag::After => last + 1,
        Flag::To => in_s.iter().copied().find(|&i| at(i, 1)).unwrap_or(last + 1),
        Flag::Before => first,
    }
}

/// The tombstone open after the elements `els[..i]`.
fn open_at(els: &[Value], i: usize) -> Value {
    els[..i]
        .iter()
        .rev()
        .find(|e| is_change(e))
        .map(|e| e["tombstone"].clone())
        .unwrap_or(json!({}))
}

fn change(types: &[CqlType], comps: &[Vec<u8>], w: i64, t: Value) -> Option<Value> {
    let mut value = String::new();
    for (i, c) in comps.iter().enumerate().take(types.len()) {
        if i > 0 {
            value.push(':');
        }
        value.push_str(&scylla_value(i, c)?);
    }
    Some(
        json!({"type": "range-tombstone-change", "key": {"raw": raw_of(comps), "value": value},
           "weight": w, "tombstone": t}),
    )
}

/// The value text dump-data prints for a clustering component (taken from
/// an element of the dump with that component, see [`value_texts`]).
fn scylla_value(i: usize, c: &[u8]) -> Option<String> {
    VALUES.with(|m| m.borrow().get(&(i, c.to_vec())).cloned())
}

thread_local! {
    /// Dumped text of clustering component `i` with these bytes (cleared per sstable).
    static VALUES: std::cell::RefCell<std::collections::HashMap<(usize, Vec<u8>), String>> =
        Default::default();
}

/// Learn the dumped text of every clustering component of `els` (the value
/// string split on `:` when it has as many parts as components).
fn value_texts(els: &[Value], keys: &[Vec<Vec<u8>>]) {
    VALUES.with(|m| {
        let mut m = m.borrow_mut();
        for (e, comps) in els.iter().zip(keys) {
            if comps
                .iter()
                .enumerate()
                .all(|(i, c)| m.contains_key(&(i, c.clone())))
            {
                continue;
            }
            let text = e["key"]["value"].as_str().unwrap_or("");
            let parts: Vec<&str> = if comps.len() == 1 {
                vec![text]
            } else {
                text.split(':').collect()
            };
            if parts.len() != comps.len() {
                continue;
            }
            for (i, (c, p)) in comps.iter().zip(parts).enumerate() {
                m.insert((i, c.clone()), p.to_string());
            }
        }
    });
}

/// True when the lower bound is at or after the upper one: the slice is
/// empty (C\* `Slice.isEmpty`) and reads no element, not even a tombstone.
fn empty_slice(types: &[CqlType], lower: Option<&Bound>, upper: Option<&Bound>) -> bool {
    use sstkit_format::clustering::{BoundKind, ClusteringPrefix};
    let (Some(l), Some(u)) = (lower, upper) else {
        return false;
    };
    fn prefix(b: &Bound, kind: BoundKind) -> ClusteringPrefix<'_> {
        ClusteringPrefix {
            kind,
            values: b.comps.iter().map(|c| Some(c.as_slice())).collect(),
        }
    }
    let lk = if l.flag == Flag::From {
        BoundKind::InclStartBound
    } else {
        BoundKind::ExclStartBound
    };
    let uk = if u.flag == Flag::To {
        BoundKind::InclEndBound
    } else {
        BoundKind::ExclEndBound
    };
    sstkit_format::compare::compare_clustering(types, &prefix(l, lk), &prefix(u, uk))
        != std::cmp::Ordering::Less
}

/// The expected `read` output of partition `p` for a slice (module docs).
fn expected(
    types: &[CqlType],
    p: &Value,
    els: &[Value],
    keys: &[Vec<Vec<u8>>],
    lower: Option<&Bound>,
    upper: Option<&Bound>,
    limit: Option<usize>,
) -> Option<Value> {
    let lo = lower.map_or(0, |b| cut(els, keys, b));
    let hi = upper.map_or(els.len(), |b| cut(els, keys, b)).max(lo);
    let mut out = Vec::new();
    if let Some(b) = lower {
        let t = open_at(els, lo);
        if t != json!({}) {
            let w = if b.flag == Flag::From { -1 } else { 1 };
            out.push(change(types, &b.comps, w, t)?);
        }
    }
    let mut rows = 0;
    let mut limited = false;
    for (i, e) in els.iter().enumerate().take(hi).skip(lo) {
        out.push(e.clone());
        if e["type"] == "clustering-row" {
            rows += 1;
            if limit == Some(rows) {
                limited = true;
                if open_at(els, i + 1) != json!({}) {
                    out.push(change(types, &components(key_raw(e)), 1, json!({}))?);
                }
                break;
            }
        }
    }
    if limit == Some(0) || empty_slice(types, lower, upper) {
        out.clear();
        limited = true;
    }
    if !limited {
        if let Some(b) = upper {
            if open_at(els, hi) != json!({}) {
                let w = if b.flag == Flag::To { 1 } else { -1 };
                out.push(change(types, &b.comps, w, json!({}))?);
            }
        }
    }
    let mut o = serde_json::Map::new();
    for (k, x) in p.as_object().unwrap() {
        if k != "clustering_elements" {
            o.insert(k.clone(), x.clone());
        }
    }
    if !out.is_empty() {
        o.insert("clustering_elements".into(), Value::Array(out));
    }
    Some(Value::Object(o))
}

pub(crate) fn args_of(
    types: &[CqlType],
    lower: Option<&Bound>,
    upper: Option<&Bound>,
) -> Option<Vec<String>> {
    let mut a = Vec::new();
    for b in [lower, upper].into_iter().flatten() {
        a.push(b.flag.arg().to_string());
        a.push(bound_text(types, &b.comps)?);
    }
    Some(a)
}

/// The slices tried on a partition with elements `els`.
pub(crate) fn slices(
    els: &[Value],
    keys: &[Vec<Vec<u8>>],
) -> Vec<(Option<Bound>, Option<Bound>, Option<usize>)> {
    // Keys of rows and markers, in order.
    let mut rows: Vec<Vec<Vec<u8>>> = keys.iter().filter(|c| !c.is_empty()).cloned().collect();
    rows.dedup();
    // Open-ended slices of huge partitions print a lot: limit them.
    let open_limit = if els.len() > HUGE { Some(25) } else { None };
    let b = |flag, comps: &Vec<Vec<u8>>| {
        Some(Bound {
            flag,
            comps: comps.clone(),
        })
    };
    let mut v = Vec::new();
    if rows.is_empty() {
        return v;
    }
    let n = rows.len();
    let (first, mid, last) = (&rows[0], &rows[n / 2], &rows[n - 1]);
    let near = |i: usize| &rows[(i).min(n - 1)];
    // Start, middle, end; single rows; exclusive; empty ranges.
    v.push((b(Flag::From, first), b(Flag::To, near(2)), None));
    v.push((b(Flag::From, mid), b(Flag::To, near(n / 2 + 3)), None));
    v.push((
        b(Flag::From, &rows[n.saturating_sub(3)]),
        b(Flag::To, last),
        None,
    ));
    v.push((b(Flag::From, mid), b(Flag::To, mid), None));
    v.push((b(Flag::From, last), b(Flag::To, last), None));
    v.push((b(Flag::After, first), b(Flag::Before, near(4)), None));
    v.push((b(Flag::After, mid), b(Flag::Before, mid), None));
    v.push((None, b(Flag::Before, mid), open_limit));
    v.push((b(Flag::After, mid), None, open_limit));
    v.push((b(Flag::From, mid), None, Some(2)));
    // Prefix bounds (first component).
    if mid.len() > 1 {
        let p = vec![mid[0].clone()];
        v.push((b(Flag::From, &p), b(Flag::To, &p), None));
        v.push((
            b(Flag::After, &p),
            b(Flag::To, &vec![near(n / 2 + 5)[0].clone()]),
            None,
        ));
        v.push((
            b(Flag::From, &vec![first[0].clone()]),
            b(Flag::Before, &p),
            Some(3),
        ));
    }
    // Inside each range tombstone (at most 3): from its first inside
    // element's key to the last one's, and between its two bounds.
    let mut rts = 0;
    for (i, e) in els.iter().enumerate() {
        if rts >= 3 || !is_change(e) || e["tombstone"] == json!({}) {
            continue;
        }
        let Some(j) = (i + 1..els.len()).find(|&j| is_change(&els[j])) else {
            continue;
        };
        rts += 1;
        let inside: Vec<&Value> = els[i + 1..j]
            .iter()
            .filter(|x| x["type"] == "clustering-row")
            .collect();
        if let (Some(a), Some(z)) = (inside.first(), inside.last()) {
            let (a, z) = (components(key_raw(a)), components(key_raw(z)));
            v.push((b(Flag::After, &a), b(Flag::Before, &z), None));
            v.push((b(Flag::From, &a), b(Flag::To, &z), Some(1)));
        }
        let (a, z) = (components(key_raw(e)), components(key_raw(&els[j])));
        if !a.is_empty() && !z.is_empty() {
            v.push((b(Flag::From, &a), b(Flag::To, &z), None));
            v.push((b(Flag::After, &a), b(Flag::Before, &z), None));
        }
    }
    v
}

/// Partitions with more elements than this get row limits on the slices
/// that may print many (the test's JSON handling is slow in debug builds).
pub(crate) const HUGE: usize = 25_000;

/// Partitions to try: first, middle, last and the widest.
pub(crate) fn sample(parts: &[Value]) -> Vec<&Value> {
    let mut v: Vec<&Value> = Vec::new();
    if parts.is_empty() {
        return v;
    }
    let widest = parts
        .iter()
        .max_by_key(|p| elements(p).len())
        .unwrap_or(&parts[0]);
    for p in [
        &parts[0],
        &parts[parts.len() / 2],
        &parts[parts.len() - 1],
        widest,
    ] {
        if !v.iter().any(|x| x["key"] == p["key"]) {
            v.push(p);
        }
    }
    v
}

/// Compare read with the filtered dump for every sampled partition and
/// slice of `sst`; returns (partitions, slices) checked.
fn check_sstable(sst: &Path, failures: &mut Vec<String>) -> (usize, usize) {
    let parts = dump(sst);
    let types = clustering_types(sst);
    VALUES.with(|m| m.borrow_mut().clear());
    let (mut np, mut ns) = (0, 0);
    for p in sample(&parts) {
        let key = p["key"]["raw"].as_str().unwrap().to_string();
        let els = elements(p);
        let keys: Vec<Vec<Vec<u8>>> = els.iter().map(|e| components(key_raw(e))).collect();
        value_texts(els, &keys);
        np += 1;
        // The whole partition (unless huge: the test's JSON handling is slow).
        if els.len() <= HUGE {
            let (got, _) = read(sst, &key, &[]);
            if got.as_ref() != Some(p) {
                failures.push(format!(
                    "{} key {key}: whole partition differs",
                    sst.display()
                ));
            }
        }
        if types.is_empty() {
            continue;
        }
        for (lo, hi, mut limit) in slices(els, &keys) {
            if els.len() > HUGE && limit.is_none() {
                limit = Some(25);
            }
            let Some(mut args) = args_of(&types, lo.as_ref(), hi.as_ref()) else {
                continue;
            };
            if let Some(l) = limit {
                args.push("--limit".into());
                args.push(l.to_string());
            }
            let Some(want) = expected(&types, p, els, &keys, lo.as_ref(), hi.as_ref(), limit)
            else {
                continue;
            };
            let (got, _) = read(sst, &key, &args);
            ns += 1;
            if got.as_ref() != Some(&want) {
                failures.push(format!(
                    "{} key {key} {args:?}:\n  want {}\n  got  {}",
                    sst.display(),
                    serde_json::to_string(&want["clustering_elements"]).unwrap(),
                    got.map(|g| serde_json::to_string(&g["clustering_elements"]).unwrap())
                        .unwrap_or_default()
                ));
            }
        }
    }
    (np, ns)
}

#[test]
fn read_equals_filtered_dump_on_fixtures() {
    let ssts = big_fixtures();
    assert!(!ssts.is_empty());
    let mut failures = Vec::new();
    let (mut np, mut ns) = (0, 0);
    for sst in &ssts {
        let (p, s) = check_sstable(sst, &mut failures);
        np += p;
        ns += s;
    }
    eprintln!(
        "{} fixtures: {np} partitions, {ns} slices compared",
        ssts.len()
    );
    assert!(ns > 300, "only {ns} slices");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn read_equals_filtered_dump_on_corpus() {
    let ssts = corpus_sstables();
    if ssts.is_empty() {
        return;
    }
    let mut failures = Vec::new();
    let (mut np, mut ns) = (0, 0);
    for sst in &ssts {
        let (p, s) = check_sstable(sst, &mut failures);
        np += p;
        ns += s;
    }
    eprintln!(
        "{} corpus sstables: {np} partitions, {ns} slices compared",
        ssts.len()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---------------------------------------------------------------------------
// IO counts.

/// The wide fixtures: (Data.db, compressed).
pub(crate) fn wide_fixtures() -> Vec<(PathBuf, bool)> {
    let mut v = Vec::new();
    for (case, compressed) in [
        ("nb_wide", true),
        ("oa_wide", true),
        ("nb_wide_desc", false),
        ("oa_wide_desc", false),
    ] {
        let d = crate::util::fixtures().join(case);
        if let Some(p) = data_files(&d).into_iter().next() {
            v.push((p, compressed));
        }
    }
    v
}

/// The partition of `sst` with the most promoted-index blocks: its key
/// (hex), Data.db position and blocks (`first`/`last` clusterings,
/// `offset`, `width`).
fn widest_indexed(sst: &Path) -> (String, u64, Vec<Value>) {
    let (key, pos, blocks, _) = widest_indexed_pages(sst);
    (key, pos, blocks)
}

/// [`widest_indexed`], plus the number of 4 KiB Index.db pages holding the
/// entries from the start of Index.db to this one (the fixtures' summaries
/// have a single sample: a lookup walks these entries).
pub(crate) fn widest_indexed_pages(sst: &Path) -> (String, u64, Vec<Value>, u64) {
    let r = sstkit(["dump-index", "--promoted-index", "-o", "ndjson", &s(sst)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let entries: Vec<Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .collect();
    let e = entries
        .iter()
        .max_by_key(|e| e["promoted_index"]["blocks"].as_u64().unwrap_or(0))
        .unwrap();
    let off = e["index_offset"].as_u64().unwrap();
    let mut pages: Vec<u64> = entries
        .iter()
        .map(|x| x["index_offset"].as_u64().unwrap())
        .filter(|o| *o <= off)
        .map(|o| o / 4096)
        .collect();
    pages.dedup();
    (
        e["key"]["raw"].as_str().unwrap().to_string(),
        e["pos"].as_u64().unwrap(),
        e["promoted_index"]["entries"].as_array().unwrap().clone(),
        pages.len() as u64,
    )
}

/// The components of a dump-index clustering (`raw`: hex per component).
pub(crate) fn block_comps(c: &Value) -> Vec<Vec<u8>> {
    c["raw"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            let h = h.as_str().unwrap();
            (0..h.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
                .collect()
        })
        .collect()
}

/// Index of a block near `at` whose last clustering is a row (not a marker
/// bound) with a value that round-trips on the command line.
pub(crate) fn row_block(blocks: &[Value], types: &[CqlType], at: usize) -> (usize, String) {
    (at..blocks.len())
        .chain(0..at)
        .find_map(|k| {
            let b = &blocks[k];
            if b["last"]["kind"] != "CLUSTERING" {
                return None;
            }
            Some((k, bound_text(types, &block_comps(&b["last"]))?))
        })
        .expect("a block ending with a row")
}

fn ceil_log2(n: u64) -> u64 {
    64 - n.saturating_sub(1).leading_zeros() as u64
}

#[test]
fn warm_single_row_read_is_one_data_read() {
    let unit = 4096u64;
    let mut checked = 0;
    let mut ssts = wide_fixtures();
    if let Some(root) = corpus() {
        for set in [
            "scylladb/3.x-uncompressed-skip_using_index_rows",
            "cassandra/legacy_nb_clust",
        ] {
            let compressed = set.contains("legacy");
            for d in data_files(&root.join(set)) {
                ssts.push((d, compressed));
            }
        }
    }
    for (sst, compressed) in &ssts {
        let (key, pos, blocks, entry_pages) = widest_indexed_pages(sst);
        let types = clustering_types(sst);
        let n = blocks.len() as u64;
        // Rows at the start, middle and end of the partition.
        for at in [1, blocks.len() / 2, blocks.len() - 2] {
            let (k, row) = row_block(&blocks, &types, at);
            let b = &blocks[k];
            let args = [
                "read",
                "--clustering-order",
                "-o",
                "ndjson",
                "--io-stats=json",
                "--key-hex",
                &key,
                "--key-hex",
                &key,
                "--from",
                &row,
                "--to",
                &row,
                &s(sst),
            ];
            let r = sstkit(args);
            assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
            let ops = stats(&r.stderr);
            assert_eq!(ops.len(), 3, "open + 2 reads: {}", r.stderr);
            let (cold, warm) = (&ops[1], &ops[2]);
            for op in [cold, warm] {
                assert_eq!(op["result"], "found");
                assert_eq!(op["plan"]["block_range"], json!([k, k]), "{op}");
                assert_eq!(op["plan"]["rows"], 1, "{op}");
            }
            let ctx = format!("{} block {k} of {n}: {warm}", sst.display());
            // Warm: exactly one Data.db read, nothing from Index.db.
            assert_eq!(counter(warm, "data", "reads"), 1, "{ctx}");
            assert_eq!(counter(warm, "index", "reads"), 0, "{ctx}");
            assert_eq!(counter(warm, "index", "cache_misses"), 0, "{ctx}");
            let (off, width) = (b["offset"].as_u64().unwrap(), b["width"].as_u64().unwrap());
            let (start, end) = (pos + off, pos + off + width);
            if *compressed {
                // Exactly the chunks overlapping the block.
                let chunk = chunk_len(sst);
                let want = (end - 1) / chunk - start / chunk + 1;
                assert_eq!(counter(warm, "data", "chunks_decompressed"), want, "{ctx}");
            } else {
                // At most the block plus alignment.
                let bytes = counter(warm, "data", "bytes");
                assert!(
                    bytes <= width.div_ceil(unit) * unit + unit,
                    "{bytes} bytes: {ctx}"
                );
                assert_eq!(counter(warm, "data", "chunks_decompressed"), 0);
            }
            // Cold: the header (static row) and the block at most; Index.db
            // reads: the pages of the entries walked from the summary
            // sample, then log2(blocks) probes, not the partition.
            assert!(counter(cold, "data", "reads") <= 2, "{cold}");
            let bound = entry_pages + ceil_log2(n) + 2;
            assert!(
                counter(cold, "index", "reads") <= bound,
                "{} > {bound}: {cold}",
                counter(cold, "index", "reads")
            );
            checked += 1;
        }
    }
    assert!(checked >= 12, "{checked}");
}

/// The chunk length of a compressed sstable.
pub(crate) fn chunk_len(sst: &Path) -> u64 {
    let r = sstkit(["dump-compression-info", "-o", "ndjson", &s(sst)]);
    let v: Value = serde_json::from_str(r.stdout.lines().next().unwrap()).unwrap();
    v["chunk_len"].as_u64().unwrap()
}

#[test]
fn cold_index_reads_grow_with_log_blocks() {
    for (sst, _) in wide_fixtures() {
        let (key, _, blocks, entry_pages) = widest_indexed_pages(&sst);
        let types = clustering_types(&sst);
        let n = blocks.len() as u64;
        let index_len = std::fs::metadata(sst.to_string_lossy().replace("-Data.db", "-Index.db"))
            .unwrap()
            .len();
        for at in [0, blocks.len() / 3, blocks.len() / 2, blocks.len() - 1] {
            let (_, row) = row_block(&blocks, &types, at);
            let r = sstkit([
                "read",
                "--clustering-order",
                "-o",
                "ndjson",
                "--io-stats=json",
                "--no-index-cache",
                "--key-hex",
                &key,
                "--key-hex",
                &key,
                "--from",
                &row,
                "--to",
                &row,
                &s(&sst),
            ]);
            assert_eq!(r.code, 0, "{}", r.stderr);
            let ops = stats(&r.stderr);
            for op in &ops[1..] {
                let reads = counter(op, "index", "reads");
                assert!(
                    reads >= 1 && reads <= entry_pages + ceil_log2(n) + 2,
                    "{op}"
                );
                // Not the whole promoted index: fewer bytes than Index.db.
                assert!(counter(op, "index", "bytes") < index_len, "{op}");
                // No cache: nothing counted, the second lookup as cold as the first.
                assert_eq!(counter(op, "index", "cache_hits"), 0);
            }
            assert_eq!(ops[1]["components"]["index"], ops[2]["components"]["index"]);
        }
    }
}

#[test]
fn keys_absent_from_the_filter_cost_nothing() {
    let mut negatives = 0;
    for sst in big_fixtures() {
        let mut args: Vec<String> = vec![
            "read".into(),
            "--clustering-order".into(),
            "-o".into(),
            "ndjson".into(),
            "--io-stats=json".into(),
        ];
        // Random-looking keys of the right width for int keys; other key
        // types get hex keys that do not exist either.
        for i in 0..40u32 {
            args.push("--key-hex".into());
            args.push(format!("{:08x}", 0x7a00_0000u32 + i * 7919));
        }
        args.push(s(&sst));
        let r = sstkit(&args);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(r.stdout.is_empty(), "no partition: {}", r.stdout);
        for op in stats(&r.stderr).iter().skip(1) {
            let result = op["result"].as_str().unwrap();
            assert!(result.starts_with("absent"), "{op}");
            if result == "absent (bloom filter)" || result.contains("key range") {
                negatives += 1;
                assert_eq!(op["total"]["reads"], 0, "{op}");
                assert_eq!(counter(op, "data", "reads"), 0, "{op}");
                assert_eq!(counter(op, "index", "reads"), 0, "{op}");
            } else {
                // A false positive: Index.db only, never Data.db.
                assert_eq!(counter(op, "data", "reads"), 0, "{op}");
            }
        }
    }
    assert!(negatives > 500, "{negatives}");
}

#[test]
fn io_modes_and_naive_reads_agree() {
    let sst = data_files(&crate::util::fixtures().join("nb_wide_desc"))[0].clone();
    let (key, _, blocks) = widest_indexed(&sst);
    let types = clustering_types(&sst);
    let (_, a) = row_block(&blocks, &types, blocks.len() / 3);
    let (_, b) = row_block(&blocks, &types, blocks.len() / 3 + 3);
    let run = |extra: &[&str]| {
        let mut args = vec![
            "read",
            "--clustering-order",
            "-o",
            "ndjson",
            "--io-stats=json",
            "--key-hex",
            &key,
            "--from",
            &a,
            "--to",
            &b,
        ];
        args.extend_from_slice(extra);
        let p = s(&sst);
        args.push(&p);
        let r = sstkit(&args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        (r.stdout, stats(&r.stderr))
    };
    let (want, st) = run(&[]);
    assert!(want.contains("clustering-row"));
    // Descending clustering order: --from is the larger ck; the rows are there.
    for mode in ["mmap", "direct"] {
        let (got, st2) = run(&["--io-mode", mode]);
        assert_eq!(got, want, "--io-mode {mode}");
        if st2.len() == st.len() {
            assert_eq!(
                st2[1]["components"], st[1]["components"],
                "--io-mode {mode}"
            );
        }
    }
    // A 512-byte unit reads fewer bytes, the same rows.
    let (got, small) = run(&["--io-unit", "512"]);
    assert_eq!(got, want);
    assert!(counter(&small[1], "data", "bytes") <= counter(&st[1], "data", "bytes"));
    // The naive read: same rows, scanning from the partition start.
    let (got, naive) = run(&["--naive"]);
    assert_eq!(got, want);
    assert!(
        counter(&naive[1], "data", "bytes") > 4 * counter(&st[1], "data", "bytes"),
        "{}",
        naive[1]
    );
    // Usage errors.
    let r = sstkit([
        "read",
        "--clustering-order",
        "--key",
        "0",
        "--io-unit",
        "1000",
        &s(&sst),
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
}

#[test]
fn output_formats_columns_limit_and_errors() {
    let sst = data_files(&crate::util::fixtures().join("nb_range_tombstones"))[0].clone();
    let p = s(&sst);
    let parts = dump(&sst);
    let key = parts[parts.len() / 2]["key"]["raw"]
        .as_str()
        .unwrap()
        .to_string();
    // Whole partition: every output format equals dump-data's.
    for fmt in ["sstabledump", "sstabledump-lines", "text", "json"] {
        let d = sstkit(["dump-data", "-o", fmt, "--key-hex", &key, &p]);
        let r = sstkit([
            "read",
            "--clustering-order",
            "-o",
            fmt,
            "--key-hex",
            &key,
            &p,
        ]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_eq!(r.stdout, d.stdout, "-o {fmt}");
    }
    // --columns keeps the named columns only; unknown names are usage errors.
    let hdr = Sstable::open_path(&sst).unwrap();
    let b = hdr.read_component(Component::Statistics).unwrap();
    let h = Statistics::parse_lenient(&b, hdr.features())
        .unwrap()
        .header
        .unwrap();
    let col = h.regular_columns[0].name.clone();
    let (got, _) = read(&sst, &key, &["--columns".into(), col.clone()]);
    for e in elements(got.as_ref().unwrap()) {
        if let Some(cols) = e["columns"].as_object() {
            assert!(cols.keys().all(|k| *k == col), "{e}");
        }
    }
    let r = sstkit([
        "read",
        "--clustering-order",
        "--key-hex",
        &key,
        "--columns",
        "nope",
        &p,
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    // --limit 0: header only.
    let (got, _) = read(&sst, &key, &["--limit".into(), "0".into()]);
    assert!(got.unwrap().get("clustering_elements").is_none());
    // --reverse with --naive: exit 2 (tests/reversed.rs covers --reverse);
    // BTI: through the tries (exit 0); bad bound: exit 2.
    let r = sstkit([
        "read",
        "--clustering-order",
        "--key-hex",
        &key,
        "--reverse",
        "--naive",
        &p,
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let da = data_files(&crate::util::fixtures().join("da_range_tombstones"))[0].clone();
    let r = sstkit(["read", "--clustering-order", "--key-hex", &key, &s(&da)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = sstkit([
        "read",
        "--clustering-order",
        "--key-hex",
        &key,
        "--from",
        "not-a-number",
        &p,
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    // --io-stats (table) goes to stderr only.
    let r = sstkit([
        "read",
        "--clustering-order",
        "-o",
        "ndjson",
        "--io-stats",
        "--key-hex",
        &key,
        &p,
    ]);
    assert!(r.stderr.contains("Data.db"), "{}", r.stderr);
    for l in r.stdout.lines() {
        serde_json::from_str::<Value>(l).expect("stdout stays ndjson");
    }
    // Its format is given with `=` only, so a path right after it stays a path.
    let r = sstkit([
        "read",
        "--clustering-order",
        "-o",
        "ndjson",
        "--key-hex",
        &key,
        "--io-stats",
        &p,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("Data.db"), "{}", r.stderr);
    let r = sstkit([
        "read",
        "--clustering-order",
        "--key-hex",
        &key,
        "--io-stats=json",
        &p,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let json = r.stderr.lines().filter(|l| l.starts_with('{')).count();
    assert!(json > 0, "{}", r.stderr);
}
