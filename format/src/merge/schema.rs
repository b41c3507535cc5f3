//! [`MergedSchema`]: the union of the sstables' serialization headers, and
//! [`ColumnMap`], one sstable's columns on it.

use crate::compare::ClusteringComparator;
use crate::data::{Column, ColumnData, DataSchema, Row};
use crate::error::{Error, ErrorKind, Result};
use crate::read::OwnedClustering;
use crate::statistics::{ColumnDef, SerializationHeader};
use crate::version::Features;

use super::{MCell, MColumnData, MRow};

/// The union of the serialization headers of the merged sstables.
#[derive(Debug, Clone)]
pub struct MergedSchema {
    /// The union header (the first sstable's, plus the columns only others
    /// have; delta bases are the first's and mean nothing here).
    pub header: SerializationHeader,
    /// Column sets in data order: what merged rows' column indexes refer to.
    pub data: DataSchema,
}

/// Why two sstables cannot be merged: they are of different tables.
fn mismatch(a: &str, b: &str, what: String) -> Error {
    Error::new(
        ErrorKind::BadValue(format!(
            "{a} and {b} are not sstables of the same table: {what}"
        )),
        "merge",
    )
}

impl MergedSchema {
    /// The union of `headers` (each with a label naming its sstable for
    /// errors). Key and clustering types must be equal, and a column present
    /// in several headers must have one type.
    pub fn union(headers: &[(&str, &SerializationHeader)], features: Features) -> Result<Self> {
        let Some(&(first_label, first)) = headers.first() else {
            return Err(Error::new(
                ErrorKind::BadValue("nothing to merge".into()),
                "merge",
            ));
        };
        let mut header = first.clone();
        for &(label, h) in &headers[1..] {
            if h.partition_key_type_string != first.partition_key_type_string {
                return Err(mismatch(
                    first_label,
                    label,
                    format!(
                        "partition key type {} vs {}",
                        first.partition_key_type_string, h.partition_key_type_string
                    ),
                ));
            }
            if h.clustering_type_strings != first.clustering_type_strings {
                return Err(mismatch(
                    first_label,
                    label,
                    format!(
                        "clustering types ({}) vs ({})",
                        first.clustering_type_strings.join(", "),
                        h.clustering_type_strings.join(", ")
                    ),
                ));
            }
            for (mine, theirs, kind) in [
                (&mut header.static_columns, &h.static_columns, "static"),
                (&mut header.regular_columns, &h.regular_columns, "regular"),
            ] {
                for c in theirs {
                    match mine.iter().find(|m| m.name == c.name) {
                        Some(m) if m.type_string != c.type_string => {
                            return Err(mismatch(
                                first_label,
                                label,
                                format!(
                                    "{kind} column {} is {} vs {}",
                                    c.name, m.type_string, c.type_string
                                ),
                            ))
                        }
                        Some(_) => {}
                        None => mine.push(c.clone()),
                    }
                }
            }
            // A column static in one and regular in the other.
            for c in &header.static_columns {
                if header.regular_columns.iter().any(|r| r.name == c.name) {
                    return Err(mismatch(
                        first_label,
                        label,
                        format!(
                            "column {} is static in one and regular in the other",
                            c.name
                        ),
                    ));
                }
            }
        }
        let data = DataSchema::new(&header, features);
        Ok(MergedSchema { header, data })
    }

    /// The map from a source's column indexes (static, regular) to the
    /// merged ones.
    pub fn column_map(&self, source: &SerializationHeader) -> ColumnMap {
        let map = |mine: &crate::data::ColumnSet, theirs: &[ColumnDef]| -> Vec<usize> {
            SerializationHeader::data_order(theirs)
                .iter()
                .map(|d| mine.by_name(&d.name).map_or(usize::MAX, |c| c.index))
                .collect()
        };
        let statics = map(&self.data.static_columns, &source.static_columns);
        let regular = map(&self.data.regular_columns, &source.regular_columns);
        let same = |m: &[usize], all: &crate::data::ColumnSet| {
            m.len() == all.columns().len() && m.iter().enumerate().all(|(i, &c)| i == c)
        };
        let identity =
            same(&statics, &self.data.static_columns) && same(&regular, &self.data.regular_columns);
        ColumnMap {
            statics,
            regular,
            identity,
        }
    }

    /// The merged column `i` of the static or regular set.
    pub fn column(&self, is_static: bool, i: usize) -> Option<&Column> {
        if is_static {
            self.data.static_columns.get(i)
        } else {
            self.data.regular_columns.get(i)
        }
    }

    /// The clustering comparator of the table.
    pub fn comparator(&self) -> ClusteringComparator {
        ClusteringComparator::new(self.header.clustering_types.clone())
    }
}

/// Source column index → merged column index.
#[derive(Debug, Clone)]
pub struct ColumnMap {
    statics: Vec<usize>,
    regular: Vec<usize>,
    /// The source has the merged columns, in the same order: its rows can
    /// be output as they are stored.
    pub(super) identity: bool,
}

impl ColumnMap {
    fn get(&self, is_static: bool, i: usize) -> usize {
        let v = if is_static {
            &self.statics
        } else {
            &self.regular
        };
        v.get(i).copied().unwrap_or(usize::MAX)
    }

    /// An owned copy of a decoded row, its columns mapped.
    pub fn row(&self, r: &Row<'_>, source: usize) -> MRow {
        self.row_with(r, source, OwnedClustering::of(&r.clustering))
    }

    /// [`ColumnMap::row`] with its clustering already copied.
    pub(super) fn row_with(&self, r: &Row<'_>, source: usize, clustering: OwnedClustering) -> MRow {
        let st = r.is_static();
        let mut cells: Vec<MColumnData> = r
            .cells
            .iter()
            .map(|cd| match cd {
                ColumnData::Simple { column, cell } => MColumnData::Simple {
                    column: self.get(st, column.index),
                    cell: MCell::of(cell),
                },
                ColumnData::Complex {
                    column,
                    complex_deletion,
                    cells,
                } => MColumnData::Complex {
                    column: self.get(st, column.index),
                    deletion: *complex_deletion,
                    cells: cells.iter().map(MCell::of).collect(),
                },
            })
            .collect();
        cells.sort_by_key(MColumnData::column);
        MRow {
            position: r.position,
            size: r.size,
            source,
            clustering,
            liveness: r.liveness,
            deletion: r.deletion,
            scylla_shadowable_deletion: r.scylla_shadowable_deletion,
            cells,
        }
    }
}
