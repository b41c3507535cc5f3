//! Schema tests: CQL parsing, rendering, and agreement with the fixtures'
//! serialization headers.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use super::*;
use crate::statistics::Statistics;

fn t(s: &str) -> CqlType {
    CqlType::parse(s).unwrap()
}

#[test]
fn parses_primary_key_forms_and_options() {
    let s = TableSchema::from_cql(
        "-- comment\n/* block */ CREATE TABLE IF NOT EXISTS Ks.\"MyTable\" (\n\
         region text, bucket int, \"Ck\" timestamp, v list<text>, s int STATIC, // trailing\n\
         PRIMARY KEY ((region, bucket), \"Ck\")) WITH CLUSTERING ORDER BY (\"Ck\" DESC) AND comment = 'x;y';",
    )
    .unwrap();
    assert_eq!(s.keyspace.as_deref(), Some("ks"));
    assert_eq!(s.table.as_deref(), Some("MyTable"));
    assert_eq!(
        s.partition_key_type(),
        t("CompositeType(UTF8Type,Int32Type)")
    );
    assert_eq!(s.clustering_types(), vec![t("ReversedType(TimestampType)")]);
    assert_eq!(s.static_columns[0].name, "s");
    assert_eq!(s.regular_columns[0].ty, t("ListType(UTF8Type)"));
    let cql = s.to_create_table("ks", "MyTable");
    assert!(cql.contains("CREATE TABLE ks.\"MyTable\""), "{cql}");
    assert!(
        cql.contains("PRIMARY KEY ((region, bucket), \"Ck\")"),
        "{cql}"
    );
    assert!(
        cql.contains("WITH CLUSTERING ORDER BY (\"Ck\" DESC);"),
        "{cql}"
    );
    assert_eq!(TableSchema::from_cql(&cql).unwrap(), s);

    let s = TableSchema::from_cql(
        "create table t (k int primary key, v counter) with compact storage;",
    )
    .unwrap();
    assert!(s.compact_storage);
    assert_eq!(s.regular_columns[0].ty, t("CounterColumnType"));
    let s = TableSchema::from_cql("CREATE TABLE t (a int, b int, c int, PRIMARY KEY (a, b, c));")
        .unwrap();
    assert_eq!(s.clustering.len(), 2);
    assert!(
        TableSchema::from_cql("CREATE TABLE t (a int, b nosuchtype, PRIMARY KEY (a));").is_err()
    );
    assert!(TableSchema::from_cql("CREATE TABLE t (a int, b int);").is_err());
    assert!(TableSchema::from_cql("CREATE TABLE t (a int, PRIMARY KEY (z));").is_err());
    assert!(TableSchema::from_cql("INSERT INTO t (a) VALUES (1);").is_err());
}

#[test]
fn frozen_and_udt_types_match_header_conventions() {
    let s = TableSchema::from_cql(
        "CREATE TYPE ks.address (street text, tags frozen<set<text>>);\n\
         CREATE TYPE ks.person (name text, home frozen<address>);\n\
         CREATE TABLE ks.t (id int PRIMARY KEY, addr address, faddr frozen<address>, p frozen<person>,\n\
           setlist list<frozen<set<int>>>, nested map<text, frozen<list<int>>>, tup frozen<tuple<int, text>>,\n\
           vec vector<float, 3>, fm frozen<map<int, frozen<list<int>>>>, c 'org.apache.cassandra.db.marshal.BytesType');",
    )
    .unwrap();
    let ty = |n: &str| s.column(n).unwrap().ty.class_string();
    let m = "org.apache.cassandra.db.marshal.";
    assert_eq!(
        ty("addr"),
        format!("{m}UserType(ks,61646472657373,737472656574:{m}UTF8Type,74616773:{m}FrozenType({m}SetType({m}UTF8Type)))")
    );
    assert_eq!(
        ty("faddr"),
        format!("{m}FrozenType({m}UserType(ks,61646472657373,737472656574:{m}UTF8Type,74616773:{m}SetType({m}UTF8Type)))")
    );
    assert_eq!(
        ty("setlist"),
        format!("{m}ListType({m}FrozenType({m}SetType({m}Int32Type)))")
    );
    assert_eq!(
        ty("nested"),
        format!("{m}MapType({m}UTF8Type,{m}FrozenType({m}ListType({m}Int32Type)))")
    );
    assert_eq!(ty("tup"), format!("{m}TupleType({m}Int32Type,{m}UTF8Type)"));
    assert_eq!(ty("vec"), format!("{m}VectorType({m}FloatType , 3)"));
    assert_eq!(
        ty("fm"),
        format!("{m}FrozenType({m}MapType({m}Int32Type,{m}ListType({m}Int32Type)))")
    );
    assert_eq!(s.column("c").unwrap().ty, t("BytesType"));
    // Types come out dependencies first; the statement round-trips.
    let cql = s.to_create_table("ks", "t");
    let a = cql.find("CREATE TYPE ks.address").unwrap();
    let p = cql.find("CREATE TYPE ks.person").unwrap();
    assert!(a < p, "{cql}");
    assert!(cql.contains("    addr address,"), "{cql}");
    assert!(cql.contains("    faddr frozen<address>,"), "{cql}");
    assert!(cql.contains("    setlist list<frozen<set<int>>>,"), "{cql}");
    assert!(cql.contains("    tup frozen<tuple<int, text>>,"), "{cql}");
    assert!(cql.contains("    vec vector<float, 3>"), "{cql}");
    assert!(cql.contains("    tags frozen<set<text>>"), "{cql}");
    let back = TableSchema::from_cql(&cql).unwrap();
    for c in s.regular_columns.iter() {
        assert_eq!(back.column(&c.name).unwrap().ty, c.ty, "{}", c.name);
    }
}

#[test]
fn header_schema_has_generated_names_and_round_trips() {
    let mut h = crate::statistics::SerializationHeader {
        min_timestamp: 0,
        min_local_deletion_time: 0,
        min_ttl: 0,
        raw_deltas: (0, 0, 0),
        partition_key_type: t("CompositeType(UTF8Type,Int32Type)"),
        partition_key_type_string: String::new(),
        clustering_types: vec![t("Int32Type"), t("ReversedType(UTF8Type)")],
        clustering_type_strings: vec![],
        static_columns: vec![],
        regular_columns: vec![],
    };
    h.regular_columns.push(crate::statistics::ColumnDef {
        name: "select".into(),
        name_bytes: b"select".to_vec(),
        ty: t("CounterColumnType"),
        type_string: String::new(),
    });
    let s = TableSchema::from_header(&h);
    assert!(s.names_generated);
    let cql = s.to_create_table("ks", "t");
    assert!(cql.contains("pk0 text"), "{cql}");
    assert!(cql.contains("\"select\" counter"), "{cql}");
    assert!(cql.contains("PRIMARY KEY ((pk0, pk1), ck0, ck1)"), "{cql}");
    assert!(
        cql.contains("WITH CLUSTERING ORDER BY (ck0 ASC, ck1 DESC)"),
        "{cql}"
    );
    let back = TableSchema::from_cql(&cql).unwrap();
    assert_eq!(back.partition_key_type(), h.partition_key_type);
    assert_eq!(back.clustering_types(), h.clustering_types);
    // Scylla.db names replace the generated ones when the shape matches.
    let sc = crate::scylla::ScyllaSchema {
        table_id: crate::scylla::DiskUuid { msb: 0, lsb: 0 },
        version: crate::scylla::DiskUuid { msb: 0, lsb: 0 },
        keyspace: "ks".into(),
        table: "tb".into(),
        columns: ["region", "bucket", "c1", "c2"]
            .iter()
            .enumerate()
            .map(|(i, n)| crate::scylla::SchemaColumn {
                kind: if i < 2 { 1 } else { 2 },
                name: n.to_string(),
                type_name: String::new(),
            })
            .collect(),
    };
    let s = TableSchema::from_header_with_scylla(&h, Some(&sc));
    assert!(!s.names_generated);
    assert_eq!(s.partition_key[1].name, "bucket");
    assert_eq!(s.clustering[1].0.name, "c2");
    assert_eq!(s.table.as_deref(), Some("tb"));
}

#[test]
fn corpus_foo_cql() {
    let Some(corpus) = crate::test_support::root() else {
        return;
    };
    let p = corpus.join("cassandra/bloom-filter-ka/foo.cql");
    let Ok(text) = std::fs::read_to_string(&p) else {
        eprintln!("skipping: no {}", p.display());
        return;
    };
    let s = TableSchema::from_cql(&text).unwrap();
    assert_eq!(s.keyspace.as_deref(), Some("foo"));
    assert_eq!(s.table.as_deref(), Some("atable"));
    assert_eq!(s.partition_key[0].name, "pk");
    assert_eq!(s.regular_columns[0].name, "val");
}

fn fixtures_dir() -> PathBuf {
    match std::env::var_os("SSTKIT_FIXTURES") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/cassandra"),
    }
}

/// Every fixture's schema.cql parses to the types its Statistics.db header
/// stores, and the header-built schema renders CQL that parses back to the
/// same types.
#[test]
fn fixture_schemas_agree_with_headers() {
    let Ok(rd) = std::fs::read_dir(fixtures_dir()) else {
        eprintln!("skipping: no fixtures");
        return;
    };
    let mut dirs: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let mut n = 0;
    let mut bad = Vec::new();
    for d in &dirs {
        let Ok(cql) = std::fs::read_to_string(d.join("schema.cql")) else {
            continue;
        };
        let Some(stats) = std::fs::read_dir(d).ok().and_then(|r| {
            r.flatten()
                .map(|e| e.path())
                .find(|p| p.to_string_lossy().ends_with("-Statistics.db"))
        }) else {
            continue;
        };
        let v = crate::descriptor::Descriptor::from_path(&stats)
            .unwrap()
            .0
            .version;
        let h = Statistics::parse(&std::fs::read(&stats).unwrap(), v.features())
            .unwrap()
            .header
            .unwrap();
        let name = d.file_name().unwrap().to_string_lossy().into_owned();
        let s = match TableSchema::from_cql(&cql) {
            Ok(s) => s,
            Err(e) => {
                bad.push(format!("{name}: {e}"));
                continue;
            }
        };
        n += 1;
        let mut diffs: Vec<String> = Vec::new();
        let mut cmp = |what: &str, a: String, b: String| {
            if a != b {
                diffs.push(format!("{name} {what}: cql {a} header {b}"));
            }
        };
        cmp(
            "key",
            format!("{:?}", s.partition_key_type()),
            format!("{:?}", h.partition_key_type),
        );
        cmp(
            "clustering",
            format!("{:?}", s.clustering_types()),
            format!("{:?}", h.clustering_types),
        );
        let cols = |v: &[SchemaColumn]| {
            let mut x: Vec<String> = v.iter().map(|c| format!("{}:{:?}", c.name, c.ty)).collect();
            x.sort();
            x
        };
        let hcols = |v: &[crate::statistics::ColumnDef]| {
            let mut x: Vec<String> = v.iter().map(|c| format!("{}:{:?}", c.name, c.ty)).collect();
            x.sort();
            x
        };
        // A flush writes into the header only the columns its memtable held:
        // the schema's columns not written to this sstable are left out.
        let name = |c: &str| c.split(':').next().unwrap_or_default().to_owned();
        let written = |schema: Vec<String>, header: &[String]| {
            schema
                .into_iter()
                .filter(|c| header.iter().any(|h| name(h) == name(c)))
                .collect::<Vec<_>>()
        };
        let (hs_static, hs_regular) = (hcols(&h.static_columns), hcols(&h.regular_columns));
        cmp(
            "static",
            format!("{:?}", written(cols(&s.static_columns), &hs_static)),
            format!("{hs_static:?}"),
        );
        cmp(
            "regular",
            format!("{:?}", written(cols(&s.regular_columns), &hs_regular)),
            format!("{hs_regular:?}"),
        );
        // Rendering round trips, with real names and with generated ones.
        let ks = s.keyspace.clone().unwrap_or_default();
        let tb = s.table.clone().unwrap_or_default();
        match TableSchema::from_cql(&s.to_create_table(&ks, &tb)) {
            Ok(back) => cmp("cql round trip", format!("{back:?}"), format!("{s:?}")),
            Err(e) => cmp("rendered CQL parses", e.to_string(), String::new()),
        }
        let hs = TableSchema::from_header(&h);
        match TableSchema::from_cql(&hs.to_create_table(&ks, &tb)) {
            Ok(back) => {
                cmp(
                    "header round trip key",
                    format!("{:?}", back.partition_key_type()),
                    format!("{:?}", h.partition_key_type),
                );
                cmp(
                    "header round trip clustering",
                    format!("{:?}", back.clustering_types()),
                    format!("{:?}", h.clustering_types),
                );
                cmp(
                    "header round trip regular",
                    format!("{:?}", cols(&back.regular_columns)),
                    format!("{:?}", hcols(&h.regular_columns)),
                );
            }
            Err(e) => cmp(
                "header CQL parses",
                e.to_string(),
                hs.to_create_table(&ks, &tb),
            ),
        }
        bad.extend(diffs);
    }
    eprintln!("schema fixtures: {n} schemas compared");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
