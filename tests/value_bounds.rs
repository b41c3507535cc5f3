//! `read`'s clustering bounds are values, as in CQL's `WHERE`: on a
//! descending clustering column `--from 5 --to 10` is `ck >= 5 AND ck <= 10`
//! (rows 10 down to 5), not an empty range. Checked against the whole
//! partition's CQL rows (`-o cql`, what a node's SELECT returns) filtered by
//! the same predicate, on ASC and DESC tables of every format.

use serde_json::Value;

use crate::cql::select_queries;
use crate::util::{fixtures, sstkit};

/// The CQL rows of partition 5, with `bounds`.
fn rows(case: &str, bounds: &[&str]) -> Vec<Value> {
    let dir = fixtures().join(case);
    let mut args = vec!["read", "-k", "5", "-o", "cql", "--now", "1800000000"];
    args.extend_from_slice(bounds);
    let dir = dir.display().to_string();
    args.push(&dir);
    let r = sstkit(&args);
    assert_eq!(r.code, 0, "{case} {bounds:?}: {}", r.stderr);
    r.stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("a CQL row"))
        .collect()
}

#[test]
fn bounds_are_values_on_ascending_and_descending_columns() {
    let mut checked = 0;
    for run in ["nb", "oa", "da"] {
        for table in ["wide", "wide_desc"] {
            let case = format!("{run}_{table}");
            if !fixtures().join(&case).is_dir() {
                continue;
            }
            let all = rows(&case, &[]);
            assert!(all.len() > 20, "{case}: {} rows", all.len());
            let ck = |r: &Value| r["ck"].as_i64().expect("ck");
            for (bounds, keep) in [
                (&["--from", "5", "--to", "10"][..], (5, true, 10, true)),
                (&["--after", "5", "--before", "10"], (5, false, 10, false)),
                (&["--from", "7"], (7, true, i64::MAX, true)),
                (&["--before", "3"], (i64::MIN, true, 3, false)),
                (&["--from", "4", "--to", "4"], (4, true, 4, true)),
            ] {
                let (lo, lo_in, hi, hi_in) = keep;
                let want: Vec<Value> = all
                    .iter()
                    .filter(|r| {
                        let c = ck(r);
                        (c > lo || (lo_in && c == lo)) && (c < hi || (hi_in && c == hi))
                    })
                    .cloned()
                    .collect();
                assert!(!want.is_empty(), "{case} {bounds:?}: no rows to compare");
                assert_eq!(rows(&case, bounds), want, "{case} {bounds:?}");
                checked += 1;
            }
        }
    }
    assert!(checked >= 10, "only {checked} cases");
}

#[test]
fn inverted_and_mixed_order_bounds_are_usage_errors() {
    for case in ["nb_wide", "nb_wide_desc"] {
        let dir = fixtures().join(case).display().to_string();
        let r = sstkit(["read", "-k", "5", "--from", "10", "--to", "5", &dir]);
        assert_eq!(r.code, 2, "{case}: {}", r.stderr);
        assert!(
            r.stderr.contains("--from 10") && r.stderr.contains("--to 5"),
            "{case}: both bounds named: {}",
            r.stderr
        );
    }
    // (ck DESC, ck2 ASC): bounds over both columns, the lower one above.
    let dir = fixtures().join("nb_wide_desc").display().to_string();
    let r = sstkit(["read", "-k", "5", "--from", "7:b", "--to", "6:z", &dir]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("--from 7:b is above --to 6:z"),
        "{}",
        r.stderr
    );
    // In clustering order, as stored, the same bounds read what they did.
    let r = sstkit([
        "read",
        "-k",
        "5",
        "--clustering-order",
        "--from",
        "10",
        "--to",
        "5",
        "-o",
        "cql",
        &dir,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout.lines().count(), 12);
}

/// The end of a query's CQL, and `read`'s arguments for it.
type Query = (&'static str, &'static [&'static str]);

/// Each query of `fixtures/slices/<table>.json` (a live node's SELECT with
/// a multi-column clustering restriction) and the `read` arguments that
/// ask the same.
const MIXED: &[(&str, &[Query])] = &[
    (
        "wide_desc",
        &[
            (
                "pk = 0 AND (ck, ck2) >= (1750, 'j') AND (ck, ck2) <= (1760, 'p')",
                &["-k", "0", "--from", "1750:j", "--to", "1760:p"],
            ),
            (
                "pk = 0 AND (ck, ck2) > (1749, 'hotel')",
                &["-k", "0", "--after", "1749:hotel"],
            ),
            (
                "pk = 0 AND (ck, ck2) > (1749, 'hotel') LIMIT 7",
                &["-k", "0", "--after", "1749:hotel", "--limit", "7"],
            ),
            (
                "pk = 0 AND (ck, ck2) >= (1999, 'b') AND (ck, ck2) < (2001, 'm')",
                &["-k", "0", "--from", "1999:b", "--before", "2001:m"],
            ),
            (
                "pk = 0 AND (ck, ck2) <= (5, 'l')",
                &["-k", "0", "--to", "5:l"],
            ),
            (
                "pk = 0 AND (ck, ck2) < (1300, 'h') AND (ck, ck2) >= (1200, 'zulu')",
                &["-k", "0", "--before", "1300:h", "--from", "1200:zulu"],
            ),
            (
                "pk = 0 AND (ck, ck2) >= (1750, 'j') AND (ck, ck2) <= (1760, 'p') \
                 ORDER BY ck ASC, ck2 DESC",
                &["-k", "0", "--from", "1750:j", "--to", "1760:p", "--reverse"],
            ),
            (
                "pk = 0 AND (ck, ck2) >= (1750, 'j') AND (ck, ck2) <= (1760, 'p') \
                 ORDER BY ck ASC, ck2 DESC LIMIT 3",
                &[
                    "-k",
                    "0",
                    "--from",
                    "1750:j",
                    "--to",
                    "1760:p",
                    "--reverse",
                    "--limit",
                    "3",
                ],
            ),
            (
                "pk = 5 AND (ck, ck2) >= (7, 'm') AND (ck, ck2) < (10, 'm')",
                &["-k", "5", "--from", "7:m", "--before", "10:m"],
            ),
            (
                "pk = 5 AND (ck, ck2) > (11, 'a')",
                &["-k", "5", "--after", "11:a"],
            ),
        ],
    ),
    (
        "clustering",
        &[
            (
                "(ck1, ck2) > (-81, 'foxtrot7') AND (ck1, ck2) <= (145, 'alpha4')",
                &[
                    "-k",
                    "eu:1",
                    "--after",
                    "-81:foxtrot7",
                    "--to",
                    "145:alpha4",
                ],
            ),
            (
                "(ck1, ck2) >= (-81, 'foxtrot8')",
                &["-k", "eu:1", "--from", "-81:foxtrot8"],
            ),
            (
                "(ck1, ck2) < (34, 'whiskey9') ORDER BY ck1 DESC, ck2 ASC LIMIT 4",
                &[
                    "-k",
                    "eu:1",
                    "--before",
                    "34:whiskey9",
                    "--reverse",
                    "--limit",
                    "4",
                ],
            ),
        ],
    ),
];

/// Bounds over clustering columns of both orders (`(ck DESC, ck2 ASC)`,
/// `(ck1 ASC, ck2 DESC)`) select what a live node's SELECT with the same
/// multi-column restriction returned (fixtures/make-slices-expected.sh),
/// row for row and in order: single and merged reads, forward and
/// reversed, with limits, on nb, oa and da.
#[test]
fn mixed_order_bounds_equal_a_nodes_select() {
    let dir = fixtures().join("../slices");
    let mut checked = 0;
    for (table, queries) in MIXED {
        let text = std::fs::read_to_string(dir.join(format!("{table}.json")))
            .unwrap_or_else(|e| panic!("fixtures/slices/{table}.json: {e}"));
        let now = std::fs::read_to_string(dir.join(format!("{table}-now.txt")))
            .expect("the time the queries ran");
        let truth = select_queries(&text);
        let raw: Value = serde_json::from_str(&text).expect("select.json parses");
        assert_eq!(truth.len(), queries.len(), "{table}: one truth per query");
        for ((cql, args), ((_, rows), entry)) in queries
            .iter()
            .zip(truth.iter().zip(raw.as_array().expect("queries")))
        {
            let asked = entry["cql"].as_str().expect("the query's CQL");
            assert!(asked.ends_with(cql), "{table}: {asked:?} is not {cql:?}");
            let want: Vec<Value> = rows
                .iter()
                .map(|r| serde_json::from_str(r).expect("a row"))
                .collect();
            assert!(!want.is_empty(), "{table} {cql}: the node returned no row");
            for run in ["nb", "oa", "da"] {
                let case = fixtures()
                    .join(format!("{run}_{table}"))
                    .display()
                    .to_string();
                for merge in [false, true] {
                    let mut a = vec!["read", "-o", "cql", "--now", now.trim()];
                    a.extend_from_slice(args);
                    if merge {
                        a.push("--merge");
                    }
                    a.push(&case);
                    let r = sstkit(&a);
                    assert_eq!(r.code, 0, "{a:?}: {}", r.stderr);
                    let got: Vec<Value> = r
                        .stdout
                        .lines()
                        .map(|l| serde_json::from_str(l).expect("a CQL row"))
                        .collect();
                    assert_eq!(got, want, "{a:?} against the node's {cql}");
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 13 * 3 * 2);
}
