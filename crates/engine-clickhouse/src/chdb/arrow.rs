//! Values of Arrow C arrays as text, for the few column types dbdelta reads from chDB: the
//! one `String` column of a result rendered as `TabSeparated` rows by the server itself,
//! and the integer, float, boolean and string columns of statements that cannot be
//! wrapped that way (`SHOW`, `DESCRIBE`, …).

use super::error::ChdbError;
use super::ffi::{ArrowArray, ArrowSchema};
use std::ffi::CStr;
use std::fmt::Write;

/// A column's format string (`"u"`, `"l"`, …).
pub(crate) fn format_of(schema: &ArrowSchema) -> String {
    if schema.format.is_null() {
        return String::new();
    }
    // SAFETY: the producer sets a NUL-terminated format string.
    unsafe { CStr::from_ptr(schema.format) }
        .to_string_lossy()
        .into_owned()
}

/// Reads value `row` of `array` (format `format`) as text into `out`; false for NULL.
/// Errors name formats this reader does not know.
///
/// # Safety
/// `array` must be a valid, unreleased Arrow array of `format` with more than `row` rows.
pub(crate) unsafe fn value(
    array: &ArrowArray,
    format: &str,
    row: usize,
    out: &mut String,
) -> Result<bool, ChdbError> {
    out.clear();
    let i = array.offset as usize + row;
    let buffers = array.buffers;
    let validity = *buffers as *const u8;
    if format == "n" {
        return Ok(false);
    }
    if !validity.is_null() && (*validity.add(i / 8) >> (i % 8)) & 1 == 0 {
        return Ok(false);
    }
    let data = *buffers.add(1);
    macro_rules! num {
        ($t:ty) => {{
            let _ = write!(out, "{}", *(data as *const $t).add(i));
        }};
    }
    match format {
        "c" => num!(i8),
        "C" => num!(u8),
        "s" => num!(i16),
        "S" => num!(u16),
        "i" => num!(i32),
        "I" => num!(u32),
        "l" => num!(i64),
        "L" => num!(u64),
        "f" => num!(f32),
        "g" => num!(f64),
        "b" => {
            let bit = (*(data as *const u8).add(i / 8) >> (i % 8)) & 1;
            out.push_str(if bit == 1 { "true" } else { "false" });
        }
        "u" | "z" => {
            let offsets = data as *const i32;
            let (a, b) = (*offsets.add(i) as usize, *offsets.add(i + 1) as usize);
            let bytes = std::slice::from_raw_parts((*buffers.add(2) as *const u8).add(a), b - a);
            out.push_str(&String::from_utf8_lossy(bytes));
        }
        "U" | "Z" => {
            let offsets = data as *const i64;
            let (a, b) = (*offsets.add(i) as usize, *offsets.add(i + 1) as usize);
            let bytes = std::slice::from_raw_parts((*buffers.add(2) as *const u8).add(a), b - a);
            out.push_str(&String::from_utf8_lossy(bytes));
        }
        other => {
            return Err(ChdbError::ArrowType {
                format: other.to_string(),
            })
        }
    }
    Ok(true)
}
