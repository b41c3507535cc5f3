//! Merge engine tests: the merged tables of the fixtures against the rows a
//! live Cassandra 5.0 returned (`select.json`), reconciliation rules, and
//! properties (one sstable, input order, a copy of itself).

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use serde_json::{Map, Value as J};

use super::*;
use crate::data::model::cell_flags;
use crate::data::{Column, LivenessInfo, Next, ScanReader};
use crate::statistics::{ColumnDef, SerializationHeader, Statistics};
use crate::types::Native;
use crate::value::{decode, Value};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/cassandra")
}

struct Table {
    ssts: Vec<crate::Sstable>,
    headers: Vec<SerializationHeader>,
    partitioner: Partitioner,
}

fn open(case_dirs: &[PathBuf]) -> Table {
    let mut ssts = Vec::new();
    let mut headers = Vec::new();
    let mut partitioner = None;
    for d in case_dirs {
        let data = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_string_lossy().ends_with("-Data.db"))
            .unwrap();
        let (desc, _) = crate::descriptor::Descriptor::from_path(&data).unwrap();
        let sst = crate::Sstable::open(desc).unwrap();
        let bytes = sst.read_component(crate::Component::Statistics).unwrap();
        let st = Statistics::parse_lenient(&bytes, sst.features()).unwrap();
        headers.push(sst.data_header(&st).unwrap());
        let class = st.validation.as_ref().unwrap().partitioner.clone();
        partitioner = Some(Partitioner::parse(&class).unwrap());
        ssts.push(sst);
    }
    Table {
        ssts,
        headers,
        partitioner: partitioner.unwrap(),
    }
}

/// The union schema of `t`'s sstables in `order`, and a whole-file source
/// per sstable.
fn scan_sources<'t>(
    t: &'t Table,
    order: &[usize],
) -> (MergedSchema, Vec<Box<dyn UnitSource + 't>>) {
    let named: Vec<(&str, &SerializationHeader)> =
        order.iter().map(|&i| ("sst", &t.headers[i])).collect();
    let schema = MergedSchema::union(&named, t.ssts[0].features()).unwrap();
    let mut sources: Vec<Box<dyn UnitSource + '_>> = Vec::new();
    for (n, &i) in order.iter().enumerate() {
        let r = ScanReader::new(&t.ssts[i], &t.headers[i]).unwrap();
        sources.push(Box::new(ScanSource::new(
            r,
            schema.column_map(&t.headers[i]),
            n,
        )));
    }
    (schema, sources)
}

/// The merged stream of `t`'s sstables, in `order`, as owned units.
fn merged(t: &Table, order: &[usize]) -> (MergedSchema, Vec<Unit>) {
    let (schema, sources) = scan_sources(t, order);
    let mut m = Merger::new(sources, &schema, t.partitioner.clone());
    let mut out = Vec::new();
    while let Some(s) = m.next_partition().unwrap() {
        out.push(Unit::Start {
            key: s.key,
            deletion: s.deletion,
            position: DataPos(0),
            header_end: DataPos(0),
        });
        if let Some(r) = s.static_row {
            out.push(Unit::Static(Box::new(r)));
        }
        while let Some(u) = m.next_unfiltered().unwrap() {
            out.push(u);
        }
        out.push(Unit::End);
    }
    (schema, out)
}

/// Units without positions and sources (what differs between copies and
/// orders of the same data).
fn normalized(units: Vec<Unit>) -> Vec<Unit> {
    units
        .into_iter()
        .map(|u| match u {
            Unit::Start { key, deletion, .. } => Unit::Start {
                key,
                deletion,
                position: DataPos(0),
                header_end: DataPos(0),
            },
            Unit::Static(r) => Unit::Static(Box::new(MRow {
                position: DataPos(0),
                size: 0,
                source: 0,
                ..*r
            })),
            Unit::Row(r) => Unit::Row(Box::new(MRow {
                position: DataPos(0),
                size: 0,
                source: 0,
                ..*r
            })),
            Unit::Marker(m) => Unit::Marker(Box::new(MMarker {
                position: DataPos(0),
                source: 0,
                ..*m
            })),
            Unit::Held(h) => Unit::Held(h),
            Unit::End => Unit::End,
        })
        .collect()
}

// ------------------------------------------------- CQL projection (tests)

fn json_value(ty: &CqlType, v: &Value) -> J {
    let _ = ty;
    match v {
        Value::Int(i) => J::from(*i),
        Value::Bigint(i) => J::from(*i),
        Value::Text(s) | Value::Ascii(s) => J::from(s.clone()),
        Value::Boolean(b) => J::from(*b),
        Value::List(xs) | Value::Set(xs) => {
            J::Array(xs.iter().map(|x| json_value(ty, x)).collect())
        }
        Value::Map(kv) => J::Object(
            kv.iter()
                .map(|(k, v)| (key_text(k), json_value(ty, v)))
                .collect(),
        ),
        Value::Null => J::Null,
        other => panic!("the projection does not render {other:?}"),
    }
}

fn key_text(v: &Value) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::Bigint(i) => i.to_string(),
        Value::Text(s) | Value::Ascii(s) => s.clone(),
        other => format!("{other:?}"),
    }
}

fn cell_live(c: &MCell, now: i64) -> bool {
    c.is_live(now)
}

/// The CQL value of a column's data at `now`, or null.
fn column_json(col: &Column, cd: Option<&MColumnData>, now: i64) -> J {
    let ty = col.ty().unreversed();
    match cd {
        None => J::Null,
        Some(MColumnData::Simple { cell, .. }) => {
            if !cell_live(cell, now) {
                return J::Null;
            }
            json_value(ty, &decode(ty, &cell.value).unwrap())
        }
        Some(MColumnData::Complex { cells, .. }) => {
            let live: Vec<&MCell> = cells.iter().filter(|c| cell_live(c, now)).collect();
            if live.is_empty() {
                return J::Null;
            }
            match ty {
                CqlType::Set(k) => J::Array(
                    live.iter()
                        .map(|c| json_value(k, &decode(k, c.path.as_deref().unwrap()).unwrap()))
                        .collect(),
                ),
                CqlType::List(v) => J::Array(
                    live.iter()
                        .map(|c| json_value(v, &decode(v, &c.value).unwrap()))
                        .collect(),
                ),
                CqlType::Map(k, v) => J::Object(
                    live.iter()
                        .map(|c| {
                            let key = decode(k, c.path.as_deref().unwrap()).unwrap();
                            (key_text(&key), json_value(v, &decode(v, &c.value).unwrap()))
                        })
                        .collect(),
                ),
                other => panic!("the projection does not render {other:?}"),
            }
        }
    }
}

fn row_has_live(r: &MRow, now: i64) -> bool {
    let marker = r
        .liveness
        .is_some_and(|l| !l.expired && l.local_expiration_time.is_none_or(|t| now < t));
    marker
        || r.cells.iter().any(|cd| match cd {
            MColumnData::Simple { cell, .. } => cell_live(cell, now),
            MColumnData::Complex { cells, .. } => cells.iter().any(|c| cell_live(c, now)),
        })
}

/// `SELECT JSON *` rows of a merged stream (single int partition key;
/// int/text clustering columns), as the test's projection renders them.
fn cql_rows(
    schema: &MergedSchema,
    units: &[Unit],
    pk_name: &str,
    ck_names: &[&str],
    now: i64,
) -> Vec<J> {
    let mut out = Vec::new();
    let mut key = J::Null;
    let mut statics: Map<String, J> = Map::new();
    let mut static_live = false;
    let mut rows_in_partition = 0;
    let regular = schema.data.regular_columns.columns();
    let statics_cols = schema.data.static_columns.columns();
    let key_ty = &schema.header.partition_key_type;
    let ck_types = &schema.header.clustering_types;
    for u in units {
        match u {
            Unit::Start { key: k, .. } => {
                key = json_value(key_ty, &decode(key_ty, k).unwrap());
                statics = statics_cols
                    .iter()
                    .map(|c| (c.name().to_string(), J::Null))
                    .collect();
                static_live = false;
                rows_in_partition = 0;
            }
            Unit::Static(r) => {
                static_live = row_has_live(r, now);
                for c in statics_cols {
                    let cd = r.cells.iter().find(|d| d.column() == c.index);
                    statics.insert(c.name().to_string(), column_json(c, cd, now));
                }
            }
            Unit::Row(r) => {
                if !row_has_live(r, now) {
                    continue;
                }
                rows_in_partition += 1;
                let mut o = Map::new();
                o.insert(pk_name.to_string(), key.clone());
                for (i, n) in ck_names.iter().enumerate() {
                    let t = ck_types[i].unreversed();
                    let v = r.clustering.values[i].as_deref().unwrap();
                    o.insert(n.to_string(), json_value(t, &decode(t, v).unwrap()));
                }
                o.extend(statics.clone());
                for c in regular {
                    let cd = r.cells.iter().find(|d| d.column() == c.index);
                    o.insert(c.name().to_string(), column_json(c, cd, now));
                }
                out.push(J::Object(o));
            }
            Unit::Marker(_) => {}
            Unit::Held(_) => panic!("next_unfiltered hands out owned rows only"),
            Unit::End => {
                if rows_in_partition == 0 && static_live {
                    let mut o = Map::new();
                    o.insert(pk_name.to_string(), key.clone());
                    for n in ck_names {
                        o.insert(n.to_string(), J::Null);
                    }
                    o.extend(statics.clone());
                    for c in regular {
                        o.insert(c.name().to_string(), J::Null);
                    }
                    out.push(J::Object(o));
                }
            }
        }
    }
    out
}

fn truth(dir: &Path) -> (Vec<J>, i64) {
    let s = std::fs::read_to_string(dir.join("select.json")).unwrap();
    let v: J = serde_json::from_str(&s).unwrap();
    let all = v
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["name"] == "all")
        .unwrap();
    let case: J =
        serde_json::from_str(&std::fs::read_to_string(dir.join("case.json")).unwrap()).unwrap();
    // Tables without TTLs may predate the recorded query time: any time will do.
    let now = case["select"]["queried_at_s"].as_i64().unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64)
    });
    (all["rows"].as_array().unwrap().clone(), now)
}

/// Compare after a round trip through text (the `arbitrary_precision`
/// numbers of both sides then compare by value).
fn canon(v: &[J]) -> Vec<J> {
    v.iter()
        .map(|x| serde_json::from_str::<J>(&x.to_string()).unwrap())
        .collect()
}

fn check_table(table: &str, n: usize, ck_names: &[&str]) {
    for run in ["nb", "oa", "da"] {
        let dirs: Vec<PathBuf> = (1..=n)
            .map(|i| fixtures().join(format!("{run}_{table}_{i}")))
            .collect();
        if !dirs.iter().all(|d| d.is_dir()) {
            eprintln!("skipping {run}_{table}: fixtures absent");
            continue;
        }
        let t = open(&dirs);
        let order: Vec<usize> = (0..n).collect();
        let (schema, units) = merged(&t, &order);
        let (want, now) = truth(&dirs[0]);
        let got = cql_rows(&schema, &units, "pk", ck_names, now);
        let (got, want) = (canon(&got), canon(&want));
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, w, "{run}_{table}: row {i} differs");
        }
        assert_eq!(got.len(), want.len(), "{run}_{table}: row count");
        // The order of the inputs does not change the result.
        let rev: Vec<usize> = (0..n).rev().collect();
        let (_, units_rev) = merged(&t, &rev);
        assert_eq!(
            normalized(units_rev),
            normalized(units.clone()),
            "{run}_{table}: input order changed the merge"
        );
    }
}

#[test]
fn merge_overwrite_equals_select() {
    check_table("merge_overwrite", 3, &["ck"]);
}

#[test]
fn merge_partition_delete_equals_select() {
    check_table("merge_partition_delete", 3, &["ck"]);
}

#[test]
fn merge_range_equals_select() {
    check_table("merge_range", 3, &["c1", "c2"]);
}

#[test]
fn merge_collections_equals_select() {
    check_table("merge_collections", 3, &["ck"]);
}

#[test]
fn deletes_merge_equals_select() {
    check_table("deletes_merge", 2, &["ck"]);
}

/// Merging one sstable gives its own fragments; merging it with a copy of
/// itself too.
#[test]
fn one_sstable_and_self_copy() {
    for case in [
        "nb_deletes",
        "oa_range_tombstones",
        "da_collections",
        "nb_counters",
    ] {
        let dir = fixtures().join(case);
        if !dir.is_dir() {
            continue;
        }
        let t = open(&[dir.clone(), dir]);
        let (schema, one) = merged(&t, &[0]);
        // The sstable read alone, mapped the same way.
        let mut r = ScanReader::new(&t.ssts[0], &t.headers[0]).unwrap();
        let map = schema.column_map(&t.headers[0]);
        let mut alone = Vec::new();
        while let Some(f) = r.next_fragment().unwrap() {
            let u = unit_of(&f, &map, 0);
            // The merge drops empty static rows, as Cassandra's iterators do.
            if matches!(&u, Unit::Static(s) if s.is_empty()) {
                continue;
            }
            alone.push(u);
        }
        assert_eq!(
            normalized(one.clone()),
            normalized(alone),
            "{case}: one sstable"
        );
        let (_, twice) = merged(&t, &[0, 1]);
        assert_eq!(
            normalized(twice),
            normalized(one),
            "{case}: with a copy of itself"
        );
    }
}

// ------------------------------------------------------- reconcile rules

fn cell(ts: i64, flags: u8, ldt: Option<i64>, value: &[u8]) -> MCell {
    MCell {
        flags,
        timestamp: ts,
        local_deletion_time: ldt,
        ttl: if flags & cell_flags::IS_EXPIRING != 0 {
            Some(10)
        } else {
            None
        },
        path: None,
        value: value.to_vec(),
        counter_column: false,
    }
}

#[test]
fn cell_tie_breaks() {
    use reconcile::{reconcile_cells, Winner};
    let live = cell(10, 0, None, b"b");
    let tomb = cell(10, cell_flags::IS_DELETED, Some(5), b"");
    let exp = cell(10, cell_flags::IS_EXPIRING, Some(100), b"a");
    let exp_later = cell(10, cell_flags::IS_EXPIRING, Some(200), b"a");
    // Higher timestamp first.
    assert_eq!(
        reconcile_cells(&cell(11, 0, None, b"a"), &tomb),
        Winner::Left
    );
    // Tombstone or expiring beats live at the same timestamp.
    assert_eq!(reconcile_cells(&live, &tomb), Winner::Right);
    assert_eq!(reconcile_cells(&live, &exp), Winner::Right);
    // Tombstone beats expiring.
    assert_eq!(reconcile_cells(&exp, &tomb), Winner::Right);
    // Two expiring: the later expiration.
    assert_eq!(reconcile_cells(&exp, &exp_later), Winner::Right);
    // Two live: the greater value, unsigned.
    assert_eq!(
        reconcile_cells(&cell(10, 0, None, &[0x7f]), &cell(10, 0, None, &[0x80])),
        Winner::Right
    );
}

/// Each marker tie names the rule `liveness_supersedes` applied, and the
/// named winner is the one it picks.
#[test]
fn marker_tie_breaks() {
    use crate::data::LivenessInfo;
    use reconcile::{liveness_supersedes, marker_tie_break_rule};
    let m = |ttl: Option<i64>, exp: Option<i64>, expired: bool| LivenessInfo {
        timestamp: 10,
        ttl,
        local_expiration_time: exp,
        expired,
    };
    let live = m(None, None, false);
    let expiring = m(Some(60), Some(100), false);
    let expiring_later = m(Some(60), Some(200), false);
    let expired = m(None, Some(100), true);
    for (w, l, rule) in [
        (live, live, "identical versions"),
        (
            expiring,
            live,
            "an expiring marker beats a non-expiring one",
        ),
        (expiring_later, expiring, "the later expiration wins"),
        (expired, expiring_later, "an expired marker wins"),
    ] {
        assert_eq!(marker_tie_break_rule(&w, &l), rule);
        assert!(!liveness_supersedes(&l, &w), "{rule}");
    }
}

fn shard(
    kind: crate::value::ShardKind,
    id: u8,
    clock: i64,
    count: i64,
) -> crate::value::CounterShard {
    crate::value::CounterShard {
        kind,
        counter_id: crate::value::Uuid([id; 16]),
        clock,
        count,
    }
}

#[test]
fn counters_merge_by_shard() {
    use crate::value::ShardKind::{Global, Local};
    let a = reconcile::encode_counter(&[shard(Global, 1, 5, 50), shard(Global, 3, 1, 7)]);
    let b = reconcile::encode_counter(&[shard(Global, 1, 6, 60), shard(Global, 2, 1, 1)]);
    let m = reconcile::merge_counter_contexts(&a, &b).unwrap();
    let want = reconcile::encode_counter(&[
        shard(Global, 1, 6, 60),
        shard(Global, 2, 1, 1),
        shard(Global, 3, 1, 7),
    ]);
    assert_eq!(m, want);
    // Local shards add up.
    let a = reconcile::encode_counter(&[shard(Local, 1, 1, 2)]);
    let b = reconcile::encode_counter(&[shard(Local, 1, 2, 3)]);
    let m = reconcile::merge_counter_contexts(&a, &b).unwrap();
    assert_eq!(m, reconcile::encode_counter(&[shard(Local, 1, 3, 5)]));
    // A counter tombstone wins whatever its timestamp.
    let mut live = cell(100, 0, None, &a);
    live.counter_column = true;
    let mut tomb = cell(1, cell_flags::IS_DELETED, Some(1), b"");
    tomb.counter_column = true;
    assert_eq!(
        reconcile::reconcile_cells(&live, &tomb),
        reconcile::Winner::Right
    );
}

// ------------------------------------------------------------ properties

fn int_schema() -> MergedSchema {
    let h = SerializationHeader {
        min_timestamp: 0,
        min_local_deletion_time: 0,
        min_ttl: 0,
        raw_deltas: (0, 0, 0),
        partition_key_type: CqlType::Native(Native::Int),
        partition_key_type_string: "org.apache.cassandra.db.marshal.Int32Type".into(),
        clustering_types: vec![CqlType::Native(Native::Int)],
        clustering_type_strings: vec!["org.apache.cassandra.db.marshal.Int32Type".into()],
        static_columns: vec![],
        regular_columns: vec![ColumnDef {
            name: "v".into(),
            name_bytes: b"v".to_vec(),
            ty: CqlType::Native(Native::Int),
            type_string: "org.apache.cassandra.db.marshal.Int32Type".into(),
        }],
    };
    let f = crate::Version::parse("nb").unwrap().features();
    MergedSchema::union(&[("t", &h)], f).unwrap()
}

/// A generated partition: key, rows (clustering, timestamp, tombstone) and
/// an optional range tombstone (from, to, timestamp).
type Part = (i32, Vec<(i32, u8, bool)>, Option<(i32, i32, u8)>);

/// One random sstable: partitions (sorted by token) of rows (sorted) and
/// closed range tombstones; every timestamp distinct across sstables (`salt`).
fn gen_units(parts: &[Part], salt: i64) -> Vec<Unit> {
    let p = Partitioner::Murmur3;
    let mut parts: Vec<_> = parts.to_vec();
    parts.sort_by(|a, b| p.compare_decorated(&a.0.to_be_bytes(), &b.0.to_be_bytes()));
    parts.dedup_by_key(|x| x.0);
    let mut out = Vec::new();
    for (k, rows, rt) in parts {
        out.push(Unit::Start {
            key: k.to_be_bytes().to_vec(),
            deletion: DeletionTime::LIVE,
            position: DataPos(0),
            header_end: DataPos(0),
        });
        let mut rows = rows.clone();
        rows.sort_by_key(|r| r.0);
        rows.dedup_by_key(|r| r.0);
        let mut items: Vec<(i32, u8, Unit)> = Vec::new();
        if let Some((a, b, t)) = rt {
            let (a, b) = (a.min(b), a.max(b));
            let d = DeletionTime {
                marked_for_delete_at: t as i64 * 10 + salt,
                local_deletion_time: 1,
            };
            let mk = |v: i32, kind| MMarker {
                position: DataPos(0),
                source: 0,
                bound: OwnedClustering {
                    kind,
                    values: vec![Some(v.to_be_bytes().to_vec())],
                },
                deletion: MarkerDeletion::Bound(d),
            };
            items.push((
                a,
                0,
                Unit::Marker(Box::new(mk(a, BoundKind::InclStartBound))),
            ));
            items.push((b, 2, Unit::Marker(Box::new(mk(b, BoundKind::InclEndBound)))));
        }
        let shadowed = |c: i32, ts: i64| {
            rt.is_some_and(|(a, b, t)| a.min(b) <= c && c <= a.max(b) && ts <= t as i64 * 10 + salt)
        };
        for (c, ts, tomb) in rows {
            let ts = ts as i64 * 10 + salt;
            // A flushed sstable holds nothing its own tombstones shadow.
            if shadowed(c, ts) {
                continue;
            }
            let cellv = MCell {
                flags: if tomb { cell_flags::IS_DELETED } else { 0 },
                timestamp: ts,
                local_deletion_time: tomb.then_some(1),
                ttl: None,
                path: None,
                value: if tomb {
                    vec![]
                } else {
                    (c ^ ts as i32).to_be_bytes().to_vec()
                },
                counter_column: false,
            };
            items.push((
                c,
                1,
                Unit::Row(Box::new(MRow {
                    position: DataPos(0),
                    size: 0,
                    source: 0,
                    clustering: OwnedClustering {
                        kind: BoundKind::Clustering,
                        values: vec![Some(c.to_be_bytes().to_vec())],
                    },
                    liveness: (!tomb).then_some(LivenessInfo {
                        timestamp: ts,
                        ttl: None,
                        local_expiration_time: None,
                        expired: false,
                    }),
                    deletion: None,
                    scylla_shadowable_deletion: None,
                    cells: vec![MColumnData::Simple {
                        column: 0,
                        cell: cellv,
                    }],
                })),
            ));
        }
        items.sort_by_key(|(c, rank, _)| (*c, *rank));
        out.extend(items.into_iter().map(|(_, _, u)| u));
        out.push(Unit::End);
    }
    out
}

fn merge_vecs(schema: &MergedSchema, inputs: Vec<Vec<Unit>>) -> Vec<Unit> {
    let sources: Vec<Box<dyn UnitSource>> = inputs
        .into_iter()
        .map(|v| Box::new(VecSource::new(v)) as Box<dyn UnitSource>)
        .collect();
    let mut m = Merger::new(sources, schema, Partitioner::Murmur3);
    let mut out = Vec::new();
    while let Some(s) = m.next_partition().unwrap() {
        out.push(Unit::Start {
            key: s.key,
            deletion: s.deletion,
            position: DataPos(0),
            header_end: DataPos(0),
        });
        while let Some(u) = m.next_unfiltered().unwrap() {
            out.push(u);
        }
        out.push(Unit::End);
    }
    normalized(out)
}

type Parts = Vec<Part>;

fn parts() -> impl Strategy<Value = Parts> {
    proptest::collection::vec(
        (
            0i32..6,
            proptest::collection::vec((0i32..12, any::<u8>(), any::<bool>()), 0..8),
            proptest::option::of((0i32..12, 0i32..12, any::<u8>())),
        ),
        0..5,
    )
}

proptest! {
    /// The order of the inputs does not change the merge; merging one input
    /// gives it back; merging an input with itself gives the same as once.
    #[test]
    fn merge_properties(a in parts(), b in parts(), c in parts()) {
        let schema = int_schema();
        let (ua, ub, uc) = (gen_units(&a, 1), gen_units(&b, 2), gen_units(&c, 3));
        let abc = merge_vecs(&schema, vec![ua.clone(), ub.clone(), uc.clone()]);
        let cba = merge_vecs(&schema, vec![uc.clone(), ub.clone(), ua.clone()]);
        prop_assert_eq!(&abc, &cba);
        let bac = merge_vecs(&schema, vec![ub.clone(), ua.clone(), uc]);
        prop_assert_eq!(&abc, &bac);
        let one = merge_vecs(&schema, vec![ua.clone()]);
        prop_assert_eq!(&one, &normalized(ua.clone()));
        let twice = merge_vecs(&schema, vec![ua.clone(), ua]);
        prop_assert_eq!(&twice, &one);
    }
}

fn marker(v: i32, kind: BoundKind, ts: i64) -> Unit {
    Unit::Marker(Box::new(MMarker {
        position: DataPos(0),
        source: 0,
        bound: OwnedClustering {
            kind,
            values: vec![Some(v.to_be_bytes().to_vec())],
        },
        deletion: MarkerDeletion::Bound(DeletionTime {
            marked_for_delete_at: ts,
            local_deletion_time: 1,
        }),
    }))
}

fn start(k: i32, deletion: DeletionTime) -> Unit {
    Unit::Start {
        key: k.to_be_bytes().to_vec(),
        deletion,
        position: DataPos(0),
        header_end: DataPos(0),
    }
}

/// Overlapping range tombstones of two sstables become the bound and
/// boundary markers compaction writes: [2, 8]@10 and [5, 12]@20 give
/// [2, 5)@10, [5, 12]@20.
#[test]
fn overlapping_ranges_become_boundaries() {
    let schema = int_schema();
    let a = vec![
        start(1, DeletionTime::LIVE),
        marker(2, BoundKind::InclStartBound, 10),
        marker(8, BoundKind::InclEndBound, 10),
        Unit::End,
    ];
    let b = vec![
        start(1, DeletionTime::LIVE),
        marker(5, BoundKind::InclStartBound, 20),
        marker(12, BoundKind::InclEndBound, 20),
        Unit::End,
    ];
    let got = merge_vecs(&schema, vec![a, b]);
    let d = |ts| DeletionTime {
        marked_for_delete_at: ts,
        local_deletion_time: 1,
    };
    let boundary = Unit::Marker(Box::new(MMarker {
        position: DataPos(0),
        source: 0,
        bound: OwnedClustering {
            kind: BoundKind::ExclEndInclStartBoundary,
            values: vec![Some(5i32.to_be_bytes().to_vec())],
        },
        deletion: MarkerDeletion::Boundary {
            end: d(10),
            start: d(20),
        },
    }));
    let want = vec![
        start(1, DeletionTime::LIVE),
        marker(2, BoundKind::InclStartBound, 10),
        boundary,
        marker(12, BoundKind::InclEndBound, 20),
        Unit::End,
    ];
    assert_eq!(got, normalized(want));
}

/// A partition deletion in one sstable shadows older rows and range
/// tombstones of another; newer cells survive.
#[test]
fn partition_deletion_shadows_older_data() {
    let schema = int_schema();
    let row = |c: i32, ts: i64| {
        Unit::Row(Box::new(MRow {
            position: DataPos(0),
            size: 0,
            source: 0,
            clustering: OwnedClustering {
                kind: BoundKind::Clustering,
                values: vec![Some(c.to_be_bytes().to_vec())],
            },
            liveness: Some(LivenessInfo {
                timestamp: ts,
                ttl: None,
                local_expiration_time: None,
                expired: false,
            }),
            deletion: None,
            scylla_shadowable_deletion: None,
            cells: vec![MColumnData::Simple {
                column: 0,
                cell: MCell {
                    flags: 0,
                    timestamp: ts,
                    local_deletion_time: None,
                    ttl: None,
                    path: None,
                    value: vec![0, 0, 0, 1],
                    counter_column: false,
                },
            }],
        }))
    };
    let pd = DeletionTime {
        marked_for_delete_at: 50,
        local_deletion_time: 1,
    };
    let a = vec![
        start(1, DeletionTime::LIVE),
        row(1, 40),
        marker(2, BoundKind::InclStartBound, 30),
        marker(3, BoundKind::InclEndBound, 30),
        row(4, 60),
        Unit::End,
    ];
    let b = vec![start(1, pd), Unit::End];
    let got = merge_vecs(&schema, vec![a, b]);
    assert_eq!(got, normalized(vec![start(1, pd), row(4, 60), Unit::End]));
}

/// Collects explain records (tests).
#[derive(Clone, Default)]
struct Collect(std::rc::Rc<std::cell::RefCell<Vec<explain::Explained>>>);

impl explain::Explainer for Collect {
    fn record(&mut self, e: &explain::Explained) {
        self.0.borrow_mut().push(e.clone());
    }
}

/// `merge_vecs` with an explainer attached (sources numbered by input).
fn merge_vecs_explained(
    schema: &MergedSchema,
    inputs: Vec<Vec<Unit>>,
) -> (Vec<Unit>, Vec<explain::Explained>) {
    let sources: Vec<Box<dyn UnitSource>> = inputs
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            let v = v
                .into_iter()
                .map(|u| match u {
                    Unit::Row(r) => Unit::Row(Box::new(MRow { source: i, ..*r })),
                    Unit::Static(r) => Unit::Static(Box::new(MRow { source: i, ..*r })),
                    Unit::Marker(m) => Unit::Marker(Box::new(MMarker { source: i, ..*m })),
                    u => u,
                })
                .collect();
            Box::new(VecSource::new(v)) as Box<dyn UnitSource>
        })
        .collect();
    let mut m = Merger::new(sources, schema, Partitioner::Murmur3);
    let records = Collect::default();
    m.explain(Box::new(records.clone()), 0);
    let mut out = Vec::new();
    while let Some(s) = m.next_partition().unwrap() {
        out.push(Unit::Start {
            key: s.key,
            deletion: s.deletion,
            position: DataPos(0),
            header_end: DataPos(0),
        });
        while let Some(u) = m.next_unfiltered().unwrap() {
            out.push(u);
        }
        out.push(Unit::End);
    }
    let r = records.0.borrow().clone();
    (normalized(out), r)
}

proptest! {
    /// Explaining does not change the merge, and every record agrees with
    /// it: a row explained as present holds live data in the output, a
    /// present cell is the output's cell (its timestamp, from a source that
    /// holds it), and every version named comes from an input that holds it.
    #[test]
    fn explain_agrees_with_the_merge(a in parts(), b in parts(), c in parts()) {
        let schema = int_schema();
        let inputs = vec![gen_units(&a, 1), gen_units(&b, 2), gen_units(&c, 3)];
        let plain = merge_vecs(&schema, inputs.clone());
        let (got, records) = merge_vecs_explained(&schema, inputs.clone());
        prop_assert_eq!(&got, &plain);
        // The output rows by (partition, clustering).
        let mut rows = std::collections::HashMap::new();
        let mut key = Vec::new();
        for u in &got {
            match u {
                Unit::Start { key: k, .. } => key = k.clone(),
                Unit::Row(r) => {
                    rows.insert((key.clone(), r.clustering.clone()), r.clone());
                }
                _ => {}
            }
        }
        let holds_cell = |src: usize, k: &[u8], cl: &OwnedClustering, col: usize, ts: i64| {
            let mut in_part = false;
            inputs[src].iter().any(|u| match u {
                Unit::Start { key: kk, .. } => {
                    in_part = kk.as_slice() == k;
                    false
                }
                Unit::Row(r) if in_part && &r.clustering == cl => r.cells.iter().any(|cd| {
                    matches!(cd, MColumnData::Simple { column, cell } if *column == col && cell.timestamp == ts)
                }),
                _ => false,
            })
        };
        for e in &records {
            match &e.item {
                explain::Item::Partition { key: k } => key = k.clone(),
                explain::Item::Row { .. } => {
                    let cl = e.clustering.clone().unwrap();
                    let out = rows.get(&(key.clone(), cl.clone()));
                    let live = out.is_some_and(|r| row_has_live(r, 0));
                    prop_assert_eq!(e.absent.is_none(), live, "{:?}", e);
                }
                explain::Item::Cell { column, path: None, .. } => {
                    let cl = e.clustering.clone().unwrap();
                    let w = e.winner.as_ref().unwrap();
                    prop_assert!(holds_cell(w.source, &key, &cl, *column, w.timestamp), "{:?}", e);
                    for s in &e.shadowed {
                        prop_assert!(
                            holds_cell(s.version.source, &key, &cl, *column, s.version.timestamp),
                            "{:?}", e
                        );
                    }
                    if e.absent.is_none() {
                        let r = rows.get(&(key.clone(), cl)).unwrap();
                        let found = r.cells.iter().any(|cd| matches!(cd,
                            MColumnData::Simple { column: c, cell } if c == column && cell.timestamp == w.timestamp));
                        prop_assert!(found, "{:?}", e);
                    }
                }
                _ => {}
            }
        }
    }
}

/// Runs `check` on two readers of each of `cases`' sstable that exists
/// (fixtures of one sstable), and says how many there were.
fn with_two_readers(cases: &[&str], mut check: impl FnMut(&str, ScanReader, ScanReader)) -> usize {
    let mut found = 0;
    for case in cases {
        let dir = fixtures().join(case);
        if !dir.is_dir() {
            continue;
        }
        let t = open(&[dir]);
        let a = ScanReader::new(&t.ssts[0], &t.headers[0]).unwrap();
        let b = ScanReader::new(&t.ssts[0], &t.headers[0]).unwrap();
        check(case, a, b);
        found += 1;
    }
    found
}

/// A held row (`ScanReader::next_or_hold`, then `last_row`) is the row
/// `next_fragment` reads at the same place: same clustering, same marker
/// flag, same decoded row.
#[test]
fn held_rows_decode_as_scanned_rows() {
    let mut rows = 0;
    let cases = [
        "nb_clustering",
        "nb_deletes",
        "da_collections",
        "nb_counters",
        "da_wide_desc",
    ];
    with_two_readers(&cases, |case, mut scan, mut hold| {
        let mut key = OwnedPrefix::default();
        while let Some(f) = scan.next_fragment().unwrap() {
            let next = hold.next_or_hold(&mut key).unwrap().unwrap();
            match (f, next) {
                (Fragment::Row(want), Next::Held { marked }) => {
                    assert!(key.same_as(&want.clustering), "{case}");
                    assert_eq!(
                        marked,
                        want.liveness.is_some() || want.deletion.is_some(),
                        "{case}"
                    );
                    let got = hold.last_row().unwrap().unwrap().into_decoded().unwrap();
                    assert_eq!(got, want, "{case}");
                    rows += 1;
                }
                (Fragment::Row(_), Next::Fragment(g)) => panic!("{case}: row not held: {g:?}"),
                (want, Next::Held { .. }) => panic!("{case}: {want:?} held"),
                (want, Next::Fragment(got)) => {
                    assert_eq!(got.into_decoded().unwrap(), want, "{case}");
                    assert!(hold.last_row().unwrap().is_none(), "{case}");
                }
            }
        }
        assert!(hold.next_or_hold(&mut key).unwrap().is_none(), "{case}");
    });
    assert!(rows > 0, "no fixture found");
}

/// `units` with sources dropped and cells' row-relative flags cleared (rows
/// handed over as stored keep them; owned and reconciled rows do not need them).
fn without_sources(units: Vec<Unit>) -> Vec<Unit> {
    let plain = |r: &mut MRow| {
        r.source = 0;
        for cd in &mut r.cells {
            let cells: &mut [MCell] = match cd {
                MColumnData::Simple { cell, .. } => std::slice::from_mut(cell),
                MColumnData::Complex { cells, .. } => cells,
            };
            for c in cells {
                c.flags &= !(cell_flags::USE_ROW_TIMESTAMP | cell_flags::USE_ROW_TTL);
            }
        }
    };
    units
        .into_iter()
        .map(|mut u| {
            match &mut u {
                Unit::Row(r) | Unit::Static(r) => plain(r),
                Unit::Marker(m) => m.source = 0,
                _ => {}
            }
            u
        })
        .collect()
}

/// The merged stream of `t`'s sstables in `order` as `next_merged_with`
/// gives it: rows handed over as stored or reconciled on borrowed cells,
/// copied into owned units to compare.
fn merged_handed(t: &Table, order: &[usize]) -> Vec<Unit> {
    let (schema, sources) = scan_sources(t, order);
    let map = schema.column_map(&schema.header);
    let mut m = Merger::new(sources, &schema, t.partitioner.clone());
    let mut out = Vec::new();
    while let Some(s) = m.next_partition().unwrap() {
        out.push(Unit::Start {
            key: s.key,
            deletion: s.deletion,
            position: DataPos(0),
            header_end: DataPos(0),
        });
        if let Some(r) = s.static_row {
            out.push(Unit::Static(Box::new(r)));
        }
        loop {
            let mut handed = None;
            let next = m
                .next_merged_with(&mut |r: RowOut<'_, '_>| -> Result<()> {
                    let row = match r {
                        RowOut::Stored(r) => map.row(&r.into_decoded()?, 0),
                        RowOut::Merged(r) => map.row(r, 0),
                    };
                    handed = Some(row);
                    Ok(())
                })
                .unwrap();
            match next {
                None => break,
                Some(Merged::Unit(u)) => out.push(u),
                Some(Merged::Passed(_)) => {
                    out.push(Unit::Row(Box::new(
                        handed.take().expect("a row handed over"),
                    )));
                }
            }
        }
        out.push(Unit::End);
    }
    out
}

/// Rows handed over by `next_merged_with` (as stored, or reconciled on
/// borrowed cells) are the rows the owned merge gives, for the merge
/// fixtures in both input orders and an sstable merged with a copy of itself
/// (every row then has two equal versions).
#[test]
fn handed_rows_equal_owned_rows() {
    let mut checked = 0;
    for run in ["nb", "oa", "da"] {
        for (table, n) in [
            ("merge_overwrite", 3),
            ("merge_partition_delete", 3),
            ("merge_range", 3),
            ("merge_collections", 3),
            ("deletes_merge", 2),
        ] {
            let dirs: Vec<PathBuf> = (1..=n)
                .map(|i| fixtures().join(format!("{run}_{table}_{i}")))
                .collect();
            if !dirs.iter().all(|d| d.is_dir()) {
                continue;
            }
            let t = open(&dirs);
            let fwd: Vec<usize> = (0..n).collect();
            let rev: Vec<usize> = (0..n).rev().collect();
            let copy = vec![0, 0];
            for order in [fwd, rev, copy] {
                let (_, owned) = merged(&t, &order);
                let handed = merged_handed(&t, &order);
                assert_eq!(
                    without_sources(handed),
                    without_sources(owned),
                    "{run}_{table} {order:?}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 0, "no merge fixture found");
}

/// A row read by `ScanReader::next_row_or` decodes as `next_fragment`'s,
/// and so does the same row built again from its kept head
/// (`keep_head`, then `held_row`); anything else goes to `other`, equal to
/// what `next_fragment` reads.
#[test]
fn kept_heads_build_rows_as_scanned() {
    let mut rows = 0;
    let mut others = 0;
    let cases = [
        "nb_clustering",
        "nb_deletes",
        "da_collections",
        "da_wide_desc",
    ];
    with_two_readers(&cases, |case, mut scan, mut lazy| {
        while let Some(want) = scan.next_fragment().unwrap() {
            let mut other = false;
            let row = lazy
                .next_row_or(|f| {
                    let got = f.expect("a fragment").into_decoded().unwrap();
                    assert_eq!(got, want, "{case}");
                    other = true;
                    Ok(())
                })
                .unwrap();
            match (want, row) {
                (Fragment::Row(want), Some(r)) => {
                    let head = r.head();
                    assert!(head.is_some(), "{case}: no head");
                    assert_eq!(r.into_decoded().unwrap(), want, "{case}");
                    lazy.keep_head(head);
                    let again = lazy.held_row().unwrap().into_decoded().unwrap();
                    assert_eq!(again, want, "{case}");
                    rows += 1;
                }
                (want, None) => {
                    assert!(other, "{case}: {want:?} not given");
                    assert!(
                        !matches!(want, Fragment::Row(_)),
                        "{case}: row not returned"
                    );
                    assert!(lazy.held_row().is_err(), "{case}");
                    others += 1;
                }
                (want, Some(r)) => panic!("{case}: {want:?} read as a row: {r:?}"),
            }
        }
        let mut end = None;
        assert!(lazy
            .next_row_or(|f| {
                end = Some(f.is_none());
                Ok(())
            })
            .unwrap()
            .is_none());
        assert_eq!(end, Some(true), "{case}");
    });
    assert!(rows > 0, "no fixture found");
    assert!(others > 0, "no fragment but rows");
}
