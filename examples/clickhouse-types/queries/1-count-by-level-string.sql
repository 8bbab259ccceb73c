SELECT level, count() AS n FROM logs_string GROUP BY level ORDER BY level
