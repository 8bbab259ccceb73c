//! Result rows a workload asked to see: the values of one statement's result as text,
//! kept in reused buffers. Most operations only count rows; interactive transactions
//! (TPC-C reads a district's next order number, an item's price) read a few values.

use crate::EngineError;

/// The rows of one result, every value as text (NULL as `None`), row by row.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Rows {
    text: String,
    /// Each value's byte range in `text`; `None` for NULL.
    cells: Vec<Option<(u32, u32)>>,
    /// Index in `cells` of each row's first value.
    starts: Vec<u32>,
}

impl Rows {
    /// An empty set of rows (const, so engines without capture can hand out a static one).
    pub const fn new() -> Self {
        Rows {
            text: String::new(),
            cells: Vec::new(),
            starts: Vec::new(),
        }
    }

    /// Forgets every row, keeping the buffers.
    pub fn clear(&mut self) {
        self.text.clear();
        self.cells.clear();
        self.starts.clear();
    }

    /// Starts a new row; its values follow through [`Rows::push`].
    pub fn start_row(&mut self) {
        self.starts.push(self.cells.len() as u32);
    }

    /// Appends a value to the current row (bytes that are not UTF-8 are replaced).
    pub fn push(&mut self, value: Option<&[u8]>) {
        self.cells.push(value.map(|v| {
            let at = self.text.len() as u32;
            match std::str::from_utf8(v) {
                Ok(s) => self.text.push_str(s),
                Err(_) => self.text.push_str(&String::from_utf8_lossy(v)),
            }
            (at, self.text.len() as u32)
        }));
    }

    /// Appends a value written by `fill` straight into the text buffer.
    pub fn push_with(&mut self, fill: impl FnOnce(&mut String)) {
        let at = self.text.len() as u32;
        fill(&mut self.text);
        self.cells.push(Some((at, self.text.len() as u32)));
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// True when there is no row.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// Number of values in row `row` (0 when out of range).
    pub fn width(&self, row: usize) -> usize {
        let Some(&start) = self.starts.get(row) else {
            return 0;
        };
        let end = self
            .starts
            .get(row + 1)
            .map_or(self.cells.len(), |&s| s as usize);
        end - start as usize
    }

    /// Value `col` of row `row`; `None` when it is NULL or out of range.
    pub fn get(&self, row: usize, col: usize) -> Option<&str> {
        let start = *self.starts.get(row)? as usize;
        let end = self
            .starts
            .get(row + 1)
            .map_or(self.cells.len(), |&s| s as usize);
        let idx = start + col;
        if idx >= end {
            return None;
        }
        let (a, b) = self.cells[idx]?;
        Some(&self.text[a as usize..b as usize])
    }

    /// Value `col` of row `row` as an integer (decimals with a zero fraction too).
    pub fn int(&self, row: usize, col: usize) -> Result<i64, EngineError> {
        let v = self.value(row, col)?;
        v.parse::<i64>()
            .ok()
            .or_else(|| {
                v.parse::<f64>()
                    .ok()
                    .filter(|f| f.fract() == 0.0)
                    .map(|f| f as i64)
            })
            .ok_or_else(|| EngineError::statement(format!("expected an integer, got {v:?}")))
    }

    /// Value `col` of row `row` as a number.
    pub fn num(&self, row: usize, col: usize) -> Result<f64, EngineError> {
        let v = self.value(row, col)?;
        v.parse::<f64>()
            .map_err(|_| EngineError::statement(format!("expected a number, got {v:?}")))
    }

    /// Value `col` of row `row`, which must exist and not be NULL.
    pub fn value(&self, row: usize, col: usize) -> Result<&str, EngineError> {
        self.get(row, col).ok_or_else(|| {
            EngineError::statement(format!(
                "the result has no value at row {row}, column {col} ({} rows)",
                self.len()
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_keep_values_nulls_and_reuse_buffers() {
        let mut r = Rows::new();
        for _ in 0..2 {
            r.clear();
            r.start_row();
            r.push(Some(b"42"));
            r.push(None);
            r.push(Some(b"1.50"));
            r.start_row();
            r.push_with(|t| t.push_str("7.00"));
            assert_eq!(r.len(), 2);
            assert_eq!(r.int(0, 0).unwrap(), 42);
            assert_eq!(r.get(0, 1), None);
            assert_eq!(r.num(0, 2).unwrap(), 1.5);
            assert_eq!(r.int(1, 0).unwrap(), 7);
            assert!(r.int(0, 2).is_err(), "1.50 is not an integer");
            assert_eq!(r.get(1, 1), None, "row 1 has one value");
            assert!(r.value(2, 0).is_err());
        }
    }
}
