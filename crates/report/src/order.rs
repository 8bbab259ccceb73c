//! The canonical row order of the tables: the order of Mark Callaghan's published sysbench
//! tables.
//!
//! Mark Callaghan's scripts sort file names with a locale collation, which is why his tables
//! list `random-points_range=1000` before `=100` and `=10`. We use an explicit list instead.

use dbdelta_model::Group;

const POINT: &[&str] = &[
    "hot-points",
    "point-query",
    "points-covered-pk",
    "points-covered-si",
    "points-notcovered-pk",
    "points-notcovered-si",
    "random-points",
];

const RANGE: &[&str] = &[
    "range-covered-pk",
    "range-covered-si",
    "range-notcovered-pk",
    "range-notcovered-si",
    "read-only-count",
    "read-only-distinct",
    "read-only-order",
    "read-only",
    "read-only-simple",
    "read-only-sum",
    "scan",
];

const WRITE: &[&str] = &[
    "delete",
    "insert",
    "read-write",
    "update-index",
    "update-inlist",
    "update-nonindex",
    "update-one",
    "update-zipf",
    "write-only",
];

/// Sorts rows: group (point, range, write); the known steps of the group in list order; then
/// unknown steps in run order. Within one base name all `.pre` rows come before the post-write
/// rows (as in the published tables), each by ascending numeric range.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct RowKey {
    group: Group,
    known: usize,
    run_order: u32,
    post: bool,
    range: Option<u64>,
    label: String,
}

impl RowKey {
    /// The key of a row from its result's group, step name, label and run order.
    pub(crate) fn new(group: Group, step: &str, label: &str, order: u32) -> RowKey {
        let (base, post) = match step.strip_suffix(".pre") {
            Some(base) => (base, false),
            None => (step, true),
        };
        let list = match group {
            Group::Point => POINT,
            Group::Range => RANGE,
            Group::Write => WRITE,
        };
        let known = list.iter().position(|s| *s == base);
        RowKey {
            group,
            known: known.unwrap_or(usize::MAX),
            // Run order matters only between unknown steps; known ones have a fixed place.
            run_order: if known.is_some() { 0 } else { order },
            post,
            range: range_of(label),
            label: label.to_string(),
        }
    }
}

/// The number after `_range=` in a label, e.g. 1000 in `random-points_range=1000`.
fn range_of(label: &str) -> Option<u64> {
    let (_, rest) = label.rsplit_once("_range=")?;
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..digits].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(rows: &[(Group, &str, &str, u32)]) -> Vec<String> {
        let mut keys: Vec<RowKey> = rows
            .iter()
            .map(|(g, s, l, o)| RowKey::new(*g, s, l, *o))
            .collect();
        keys.sort();
        keys.into_iter().map(|k| k.label).collect()
    }

    #[test]
    fn ranges_sort_numerically_and_pre_first() {
        let p = Group::Point;
        let got = sorted(&[
            (p, "random-points", "random-points_range=1000", 20),
            (p, "random-points", "random-points_range=100", 19),
            (p, "random-points", "random-points_range=10", 18),
            (p, "random-points.pre", "random-points.pre_range=1000", 3),
            (p, "random-points.pre", "random-points.pre_range=10", 1),
            (p, "random-points.pre", "random-points.pre_range=100", 2),
            (p, "point-query", "point-query_range=100", 17),
            (p, "point-query.pre", "point-query.pre_range=100", 0),
            (p, "hot-points", "hot-points_range=100", 21),
        ]);
        assert_eq!(
            got,
            [
                "hot-points_range=100",
                "point-query.pre_range=100",
                "point-query_range=100",
                "random-points.pre_range=10",
                "random-points.pre_range=100",
                "random-points.pre_range=1000",
                "random-points_range=10",
                "random-points_range=100",
                "random-points_range=1000",
            ]
        );
    }

    #[test]
    fn groups_then_list_then_unknown_in_run_order() {
        let got = sorted(&[
            (Group::Write, "zz-custom", "zz-custom_range=1", 5),
            (Group::Write, "aa-custom", "aa-custom_range=1", 9),
            (Group::Write, "write-only", "write-only_range=10000", 7),
            (Group::Write, "delete", "delete_range=100", 8),
            (Group::Range, "scan", "scan_range=100", 6),
            (Group::Range, "read-only", "read-only_range=10000", 4),
            (
                Group::Range,
                "read-only-count",
                "read-only-count_range=1000",
                3,
            ),
            (
                Group::Point,
                "points-covered-si",
                "points-covered-si_range=100",
                2,
            ),
        ]);
        assert_eq!(
            got,
            [
                "points-covered-si_range=100",
                "read-only-count_range=1000",
                "read-only_range=10000",
                "scan_range=100",
                "delete_range=100",
                "write-only_range=10000",
                "zz-custom_range=1",
                "aa-custom_range=1",
            ]
        );
    }

    #[test]
    fn range_parsing() {
        assert_eq!(range_of("read-only_range=10000"), Some(10000));
        assert_eq!(range_of("x.pre_range=10_foo"), Some(10));
        assert_eq!(range_of("insert"), None);
    }
}
