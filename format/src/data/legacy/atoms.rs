//! The atoms of a pre-3.0 row: one cell or range tombstone read from
//! Data.db, its composite name decoded against the table's layout.

use crate::clustering::BoundKind;
use crate::cur::Cur;
use crate::data::model::cell_flags;
use crate::data::schema::{Column, DataSchema};
use crate::data::source::DataSource;
use crate::deletion::DeletionTime;
use crate::error::{Error, ErrorKind, Result};

use super::{
    mask, split_composite, split_name, Atom, CellTarget, LBound, Layout, OBound, OCell, Values,
};

/// Run `f` over the window, growing it while `f` runs short and the file
/// has more; step over what `f` consumed.
pub(super) fn measured<T>(
    src: &mut DataSource<'_>,
    mut f: impl FnMut(&mut Cur<'_>) -> Result<T>,
) -> Result<T> {
    loop {
        let mut cur = src.cursor();
        let window = cur.remaining() as u64;
        let e = match f(&mut cur) {
            Ok(v) => {
                let n = cur.pos() as u64;
                src.advance(n)?;
                return Ok(v);
            }
            Err(e) => e,
        };
        let need = match e.kind {
            ErrorKind::UnexpectedEof { need, .. } => need,
            ErrorKind::LengthOutOfRange { len, .. } => len,
            _ => return Err(e),
        };
        let Some(at) = e.offset else { return Err(e) };
        let want = at.saturating_sub(src.position().0).saturating_add(need);
        if want <= window || want > src.remaining() {
            return Err(e);
        }
        if !src.fill(want)? {
            return Err(e);
        }
    }
}

pub(super) fn bad(cur: &Cur<'_>, at: u64, what: &'static str, msg: impl Into<String>) -> Error {
    Error::at(ErrorKind::BadValue(msg.into()), cur.component(), at, what)
}

/// Read one atom (or the end-of-partition marker) from `cur`.
pub(super) fn read_atom(cur: &mut Cur<'_>, layout: &Layout, schema: &DataSchema) -> Result<Atom> {
    let at = cur.abs_offset();
    let name_len = cur.u16("cell name length")?;
    if name_len == 0 {
        return Ok(Atom::End);
    }
    let name = cur.bytes(name_len as usize, "cell name")?;
    let m = cur.u8("cell mask")?;
    if m & (mask::RANGE_TOMBSTONE | mask::SHADOWABLE) != 0 {
        let last = cur.short_bytes("range tombstone end")?;
        let deletion = DeletionTime::decode_legacy(cur)?;
        let start = decode_bound(cur, at, name, true, layout)?;
        let end = decode_bound(cur, at, last, false, layout)?;
        return Ok(Atom::Tombstone {
            start,
            end,
            deletion,
        });
    }
    if m & mask::COUNTER_UPDATE != 0
        || m & !(mask::DELETION | mask::EXPIRATION | mask::COUNTER) != 0
    {
        return Err(bad(
            cur,
            at + 2 + name_len as u64,
            "cell mask",
            format!("unexpected cell mask {m:#04x}"),
        ));
    }
    let mut cell = OCell {
        flags: 0,
        timestamp: 0,
        local_deletion_time: None,
        ttl: None,
        path: None,
        value: Vec::new(),
        counter: false,
    };
    if m & mask::COUNTER != 0 {
        let _ts_of_last_delete = cur.i64("counter timestamp of last delete")?;
    } else if m & mask::EXPIRATION != 0 {
        let ttl = cur.i32("cell ttl")?;
        let exp = cur.i32("cell expiration time")?;
        cell.flags |= cell_flags::IS_EXPIRING;
        cell.ttl = Some(ttl as i64);
        cell.local_deletion_time = Some(exp as i64);
    }
    cell.timestamp = cur.i64("cell timestamp")?;
    let vlen = cur.i32("cell value length")?;
    if vlen < 0 {
        return Err(cur.bad("cell value length", format!("negative value length {vlen}")));
    }
    let value = cur.bytes_len(vlen as u64, "cell value")?;
    if m & mask::DELETION != 0 {
        let Ok(b) = <[u8; 4]>::try_from(value) else {
            return Err(bad(
                cur,
                cur.abs_offset() - value.len() as u64,
                "tombstone local deletion time",
                format!("tombstone value of {} bytes, not 4", value.len()),
            ));
        };
        cell.flags |= cell_flags::IS_DELETED;
        cell.local_deletion_time = Some(i32::from_be_bytes(b) as i64);
    } else {
        cell.value = value.to_vec();
    }
    if cell.value.is_empty() {
        cell.flags |= cell_flags::HAS_EMPTY_VALUE;
    }
    let (is_static, clustering, target) = decode_cell_name(cur, at, name, layout, schema)?;
    if let CellTarget::Column {
        is_static, index, ..
    } = &target
    {
        let set = if *is_static {
            &schema.static_columns
        } else {
            &schema.regular_columns
        };
        cell.counter = set.get(*index).is_some_and(|c| c.counter);
    }
    if m & mask::COUNTER != 0 && !cell.counter {
        // A counter cell of a column the schema says is not a counter.
        if let CellTarget::Column { .. } = target {
            return Err(bad(
                cur,
                at,
                "cell mask",
                "counter cell in a column that is not a counter",
            ));
        }
    }
    Ok(Atom::Cell {
        is_static,
        clustering,
        target,
        cell,
    })
}

pub(super) fn find_column<'s>(
    schema: &'s DataSchema,
    name: &[u8],
    is_static: bool,
) -> Option<&'s Column> {
    let set = if is_static {
        &schema.static_columns
    } else {
        &schema.regular_columns
    };
    set.columns().iter().find(|c| c.def.name_bytes == name)
}

/// Decode a cell name into (static, clustering, target).
pub(super) fn decode_cell_name(
    cur: &Cur<'_>,
    at: u64,
    name: &[u8],
    layout: &Layout,
    schema: &DataSchema,
) -> Result<(bool, Values, CellTarget)> {
    let n = layout.clustering_len;
    let value_column = |is_static: bool| -> CellTarget {
        match schema.regular_columns.get(0) {
            Some(c) => CellTarget::Column {
                is_static,
                index: c.index,
                path: None,
            },
            None => CellTarget::Unknown,
        }
    };
    if !layout.compound {
        if layout.dense {
            // One clustering column: the name is its value.
            return Ok((false, vec![Some(name.to_vec())], value_column(false)));
        }
        // Static compact: the name is the column name.
        let target = match find_column(schema, name, false) {
            Some(c) => CellTarget::Column {
                is_static: false,
                index: c.index,
                path: None,
            },
            None => CellTarget::Unknown,
        };
        return Ok((false, Vec::new(), target));
    }
    let split = split_composite(name).map_err(|m| bad(cur, at + 2, "cell name", m))?;
    let comps = split.comps;
    if layout.dense {
        // Compact tables may hold rows of a clustering prefix.
        if comps.len() > n || comps.is_empty() || split.is_static {
            return Err(bad(
                cur,
                at + 2,
                "cell name",
                format!(
                    "dense cell name with {} components, expected 1 to {n}",
                    comps.len()
                ),
            ));
        }
        // NOTE: a shorter name is a row of a clustering prefix; C\* 3.x
        // pads it with nulls (what its own sstables of the table hold).
        let mut clustering: Values = comps.iter().map(|c| Some(c.to_vec())).collect();
        clustering.resize(n, None);
        return Ok((false, clustering, value_column(false)));
    }
    if comps.len() > n + 2 {
        return Err(bad(
            cur,
            at + 2,
            "cell name",
            format!(
                "Found {} clustering elements in column name. Was not expecting that!",
                comps.len()
            ),
        ));
    }
    if comps.len() == n && schema.regular_columns.is_empty() && schema.static_columns.is_empty() {
        // A table of key columns only: C\* 3.0 reads a name without a
        // column component as the row marker (`LegacyLayout.decodeCellName`).
        return Ok((
            false,
            comps.iter().map(|c| Some(c.to_vec())).collect(),
            CellTarget::Marker,
        ));
    }
    if comps.len() < n + 1 {
        return Err(bad(
            cur,
            at + 2,
            "cell name",
            format!(
                "cell name with {} components: no column name (the table has {n} clustering columns)",
                comps.len()
            ),
        ));
    }
    let (ck, rest) = comps.split_at(n);
    let is_static = split.is_static;
    if is_static && ck.iter().any(|c| !c.is_empty()) {
        return Err(bad(
            cur,
            at + 2,
            "cell name",
            "Static row has clustering key information. I didn't expect that!",
        ));
    }
    let clustering: Values = if is_static {
        Vec::new()
    } else {
        ck.iter().map(|c| Some(c.to_vec())).collect()
    };
    let col = rest.first().copied().unwrap_or(&[]);
    let path = rest.get(1).map(|p| p.to_vec());
    if col.is_empty() {
        if path.is_some() || is_static {
            return Err(bad(
                cur,
                at + 2,
                "cell name",
                "row marker with extra components",
            ));
        }
        return Ok((false, clustering, CellTarget::Marker));
    }
    let target = match find_column(schema, col, is_static) {
        // A cell whose shape does not fit the column's type (an element of a
        // column that is no collection, or the reverse) belongs to a column
        // that was dropped and re-added with another type: skipped, as C\*
        // and Scylla skip cells older than the drop.
        Some(c) if c.complex != path.is_some() => CellTarget::Unknown,
        Some(c) => CellTarget::Column {
            is_static,
            index: c.index,
            path,
        },
        None => match find_column(schema, col, !is_static) {
            Some(c) => {
                let (a, b) = if is_static {
                    ("static", "non-static")
                } else {
                    ("non-static", "static")
                };
                return Err(bad(
                    cur,
                    at + 2,
                    "cell name",
                    format!(
                        "Mismatch between {a} cell and {b} column definition ({})",
                        c.name()
                    ),
                ));
            }
            None => CellTarget::Unknown,
        },
    };
    Ok((is_static, clustering, target))
}

/// Decode a range tombstone bound (C\* 3.0 `LegacyLayout.decodeBound`,
/// Scylla `consume_range_tombstone`).
pub(super) fn decode_bound(
    cur: &Cur<'_>,
    at: u64,
    name: &[u8],
    is_start: bool,
    layout: &Layout,
) -> Result<LBound> {
    let n = layout.clustering_len;
    if name.is_empty() {
        return Ok(LBound {
            is_static: false,
            bound: OBound {
                kind: if is_start {
                    BoundKind::InclStartBound
                } else {
                    BoundKind::InclEndBound
                },
                values: Vec::new(),
            },
            collection: None,
        });
    }
    // NOTE: Cassandra 2.x writes composite bounds for non-compound tables
    // too (Scylla #2986): accept one exactly framed component.
    let compound =
        layout.compound || split_composite(name).is_ok_and(|s| s.comps.len() == 1 && !s.is_static);
    if !compound {
        return Ok(LBound {
            is_static: false,
            bound: OBound {
                kind: if is_start {
                    BoundKind::InclStartBound
                } else {
                    BoundKind::InclEndBound
                },
                values: vec![Some(name.to_vec())],
            },
            collection: None,
        });
    }
    let what = if is_start {
        "range tombstone start"
    } else {
        "range tombstone end"
    };
    let split = split_name(name, true).map_err(|m| bad(cur, at, what, m))?;
    let eoc = split.last_eoc as i8;
    let kind = match (is_start, eoc) {
        (true, 0 | -1) => BoundKind::InclStartBound,
        (true, 1) => BoundKind::ExclStartBound,
        (false, 0 | 1) => BoundKind::InclEndBound,
        (false, -1) => BoundKind::ExclEndBound,
        (true, e) => {
            return Err(bad(
                cur,
                at,
                what,
                format!("Unexpected start composite marker {}", e as u8),
            ))
        }
        (false, e) => {
            return Err(bad(
                cur,
                at,
                what,
                format!("Unexpected end composite marker {}", e as u8),
            ))
        }
    };
    let mut comps = split.comps;
    let collection = if comps.len() > n && !layout.dense {
        if comps.len() > n + 1 {
            return Err(bad(
                cur,
                at,
                what,
                format!(
                    "range tombstone bound with {} components (the table has {n} clustering columns)",
                    comps.len()
                ),
            ));
        }
        comps.pop().map(|c| c.to_vec())
    } else if comps.len() > n {
        return Err(bad(
            cur,
            at,
            what,
            format!(
                "range tombstone bound with {} components (the table has {n} clustering columns)",
                comps.len()
            ),
        ));
    } else {
        None
    };
    if split.is_static && comps.iter().any(|c| !c.is_empty()) {
        return Err(bad(
            cur,
            at,
            what,
            "Static row has clustering key information. I didn't expect that!",
        ));
    }
    let values = if split.is_static {
        Vec::new()
    } else {
        comps.iter().map(|c| Some(c.to_vec())).collect()
    };
    Ok(LBound {
        is_static: split.is_static,
        bound: OBound { kind, values },
        collection,
    })
}
