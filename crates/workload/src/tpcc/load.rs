//! TPC-C's initial population (clause 4.3.3.1), as row sources for each engine's bulk
//! path: the items once, then every table of one warehouse. Every draw comes from a stream
//! of the run's seed per table and warehouse, so two loads with one seed are identical.

use super::gen::{a_string, last_name, load_constants, n_string, nurand, original_data, zip};
use super::txn::{CUSTOMERS, DISTRICTS, ITEMS};
use crate::ibench::rows::format_timestamp as civil_text;
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

/// `YYYY-MM-DD HH:MM:SS` (UTC) of now: the load's dates, taken once per warehouse.
fn now_text() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    civil_text(secs)
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

/// Loads every table's rows of warehouse `w` (1, 2, …): the warehouse, its stock, its 10
/// districts with their customers, history, orders, new orders and order lines. Returns
/// the rows inserted. The dates are the load's time.
pub fn load_warehouse(conn: &mut dyn Connection, w: i64, seed: u64) -> Result<u64, EngineError> {
    load_warehouse_at(conn, w, seed, &now_text())
}

/// [`load_warehouse`] with the dates given (`YYYY-MM-DD HH:MM:SS`), so tests can compare
/// two loads row by row.
fn load_warehouse_at(
    conn: &mut dyn Connection,
    w: i64,
    seed: u64,
    now: &str,
) -> Result<u64, EngineError> {
    if w < 1 {
        return Err(EngineError::config(format!(
            "TPC-C warehouse numbers start at 1, not {w}"
        )));
    }
    let now = now.to_string();
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
    use super::super::gen::last_name;
    use super::super::schema::column_names;
    use super::*;
    use dbdelta_engine::{Dialect, Outcome, SessionParts, StmtId, Value};
    use std::collections::{BTreeMap, HashMap};
    use std::hash::{DefaultHasher, Hash, Hasher};

    /// What a load sent to one table.
    #[derive(Default)]
    struct Table {
        columns: Vec<&'static str>,
        rows: u64,
        /// Rows whose length differs from the columns'.
        ragged: u64,
        hash: u64,
    }

    /// A connection that only records bulk loads: rows and columns per table, a hash of
    /// every value, and the facts the checks below need.
    #[derive(Default)]
    struct Recorder {
        tables: BTreeMap<String, Table>,
        /// o_ol_cnt by (district, order), and the order lines seen for each.
        ol_cnt: HashMap<(i64, i64), (i64, i64)>,
        /// Customers per district whose c_last is the syllables of c_id − 1.
        named_in_order: u64,
        /// Orders from 2101 on with a NULL carrier, and order lines with a NULL date.
        open_orders: u64,
        open_lines: u64,
        /// Sum of o_c_id per district (a permutation of 1..3000 sums to 4 501 500).
        o_c_id_sum: BTreeMap<i64, i64>,
        /// Rows of item and stock whose data carries "ORIGINAL".
        original: u64,
    }

    fn int(v: &OwnedValue) -> i64 {
        match v {
            OwnedValue::Int(i) => *i,
            other => panic!("not an integer: {other:?}"),
        }
    }

    fn text_of(v: &OwnedValue) -> &str {
        match v {
            OwnedValue::Text(s) => s,
            other => panic!("not text: {other:?}"),
        }
    }

    impl Recorder {
        fn inspect(&mut self, table: &str, row: &[OwnedValue]) {
            match table {
                "customer" => {
                    let mut name = String::new();
                    last_name(int(&row[0]) - 1, &mut name);
                    if int(&row[0]) <= 1000 && text_of(&row[5]) == name {
                        self.named_in_order += 1;
                    }
                    assert_eq!(text_of(&row[4]), "OE");
                    assert!(matches!(text_of(&row[13]), "GC" | "BC"));
                    assert_eq!(text_of(&row[16]), "-10.00");
                }
                "orders" => {
                    let (o, d) = (int(&row[0]), int(&row[1]));
                    self.ol_cnt.entry((d, o)).or_default().0 = int(&row[6]);
                    assert!((5..=15).contains(&int(&row[6])));
                    *self.o_c_id_sum.entry(d).or_default() += int(&row[3]);
                    let open = row[5] == OwnedValue::Null;
                    assert_eq!(open, o >= FIRST_NEW_ORDER, "order {o}");
                    self.open_orders += u64::from(open);
                }
                "order_line" => {
                    let (o, d) = (int(&row[0]), int(&row[1]));
                    let e = self.ol_cnt.entry((d, o)).or_default();
                    e.1 += 1;
                    assert_eq!(int(&row[3]), e.1, "ol_number counts 1, 2, …");
                    assert!((1..=ITEMS).contains(&int(&row[4])));
                    let open = row[6] == OwnedValue::Null;
                    assert_eq!(open, o >= FIRST_NEW_ORDER);
                    assert_eq!(text_of(&row[8]) == "0.00", !open);
                    self.open_lines += u64::from(open);
                }
                "item" | "stock" => {
                    let data = text_of(&row[row.len() - 1]);
                    assert!((26..=50).contains(&data.len()));
                    self.original += u64::from(data.contains("ORIGINAL"));
                }
                _ => {}
            }
        }
    }

    impl Connection for Recorder {
        fn dialect(&self) -> Dialect {
            Dialect::Mock
        }

        fn prepare(&mut self, _sql: &str) -> Result<StmtId, EngineError> {
            Ok(StmtId(0))
        }

        fn execute(&mut self, _: StmtId, _: &[Value<'_>]) -> Result<Outcome, EngineError> {
            Ok(Outcome::default())
        }

        fn query(&mut self, _sql: &str) -> Result<Outcome, EngineError> {
            Ok(Outcome::default())
        }

        fn query_scalar(&mut self, _sql: &str) -> Result<Option<String>, EngineError> {
            Ok(None)
        }

        fn bulk_insert(
            &mut self,
            table: &str,
            rows: &mut dyn RowSource,
        ) -> Result<u64, EngineError> {
            let mut t = self.tables.remove(table).unwrap_or_default();
            t.columns = rows.columns().to_vec();
            let mut h = DefaultHasher::new();
            t.hash.hash(&mut h);
            let mut row = Vec::new();
            let mut n = 0;
            while {
                row.clear();
                rows.next_row(&mut row)
            } {
                n += 1;
                t.ragged += u64::from(row.len() != t.columns.len());
                for v in &row {
                    match v {
                        OwnedValue::Int(i) => (0u8, i).hash(&mut h),
                        OwnedValue::Text(s) => (1u8, s).hash(&mut h),
                        OwnedValue::Null => 2u8.hash(&mut h),
                    }
                }
                self.inspect(table, &row);
            }
            t.rows += n;
            t.hash = h.finish();
            self.tables.insert(table.to_string(), t);
            Ok(n)
        }

        fn into_session(self: Box<Self>) -> Result<SessionParts, Box<dyn Connection>> {
            Err(self)
        }
    }

    const NOW: &str = "2025-01-02 03:04:05";

    fn load(seed: u64) -> Recorder {
        let mut r = Recorder::default();
        let n = load_items(&mut r, seed).expect("items");
        let m = load_warehouse_at(&mut r, 1, seed, NOW).expect("warehouse");
        assert_eq!(n + m, r.tables.values().map(|t| t.rows).sum::<u64>());
        r
    }

    #[test]
    fn one_warehouse_has_the_specified_rows_and_columns() {
        let r = load(7);
        let rows = |t: &str| r.tables.get(t).map(|t| t.rows).unwrap_or(0);
        assert_eq!(rows("item"), 100_000);
        assert_eq!(rows("warehouse"), 1);
        assert_eq!(rows("stock"), 100_000);
        assert_eq!(rows("district"), 10);
        assert_eq!(rows("customer"), 30_000);
        assert_eq!(rows("history"), 30_000);
        assert_eq!(rows("orders"), 30_000);
        assert_eq!(rows("new_order"), 9_000);
        let lines = rows("order_line");
        assert!((150_000..=450_000).contains(&lines), "{lines}");
        // Mean o_ol_cnt is 10: 300 000 ± a few thousand.
        assert!((290_000..=310_000).contains(&lines), "{lines}");
        for (name, t) in &r.tables {
            assert_eq!(t.ragged, 0, "{name}: rows of the wrong length");
            let want = column_names(name).expect(name);
            assert_eq!(
                t.columns, want,
                "{name}: the load's columns are the schema's"
            );
        }
        // Every order's lines agree with its o_ol_cnt.
        assert_eq!(r.ol_cnt.len(), 30_000);
        for (key, (cnt, seen)) in &r.ol_cnt {
            assert_eq!(cnt, seen, "order {key:?}");
        }
        assert_eq!(r.named_in_order, 10_000, "c_id 1..1000 named in order");
        assert_eq!(r.open_orders, 9_000);
        let open_lines: i64 = r
            .ol_cnt
            .iter()
            .filter(|((_, o), _)| *o >= FIRST_NEW_ORDER)
            .map(|(_, (c, _))| c)
            .sum();
        assert_eq!(r.open_lines, open_lines as u64);
        assert_eq!(r.o_c_id_sum.len(), 10);
        assert!(r.o_c_id_sum.values().all(|s| *s == 3000 * 3001 / 2));
        let share = r.original as f64 / 200_000.0;
        assert!((share - 0.10).abs() < 0.01, "ORIGINAL in {share}");
    }

    #[test]
    fn loads_with_one_seed_are_identical() {
        let (a, b, c) = (load(11), load(11), load(12));
        let hashes = |r: &Recorder| -> Vec<u64> { r.tables.values().map(|t| t.hash).collect() };
        assert_eq!(hashes(&a), hashes(&b));
        let (ha, hc) = (hashes(&a), hashes(&c));
        // new_order has no random content; every other table differs.
        let differ = ha.iter().zip(&hc).filter(|(x, y)| x != y).count();
        assert_eq!(differ, 8);
    }

    #[test]
    fn warehouse_numbers_start_at_one() {
        assert!(load_warehouse(&mut Recorder::default(), 0, 1).is_err());
    }

    #[test]
    fn dates_are_civil() {
        let t = now_text();
        assert_eq!(t.len(), 19);
        assert!(t.starts_with("20"), "{t}");
        assert_eq!(civil_text(0), "1970-01-01 00:00:00");
        assert_eq!(civil_text(951_782_400), "2000-02-29 00:00:00");
        assert_eq!(civil_text(1_709_251_199), "2024-02-29 23:59:59");
        assert_eq!(civil_text(1_735_689_600), "2025-01-01 00:00:00");
    }
}
