//! `partitions`: the csv equals Cassandra's `sstablepartitions --csv` and the
//! percentiles its summary, on every fixture case whose tool outputs
//! `fixtures/make-partitions-expected.sh` stored; data-directory walks;
//! `--top`; the index-only path's IO; text width.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::{fixtures, scratch_dir, sstkit};

/// The `-u` the expected outputs were made with.
const NOW: &str = "1800000000";

struct Case {
    dir: PathBuf,
    keyspace: String,
    table_dir: String,
    sstable: String,
}

fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for dir in crate::util::fixture_cases() {
        if !dir.join("sstablepartitions.txt").is_file() {
            continue;
        }
        let c: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("case.json")).unwrap()).unwrap();
        v.push(Case {
            keyspace: c["keyspace"].as_str().unwrap().to_string(),
            table_dir: c["table_dir"].as_str().unwrap().to_string(),
            sstable: c["sstable"].as_str().unwrap().to_string(),
            dir,
        });
    }
    assert!(v.len() >= 9, "expected outputs for nb, oa and da cases");
    v
}

/// Copy the case's sstable into `root/<keyspace>/<table_dir>/`, the layout
/// sstablepartitions was run in; the Data.db path relative to `root`.
fn stage(c: &Case, root: &Path) -> String {
    let dir = root.join(&c.keyspace).join(&c.table_dir);
    std::fs::create_dir_all(&dir).unwrap();
    for e in std::fs::read_dir(&c.dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if name.starts_with(&format!("{}-", c.sstable)) {
            std::fs::copy(&p, dir.join(&name)).unwrap();
        }
    }
    format!("{}/{}/{}-Data.db", c.keyspace, c.table_dir, c.sstable)
}

/// Run `partitions` on the staged sstable; paths in the output are made
/// relative to `root`, as in the expected files.
fn run(root: &Path, rel: &str, args: &[&str]) -> String {
    let abs = root.join(rel);
    let mut all: Vec<String> = vec!["partitions".into(), "--now".into(), NOW.into()];
    all.extend(args.iter().map(|s| s.to_string()));
    all.push(abs.display().to_string());
    let r = sstkit(&all);
    assert_eq!(r.code, 0, "{all:?}: {}", r.stderr);
    r.stdout.replace(&format!("{}/", root.display()), "")
}

#[test]
fn csv_equals_sstablepartitions() {
    let runs: [(&str, &[&str]); 4] = [
        ("all", &["--min-size", "0"]),
        ("tombstones", &["--min-tombstones", "1"]),
        ("mixed", &["--min-size", "1KiB", "--min-rows", "31"]),
        ("y", &["--partitions-only", "--min-size", "0"]),
    ];
    let root = scratch_dir("partitions", "csv");
    let mut compared = 0;
    for c in cases() {
        let rel = stage(&c, &root);
        for (name, args) in runs {
            let expected =
                std::fs::read_to_string(c.dir.join(format!("sstablepartitions-{name}.csv")))
                    .unwrap();
            let mut a = vec!["-o", "csv"];
            a.extend_from_slice(args);
            let ours = run(&root, &rel, &a);
            assert_eq!(ours, expected, "{} {name}", c.dir.display());
            compared += expected.lines().count() - 1;
        }
    }
    assert!(compared > 1000, "only {compared} partition lines compared");
}

/// Java's `prettyPrintMemory(n, " ")`, to compare with its summary text.
fn pretty(n: u64) -> String {
    let p = if n == 0 {
        0
    } else {
        (63 - n.leading_zeros()) / 10
    };
    if p == 0 {
        return format!("{n} B");
    }
    let unit = b" KMGTPE"[p as usize] as char;
    format!("{:.3} {unit}iB", n as f64 / (1u64 << (p * 10)) as f64)
}

/// The `~pNN` rows of a sstablepartitions summary: (label, [size, rows, cells, tombstones]).
fn java_percentiles(text: &str) -> Vec<(String, [String; 4])> {
    text.lines()
        .filter(|l| l.trim_start().starts_with("~p"))
        .map(|l| {
            let t: Vec<&str> = l.split_whitespace().collect();
            let n = t.len();
            (
                t[0].trim_start_matches('~').to_string(),
                [
                    t[1..n - 3].join(" "),
                    t[n - 3].to_string(),
                    t[n - 2].to_string(),
                    t[n - 1].to_string(),
                ],
            )
        })
        .collect()
}

/// The percentiles sstkit prints, and their fractions.
const PCT: [(&str, f64); 6] = [
    ("p50", 0.5),
    ("p75", 0.75),
    ("p90", 0.9),
    ("p95", 0.95),
    ("p99", 0.99),
    ("p999", 0.999),
];

/// The (size, rows, cells, tombstones) of every partition of a case, from
/// sstablepartitions' csv.
fn csv_stats(dir: &Path) -> Vec<[u64; 4]> {
    let csv = std::fs::read_to_string(dir.join("sstablepartitions-all.csv")).unwrap();
    csv.lines()
        .skip(1)
        .map(|l| {
            let v: Vec<u64> = l[l.rfind("\",").unwrap() + 2..]
                .split(',')
                .skip(3)
                .take(4)
                .map(|x| x.parse().unwrap())
                .collect();
            [v[0], v[1], v[2], v[3]]
        })
        .collect()
}

/// The text view: a summary whose percentiles are exact (never above the
/// max), headers that count what is listed, then the list sorted by --by,
/// largest first.
#[test]
fn text_lists_the_largest_first_and_counts_what_it_lists() {
    let case = fixtures().join("nb_deletes");
    let stats = csv_stats(&case);
    let text = |extra: &[&str]| {
        let mut a = vec!["partitions", "-o", "text", "--now", NOW];
        a.extend_from_slice(extra);
        a.push(case.to_str().unwrap());
        let r = sstkit(&a);
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.stdout
    };
    // The printed list: (size, rows, cells, tombstones) as printed.
    let listed = |out: &str| -> Vec<Vec<String>> {
        out.lines()
            .skip_while(|l| !l.starts_with("partition key"))
            .skip(1)
            .map(|l| {
                let t: Vec<&str> = l.split_whitespace().collect();
                let n = t.len();
                vec![
                    t[1..n - 3].join(" "),
                    t[n - 3].into(),
                    t[n - 2].into(),
                    t[n - 1].into(),
                ]
            })
            .collect()
    };
    for (extra, col, n) in [
        (&[][..], 0, 20),
        (&["--top", "5"][..], 0, 5),
        (&["--by", "tombstones", "--top", "8"][..], 3, 8),
        (&["--by", "rows"][..], 1, 20),
    ] {
        let out = text(extra);
        assert!(
            out.contains(&format!("{} partitions, {n} listed", stats.len()))
                && out.contains(&format!("{n} listed of {} partitions", stats.len())),
            "{extra:?}:\n{out}"
        );
        let got = listed(&out);
        assert_eq!(got.len(), n, "{extra:?}:\n{out}");
        let mut want: Vec<u64> = stats.iter().map(|s| s[col]).collect();
        want.sort_unstable_by(|a, b| b.cmp(a));
        let shown: Vec<String> = want[..n]
            .iter()
            .map(|&v| if col == 0 { pretty(v) } else { v.to_string() })
            .collect();
        let printed: Vec<String> = got.iter().map(|r| r[col].clone()).collect();
        assert_eq!(printed, shown, "{extra:?}:\n{out}");
    }
    // Exact percentiles: p95 of the sizes is a size that occurred, not above the max.
    let out = text(&[]);
    let row = |label: &str| -> String {
        let l = out
            .lines()
            .find(|l| l.split_whitespace().next() == Some(label))
            .unwrap_or_else(|| panic!("no {label} row:\n{out}"));
        let t: Vec<&str> = l.split_whitespace().collect();
        t[1..t.len() - 3].join(" ")
    };
    let mut sizes: Vec<u64> = stats.iter().map(|s| s[0]).collect();
    sizes.sort_unstable();
    let rank = (0.95 * sizes.len() as f64).ceil() as usize;
    assert_eq!(row("p95"), pretty(sizes[rank - 1]), "{out}");
    assert_eq!(row("max"), pretty(*sizes.last().unwrap()), "{out}");
    assert!(!out.contains("~p"), "{out}");
}

#[test]
fn percentiles_equal_sstablepartitions_and_extremes_are_exact() {
    let root = scratch_dir("partitions", "pct");
    for c in cases() {
        let rel = stage(&c, &root);
        let java = std::fs::read_to_string(c.dir.join("sstablepartitions.txt")).unwrap();
        let out: Value = serde_json::from_str(&run(&root, &rel, &["-o", "json"])).unwrap();
        let sst = &out["sstables"][0];
        let rows = java_percentiles(&java);
        assert_eq!(rows.len(), 6, "{}", c.dir.display());
        for (p, want) in rows {
            // The estimate sstablepartitions prints is kept apart from the exact figure.
            let stat = |k: &str| sst["stats"][k]["estimated"][&p].as_u64().unwrap();
            let ours = [
                pretty(stat("size")),
                stat("rows").to_string(),
                stat("cells").to_string(),
                stat("tombstones").to_string(),
            ];
            assert_eq!(ours, want, "{} {p}", c.dir.display());
        }
        let count: u64 = java
            .lines()
            .find_map(|l| l.trim().strip_prefix("count"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert_eq!(sst["count"], count, "{}", c.dir.display());
        // Exact min/max from every partition sstablepartitions lists (its own
        // min skips zeros, so it is not the reference).
        let csv = std::fs::read_to_string(c.dir.join("sstablepartitions-all.csv")).unwrap();
        let cols = [(4, "size"), (5, "rows"), (6, "cells"), (7, "tombstones")];
        for (col, name) in cols {
            let vals: Vec<u64> = csv
                .lines()
                .skip(1)
                .map(|l| {
                    // The key is the only quoted field and may hold commas.
                    let rest = &l[l.rfind("\",").unwrap() + 2..];
                    rest.split(',').nth(col - 1).unwrap().parse().unwrap()
                })
                .collect();
            assert_eq!(vals.len() as u64, count);
            let s = &sst["stats"][name];
            // The percentiles are exact: nearest rank over every partition.
            let mut sorted = vals.clone();
            sorted.sort_unstable();
            for (p, q) in PCT {
                let rank = ((q * count as f64).ceil() as usize).clamp(1, sorted.len());
                assert_eq!(s[p], sorted[rank - 1], "{} {name} {p}", c.dir.display());
            }
            assert_eq!(s["exact"], true);
            assert_eq!(
                s["min"],
                *vals.iter().min().unwrap(),
                "{} {name}",
                c.dir.display()
            );
            assert_eq!(
                s["max"],
                *vals.iter().max().unwrap(),
                "{} {name}",
                c.dir.display()
            );
        }
    }
}

#[test]
fn top_keeps_the_largest_in_order() {
    let case = fixtures().join("nb_deletes");
    let csv = std::fs::read_to_string(case.join("sstablepartitions-all.csv")).unwrap();
    let mut tombs: Vec<u64> = csv
        .lines()
        .skip(1)
        .map(|l| {
            l[l.rfind("\",").unwrap() + 2..]
                .split(',')
                .nth(6)
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    tombs.sort_unstable_by(|a, b| b.cmp(a));
    let r = sstkit([
        "partitions",
        "-o",
        "ndjson",
        "--now",
        NOW,
        "--top",
        "4",
        "--by",
        "tombstones",
        case.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let got: Vec<u64> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "partition")
        .map(|v| v["tombstones"]["total"].as_u64().unwrap())
        .collect();
    assert_eq!(got, tombs[..4]);
}

#[test]
fn partitions_only_reads_little_of_data_db_on_wide_partitions() {
    for case in ["nb_wide", "da_wide"] {
        let dir = fixtures().join(case);
        let data_bytes = |extra: &[&str]| {
            let mut a = vec!["partitions", "-o", "json", "--io-stats=json"];
            a.extend_from_slice(extra);
            a.push(dir.to_str().unwrap());
            let r = sstkit(&a);
            assert_eq!(r.code, 0, "{}", r.stderr);
            let io: Value = serde_json::from_str(r.stderr.lines().last().unwrap()).unwrap();
            let out: Value = serde_json::from_str(&r.stdout).unwrap();
            let sizes: Vec<u64> = out["partitions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["size"].as_u64().unwrap())
                .collect();
            (
                io["components"]["data"]["bytes"].as_u64().unwrap_or(0),
                sizes,
            )
        };
        let (full, sizes_full) = data_bytes(&[]);
        let (index_only, sizes_index) = data_bytes(&["--partitions-only"]);
        assert_eq!(sizes_full, sizes_index, "{case}");
        assert!(
            index_only * 10 < full,
            "{case}: {index_only} bytes of Data.db read for sizes, {full} for everything"
        );
    }
}

#[test]
fn data_directory_walk_names_keyspace_table_and_snapshot() {
    let root = scratch_dir("partitions", "datadir");
    let cases = cases();
    let c = cases
        .iter()
        .find(|c| c.dir.ends_with("nb_deletes"))
        .unwrap();
    let rel = stage(c, &root);
    // The same sstable in a snapshot of the table.
    let snap = root
        .join(&c.keyspace)
        .join(&c.table_dir)
        .join("snapshots/before-drop");
    std::fs::create_dir_all(&snap).unwrap();
    for e in std::fs::read_dir(root.join(&rel).parent().unwrap()).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            std::fs::copy(&p, snap.join(p.file_name().unwrap())).unwrap();
        }
    }
    let sstables = |extra: &[&str]| -> Vec<Value> {
        let mut a = vec!["partitions", "-o", "ndjson", "-y", "--recursive"];
        a.extend_from_slice(extra);
        let r = sstkit(a.iter().copied().chain([root.to_str().unwrap()]));
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.stdout
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|v| v["type"] == "sstable")
            .collect()
    };
    let live = sstables(&[]);
    assert_eq!(live.len(), 1);
    assert_eq!(live[0]["keyspace"], c.keyspace.as_str());
    assert_eq!(live[0]["table"], "deletes");
    assert_eq!(live[0]["snapshot"], Value::Null);
    assert_eq!(live[0]["generation"], "1");
    assert_eq!(live[0]["version"], "nb");
    let with = sstables(&["--snapshots"]);
    assert_eq!(with.len(), 2);
    assert_eq!(with[1]["snapshot"], "before-drop");
    assert_eq!(sstables(&["--snapshots", "--table", "deletes"]).len(), 2);
    let r = sstkit([
        "partitions",
        "-r",
        "--table",
        "nope",
        root.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 2, "no sstable of that table: usage error");
}

#[test]
fn text_fits_80_columns() {
    let r = sstkit([
        "partitions",
        "-o",
        "text",
        "--now",
        NOW,
        "fixtures/cassandra/nb_collections/",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.lines().count() > 20);
    for l in r.stdout.lines() {
        assert!(
            l.chars().count() <= 80,
            "{} columns: {l}",
            l.chars().count()
        );
    }
}

#[test]
fn records_match_the_schema() {
    let text =
        std::fs::read_to_string(crate::util::repo().join("docs/schemas/partitions.schema.json"))
            .unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for extra in [&[][..], &["--partitions-only"][..]] {
        let mut a = vec!["partitions", "-o", "ndjson", "--now", NOW];
        a.extend_from_slice(extra);
        a.extend([
            "fixtures/cassandra/nb_deletes_merge_1/",
            "fixtures/cassandra/nb_deletes_merge_2/",
        ]);
        let r = sstkit(&a);
        assert_eq!(r.code, 0, "{}", r.stderr);
        for l in r.stdout.lines() {
            let v: Value = serde_json::from_str(l).unwrap();
            let mut errs = Vec::new();
            let line = serde_json::json!({ "$ref": "#/$defs/line" });
            crate::schema_check::check(&v, &line, &schema, "$", &mut errs);
            assert!(errs.is_empty(), "{l}: {errs:?}");
            seen.insert(v["type"].as_str().unwrap().to_string());
        }
    }
    assert_eq!(seen.len(), 3, "{seen:?}");
}

/// The outputs the README's tour shows are what sstkit prints on the
/// fixtures staged as its data directory.
#[test]
fn readme_tour_is_current() {
    let root = scratch_dir("readme", "tour");
    let data = root.join("var/lib/cassandra/data");
    let table = data.join("shop/orders-3fbb65f0e68911f1b41253bd8bb18368");
    let snap = table.join("snapshots/before-upgrade");
    std::fs::create_dir_all(&snap).unwrap();
    for case in ["nb_deletes_merge_1", "nb_deletes_merge_2"] {
        for e in std::fs::read_dir(fixtures().join(case)).unwrap() {
            let p = e.unwrap().path();
            let n = p.file_name().unwrap().to_string_lossy().to_string();
            if n.starts_with("nb-") {
                std::fs::copy(&p, table.join(&n)).unwrap();
                if n.starts_with("nb-1-") {
                    std::fs::copy(&p, snap.join(&n)).unwrap();
                }
            }
        }
    }
    let readme = std::fs::read_to_string(crate::util::repo().join("README.md")).unwrap();
    let mut shown = 0;
    for block in readme
        .split("```text\n$ cd /var/lib/cassandra/data\n")
        .skip(1)
        .chain(
            readme
                .split("```text\n")
                .skip(1)
                .filter(|b| b.starts_with("$ sstkit")),
        )
    {
        let block = &block[..block.find("```").unwrap()];
        let mut lines = block.lines().peekable();
        while let Some(cmd) = lines.next() {
            let Some(args) = cmd.strip_prefix("$ sstkit ") else {
                continue;
            };
            let mut want = String::new();
            while lines.peek().is_some_and(|l| !l.starts_with("$ ")) {
                want.push_str(lines.next().unwrap());
                want.push('\n');
            }
            let mut words: Vec<String> = Vec::new();
            for w in args.split_whitespace() {
                match w.strip_suffix("*/") {
                    // The shell's glob: the one table folder.
                    Some(prefix) if prefix.ends_with("orders-") => {
                        words.push(format!("{prefix}3fbb65f0e68911f1b41253bd8bb18368/"))
                    }
                    _ => words
                        .push(w.replace("orders-*/", "orders-3fbb65f0e68911f1b41253bd8bb18368/")),
                }
            }
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_sstkit"))
                .args(&words)
                .current_dir(&data)
                .env("COLUMNS", "80")
                .output()
                .unwrap();
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                want,
                "README: sstkit {args}"
            );
            shown += 1;
        }
    }
    assert!(shown >= 4, "only {shown} commands of the tour checked");
}

#[test]
fn readme_screenshot_is_current() {
    let r = sstkit([
        "partitions",
        "-o",
        "text",
        "--now",
        NOW,
        "--min-tombstones",
        "4",
        "fixtures/cassandra/nb_deletes/",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let readme = std::fs::read_to_string(crate::util::repo().join("README.md")).unwrap();
    assert!(
        readme.contains(&format!("```text\n{}```", r.stdout)),
        "README's partitions screenshot differs from:\n{}",
        r.stdout
    );
}
