//! TPC-C's five transactions (clauses 2.4–2.8) as interactive events: each reads what it
//! must (the district's next order number, an item's price, a stock level, the customer
//! chosen by last name) through [`Workload::inspect`] and adds the statements that depend on
//! it. Inputs are drawn once per transaction, so a re-run after a serialization failure
//! repeats the same transaction.

use super::gen::{self, Deck, NurandC, TxnType};
use crate::rng::Rng;
use crate::Workload;
use dbdelta_engine::{Connection, Dialect, EngineError, OpBatch, Outcome, Rows, StmtId};
use std::fmt::Write as _;
use std::time::Duration;

/// Items in the catalogue (clause 1.3.1).
pub const ITEMS: i64 = 100_000;
/// Customers per district.
pub const CUSTOMERS: i64 = 3_000;
/// Districts per warehouse.
pub const DISTRICTS: i64 = 10;

/// What every terminal of a TPC-C step shares.
#[derive(Debug, Clone, PartialEq)]
pub struct TpccConfig {
    /// Warehouses loaded.
    pub warehouses: u32,
    /// Terminals of the step.
    pub terminals: u32,
    /// Terminals draw from every warehouse dealt to them (HammerDB's `allwarehouse`)
    /// instead of one home warehouse.
    pub all_warehouses: bool,
    /// Keying and think times of the specification (clause 5.2.5).
    pub spec_waits: bool,
    /// The NURand constants of the run (C-run, derived from C-load by clause 2.1.6.1).
    pub c_run: NurandC,
    /// Transactions per terminal (`--transactions`); `None` = the step's duration.
    pub transactions: Option<u64>,
}

/// Operation types: the five transactions, and the New-Orders the specification rolls
/// back (1 %, an unused item number), reported apart.
pub const TXN_TYPES: [&str; 6] = [
    "new-order",
    "payment",
    "order-status",
    "delivery",
    "stock-level",
    "new-order-rollback",
];
const ROLLED_BACK: usize = 5;

/// Statement texts, in the order of [`Stmts`]' fields.
const SQL: [&str; 25] = [
    // New-Order
    "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    "SELECT w_tax FROM warehouse WHERE w_id = ?",
    "SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?{FOR_UPDATE}",
    "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ?",
    "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP, NULL, ?, ?)",
    "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)",
    "SELECT i_price, i_name, i_data FROM item WHERE i_id = ?",
    "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? WHERE s_i_id = ? AND s_w_id = ?",
    "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)",
    // Payment
    "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?",
    "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = ?",
    "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?",
    "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district WHERE d_w_id = ? AND d_id = ?",
    "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first",
    "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance, c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?{FOR_UPDATE}",
    "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1, c_data = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?)",
    // Order-Status
    "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    "SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1",
    "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
    // Delivery
    "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1{FOR_UPDATE}",
    "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?",
    "SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
    "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
];

/// More statement texts (kept apart so each array stays readable).
const SQL2: [&str; 5] = [
    "UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
    "SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
    "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    // Stock-Level
    "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?",
    "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?",
];

/// Prepared statement handles, by their place in `SQL` ++ `SQL2`, plus the ten stock
/// reads (one per district's `s_dist_xx`).
#[derive(Debug, Default, Clone)]
struct Stmts {
    all: Vec<StmtId>,
    stock: Vec<StmtId>,
}

// Indexes into `Stmts::all`.
const NO_CUSTOMER: usize = 0;
const NO_WAREHOUSE: usize = 1;
const NO_DISTRICT: usize = 2;
const NO_DISTRICT_UPD: usize = 3;
const NO_ORDER: usize = 4;
const NO_NEW_ORDER: usize = 5;
const NO_ITEM: usize = 6;
const NO_STOCK_UPD: usize = 7;
const NO_LINE: usize = 8;
const P_WAREHOUSE_UPD: usize = 9;
const P_WAREHOUSE: usize = 10;
const P_DISTRICT_UPD: usize = 11;
const P_DISTRICT: usize = 12;
const CUSTOMER_BY_NAME: usize = 13;
const P_CUSTOMER: usize = 14;
const P_CUSTOMER_UPD_BC: usize = 15;
const P_CUSTOMER_UPD: usize = 16;
const P_HISTORY: usize = 17;
const OS_CUSTOMER: usize = 18;
const OS_ORDER: usize = 19;
const OS_LINES: usize = 20;
const D_NEW_ORDER: usize = 21;
const D_DELETE: usize = 22;
const D_ORDER: usize = 23;
const D_ORDER_UPD: usize = 24;
const D_LINES_UPD: usize = 25;
const D_SUM: usize = 26;
const D_CUSTOMER_UPD: usize = 27;
const SL_DISTRICT: usize = 28;
const SL_COUNT: usize = 29;

/// One order line's inputs.
#[derive(Debug, Clone, Copy, Default)]
struct Line {
    item: i64,
    supply_w: i64,
    qty: i64,
}

/// Where an interactive transaction is, between inspected results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// New-Order: waiting for the district (next order number).
    NoDistrict,
    /// New-Order: waiting for item `n`'s price.
    NoItem(usize),
    /// New-Order: waiting for the stock of line `n`.
    NoStock(usize),
    /// Payment: waiting for the warehouse's name.
    PWarehouse,
    /// Payment: waiting for the district's name.
    PDistrict,
    /// Payment / Order-Status: waiting for the customers with the last name.
    ByName,
    /// Payment: waiting for the customer's credit and data.
    PCustomer,
    /// Order-Status: waiting for the customer's last order.
    OsOrder,
    /// Delivery: district `d` (1-based), waiting for its oldest new order.
    DNewOrder(i64),
    /// Delivery: district `d`, waiting for the delete's row count.
    DDelete(i64),
    /// Delivery: district `d`, waiting for the order's customer.
    DOrder(i64),
    /// Delivery: district `d`, waiting for the order lines' sum.
    DSum(i64),
    /// Stock-Level: waiting for the district's next order number.
    SlDistrict,
    /// Nothing to wait for.
    Idle,
}

/// One TPC-C terminal.
#[derive(Debug)]
pub struct Tpcc {
    config: TpccConfig,
    rng: Rng,
    deck: Deck,
    stmts: Stmts,
    dialect: Dialect,
    /// Warehouses this terminal draws its home warehouse from.
    warehouses: Vec<i64>,
    /// The terminal's district (Stock-Level's, clause 2.8.1.1).
    district: i64,
    done: u64,
    // The transaction under way: type, inputs, and what its results told so far.
    kind: TxnType,
    /// The type dealt ahead for its keying time (spec mode).
    next_kind: Option<TxnType>,
    rolled_back: bool,
    stage: Stage,
    w: i64,
    d: i64,
    c_w: i64,
    c_d: i64,
    c_id: i64,
    c_last: String,
    by_name: bool,
    amount_cents: i64,
    carrier: i64,
    threshold: i64,
    lines: Vec<Line>,
    o_id: i64,
    w_name: String,
    d_name: String,
    price_cents: i64,
    /// Delivery: the order found in the current district and its customer.
    d_order: i64,
    d_customer: i64,
}

impl Tpcc {
    /// Terminal `terminal` (0-based) of `config.terminals`, drawing from its own stream.
    pub fn new(config: TpccConfig, seed: u64, stream: u64, terminal: u32) -> Self {
        let mut rng = Rng::new(seed, stream);
        let deck = Deck::new(&mut rng);
        let w_count = i64::from(config.warehouses.max(1));
        let t = i64::from(terminal);
        let terminals = i64::from(config.terminals.max(1));
        let mut warehouses: Vec<i64> = if config.all_warehouses {
            (1..=w_count)
                .filter(|w| (w - 1) % terminals == t % terminals)
                .collect()
        } else {
            Vec::new()
        };
        if warehouses.is_empty() {
            warehouses.push(t % w_count + 1);
        }
        let district = (t / w_count) % DISTRICTS + 1;
        Tpcc {
            config,
            rng,
            deck,
            stmts: Stmts::default(),
            dialect: Dialect::Postgres,
            warehouses,
            district,
            done: 0,
            kind: TxnType::NewOrder,
            next_kind: None,
            rolled_back: false,
            stage: Stage::Idle,
            w: 1,
            d: 1,
            c_w: 1,
            c_d: 1,
            c_id: 1,
            c_last: String::new(),
            by_name: false,
            amount_cents: 0,
            carrier: 1,
            threshold: 10,
            lines: Vec::with_capacity(15),
            o_id: 0,
            w_name: String::new(),
            d_name: String::new(),
            price_cents: 0,
            d_order: 0,
            d_customer: 0,
        }
    }

    fn stmt(&self, i: usize) -> StmtId {
        self.stmts.all[i]
    }

    fn begin(&self, ops: &mut OpBatch, writes: bool) {
        // SQLite takes its write lock up front, so two writers never deadlock on upgrade.
        if self.dialect == Dialect::Sqlite && writes {
            ops.query("BEGIN IMMEDIATE");
        } else {
            ops.query("BEGIN");
        }
    }

    /// Draws the next transaction's inputs (clauses 2.4.1, 2.5.1, 2.6.1, 2.7.1, 2.8.1).
    fn draw(&mut self) {
        let c = &self.config.c_run;
        let rng = &mut self.rng;
        self.kind = match self.next_kind.take() {
            Some(k) => k,
            None => self.deck.deal(rng),
        };
        self.w = self.warehouses[rng.uniform(0, self.warehouses.len() as i64 - 1) as usize];
        self.d = rng.uniform(1, DISTRICTS);
        self.c_w = self.w;
        self.c_d = self.d;
        let warehouses = i64::from(self.config.warehouses.max(1));
        match self.kind {
            TxnType::NewOrder => {
                self.c_id = gen::nurand(rng, 1023, c.c_id, 1, CUSTOMERS);
                let n = rng.uniform(5, 15) as usize;
                let rollback = rng.uniform(1, 100) == 1;
                self.lines.clear();
                for i in 0..n {
                    let item = if rollback && i == n - 1 {
                        // An unused item number: the transaction must roll back (2.4.1.4).
                        ITEMS + 1
                    } else {
                        gen::nurand(rng, 8191, c.ol_i_id, 1, ITEMS)
                    };
                    let supply_w = if warehouses > 1 && rng.uniform(1, 100) == 1 {
                        gen::remote_warehouse(rng, self.w, warehouses)
                    } else {
                        self.w
                    };
                    self.lines.push(Line {
                        item,
                        supply_w,
                        qty: rng.uniform(1, 10),
                    });
                }
            }
            TxnType::Payment => {
                self.amount_cents = rng.uniform(100, 500_000);
                if warehouses > 1 && rng.uniform(1, 100) > 85 {
                    self.c_w = gen::remote_warehouse(rng, self.w, warehouses);
                    self.c_d = rng.uniform(1, DISTRICTS);
                }
                self.pick_customer();
            }
            TxnType::OrderStatus => self.pick_customer(),
            TxnType::Delivery => self.carrier = rng.uniform(1, 10),
            TxnType::StockLevel => {
                self.d = self.district;
                self.threshold = rng.uniform(10, 20);
            }
        }
    }

    /// 60 % by last name (NURand(255) over the syllables), else by NURand(1023) id.
    fn pick_customer(&mut self) {
        let c = &self.config.c_run;
        self.by_name = self.rng.uniform(1, 100) <= 60;
        if self.by_name {
            let n = gen::nurand(&mut self.rng, 255, c.c_last, 0, 999);
            self.c_last.clear();
            gen::last_name(n, &mut self.c_last);
        } else {
            self.c_id = gen::nurand(&mut self.rng, 1023, c.c_id, 1, CUSTOMERS);
        }
    }

    /// Appends the transaction's first statements, up to its first inspected result.
    fn start(&mut self, ops: &mut OpBatch) {
        self.rolled_back = false;
        let (w, d) = (self.w, self.d);
        match self.kind {
            TxnType::NewOrder => {
                self.begin(ops, true);
                ops.execute(self.stmt(NO_CUSTOMER))
                    .int(w)
                    .int(d)
                    .int(self.c_id);
                ops.execute(self.stmt(NO_WAREHOUSE)).int(w);
                ops.execute(self.stmt(NO_DISTRICT)).int(w).int(d);
                ops.inspect_last();
                self.stage = Stage::NoDistrict;
            }
            TxnType::Payment => {
                self.begin(ops, true);
                let amount = self.amount_cents;
                ops.execute(self.stmt(P_WAREHOUSE_UPD))
                    .text_with(|t| push_decimal(t, amount))
                    .int(w);
                ops.execute(self.stmt(P_WAREHOUSE)).int(w);
                ops.inspect_last();
                self.stage = Stage::PWarehouse;
            }
            TxnType::OrderStatus => {
                self.begin(ops, false);
                self.customer_or_name(ops);
            }
            TxnType::Delivery => {
                self.begin(ops, true);
                self.delivery_district(ops, 1);
            }
            TxnType::StockLevel => {
                self.begin(ops, false);
                ops.execute(self.stmt(SL_DISTRICT)).int(w).int(d);
                ops.inspect_last();
                self.stage = Stage::SlDistrict;
            }
        }
    }

    /// Payment and Order-Status: the customer by last name (inspected), or by id.
    fn customer_or_name(&mut self, ops: &mut OpBatch) {
        if self.by_name {
            ops.execute(self.stmt(CUSTOMER_BY_NAME))
                .int(self.c_w)
                .int(self.c_d)
                .text(&self.c_last);
            ops.inspect_last();
            self.stage = Stage::ByName;
        } else {
            self.customer_known(ops);
        }
    }

    /// The statements once the customer's id is known.
    fn customer_known(&mut self, ops: &mut OpBatch) {
        let (c_w, c_d, c_id) = (self.c_w, self.c_d, self.c_id);
        if self.kind == TxnType::Payment {
            ops.execute(self.stmt(P_CUSTOMER))
                .int(c_w)
                .int(c_d)
                .int(c_id);
            ops.inspect_last();
            self.stage = Stage::PCustomer;
        } else {
            ops.execute(self.stmt(OS_CUSTOMER))
                .int(c_w)
                .int(c_d)
                .int(c_id);
            ops.execute(self.stmt(OS_ORDER)).int(c_w).int(c_d).int(c_id);
            ops.inspect_last();
            self.stage = Stage::OsOrder;
        }
    }

    /// Delivery: the oldest undelivered order of district `d`, or the commit after ten.
    fn delivery_district(&mut self, ops: &mut OpBatch, d: i64) {
        if d > DISTRICTS {
            ops.query("COMMIT");
            self.stage = Stage::Idle;
            return;
        }
        ops.execute(self.stmt(D_NEW_ORDER)).int(self.w).int(d);
        ops.inspect_last();
        self.stage = Stage::DNewOrder(d);
    }

    /// New-Order: item `n`'s price read, or the commit after the last line.
    fn new_order_item(&mut self, ops: &mut OpBatch, n: usize) {
        match self.lines.get(n) {
            Some(line) => {
                ops.execute(self.stmt(NO_ITEM)).int(line.item);
                ops.inspect_last();
                self.stage = Stage::NoItem(n);
            }
            None => {
                ops.query("COMMIT");
                self.stage = Stage::Idle;
            }
        }
    }
}

/// Appends cents as a decimal literal ("12.34"): parameters are written straight into the
/// batch's buffer.
fn push_decimal(out: &mut String, cents: i64) {
    let sign = if cents < 0 { "-" } else { "" };
    let _ = write!(out, "{sign}{}.{:02}", cents.abs() / 100, cents.abs() % 100);
}

/// A decimal value as cents (rounded).
fn cents(v: f64) -> i64 {
    (v * 100.0).round() as i64
}

impl Workload for Tpcc {
    fn prepare(&mut self, conn: &mut dyn Connection) -> Result<(), EngineError> {
        self.dialect = conn.dialect();
        // SQLite has no row locks: its writers hold the database lock from BEGIN IMMEDIATE.
        let for_update = if self.dialect == Dialect::Sqlite {
            ""
        } else {
            " FOR UPDATE"
        };
        self.stmts.all.clear();
        for sql in SQL.iter().chain(SQL2.iter()) {
            let sql = sql.replace("{FOR_UPDATE}", for_update);
            self.stmts.all.push(conn.prepare(&sql)?);
        }
        self.stmts.stock.clear();
        for d in 1..=DISTRICTS {
            self.stmts.stock.push(conn.prepare(&format!(
                "SELECT s_quantity, s_data, s_dist_{d:02} FROM stock WHERE s_i_id = ? AND s_w_id = ?{for_update}"
            ))?);
        }
        Ok(())
    }

    fn next_event(&mut self, ops: &mut OpBatch) -> Result<(), EngineError> {
        self.done += 1;
        self.draw();
        self.start(ops);
        Ok(())
    }

    fn restart_event(&mut self) {
        // The first statements are still in the batch: wait for the first inspected
        // result again, with the same inputs.
        self.rolled_back = false;
        self.stage = match self.kind {
            TxnType::NewOrder => Stage::NoDistrict,
            TxnType::Payment => Stage::PWarehouse,
            TxnType::OrderStatus if self.by_name => Stage::ByName,
            TxnType::OrderStatus => Stage::OsOrder,
            TxnType::Delivery => Stage::DNewOrder(1),
            TxnType::StockLevel => Stage::SlDistrict,
        };
    }

    fn inspect(
        &mut self,
        _op: usize,
        outcome: &Outcome,
        rows: &Rows,
        ops: &mut OpBatch,
    ) -> Result<(), EngineError> {
        let (w, d) = (self.w, self.d);
        match self.stage {
            Stage::NoDistrict => {
                self.o_id = rows.int(0, 1)?;
                let all_local = i64::from(self.lines.iter().all(|l| l.supply_w == w));
                ops.execute(self.stmt(NO_DISTRICT_UPD)).int(w).int(d);
                ops.execute(self.stmt(NO_ORDER))
                    .int(self.o_id)
                    .int(d)
                    .int(w)
                    .int(self.c_id)
                    .int(self.lines.len() as i64)
                    .int(all_local);
                ops.execute(self.stmt(NO_NEW_ORDER))
                    .int(self.o_id)
                    .int(d)
                    .int(w);
                self.new_order_item(ops, 0);
            }
            Stage::NoItem(n) => {
                if outcome.rows == 0 {
                    // The unused item: roll the whole order back (clause 2.4.2.3).
                    ops.query("ROLLBACK");
                    self.rolled_back = true;
                    self.stage = Stage::Idle;
                    return Ok(());
                }
                self.price_cents = cents(rows.num(0, 0)?);
                let line = self.lines[n];
                ops.execute(self.stmts.stock[(d - 1) as usize])
                    .int(line.item)
                    .int(line.supply_w);
                ops.inspect_last();
                self.stage = Stage::NoStock(n);
            }
            Stage::NoStock(n) => {
                let line = self.lines[n];
                let q = rows.int(0, 0)?;
                let new_q = if q >= line.qty + 10 {
                    q - line.qty
                } else {
                    q - line.qty + 91
                };
                let remote = i64::from(line.supply_w != w);
                ops.execute(self.stmt(NO_STOCK_UPD))
                    .int(new_q)
                    .int(line.qty)
                    .int(remote)
                    .int(line.item)
                    .int(line.supply_w);
                let amount = line.qty * self.price_cents;
                ops.execute(self.stmt(NO_LINE))
                    .int(self.o_id)
                    .int(d)
                    .int(w)
                    .int(n as i64 + 1)
                    .int(line.item)
                    .int(line.supply_w)
                    .int(line.qty)
                    .text_with(|t| push_decimal(t, amount))
                    .text(rows.value(0, 2)?);
                self.new_order_item(ops, n + 1);
            }
            Stage::PWarehouse => {
                self.w_name.clear();
                self.w_name.push_str(rows.value(0, 0)?);
                let amount = self.amount_cents;
                ops.execute(self.stmt(P_DISTRICT_UPD))
                    .text_with(|t| push_decimal(t, amount))
                    .int(w)
                    .int(d);
                ops.execute(self.stmt(P_DISTRICT)).int(w).int(d);
                ops.inspect_last();
                self.stage = Stage::PDistrict;
            }
            Stage::PDistrict => {
                self.d_name.clear();
                self.d_name.push_str(rows.value(0, 0)?);
                self.customer_or_name(ops);
            }
            Stage::ByName => {
                let n = rows.len();
                if n == 0 {
                    return Err(EngineError::statement(format!(
                        "no customer named {} in district {} of warehouse {}: the TPC-C data is incomplete; load it again",
                        self.c_last, self.c_d, self.c_w
                    )));
                }
                // The row at position ⌈n/2⌉ of the names sorted by first name (2.5.2.2).
                self.c_id = rows.int(n.div_ceil(2) - 1, 0)?;
                self.customer_known(ops);
            }
            Stage::PCustomer => {
                let (c_w, c_d, c_id) = (self.c_w, self.c_d, self.c_id);
                let amount = self.amount_cents;
                let bad_credit = rows.value(0, 10)? == "BC";
                let old_data = rows.get(0, 14).unwrap_or("");
                let dec = |t: &mut String| push_decimal(t, amount);
                if bad_credit {
                    // Clause 2.5.2.2: the payment's ids and amount in front of C_DATA,
                    // kept to 500 characters.
                    ops.execute(self.stmt(P_CUSTOMER_UPD_BC))
                        .text_with(dec)
                        .text_with(dec)
                        .text_with(|t| {
                            let start = t.len();
                            let _ = write!(t, "{c_id} {c_d} {c_w} {d} {w} ");
                            push_decimal(t, amount);
                            t.push_str(" | ");
                            t.push_str(old_data);
                            let cut = t[start..]
                                .char_indices()
                                .nth(500)
                                .map_or(t.len(), |(i, _)| start + i);
                            t.truncate(cut);
                        })
                        .int(c_w)
                        .int(c_d)
                        .int(c_id);
                } else {
                    ops.execute(self.stmt(P_CUSTOMER_UPD))
                        .text_with(dec)
                        .text_with(dec)
                        .int(c_w)
                        .int(c_d)
                        .int(c_id);
                }
                let (w_name, d_name) = (&self.w_name, &self.d_name);
                ops.execute(self.stmt(P_HISTORY))
                    .int(c_id)
                    .int(c_d)
                    .int(c_w)
                    .int(d)
                    .int(w)
                    .text_with(dec)
                    .text_with(|t| {
                        let _ = write!(t, "{w_name}    {d_name}");
                    });
                ops.query("COMMIT");
                self.stage = Stage::Idle;
            }
            Stage::OsOrder => {
                if !rows.is_empty() {
                    let o_id = rows.int(0, 0)?;
                    ops.execute(self.stmt(OS_LINES))
                        .int(self.c_w)
                        .int(self.c_d)
                        .int(o_id);
                }
                ops.query("COMMIT");
                self.stage = Stage::Idle;
            }
            Stage::DNewOrder(dd) => {
                if rows.is_empty() {
                    // No undelivered order in this district: skipped (clause 2.7.4.2).
                    self.delivery_district(ops, dd + 1);
                    return Ok(());
                }
                self.d_order = rows.int(0, 0)?;
                ops.execute(self.stmt(D_DELETE))
                    .int(w)
                    .int(dd)
                    .int(self.d_order);
                ops.inspect_last();
                self.stage = Stage::DDelete(dd);
            }
            Stage::DDelete(dd) => {
                if outcome.affected == 0 {
                    // Another Delivery took this order first: skipped too.
                    self.delivery_district(ops, dd + 1);
                    return Ok(());
                }
                ops.execute(self.stmt(D_ORDER))
                    .int(w)
                    .int(dd)
                    .int(self.d_order);
                ops.inspect_last();
                self.stage = Stage::DOrder(dd);
            }
            Stage::DOrder(dd) => {
                self.d_customer = rows.int(0, 0)?;
                let o = self.d_order;
                ops.execute(self.stmt(D_ORDER_UPD))
                    .int(self.carrier)
                    .int(w)
                    .int(dd)
                    .int(o);
                ops.execute(self.stmt(D_LINES_UPD)).int(w).int(dd).int(o);
                ops.execute(self.stmt(D_SUM)).int(w).int(dd).int(o);
                ops.inspect_last();
                self.stage = Stage::DSum(dd);
            }
            Stage::DSum(dd) => {
                let total = cents(rows.get(0, 0).and_then(|v| v.parse().ok()).unwrap_or(0.0));
                ops.execute(self.stmt(D_CUSTOMER_UPD))
                    .text_with(|t| push_decimal(t, total))
                    .int(w)
                    .int(dd)
                    .int(self.d_customer);
                self.delivery_district(ops, dd + 1);
            }
            Stage::SlDistrict => {
                let next = rows.int(0, 0)?;
                ops.execute(self.stmt(SL_COUNT))
                    .int(w)
                    .int(d)
                    .int(next)
                    .int(next - 20)
                    .int(w)
                    .int(self.threshold);
                ops.query("COMMIT");
                self.stage = Stage::Idle;
            }
            Stage::Idle => {}
        }
        Ok(())
    }

    fn uses_transactions(&self) -> bool {
        true
    }

    fn op_type(&self) -> Option<usize> {
        Some(if self.rolled_back {
            ROLLED_BACK
        } else {
            self.kind as usize
        })
    }

    fn op_type_names(&self) -> &'static [&'static str] {
        &TXN_TYPES
    }

    fn finished(&self) -> bool {
        self.config.transactions.is_some_and(|n| self.done >= n)
    }

    fn pause(&mut self) -> Duration {
        if !self.config.spec_waits {
            return Duration::ZERO;
        }
        // Think time of the transaction just done, then keying time of the next one
        // (clauses 5.2.5.4, 5.2.5.7): think times are negative exponential with the mean
        // below, truncated at ten times the mean. The next type is dealt now for its
        // keying time.
        let next = self.deck.deal(&mut self.rng);
        self.next_kind = Some(next);
        // Before the terminal's first transaction there is nothing to think about.
        let think_mean = if self.done == 0 {
            0.0
        } else {
            waits(self.kind).1
        };
        let u = self.rng.unit();
        let think = (-(1.0 - u).ln() * think_mean).min(10.0 * think_mean);
        Duration::from_secs_f64(think + waits(next).0)
    }
}

/// Keying time and mean think time, seconds (clause 5.2.5.7).
fn waits(kind: TxnType) -> (f64, f64) {
    match kind {
        TxnType::NewOrder => (18.0, 12.0),
        TxnType::Payment => (3.0, 12.0),
        TxnType::OrderStatus => (2.0, 10.0),
        TxnType::Delivery => (2.0, 5.0),
        TxnType::StockLevel => (2.0, 5.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terminal(warehouses: u32) -> Tpcc {
        let config = TpccConfig {
            warehouses,
            terminals: 1,
            all_warehouses: true,
            spec_waits: false,
            c_run: gen::run_constants(1),
            transactions: None,
        };
        Tpcc::new(config, 7, 1, 0)
    }

    #[test]
    fn inputs_follow_the_specification_rates() {
        let mut t = terminal(10);
        let (mut lines, mut remote_lines, mut orders, mut rollbacks) = (0, 0, 0, 0);
        let (mut payments, mut remote_payments, mut lookups, mut by_name) = (0, 0, 0, 0);
        let mut homes = std::collections::BTreeSet::new();
        for _ in 0..200_000 {
            t.draw();
            homes.insert(t.w);
            match t.kind {
                TxnType::NewOrder => {
                    orders += 1;
                    assert!((5..=15).contains(&t.lines.len()));
                    rollbacks += usize::from(t.lines.last().unwrap().item == ITEMS + 1);
                    for l in &t.lines {
                        lines += 1;
                        remote_lines += usize::from(l.supply_w != t.w);
                        assert!((1..=10).contains(&l.qty));
                    }
                }
                TxnType::Payment => {
                    payments += 1;
                    remote_payments += usize::from(t.c_w != t.w);
                    assert!((100..=500_000).contains(&t.amount_cents));
                }
                _ => {}
            }
            if matches!(t.kind, TxnType::Payment | TxnType::OrderStatus) {
                lookups += 1;
                by_name += usize::from(t.by_name);
            }
        }
        let share = |a: usize, b: usize| a as f64 / b as f64;
        assert!(
            (share(remote_lines, lines) - 0.01).abs() < 0.002,
            "remote lines"
        );
        assert!((share(rollbacks, orders) - 0.01).abs() < 0.002, "rollbacks");
        assert!(
            (share(remote_payments, payments) - 0.15).abs() < 0.01,
            "remote payments"
        );
        assert!(
            (share(by_name, lookups) - 0.60).abs() < 0.01,
            "by last name"
        );
        assert_eq!(homes.len(), 10, "--all-warehouses reaches every warehouse");
    }

    #[test]
    fn terminals_are_bound_to_a_warehouse_and_district() {
        let config = |all| TpccConfig {
            warehouses: 4,
            terminals: 8,
            all_warehouses: all,
            spec_waits: false,
            c_run: gen::run_constants(1),
            transactions: None,
        };
        let t = Tpcc::new(config(false), 1, 1, 5);
        assert_eq!((t.warehouses.clone(), t.district), (vec![2], 2));
        let t = Tpcc::new(config(true), 1, 1, 1);
        assert_eq!(
            t.warehouses,
            vec![2],
            "8 terminals over 4 warehouses: one each"
        );
        let few = TpccConfig {
            terminals: 2,
            ..config(true)
        };
        assert_eq!(Tpcc::new(few, 1, 1, 1).warehouses, vec![2, 4]);
    }

    #[test]
    fn decimals_are_written_exactly() {
        let decimal = |c| {
            let mut b = String::from("x=");
            push_decimal(&mut b, c);
            b
        };
        assert_eq!(decimal(123_456), "x=1234.56");
        assert_eq!(decimal(5), "x=0.05");
        assert_eq!(decimal(-1005), "x=-10.05");
        assert_eq!(cents(19.99), 1999);
    }

    #[test]
    fn spec_mode_cycles_give_the_12_86_tpmc_ceiling() {
        // Mean cycle = keying + think, weighted by the mix: 10 terminals of a warehouse
        // then place 0.45 × 10 × 60 / cycle new orders a minute.
        let mix = [
            (TxnType::NewOrder, 0.45),
            (TxnType::Payment, 0.43),
            (TxnType::OrderStatus, 0.04),
            (TxnType::Delivery, 0.04),
            (TxnType::StockLevel, 0.04),
        ];
        let cycle: f64 = mix
            .iter()
            .map(|(k, p)| {
                let (key, think) = waits(*k);
                p * (key + think)
            })
            .sum();
        let tpmc = 0.45 * 10.0 * 60.0 / cycle;
        assert!((tpmc - 12.86).abs() < 0.01, "{tpmc}");
    }
}
