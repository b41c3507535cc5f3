//! The table-level reports besides `partitions`: `expired-blockers` and
//! `timestamps` (against Cassandra's sstableexpiredblockers and the
//! Statistics.db ranges), `info` (droppable tombstones against
//! sstablemetadata -g, one line per sstable, keyspace/table/snapshot
//! names), the keyspace/table filters of every command, and
//! `dump-statistics` text.

use std::path::Path;

use serde_json::Value;

use crate::util::{fixtures, scratch_dir, sstkit};

/// The `-u` the expected outputs were made with.
const NOW: &str = "1800000000";

/// Two sstables of one table in a `keyspace/table-id/` folder.
fn stage_merge_pair(name: &str) -> crate::util::Scratch {
    let root = scratch_dir("blockers", name);
    let table = root.join("oracle/deletes_merge-3fbb65f0e68911f1b41253bd8bb18368");
    std::fs::create_dir_all(&table).unwrap();
    for case in ["nb_deletes_merge_1", "nb_deletes_merge_2"] {
        for e in std::fs::read_dir(fixtures().join(case)).unwrap() {
            let p = e.unwrap().path();
            let n = p.file_name().unwrap().to_string_lossy().to_string();
            if n.starts_with("nb-") {
                std::fs::copy(&p, table.join(&n)).unwrap();
            }
        }
    }
    root
}

#[test]
fn expired_blockers_groups_by_table_and_reads_statistics() {
    let root = stage_merge_pair("json");
    let r = sstkit([
        "expired-blockers",
        "-o",
        "json",
        "--now",
        NOW,
        "--gc-grace",
        "1d",
        "-r",
        root.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["gc_before"], 1_800_000_000i64 - 86_400);
    let tables = v["tables"].as_array().unwrap();
    assert_eq!(tables.len(), 1, "{v}");
    assert_eq!(tables[0]["table"], "oracle.deletes_merge");
    assert_eq!(tables[0]["sstables"], 2);
    // Both hold live data (max local deletion time: none, per sstablemetadata.txt):
    // neither is expired, so nothing is blocked.
    assert_eq!(tables[0]["expired"], serde_json::json!([]));
    assert_eq!(tables[0]["blockers"], serde_json::json!([]));
    // Separate folders are separate tables.
    let r = sstkit([
        "expired-blockers",
        "-o",
        "json",
        "fixtures/cassandra/nb_deletes_merge_1/",
        "fixtures/cassandra/nb_deletes_merge_2/",
    ]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["tables"].as_array().unwrap().len(), 2);
    let r = sstkit([
        "expired-blockers",
        "--gc-grace",
        "ten days",
        "fixtures/cassandra/nb_deletes/",
    ]);
    assert_eq!(r.code, 2, "a bad duration is a usage error");
}

#[test]
fn timestamps_buckets_agree_and_span_the_statistics_range() {
    let totals = |bucket: &str, case: &str| -> Vec<(i64, u64, u64)> {
        let r = sstkit(["timestamps", "-o", "ndjson", "--bucket", bucket, case]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.stdout
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                (
                    v["start"].as_i64().unwrap(),
                    v["cells"].as_u64().unwrap(),
                    v["tombstones"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    for case in ["nb_deletes", "oa_range_tombstones", "da_collections"] {
        let dir = fixtures().join(case);
        let path = dir.to_str().unwrap();
        let sum = |v: &[(i64, u64, u64)]| v.iter().fold((0, 0), |a, x| (a.0 + x.1, a.1 + x.2));
        let hours = totals("hour", path);
        let days = totals("day", path);
        let months = totals("month", path);
        assert!(sum(&hours).0 > 0, "{case}: no cells counted");
        assert_eq!(sum(&hours), sum(&days), "{case}");
        assert_eq!(sum(&days), sum(&months), "{case}");
        // The first and last hours hold Statistics.db's min and max timestamps
        // (as sstablemetadata printed them).
        let meta = std::fs::read_to_string(dir.join("sstablemetadata.txt")).unwrap();
        let ts = |what: &str| -> i64 {
            let l = meta.lines().find(|l| l.starts_with(what)).unwrap();
            l[l.rfind('(').unwrap() + 1..l.rfind(')').unwrap()]
                .parse()
                .unwrap()
        };
        let hour = |us: i64| us.div_euclid(1_000_000) - us.div_euclid(1_000_000).rem_euclid(3600);
        assert_eq!(
            hours.first().unwrap().0,
            hour(ts("Minimum timestamp")),
            "{case}"
        );
        assert_eq!(
            hours.last().unwrap().0,
            hour(ts("Maximum timestamp")),
            "{case}"
        );
    }
}

#[test]
fn expired_blockers_and_timestamps_documents_match_their_schemas() {
    let root = stage_merge_pair("schema");
    let runs: [(&str, Vec<&str>); 2] = [
        (
            "expired-blockers",
            vec![
                "expired-blockers",
                "-o",
                "json",
                "-r",
                root.to_str().unwrap(),
            ],
        ),
        (
            "timestamps",
            vec!["timestamps", "-o", "json", "-r", root.to_str().unwrap()],
        ),
    ];
    for (name, args) in runs {
        let p = crate::util::repo().join(format!("docs/schemas/{name}.schema.json"));
        let schema: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        let r = sstkit(&args);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        let mut errs = Vec::new();
        crate::schema_check::check(&v, &schema, &schema, "$", &mut errs);
        assert!(errs.is_empty(), "{name}: {errs:?}");
    }
}

/// `info`'s droppable-tombstone ratio for `case` at `now` and `gc_grace`.
fn droppable(case: &Path, now: i64, gc_grace: i64) -> f64 {
    let r = sstkit([
        "info",
        "-o",
        "json",
        "--now",
        &now.to_string(),
        "--gc-grace",
        &gc_grace.to_string(),
        case.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let sst = v["sstables"].as_object().unwrap().values().next().unwrap();
    sst["droppable_tombstones"].as_f64().unwrap()
}

#[test]
fn info_droppable_tombstones_equal_sstablemetadata_g() {
    let mut compared = 0;
    let mut interpolated = 0;
    for dir in crate::util::fixture_cases() {
        for kind in ["g0", "gmid"] {
            let Ok(text) = std::fs::read_to_string(dir.join(format!("sstablemetadata-{kind}.txt")))
            else {
                continue;
            };
            // "# now=<s> gc_grace=<s>": the clock read just before the tool ran.
            let head: Vec<i64> = text
                .lines()
                .next()
                .unwrap()
                .split(|c: char| !c.is_ascii_digit())
                .filter(|t| !t.is_empty())
                .map(|t| t.parse().unwrap())
                .collect();
            let (now, g) = (head[0], head[1]);
            let java: f64 = text
                .lines()
                .find_map(|l| l.strip_prefix("Estimated droppable tombstones: "))
                .unwrap()
                .parse()
                .unwrap();
            let ours = droppable(&dir, now, g);
            if ours == java {
                compared += 1;
                continue;
            }
            // The tool read the clock a few seconds later: a gc_before between two
            // drop-time bins interpolates, and grows with it.
            let later = droppable(&dir, now + 30, g);
            assert!(
                ours < java && java <= later,
                "{} {kind}: sstablemetadata {java}, sstkit {ours} at now={now}, {later} 30 s later",
                dir.display()
            );
            interpolated += 1;
        }
    }
    assert!(compared >= 20, "only {compared} exact comparisons");
    assert!(interpolated >= 1, "no interpolated comparison");
}

#[test]
fn info_on_many_sstables_is_one_line_each_then_table_totals() {
    let root = stage_merge_pair("info");
    // Every command walks a data directory with -r: dump-toc finds both sstables.
    let r = sstkit(["dump-toc", "-o", "ndjson", "-r", root.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ssts: std::collections::BTreeSet<String> = r
        .stdout
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["sstable"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(ssts.len(), 2, "{}", r.stdout);
    let r = sstkit(["dump-toc", root.to_str().unwrap()]);
    assert_eq!(
        r.code, 2,
        "without -r a data directory's top holds no sstable"
    );
    let dir = root.join("oracle/deletes_merge-3fbb65f0e68911f1b41253bd8bb18368");
    let r = sstkit([
        "info",
        "--now",
        NOW,
        dir.to_str().unwrap(),
        "fixtures/cassandra/oa_deletes/",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(lines[0].starts_with("sstable") && lines[0].contains("droppable"));
    // Each line names its table, whole in a pipe.
    assert!(
        lines[1].starts_with("oracle.deletes_merge/nb-1-big ")
            && lines[2].starts_with("oracle.deletes_merge/nb-2-big "),
        "{}",
        r.stdout
    );
    assert!(
        lines[3].starts_with("fixtures/cassandra/oa_deletes/oa-1-big "),
        "{}",
        r.stdout
    );
    let totals = lines
        .iter()
        .position(|l| l.starts_with("totals per table"))
        .unwrap();
    assert!(
        lines[totals + 2].starts_with("oracle.deletes_merge"),
        "{}",
        r.stdout
    );
    assert!(
        lines[totals + 2].split_whitespace().nth(1) == Some("2"),
        "{}",
        r.stdout
    );
    assert!(
        !r.stdout.contains('…'),
        "a name cut in a pipe:\n{}",
        r.stdout
    );
}

/// `info -r` on a data directory with a snapshot and backups: every line
/// names its keyspace.table and whether it is a snapshot or a backup, whole
/// in a pipe however narrow COLUMNS is, so `grep TABLE` finds them.
#[test]
fn info_lines_name_table_snapshot_and_backup() {
    let root = stage_merge_pair("info-sets");
    let table = root.join("oracle/deletes_merge-3fbb65f0e68911f1b41253bd8bb18368");
    for sub in ["snapshots/before-upgrade", "backups"] {
        let d = table.join(sub);
        std::fs::create_dir_all(&d).unwrap();
        for e in std::fs::read_dir(&table).unwrap() {
            let p = e.unwrap().path();
            if p.is_file() && p.to_string_lossy().contains("nb-1-big") {
                std::fs::copy(&p, d.join(p.file_name().unwrap())).unwrap();
            }
        }
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sstkit"))
        .args(["info", "-r", "--snapshots", "--backups", "--now", NOW])
        .arg(root.to_str().unwrap())
        .env("COLUMNS", "40")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<&str> = text
        .lines()
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(
        rows,
        [
            "oracle.deletes_merge/nb-1-big",
            "oracle.deletes_merge/nb-2-big",
            "oracle.deletes_merge/backups/nb-1-big",
            "oracle.deletes_merge/snapshots/before-upgrade/nb-1-big",
        ],
        "{text}"
    );
    // `grep -c deletes_merge`: the four sstables and the three sets of the totals.
    assert_eq!(
        text.lines().filter(|l| l.contains("deletes_merge")).count(),
        7,
        "{text}"
    );
    assert!(!text.contains('…'), "{text}");
}

/// A data directory of two tables (one with a snapshot) and the `--keyspace`
/// / `--table` filters of every command that walks it; each record names
/// its sstable's keyspace, table, snapshot, generation, format and version.
#[test]
fn keyspace_table_filters_and_sstable_refs_on_every_command() {
    let root = stage_merge_pair("filters");
    let other = root.join("shop/orders-0123456789abcdef0123456789abcdef");
    let snap = other.join("snapshots/s1");
    for dir in [&other, &snap] {
        std::fs::create_dir_all(dir).unwrap();
        for e in std::fs::read_dir(fixtures().join("oa_deletes")).unwrap() {
            let p = e.unwrap().path();
            let n = p.file_name().unwrap().to_string_lossy().to_string();
            if n.starts_with("oa-") {
                std::fs::copy(&p, dir.join(&n)).unwrap();
            }
        }
    }
    let root_s = root.to_str().unwrap();
    // (keyspace, table, snapshot) of every NDJSON record's sstable_ref.
    let refs = |command: &str, extra: &[&str]| -> std::collections::BTreeSet<String> {
        let mut a = vec![command, "-o", "ndjson", "-r"];
        a.extend_from_slice(extra);
        a.push(root_s);
        let r = sstkit(a.iter().copied());
        assert_eq!(r.code, 0, "{command} {extra:?}: {}", r.stderr);
        r.stdout
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                let s = &v["sstable_ref"];
                assert!(
                    s["generation"].is_string() && s["version"].is_string(),
                    "{l}"
                );
                assert!(s["format"] == "big", "{l}");
                format!("{} {} {}", s["keyspace"], s["table"], s["snapshot"])
            })
            .collect()
    };
    let set = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect();
    // A snapshot's sstables (hard links of the live ones) are totalled apart.
    let r = sstkit(["partitions", "-o", "json", "-r", "--snapshots", root_s]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let tables: Vec<(String, u64)> = v["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["table"].as_str().unwrap().to_string(),
                t["sstables"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(
        tables.contains(&("shop.orders".to_string(), 1))
            && tables.contains(&("shop.orders (snapshot s1)".to_string(), 1)),
        "{tables:?}"
    );
    for command in [
        "dump-toc",
        "info",
        "dump-statistics",
        "validate",
        "validate-checksums",
    ] {
        assert_eq!(
            refs(command, &[]),
            set(&[
                r#""oracle" "deletes_merge" null"#,
                r#""shop" "orders" null"#
            ]),
            "{command}"
        );
        assert_eq!(
            refs(command, &["--keyspace", "shop", "--snapshots"]),
            set(&[r#""shop" "orders" null"#, r#""shop" "orders" "s1""#]),
            "{command}"
        );
        assert_eq!(
            refs(command, &["--table", "deletes_merge"]),
            set(&[r#""oracle" "deletes_merge" null"#]),
            "{command}"
        );
    }
    // The JSON document names each sstable of "sstables" in "sstable_refs".
    let r = sstkit(["dump-toc", "-o", "json", "-r", "--table", "orders", root_s]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let paths: Vec<&String> = v["sstables"].as_object().unwrap().keys().collect();
    assert_eq!(paths.len(), 1, "{v}");
    assert_eq!(v["sstable_refs"][paths[0]]["table"], "orders", "{v}");
    assert_eq!(v["sstable_refs"][paths[0]]["version"], "oa", "{v}");
    // A filter leaves out sstables whose keyspace is unknown.
    let r = sstkit([
        "dump-toc",
        "--keyspace",
        "shop",
        "fixtures/cassandra/oa_deletes/",
    ]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    // dump-schema: --keyspace/--table name the CREATE statements, the filters are --only-*.
    let r = sstkit([
        "dump-schema",
        "-r",
        "--only-table",
        "orders",
        "--keyspace",
        "named",
        root_s,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("CREATE TABLE named.orders"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("deletes_merge"), "{}", r.stdout);
    // expired-blockers entries name their sstable too.
    let r = sstkit(["expired-blockers", "-o", "json", "-r", root_s, "--now", NOW]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["tables"].as_array().unwrap().len(), 2, "{v}");
    // token takes no data directory flags.
    let r = sstkit(["token", "--type", "int", "-r", "5"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
}

/// One sstable of a `sstableexpiredblockers` line: `[BigTableReader:big(path='nb-4-big-Data.db')
/// (minTS = 1, maxTS = 2, maxLDT = 3)]` as (file name, min, max, max local deletion time),
/// the "no deletion" maxLDT (Long.MAX_VALUE in 5.0, Integer.MAX_VALUE on disk) as None.
type Lifetime = (String, i64, i64, Option<i64>);

fn java_entries(text: &str) -> Vec<Lifetime> {
    text.split("(path='")
        .skip(1)
        .map(|s| {
            let name = s[..s.find('\'').unwrap()].to_string();
            let num = |k: &str| -> i64 {
                let at = s.find(k).unwrap() + k.len();
                let end = s[at..].find([',', ')']).unwrap();
                s[at..at + end].trim().parse().unwrap()
            };
            let ldt = num("maxLDT = ");
            let ldt = (ldt != i64::MAX && ldt != i32::MAX as i64).then_some(ldt);
            (name, num("minTS = "), num("maxTS = "), ldt)
        })
        .collect()
}

fn sstkit_entry(v: &Value) -> Lifetime {
    let path = v["sstable"].as_str().unwrap();
    let ldt = v["max_local_deletion_time"].as_i64().unwrap();
    (
        path.rsplit('/').next().unwrap().to_string(),
        v["min_timestamp"].as_i64().unwrap(),
        v["max_timestamp"].as_i64().unwrap(),
        (ldt != i64::MAX && ldt != i32::MAX as i64).then_some(ldt),
    )
}

/// `expired-blockers` lists what Cassandra's `sstableexpiredblockers` listed on the same four
/// sstables of one table (fixtures/make-expired-blockers-expected.sh), at the tool's time
/// and the table's gc_grace_seconds (0).
#[test]
fn expired_blockers_equal_sstableexpiredblockers() {
    let fx = crate::util::repo().join("fixtures/expiring");
    let truth = std::fs::read_to_string(fx.join("nb_expiring_1/sstableexpiredblockers.txt"))
        .expect("truth file");
    let now = std::fs::read_to_string(fx.join("nb_expiring_1/sstableexpiredblockers-now.txt"))
        .expect("the tool's time");
    let root = scratch_dir("blockers", "truth");
    let table = root.join("oracle/expiring-5184d120e96a11f19f3237d51e757713");
    std::fs::create_dir_all(&table).unwrap();
    for i in 1..=4 {
        for e in std::fs::read_dir(fx.join(format!("nb_expiring_{i}"))).unwrap() {
            let p = e.unwrap().path();
            let n = p.file_name().unwrap().to_string_lossy().to_string();
            if n.starts_with("nb-") {
                std::fs::copy(&p, table.join(&n)).unwrap();
            }
        }
    }
    // blocker -> the sstables it blocks, both sides with their lifetimes.
    let mut want: Vec<(Lifetime, Vec<Lifetime>)> = truth
        .lines()
        .filter(|l| l.contains(" blocks "))
        .map(|l| {
            let (b, blocked) = l.split_once(" blocks ").unwrap();
            let mut blocked = java_entries(blocked);
            blocked.sort();
            (java_entries(b).remove(0), blocked)
        })
        .collect();
    want.sort();
    assert_eq!(want.len(), 2, "the fixture has two blockers: {truth}");
    let r = sstkit([
        "expired-blockers",
        "-o",
        "json",
        "--gc-grace",
        "0",
        "--now",
        now.trim(),
        "-r",
        root.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let tables = v["tables"].as_array().unwrap();
    assert_eq!(tables.len(), 1, "{v}");
    let mut got: Vec<(Lifetime, Vec<Lifetime>)> = tables[0]["blockers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            let mut blocked: Vec<Lifetime> = b["blocks"]
                .as_array()
                .unwrap()
                .iter()
                .map(sstkit_entry)
                .collect();
            blocked.sort();
            (sstkit_entry(b), blocked)
        })
        .collect();
    got.sort();
    assert_eq!(got, want);
    // The expired sstable older than every live one is expired and blocked by none.
    let expired: Vec<Lifetime> = tables[0]["expired"]
        .as_array()
        .unwrap()
        .iter()
        .map(sstkit_entry)
        .collect();
    assert_eq!(expired.len(), 2, "{v}");
    assert!(expired.iter().any(|e| e.0 == "nb-3-big-Data.db"), "{v}");
}

/// `expired-blockers` text: dates instead of microseconds, "never" instead
/// of Long.MAX_VALUE, and each sstable's Data.db size.
#[test]
fn expired_blockers_text_shows_dates_and_sizes() {
    let fx = crate::util::repo().join("fixtures/expiring");
    let now = std::fs::read_to_string(fx.join("nb_expiring_1/sstableexpiredblockers-now.txt"))
        .expect("the tool's time");
    let root = scratch_dir("blockers", "text");
    let table = root.join("oracle/expiring-5184d120e96a11f19f3237d51e757713");
    std::fs::create_dir_all(&table).unwrap();
    for i in 1..=4 {
        for e in std::fs::read_dir(fx.join(format!("nb_expiring_{i}"))).unwrap() {
            let p = e.unwrap().path();
            let n = p.file_name().unwrap().to_string_lossy().to_string();
            if n.starts_with("nb-") {
                std::fs::copy(&p, table.join(&n)).unwrap();
            }
        }
    }
    let args = [
        "expired-blockers",
        "--gc-grace",
        "0",
        "--now",
        now.trim(),
        "-r",
    ];
    let r = sstkit(
        args.iter()
            .copied()
            .chain([root.to_str().unwrap(), "-o", "text"]),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = r.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        text.starts_with("oracle.expiring: 2 blockers (gc before "),
        "{text}"
    );
    assert!(
        !text.contains("9223372036854775807") && !text.contains("maxLDT"),
        "{text}"
    );
    let j = sstkit(
        args.iter()
            .copied()
            .chain([root.to_str().unwrap(), "-o", "json"]),
    );
    let v: Value = serde_json::from_str(&j.stdout).unwrap();
    for b in v["tables"][0]["blockers"].as_array().unwrap() {
        let size = b["data_size"].as_u64().unwrap();
        let file = std::path::Path::new(b["sstable"].as_str().unwrap());
        assert_eq!(size, std::fs::metadata(file).unwrap().len());
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let at = text.find(&name).unwrap_or_else(|| panic!("{name}: {text}"));
        assert!(
            text[at..].starts_with(&format!("{name} ({size} B, written 20")),
            "{text}"
        );
        let micros = b["min_timestamp"].as_i64().unwrap();
        assert!(
            !text.contains(&micros.to_string()),
            "raw microseconds: {text}"
        );
    }
    assert!(text.contains("expires never"), "{text}");
}

/// `dump-statistics` for people: percentiles in text, bars with --histograms, JSON in pipes.
#[test]
fn dump_statistics_text_has_percentiles_and_bars() {
    let data = "fixtures/cassandra/oa_deletes/oa-1-big-Data.db";
    let r = sstkit(["dump-statistics", "-o", "text", "--histograms", data]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let line = |name: &str| {
        r.stdout
            .lines()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("no {name}: {}", r.stdout))
            .to_string()
    };
    assert!(
        line("partition size ").contains("p50 1.083 KiB"),
        "{}",
        r.stdout
    );
    assert!(
        line("cells per partition").contains("p50 72"),
        "{}",
        r.stdout
    );
    assert!(
        line("max timestamp").contains("1700000002365524"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("(2023-11-14T22:13:22.365524Z)"),
        "{}",
        r.stdout
    );
    assert!(
        line("regular columns").contains("v1 text, v2 int"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("tombstone drop times\n"), "{}", r.stdout);
    assert!(
        r.stdout.lines().any(|l| l.ends_with('#')),
        "bars: {}",
        r.stdout
    );
    // Not a terminal: the JSON of before.
    let r = sstkit(["dump-statistics", data]);
    let v: Value = serde_json::from_str(&r.stdout).expect("json by default in a pipe");
    assert!(v["sstables"][data]["stats"]["estimated_partition_size"].is_array());
}
