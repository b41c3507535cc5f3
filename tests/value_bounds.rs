//! `read`'s clustering bounds are values, as in CQL's `WHERE`: on a
//! descending clustering column `--from 5 --to 10` is `ck >= 5 AND ck <= 10`
//! (rows 10 down to 5), not an empty range. Checked against the whole
//! partition's CQL rows (`-o cql`, what a node's SELECT returns) filtered by
//! the same predicate, on ASC and DESC tables of every format.

use serde_json::Value;

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
    // (ck DESC, ck2 ASC): a bound over both columns is not one range.
    let dir = fixtures().join("nb_wide_desc").display().to_string();
    let r = sstkit(["read", "-k", "5", "--from", "5:m", &dir]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--clustering-order"), "{}", r.stderr);
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
