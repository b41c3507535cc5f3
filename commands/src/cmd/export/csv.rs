//! Export's CSV: fields as `cqlsh COPY TO` writes them (RFC 4180 quoting).

use std::io::Write;

use sstkit_format::types::{CqlType, Native};

use super::columns::Plan;
use super::part::ColBuf;
use crate::arrow::base;
use crate::render::{render, Form};
use crate::CmdResult;

/// The CSV header line of `plan`'s columns (with its CRLF).
pub(super) fn csv_header(plan: &Plan) -> String {
    let mut s = String::new();
    for (i, c) in plan.cols.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        csv_field(&mut s, &c.name);
    }
    s.push_str("\r\n");
    s
}

/// One CSV field (RFC 4180: quoted when it holds a comma, quote or line break).
pub(super) fn csv_field(out: &mut String, v: &str) {
    if v.contains([',', '"', '\n', '\r']) {
        out.push('"');
        out.push_str(&v.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(v);
    }
}

/// A value as `cqlsh COPY TO` writes it: the CQL literal cqlsh prints,
/// without the quotes around a top-level text, timestamp, date, time or inet.
pub(super) fn cqlsh_text(ty: &CqlType, b: &[u8], out: &mut String) {
    let mut s = String::new();
    render(ty, b, Form::Cqlsh, &mut s);
    if matches!(base(ty), CqlType::Native(Native::Boolean)) {
        s = if s == "true" {
            "True".into()
        } else if s == "false" {
            "False".into()
        } else {
            s
        };
    }
    match s.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
        Some(inner) if matches!(base(ty), CqlType::Native(_)) => {
            out.push_str(&inner.replace("''", "'"))
        }
        _ => out.push_str(&s),
    }
}

pub(super) fn write_csv_rows(
    w: &mut Box<dyn Write + '_>,
    plan: &Plan,
    cols: &[ColBuf],
    rows: usize,
) -> CmdResult<()> {
    let mut line = String::new();
    let mut v = String::new();
    for i in 0..rows {
        line.clear();
        for (j, (c, buf)) in plan.cols.iter().zip(cols).enumerate() {
            if j > 0 {
                line.push(',');
            }
            if let Some(b) = buf.get(i) {
                v.clear();
                cqlsh_text(&c.ty, b, &mut v);
                csv_field(&mut line, &v);
            }
        }
        line.push_str("\r\n");
        w.write_all(line.as_bytes())?;
    }
    Ok(())
}
