-- A log-like table with repeated strings: 4 levels (skewed), 12 services, 8 paths.
DROP TABLE IF EXISTS logs_string;
CREATE TABLE logs_string (
    ts DateTime,
    level String,
    service String,
    path String,
    status UInt16,
    bytes UInt32
) ENGINE = MergeTree ORDER BY ts;
INSERT INTO logs_string
SELECT
    toDateTime('2026-01-01 00:00:00') + intDiv(number, 10) AS ts,
    ['info', 'info', 'info', 'info', 'info', 'debug', 'debug', 'warn', 'error', 'info'][1 + intHash32(number) % 10] AS level,
    ['api', 'auth', 'billing', 'search', 'checkout', 'catalog', 'images', 'mailer', 'gateway', 'ledger', 'reports', 'session'][1 + intHash32(number + 1) % 12] AS service,
    ['/v1/items', '/v1/users', '/v1/orders', '/v1/login', '/v1/cart', '/v1/search', '/health', '/metrics'][1 + intHash32(number + 2) % 8] AS path,
    [200, 200, 200, 200, 200, 201, 204, 301, 404, 500][1 + intHash32(number + 3) % 10] AS status,
    intHash32(number + 4) % 100000 AS bytes
FROM numbers({{rows}});
OPTIMIZE TABLE logs_string FINAL;
