//! TPC-C's initial population (clause 4.3.3.1), as row sources for each engine's bulk
//! path: the items once, then every table of one warehouse. Every draw comes from a stream
//! of the run's seed per table and warehouse, so two loads with one seed are identical.

use super::gen::{a_string, last_name, load_constants, n_string, nurand, original_data, zip};
use super::txn::{CUSTOMERS, DISTRICTS, ITEMS};
use crate::rng::Rng;
use dbdelta_engine::{Connection, EngineError, OwnedValue, RowSource};

/// Orders per district at load; the last 900 are undelivered (new orders).
const ORDERS: i64 = 3_000;
/// The first undelivered order.
const FIRST_NEW_ORDER: i64 = 2_101;

/// Rows produced by a closure over their index.
struct Rows<F> {
    columns: &'static [&'static str],
    count: i64,
    next: i64,
    row: F,
}

impl<F: FnMut(i64, &mut Vec<OwnedValue>)> RowSource for Rows<F> {
    fn columns(&self) -> &[&'static str] {
        self.columns
    }

    fn next_row(&mut self, out: &mut Vec<OwnedValue>) -> bool {
        if self.next >= self.count {
            return false;
        }
        (self.row)(self.next, out);
        self.next += 1;
        true
    }
}

fn text(out: &mut Vec<OwnedValue>, fill: impl FnOnce(&mut String)) {
    let mut s = String::new();
    fill(&mut s);
    out.push(OwnedValue::Text(s));
}

fn cents(out: &mut Vec<OwnedValue>, c: i64) {
    out.push(OwnedValue::Text(format!("{}.{:02}", c / 100, c % 100)));
}

/// A four-decimal fraction from ten-thousandths (taxes, discounts).
fn fraction(out: &mut Vec<OwnedValue>, t: i64) {
    out.push(OwnedValue::Text(format!("0.{t:04}")));
}

fn stream(table: u64, w: i64) -> u64 {
    0x7C0C_1000 ^ (table << 32) ^ w as u64
}

/// `YYYY-MM-DD HH:MM:SS` (UTC) of now: the load's dates.
fn now_text() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

fn address(rng: &mut Rng, out: &mut Vec<OwnedValue>) {
    for _ in 0..3 {
        text(out, |s| a_string(rng, 10, 20, s));
    }
    text(out, |s| a_string(rng, 2, 2, s));
    text(out, |s| zip(rng, s));
}

/// Loads the 100,000 items.
pub fn load_items(conn: &mut dyn Connection, seed: u64) -> Result<u64, EngineError> {
    let mut rng = Rng::new(seed, stream(1, 0));
    let mut rows = Rows {
        columns: &["i_id", "i_im_id", "i_name", "i_price", "i_data"],
        count: ITEMS,
        next: 0,
        row: |i, out: &mut Vec<OwnedValue>| {
            out.push(OwnedValue::Int(i + 1));
            out.push(OwnedValue::Int(rng.uniform(1, 10_000)));
            text(out, |s| a_string(&mut rng, 14, 24, s));
            cents(out, rng.uniform(100, 10_000));
            text(out, |s| original_data(&mut rng, 26, 50, s));
        },
    };
    conn.bulk_insert("item", &mut rows)
}

/// Loads every table's rows of warehouse `w`.
pub fn load_warehouse(conn: &mut dyn Connection, w: i64, seed: u64) -> Result<u64, EngineError> {
    let now = now_text();
    let c_load = load_constants(seed);
    let mut n = 0;

    let mut rng = Rng::new(seed, stream(2, w));
    n += conn.bulk_insert(
        "warehouse",
        &mut Rows {
            columns: &[
                "w_id",
                "w_name",
                "w_street_1",
                "w_street_2",
                "w_city",
                "w_state",
                "w_zip",
                "w_tax",
                "w_ytd",
            ],
            count: 1,
            next: 0,
            row: |_, out: &mut Vec<OwnedValue>| {
                out.push(OwnedValue::Int(w));
                text(out, |s| a_string(&mut rng, 6, 10, s));
                address(&mut rng, out);
                fraction(out, rng.uniform(0, 2000));
                cents(out, 30_000_000);
            },
        },
    )?;

    let mut rng = Rng::new(seed, stream(3, w));
    n += conn.bulk_insert(
        "stock",
        &mut Rows {
            columns: &[
                "s_i_id",
                "s_w_id",
                "s_quantity",
                "s_dist_01",
                "s_dist_02",
                "s_dist_03",
                "s_dist_04",
                "s_dist_05",
                "s_dist_06",
                "s_dist_07",
                "s_dist_08",
                "s_dist_09",
                "s_dist_10",
                "s_ytd",
                "s_order_cnt",
                "s_remote_cnt",
                "s_data",
            ],
            count: ITEMS,
            next: 0,
            row: |i, out: &mut Vec<OwnedValue>| {
                out.push(OwnedValue::Int(i + 1));
                out.push(OwnedValue::Int(w));
                out.push(OwnedValue::Int(rng.uniform(10, 100)));
                for _ in 0..10 {
                    text(out, |s| a_string(&mut rng, 24, 24, s));
                }
                out.extend([OwnedValue::Int(0), OwnedValue::Int(0), OwnedValue::Int(0)]);
                text(out, |s| original_data(&mut rng, 26, 50, s));
            },
        },
    )?;

    let mut rng = Rng::new(seed, stream(4, w));
    n += conn.bulk_insert(
        "district",
        &mut Rows {
            columns: &[
                "d_id",
                "d_w_id",
                "d_name",
                "d_street_1",
                "d_street_2",
                "d_city",
                "d_state",
                "d_zip",
                "d_tax",
                "d_ytd",
                "d_next_o_id",
            ],
            count: DISTRICTS,
            next: 0,
            row: |i, out: &mut Vec<OwnedValue>| {
                out.push(OwnedValue::Int(i + 1));
                out.push(OwnedValue::Int(w));
                text(out, |s| a_string(&mut rng, 6, 10, s));
                address(&mut rng, out);
                fraction(out, rng.uniform(0, 2000));
                cents(out, 3_000_000);
                out.push(OwnedValue::Int(ORDERS + 1));
            },
        },
    )?;

    let mut rng = Rng::new(seed, stream(5, w));
    n += conn.bulk_insert(
        "customer",
        &mut Rows {
            columns: &[
                "c_id",
                "c_d_id",
                "c_w_id",
                "c_first",
                "c_middle",
                "c_last",
                "c_street_1",
                "c_street_2",
                "c_city",
                "c_state",
                "c_zip",
                "c_phone",
                "c_since",
                "c_credit",
                "c_credit_lim",
                "c_discount",
                "c_balance",
                "c_ytd_payment",
                "c_payment_cnt",
                "c_delivery_cnt",
                "c_data",
            ],
            count: DISTRICTS * CUSTOMERS,
            next: 0,
            row: |i, out: &mut Vec<OwnedValue>| {
                let (d, c) = (i / CUSTOMERS + 1, i % CUSTOMERS + 1);
                out.extend([OwnedValue::Int(c), OwnedValue::Int(d), OwnedValue::Int(w)]);
                text(out, |s| a_string(&mut rng, 8, 16, s));
                out.push(OwnedValue::Text("OE".into()));
                let name = if c <= 1000 {
                    c - 1
                } else {
                    nurand(&mut rng, 255, c_load.c_last, 0, 999)
                };
                text(out, |s| last_name(name, s));
                address(&mut rng, out);
                text(out, |s| n_string(&mut rng, 16, 16, s));
                out.push(OwnedValue::Text(now.clone()));
                let credit = if rng.uniform(1, 10) == 1 { "BC" } else { "GC" };
                out.push(OwnedValue::Text(credit.into()));
                cents(out, 5_000_000);
                fraction(out, rng.uniform(0, 5000));
                out.push(OwnedValue::Text("-10.00".into()));
                cents(out, 1000);
                out.extend([OwnedValue::Int(1), OwnedValue::Int(0)]);
                text(out, |s| a_string(&mut rng, 300, 500, s));
            },
        },
    )?;

    let mut rng = Rng::new(seed, stream(6, w));
    n += conn.bulk_insert(
        "history",
        &mut Rows {
            columns: &[
                "h_c_id", "h_c_d_id", "h_c_w_id", "h_d_id", "h_w_id", "h_date", "h_amount",
                "h_data",
            ],
            count: DISTRICTS * CUSTOMERS,
            next: 0,
            row: |i, out: &mut Vec<OwnedValue>| {
                let (d, c) = (i / CUSTOMERS + 1, i % CUSTOMERS + 1);
                out.extend([
                    OwnedValue::Int(c),
                    OwnedValue::Int(d),
                    OwnedValue::Int(w),
                    OwnedValue::Int(d),
                    OwnedValue::Int(w),
                ]);
                out.push(OwnedValue::Text(now.clone()));
                cents(out, 1000);
                text(out, |s| a_string(&mut rng, 12, 24, s));
            },
        },
    )?;

    // Orders: each district's customers in a random permutation, and each order's line
    // count, kept for the order lines.
    let mut rng = Rng::new(seed, stream(7, w));
    let mut customer_of = Vec::with_capacity((DISTRICTS * ORDERS) as usize);
    let mut lines_of = Vec::with_capacity((DISTRICTS * ORDERS) as usize);
    for _ in 0..DISTRICTS {
        let mut perm: Vec<i64> = (1..=ORDERS).collect();
        for i in (1..perm.len()).rev() {
            perm.swap(i, rng.uniform(0, i as i64) as usize);
        }
        customer_of.extend(perm);
        lines_of.extend((0..ORDERS).map(|_| rng.uniform(5, 15)));
    }
    n += conn.bulk_insert(
        "orders",
        &mut Rows {
            columns: &[
                "o_id",
                "o_d_id",
                "o_w_id",
                "o_c_id",
                "o_entry_d",
                "o_carrier_id",
                "o_ol_cnt",
                "o_all_local",
            ],
            count: DISTRICTS * ORDERS,
            next: 0,
            row: |i, out: &mut Vec<OwnedValue>| {
                let (d, o) = (i / ORDERS + 1, i % ORDERS + 1);
                out.extend([
                    OwnedValue::Int(o),
                    OwnedValue::Int(d),
                    OwnedValue::Int(w),
                    OwnedValue::Int(customer_of[i as usize]),
                    OwnedValue::Text(now.clone()),
                ]);
                out.push(if o < FIRST_NEW_ORDER {
                    OwnedValue::Int(rng.uniform(1, 10))
                } else {
                    OwnedValue::Null
                });
                out.extend([OwnedValue::Int(lines_of[i as usize]), OwnedValue::Int(1)]);
            },
        },
    )?;

    let new_per_district = ORDERS - FIRST_NEW_ORDER + 1;
    n += conn.bulk_insert(
        "new_order",
        &mut Rows {
            columns: &["no_o_id", "no_d_id", "no_w_id"],
            count: DISTRICTS * new_per_district,
            next: 0,
            row: |i, out: &mut Vec<OwnedValue>| {
                out.extend([
                    OwnedValue::Int(FIRST_NEW_ORDER + i % new_per_district),
                    OwnedValue::Int(i / new_per_district + 1),
                    OwnedValue::Int(w),
                ]);
            },
        },
    )?;

    // Order lines: flattened over (district, order, line).
    let mut rng = Rng::new(seed, stream(8, w));
    let total: i64 = lines_of.iter().sum();
    let (mut order, mut line) = (0usize, 0i64);
    n += conn.bulk_insert(
        "order_line",
        &mut Rows {
            columns: &[
                "ol_o_id",
                "ol_d_id",
                "ol_w_id",
                "ol_number",
                "ol_i_id",
                "ol_supply_w_id",
                "ol_delivery_d",
                "ol_quantity",
                "ol_amount",
                "ol_dist_info",
            ],
            count: total,
            next: 0,
            row: |_, out: &mut Vec<OwnedValue>| {
                if line == lines_of[order] {
                    order += 1;
                    line = 0;
                }
                line += 1;
                let (d, o) = (order as i64 / ORDERS + 1, order as i64 % ORDERS + 1);
                out.extend([
                    OwnedValue::Int(o),
                    OwnedValue::Int(d),
                    OwnedValue::Int(w),
                    OwnedValue::Int(line),
                    OwnedValue::Int(rng.uniform(1, ITEMS)),
                    OwnedValue::Int(w),
                ]);
                if o < FIRST_NEW_ORDER {
                    out.push(OwnedValue::Text(now.clone()));
                    out.push(OwnedValue::Int(5));
                    out.push(OwnedValue::Text("0.00".into()));
                } else {
                    out.push(OwnedValue::Null);
                    out.push(OwnedValue::Int(5));
                    cents(out, rng.uniform(1, 999_999));
                }
                text(out, |s| a_string(&mut rng, 24, 24, s));
            },
        },
    )?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_civil() {
        let t = now_text();
        assert_eq!(t.len(), 19);
        assert!(t.starts_with("20"), "{t}");
        assert_eq!(&t[4..5], "-");
        assert_eq!(&t[13..14], ":");
    }
}
