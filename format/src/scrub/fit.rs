//! Whether decoded data fits the serialization header's types: a header
//! that belongs to another table (a replaced Statistics.db) often decodes
//! the same bytes to the same lengths, so scrub checks what the types
//! themselves require of the values where that is cheap (text is UTF-8,
//! ascii is ASCII, a counter is a counter context, a key decodes as the
//! partition key type). A partition that does not fit is not salvaged.

use crate::data::{ColumnData, Fragment, Row};
use crate::statistics::SerializationHeader;
use crate::types::{CqlType, Native};
use crate::value::CounterView;

/// Why `key` does not fit the partition key type of `header` (`None`: it fits).
pub(super) fn key_misfit(header: &SerializationHeader, key: &[u8]) -> Option<String> {
    crate::value::decode(&header.partition_key_type, key)
        .err()
        .map(|e| {
            format!(
                "the partition key does not decode as the header's key type {}: {e}",
                header.partition_key_type_string
            )
        })
}

/// The position and reason of the first cell of `f` whose value does not
/// fit its column's type (`None`: every value fits).
pub(super) fn fragment_misfit(f: &Fragment<'_>) -> Option<(u64, String)> {
    match f {
        Fragment::Row(r) | Fragment::StaticRow(r) => row_misfit(r),
        _ => None,
    }
}

fn row_misfit(r: &Row<'_>) -> Option<(u64, String)> {
    for cd in &r.cells {
        let ColumnData::Simple { column, cell } = cd else {
            continue;
        };
        // Deleted cells carry no value; an empty value is valid for every type.
        if cell.is_deleted() || cell.value.is_empty() {
            continue;
        }
        let ty = &column.def.ty;
        let fits = match ty.unreversed() {
            CqlType::Native(Native::Text) => std::str::from_utf8(cell.value).is_ok(),
            CqlType::Native(Native::Ascii) => cell.value.is_ascii(),
            CqlType::Native(Native::Counter) => CounterView::of(cell.value).is_some(),
            _ => true,
        };
        if !fits {
            return Some((
                r.position.0,
                format!(
                    "the value of column {} ({} bytes) is not a {} value: the serialization \
                     header does not fit the data",
                    column.name(),
                    cell.value.len(),
                    column.def.type_string
                ),
            ));
        }
    }
    None
}
