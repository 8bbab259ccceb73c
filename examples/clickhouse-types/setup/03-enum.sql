DROP TABLE IF EXISTS logs_enum;
CREATE TABLE logs_enum (
    ts DateTime,
    level Enum8('debug' = 1, 'info' = 2, 'warn' = 3, 'error' = 4),
    service Enum8('api' = 1, 'auth' = 2, 'billing' = 3, 'search' = 4, 'checkout' = 5, 'catalog' = 6, 'images' = 7, 'mailer' = 8, 'gateway' = 9, 'ledger' = 10, 'reports' = 11, 'session' = 12),
    path Enum8('/v1/items' = 1, '/v1/users' = 2, '/v1/orders' = 3, '/v1/login' = 4, '/v1/cart' = 5, '/v1/search' = 6, '/health' = 7, '/metrics' = 8),
    status UInt16,
    bytes UInt32
) ENGINE = MergeTree ORDER BY ts;
INSERT INTO logs_enum SELECT ts, level, service, path, status, bytes FROM logs_string;
OPTIMIZE TABLE logs_enum FINAL;
